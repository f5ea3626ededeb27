//! URL-mode elicitation: a tool sends the user to a web page of its own and goes on
//! once the page was completed. On 2026-07-28 each round is a new request, so the tool
//! carries its flow id across rounds (`ctx.carry`, sealed in `requestState`) and checks
//! whether the page was finished when the retry arrives; until then it asks again.
//!
//! The example serves the tool and the page on 127.0.0.1; its client "opens" the page
//! (an HTTP GET, as a browser would) when asked, and the call completes.
//!
//! ```sh
//! cargo run -p ferry --features client --example url_mode
//! ```

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::{Query, State as AppState};
use axum::routing::get;
use ferry::client::Client;
use ferry::client::handler::FnHandler;
use ferry::http::{HttpConfig, McpService};
use ferry::protocol::elicitation::ElicitResult;
use ferry::server::{Context, Server, State, UrlConsent, tool};
use parking_lot::Mutex;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Connection flows: started by the tool, finished by the page.
#[derive(Clone, Default)]
struct Flows {
    next: Arc<AtomicU64>,
    finished: Arc<Mutex<HashSet<u64>>>,
}

#[derive(Deserialize)]
struct FlowQuery {
    flow: u64,
}

/// The page the user is sent to: here, opening it is enough to finish the flow (a real
/// page would sign the user in and ask for consent first).
async fn connect_page(AppState(flows): AppState<Flows>, Query(q): Query<FlowQuery>) -> String {
    flows.finished.lock().insert(q.flow);
    "Calendar connected. You can close this page.\n".to_owned()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let base = format!("http://{addr}");

    let flows = Flows::default();
    let server = Server::builder("calendar", "1.0.0")
        .state(flows.clone())
        .tool(
            tool("connect_calendar")
                .description("Connects your calendar on a web page")
                .handler(move |ctx: Context, flows: State<Flows>| {
                    let base = base.clone();
                    async move {
                        // The same flow on every round: carried, not started again.
                        let flow = match ctx.carried::<u64>() {
                            Some(flow) => flow,
                            None => flows.next.fetch_add(1, Ordering::Relaxed),
                        };
                        if flows.finished.lock().contains(&flow) {
                            return Ok("Calendar connected".to_owned());
                        }
                        ctx.carry(&flow)?;
                        let consent = ctx
                            .elicit_url(
                                "Open this page to connect your calendar.",
                                format!("{base}/connect?flow={flow}"),
                            )
                            .await?;
                        Ok(match consent {
                            // Accept means the page was opened; the next round checks
                            // whether it was finished.
                            UrlConsent::Accept if flows.finished.lock().contains(&flow) => {
                                "Calendar connected".to_owned()
                            }
                            UrlConsent::Accept => "The page was not finished".to_owned(),
                            UrlConsent::Decline | UrlConsent::Cancel => {
                                "Calendar not connected".to_owned()
                            }
                        })
                    }
                }),
        )
        .build()?;
    let app = Router::new()
        .route("/connect", get(connect_page))
        .with_state(flows)
        .route_service("/mcp", McpService::new(server, HttpConfig::default()));
    tokio::spawn(async move { axum::serve(listener, app).await });

    let client = Client::builder()
        .http(format!("http://{addr}/mcp"))
        .input_handler(FnHandler::new().on_url(move |request| {
            println!("the server asks: {} {}", request.message, request.url);
            let url = request.url.clone();
            async move {
                // "Open" the page, as the user's browser would.
                match open(addr, &url).await {
                    Ok(page) => {
                        print!("the page says: {page}");
                        ElicitResult::accept_without_content()
                    }
                    Err(_) => ElicitResult::cancel(),
                }
            }
        }))
        .build()
        .await?;
    let result = client
        .call_tool("connect_calendar", serde_json::json!({}))
        .await?;
    let text = serde_json::to_value(&result.content)?;
    println!(
        "the tool answers: {}",
        text[0]["text"].as_str().unwrap_or_default()
    );
    assert_eq!(text[0]["text"], "Calendar connected");
    client.close().await?;
    Ok(())
}

/// A plain HTTP/1.1 GET of `url` (on `addr`, loopback); the response body.
async fn open(addr: std::net::SocketAddr, url: &str) -> std::io::Result<String> {
    let path = url
        .split_once(&addr.to_string())
        .map(|(_, p)| p)
        .unwrap_or("/");
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
