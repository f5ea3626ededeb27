//! Ferry: the Model Context Protocol (revision 2026-07-28) for Rust.
//!
//! This crate gathers Ferry's parts behind one dependency:
//!
//! - [`server`]: build servers: tools, resources, prompts, completion, subscriptions, and
//!   asks (`ctx.elicit`) that work on both protocol eras, with `requestState` sealed and
//!   bound by default (feature `server`); arguments are validated against each tool's
//!   schema by a built-in validator for what `schemars` derives, and by a general JSON
//!   Schema engine for anything beyond it (feature `json-schema`, on by default; without
//!   it, such a tool is refused when the server is built);
//! - [`stdio`] and [`http`]: serve them over stdio or Streamable HTTP (features `stdio`,
//!   `http`);
//! - [`client`]: call servers of either era, with the multi round-trip loop driven by your
//!   input handler (feature `client`);
//! - [`otel`]: OpenTelemetry from the standard `OTEL_*` variables: OTLP export of the
//!   request spans and MCP metrics, Prometheus text (feature `otel`);
//! - [`protocol`]: every message type, for code that speaks the wire directly.
//!
//! ```no_run
//! use ferry::server::{tool, Context, Server};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct EchoArgs {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! #[tokio::main]
//! async fn main() -> std::io::Result<()> {
//!     let server = Server::builder("echo-server", "1.0.0")
//!         .tool(tool("echo").description("Returns its text").handler(
//!             |_ctx: Context, args: EchoArgs| async move { Ok(args.text) },
//!         ))
//!         .build()
//!         .expect("valid definitions");
//!     ferry::stdio::serve_stdio(server).await
//! }
//! ```
#![forbid(unsafe_code)]

pub use ferry_form as form;
pub use ferry_form::{Form, FormEnum};
pub use ferry_protocol as protocol;
pub use ferry_state as state;

#[cfg(feature = "server")]
pub use ferry_server as server;

#[cfg(feature = "stdio")]
pub use ferry_stdio as stdio;

#[cfg(feature = "http")]
pub use ferry_http as http;

#[cfg(feature = "client")]
pub use ferry_client as client;

#[cfg(feature = "llm")]
pub use ferry_llm as llm;

#[cfg(feature = "auth")]
pub use ferry_auth as auth;

#[cfg(feature = "otel")]
pub use ferry_otel as otel;

/// The repository README's examples, compiled and run as doctests (with every feature:
/// `cargo test -p ferry --all-features --doc`).
#[cfg(all(doctest, feature = "client", feature = "llm"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExamples;
