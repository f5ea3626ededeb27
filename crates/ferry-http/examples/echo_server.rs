//! A minimal Streamable HTTP MCP server with one tool.
//!
//! ```sh
//! cargo run --release -p ferry-http --example echo_server -- 127.0.0.1:3000
//! ```
//! The endpoint is `http://127.0.0.1:3000/mcp`; Ctrl-C stops it gracefully.

use ferry_http::{HttpConfig, McpService};
use ferry_server::{Context, Server, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let server = Server::builder("echo-server", "1.0.0")
        .tool(
            tool("echo")
                .description("Returns its text")
                .handler(|_ctx: Context, args: EchoArgs| async move { Ok(args.text) }),
        )
        .build()
        .expect("valid definitions");
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("serving MCP at http://{}/mcp", listener.local_addr()?);
    ferry_http::serve(listener, McpService::new(server, HttpConfig::default()))
        .with_graceful_shutdown(ferry_http::shutdown_signal())
        .await
}
