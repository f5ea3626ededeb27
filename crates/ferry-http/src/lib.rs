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
//! - [`serve`] speaks HTTP/1.1 through a connection built for this job: it holds no buffer
//!   while a response streams or the connection idles, so ten thousand open
//!   `subscriptions/listen` streams fit in a few tens of MiB. It caps open connections,
//!   closes idle ones, and rides out accept errors such as running out of file
//!   descriptors. HTTP/2 with prior knowledge is opt-in ([`HttpConfig::http2`]) and
//!   served by hyper.
//! - One [`HttpConfig`], checked when it is built, holds every limit: the endpoint's and
//!   its connections'.
//!
//! ```no_run
//! use ferry_http::{HttpConfig, McpService};
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = ferry_server::Server::builder("demo", "1.0.0").build().unwrap();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! ferry_http::serve(listener, McpService::new(server, HttpConfig::default()))
//!     .with_graceful_shutdown(ferry_http::shutdown_signal())
//!     .await
//! # }
//! ```
//!
//! With your own pages beside the endpoint, a layer in front of it, and readiness that
//! follows a backend:
//!
//! ```no_run
//! use std::time::Duration;
//! use ferry_http::{HttpConfig, McpService};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = ferry_server::Server::builder("demo", "1.0.0").build().unwrap();
//! let config = HttpConfig::builder()
//!     .max_body_bytes(1 << 20)
//!     .idle_timeout(Duration::from_secs(30))
//!     .drain_grace(Duration::from_secs(10))
//!     .build()?;
//! let pages = axum::Router::new().route("/", axum::routing::get(|| async { "hello" }));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! ferry_http::serve(listener, McpService::new(server, config))
//!     .layer(tower::limit::ConcurrencyLimitLayer::new(256))
//!     .app(pages)
//!     .readiness(|| async { true })
//!     .with_graceful_shutdown(ferry_http::shutdown_signal())
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! Authorization is `ferry-auth`'s resource-server layer (`ferry_auth::AuthLayer`),
//! added with [`Serve::layer`]; its Protected Resource Metadata goes in
//! [`Serve::app`]. ferry-http does not depend on ferry-auth. The crate README has the
//! example.
//!
//! `GET /healthz` and `GET /readyz` are served beside the endpoint, and the shutdown
//! signal drains the server (see [`Serve`]).
//!
//! Inside an axum app served by axum, mount the service at a path (the connection limits
//! are then axum's and hyper's):
//!
//! ```no_run
//! # use ferry_http::{HttpConfig, McpService};
//! # let server = ferry_server::Server::builder("demo", "1.0.0").build().unwrap();
//! let app: axum::Router = axum::Router::new()
//!     .route_service("/mcp", McpService::new(server, HttpConfig::default()));
//! ```
#![forbid(unsafe_code)]

mod body;
mod config;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod h1;
mod legacy;
mod request_body;
mod serve;
mod service;
mod status;

pub use body::McpBody;
pub use config::{
    ConfigError, HttpConfig, HttpConfigBuilder, MAX_CONNECTIONS, MAX_DURATION, MAX_STREAM_BUFFER,
    OriginPolicy, default_max_connections,
};
pub use request_body::{BoxError, RequestBody};
pub use serve::{
    NotFound, READINESS_TIMEOUT, ReadinessProbe, Serve, ServeFuture, serve, shutdown_signal,
};
pub use service::McpService;
pub use status::{reply_status, status_of};
