//! An MRTR-aware Model Context Protocol gateway: one 2026-07-28 endpoint in front of
//! many MCP servers.
//!
//! - **Lists merged, names namespaced.** With one upstream names are unchanged; with
//!   several, tools, prompts and resource templates are prefixed `upstream.name`
//!   ([`names`]), and calls are routed by prefix (resource reads by the URIs and
//!   templates the upstreams list).
//! - **A state policy stronger than the upstream's.** Each upstream `requestState` is
//!   sealed inside the gateway's own envelope ([`Envelope`]), bound to the principal, the
//!   method, name and arguments, with an expiry and a nonce, and redeemed at most once
//!   (in memory, or in Redis for several instances). Tampered, expired, replayed,
//!   cross-principal and cross-request states are refused at the gateway with
//!   ferry-server's own error (-32602 `Invalid or expired requestState`), even when
//!   the upstream would accept them.
//! - **Metering per round trip.** Every round of a logical call goes through a
//!   [`Meter`] (reserve, then settle or release), linked by a call id kept inside the
//!   sealed envelope; [`JsonLinesMeter`] appends one JSON line per round. Prometheus
//!   text is served at `GET /metrics`. A call may take at most
//!   [`GatewayConfig::max_rounds`] rounds.
//! - **Edge policy.** The client's `Authorization` never goes upstream; each upstream
//!   gets its own bearer token from an environment variable; tools are allowed or
//!   denied per upstream. Requests can be rate limited per principal
//!   ([`GatewayConfig::rate_limit`]), and new calls per principal and tool
//!   ([`GatewayConfig::tool_rate_limit`]): HTTP 429 with `Retry-After`, counted in
//!   Redis when one is configured, so that every instance enforces one budget.
//! - **Tasks through.** An upstream's tasks reach clients that declare the extension
//!   under task ids of the gateway's own, sealed and bound to the principal; `tasks/*`
//!   requests go to the task's upstream, and listen streams that name task ids get each
//!   task's `notifications/tasks` from its upstream, under the gateway's id.
//! - **Both eras, both ways.** 2025-11-25 clients are asked the upstream's questions on
//!   their session. A 2025-11-25 upstream's questions, asked in the middle of a call,
//!   reach 2026-07-28 clients as an `InputRequiredResult` (under [`INPUT_KEY`]) while the
//!   gateway holds the upstream call open until the retry brings the answer.
//! - **List changes through.** Each upstream that announces list changes is listened to
//!   once per instance; its `tools`, `prompts` and `resources` list changes reach the
//!   gateway's own `subscriptions/listen` streams and 2025-11-25 sessions.
//!
//! The gateway is Ferry's server ([`ferry_server::Forward`] hook) in front and Ferry's
//! client (era detection and fallback included) behind each upstream.
//!
//! ```no_run
//! use ferry_gateway::{Gateway, GatewayConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = GatewayConfig::from_toml(r#"
//!     [[upstream]]
//!     name = "files"
//!     url = "http://127.0.0.1:9000/mcp"
//!     [[upstream]]
//!     name = "demo"
//!     command = "ferry-everything --stdio"
//! "#)?;
//! let listener = tokio::net::TcpListener::bind(&config.listen).await?;
//! let gateway = Gateway::builder(config).build().await?;
//! gateway.serve(listener, ferry_http::shutdown_signal()).await?;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod bridge;
mod changes;
mod config;
mod envelope;
mod error;
mod gateway;
mod limit;
mod meter;
mod metrics;
pub mod names;
mod serve;
mod tasks;
mod upstream;

pub use bridge::INPUT_KEY;
pub use config::{
    ClientCredentials, DEFAULT_MAX_HELD_CALLS, DEFAULT_MAX_ROUNDS, DEFAULT_PAGE_SIZE,
    GatewayConfig, MAX_UPSTREAM_NAME, UpstreamConfig, UpstreamEra, UpstreamTarget, is_valid_name,
};
pub use envelope::{Bound, Envelope, Envelopes, Refused};
pub use error::{ConfigError, StartError};
pub use limit::RATE_LIMITED;
pub use meter::{
    JsonLinesMeter, Meter, MeterRefusal, NoMeter, Reservation, RoundOutcome, RoundRecord,
    RoundStart,
};
pub use metrics::Metrics;
pub use serve::{Gateway, GatewayBuilder};
pub use tasks::TASK_ID_TTL;
pub use upstream::{MAX_LIST_PAGES, UPSTREAM_TIMEOUT, Upstream};

/// Compiles the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
