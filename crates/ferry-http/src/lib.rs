//! Streamable HTTP transport for Ferry MCP servers (MCP 2026-07-28
//! `transports/streamable-http`).
//!
//! - One endpoint, POST only: GET and DELETE get 405 and `Mcp-Session-Id` is ignored.
//! - Each POST is an independent request, even when JSON-RPC ids repeat across POSTs.
//! - Responses are JSON, or SSE when the handler streams progress or log messages and for
//!   `subscriptions/listen` (with `X-Accel-Buffering: no` and keep-alive comments).
//! - `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` are checked against
//!   the body (400 with -32020), with `=?base64?…?=` decoding.
//! - `Origin` and `Host` are validated (403), bodies are size-limited (413), handlers are
//!   time-limited, and closing a stream cancels its handler.
//! - [`serve`] and [`serve_app`] speak HTTP/1.1 through a connection built for this job: it
//!   holds no buffer while a response streams, so ten thousand open
//!   `subscriptions/listen` streams fit in a few tens of MiB. HTTP/2 with prior knowledge
//!   is opt-in ([`HttpConfig::http2`]) and served by hyper.
//!
//! ```no_run
//! use ferry_http::{HttpConfig, McpService};
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = ferry_server::Server::builder("demo", "1.0.0").build().unwrap();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! ferry_http::serve(listener, "/mcp", McpService::new(server, HttpConfig::default())).await
//! # }
//! ```
//!
//! Inside an axum app, mount the service at a path:
//!
//! ```no_run
//! # use ferry_http::{HttpConfig, McpService};
//! # let server = ferry_server::Server::builder("demo", "1.0.0").build().unwrap();
//! let app: axum::Router = axum::Router::new()
//!     .route_service("/mcp", McpService::new(server, HttpConfig::default()));
//! ```
#![forbid(unsafe_code)]

mod auth;
mod body;
mod config;
mod h1;
mod legacy;
mod request_body;
mod serve;
mod service;
mod status;

pub use auth::{BearerAuth, BearerAuthLayer, StaticTokens, TokenVerifier};
pub use body::McpBody;
pub use config::{HttpConfig, OriginPolicy};
pub use request_body::{BoxError, RequestBody};
pub use serve::{
    NotFound, ServeOptions, bind_and_serve, serve, serve_app, serve_with_shutdown, shutdown_signal,
};
pub use service::McpService;
pub use status::{reply_status, status_of};
