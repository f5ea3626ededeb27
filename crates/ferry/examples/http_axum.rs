//! An MCP endpoint inside an axum application, sharing the application's state: the
//! tool `order` and the page `GET /orders` see the same list. The example serves on
//! 127.0.0.1, calls the tool twice with a client, reads the page, and exits; with
//! `--serve` it keeps serving instead (on `--port`, default a free one).
//!
//! ```sh
//! cargo run -p ferry --features client --example http_axum
//! cargo run -p ferry --features client --example http_axum -- --serve --port 3000
//! ```

use std::sync::Arc;

use axum::Router;
use axum::extract::State as AppState;
use axum::routing::get;
use ferry::client::Client;
use ferry::http::{HttpConfig, McpService};
use ferry::server::{Server, State, tool};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The application's state: shared by its pages and its MCP tools.
#[derive(Clone, Default)]
struct Shop {
    orders: Arc<Mutex<Vec<String>>>,
}

#[derive(Deserialize, JsonSchema)]
struct Order {
    /// What to order.
    item: String,
}

async fn orders_page(AppState(shop): AppState<Shop>) -> String {
    let orders = shop.orders.lock();
    format!("{} orders: {}\n", orders.len(), orders.join(", "))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let serve = args.iter().any(|a| a == "--serve");
    let port: u16 = args
        .iter()
        .position(|a| a == "--port")
        .and_then(|i| args.get(i + 1))
        .map(|p| p.parse())
        .transpose()?
        .unwrap_or(0);

    let shop = Shop::default();
    let server = Server::builder("shop", "1.0.0")
        .state(shop.clone())
        .tool(tool("order").description("Orders one item").handler(
            |shop: State<Shop>, order: Order| async move {
                let mut orders = shop.orders.lock();
                orders.push(order.item.clone());
                Ok(format!("Ordered {} ({} so far)", order.item, orders.len()))
            },
        ))
        .build()?;
    let app = Router::new()
        .route("/orders", get(orders_page))
        .with_state(shop)
        .route_service("/mcp", McpService::new(server, HttpConfig::default()));

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    println!("MCP at http://{addr}/mcp, orders at http://{addr}/orders");
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });
    if serve {
        serving.await??;
        return Ok(());
    }

    let client = Client::builder()
        .http(format!("http://{addr}/mcp"))
        .build()
        .await?;
    for item in ["kite", "map"] {
        let result = client.call_tool("order", json!({ "item": item })).await?;
        let text = serde_json::to_value(&result.content)?;
        println!(
            "the tool answers: {}",
            text[0]["text"].as_str().unwrap_or_default()
        );
    }
    client.close().await?;

    // The page sees what the tool did.
    let page = get_page(addr, "/orders").await?;
    print!("GET /orders: {page}");
    assert_eq!(page, "2 orders: kite, map\n");
    Ok(())
}

/// A plain HTTP/1.1 GET on loopback; the response body.
async fn get_page(addr: std::net::SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n").as_bytes(),
        )
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    Ok(response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default())
}
