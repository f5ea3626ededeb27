//! A Model Context Protocol client.
//!
//! `ferry-client` talks to MCP servers over **stdio** (it starts the server process) or
//! **Streamable HTTP**. It speaks revision **2026-07-28** and falls back to
//! **2025-11-25** on its own: it probes with `server/discover`, remembers each server's
//! era, and opens a legacy session with `initialize` when needed. Programs see one API
//! either way.
//!
//! - Typed requests: [`Client::discover`], [`Client::list_tools`],
//!   [`Client::call_tool`], [`Client::get_prompt`], [`Client::read_resource`],
//!   [`Client::complete`], ... with pagination ([`Client::list_tools_page`]).
//! - The server's questions (elicitation forms and URLs, sampling, roots) go to your
//!   [`InputHandler`], whether they come inside a 2026-07-28 multi round-trip request or
//!   as a 2025-11-25 server request. The client declares exactly the capabilities the
//!   handler enables. The `*_round` methods hand each round to you instead.
//! - Results of `server/discover`, the lists and `resources/read` are cached for their
//!   `ttlMs` and dropped early on matching change notifications.
//! - [`CallOptions`]: per-request timeout (which cancels), progress callback, extra
//!   `_meta`.
//! - [`Client::listen`]: change notifications as a [`futures::Stream`].
//! - Errors keep the server's JSON-RPC error ([`Error::Rpc`]) apart from local failures
//!   (timeouts, transport, protocol violations).
//!
//! ```no_run
//! use ferry_client::{CallOptions, Client, FnHandler};
//! use ferry_protocol::elicitation::ElicitResult;
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), ferry_client::Error> {
//! // Answer forms by accepting their defaults (a real program would ask the user).
//! let handler = FnHandler::new().on_form(|form| {
//!     println!("{} asks: {}", form.context.server, form.message);
//!     let answer = form.defaults();
//!     async move { ElicitResult::accept(answer) }
//! });
//! let client = Client::builder()
//!     .http("http://127.0.0.1:3000/mcp")
//!     .client_info("my-app", "1.0.0")
//!     .input_handler(handler)
//!     .build()
//!     .await?;
//! println!("connected to {:?} ({:?})", client.server_info(), client.era());
//!
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let options = CallOptions::new().on_progress(|p| println!("{:?}", p.fraction()));
//! let result = client
//!     .call_tool_with("echo", json!({ "text": "hello" }), &options)
//!     .await?;
//! println!("{:?}", result.content);
//! client.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Starting a server over stdio instead:
//!
//! ```no_run
//! # async fn run() -> Result<(), ferry_client::Error> {
//! let mut command = tokio::process::Command::new("ferry-everything");
//! command.arg("--stdio");
//! let client = ferry_client::Client::builder().stdio(command).build().await?;
//! # let _ = client;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod answer;
mod builder;
mod cache;
mod client;
pub mod era;
mod error;
pub mod handler;
mod listen;
mod mrtr;
mod options;
mod pages;
pub mod sse;
mod tasks;
pub mod telemetry;
mod tool_headers;
mod transport;

pub use builder::ClientBuilder;
pub use client::Client;
pub use era::{Era, EraCache, EraMode, KnownEra};
pub use error::{Error, Result, RpcError};
pub use handler::{
    AskContext, AskOrigin, AskingServer, FnHandler, FormRequest, HandlerCapabilities, InputHandler,
    NoInput, RootsRequest, SamplingRequest, UrlRequest,
};
pub use listen::{ServerNotification, Subscription};
pub use mrtr::Retry;
pub use options::{CallOptions, MrtrPolicy, Progress, ProgressFn, TaskStatusFn};
pub use tasks::TaskHandle;
pub use transport::stdio::StdioOptions;

/// Re-exported so users name the same protocol types as the client.
pub use ferry_protocol;

/// Re-exported so users name the same authorization types as the client.
pub use ferry_oauth;

/// Compiles the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
