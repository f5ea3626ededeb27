//! A client and a server in one process, over an in-memory pipe: the client calls a tool
//! that asks for a confirmation and answers it from its input handler, walking a real
//! MRTR round trip. The same shape serves integration tests without sockets.
//!
//! ```sh
//! cargo run -p ferry --features client --example in_process
//! ```

use ferry::Form;
use ferry::client::Client;
use ferry::client::handler::FnHandler;
use ferry::protocol::elicitation::{ElicitResult, ElicitValue};
use ferry::server::{Context, Elicitation, Server, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Order {
    /// What to order.
    item: String,
}

#[derive(Deserialize, Form)]
struct Confirm {
    /// Place the order.
    confirm: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("shop", "1.0.0")
        .tool(
            tool("order").handler(|ctx: Context, order: Order| async move {
                let answer = ctx
                    .elicit::<Confirm>(format!("Order one {}?", order.item))
                    .await?;
                Ok(match answer {
                    Elicitation::Accept(Confirm { confirm: true }) => {
                        format!("Ordered {}", order.item)
                    }
                    _ => "Nothing ordered".to_owned(),
                })
            }),
        )
        .build()?;

    // The server on one end of the pipe, the client on the other.
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(ferry::stdio::serve(
        server,
        server_read,
        server_write,
        ferry::stdio::StdioConfig::default(),
    ));
    let (read, write) = tokio::io::split(client_end);
    let client = Client::builder()
        .streams(read, write)
        .input_handler(FnHandler::new().on_form(|form| {
            println!("the server asks: {}", form.message);
            async { ElicitResult::accept([("confirm".to_owned(), ElicitValue::Bool(true))].into()) }
        }))
        .build()
        .await?;

    let result = client.call_tool("order", json!({"item": "kite"})).await?;
    let text = serde_json::to_value(&result.content)?;
    println!(
        "the tool answers: {}",
        text[0]["text"].as_str().unwrap_or_default()
    );
    assert_eq!(text[0]["text"], "Ordered kite");
    client.close().await?;
    Ok(())
}
