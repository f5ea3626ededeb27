//! Test support shared by Ferry's integration tests.
//!
//! - [`rpc`]: 2026-07-28 requests with the required `_meta`, notifications, capability sets.
//! - [`check`]: every message a test receives is checked against the specification's
//!   `schema.json` (and a few rules the schema cannot express) before the test sees it.
//! - [`logs`]: log output kept in memory for a test to read.
//! - [`lines`]: a client for newline-delimited JSON-RPC (stdio framing) over any pipe.
//! - [`http`]: a small Streamable HTTP client that derives the MCP headers from the body
//!   and reads JSON and SSE responses.
//! - [`serve`]: an endpoint on 127.0.0.1 for the length of a test.
//! - [`process`]: peers in other processes, and waiting until they listen.
//! - [`python`]: the official Python SDK's server as a peer, over stdio or HTTP.
//! - [`content`]: what tool results say.
//! - [`elicit`]: answers to form questions, as a client's input handler gives them.
//! - [`services`]: `redis-server` and `nginx` of a test's own, on loopback.
//! - [`browser`]: headless Chromium through chromedriver (WebDriver).
//! - [`authorization_server`]: a real OAuth 2.1 authorization server (oidc-provider).
//! - [`otlp`]: a real OTLP receiver (rotel) and a parser for the spans it printed.
//! - `probe` (feature `server`): tools built on ferry-server that echo, block, hang,
//!   count, name their caller or panic, and a probe to watch and steer them.
//!
//! Every wait has a timeout ([`TIMEOUT`]), so a hung server fails a test instead of
//! hanging it.

use std::future::Future;
use std::time::Duration;

pub mod authorization_server;
pub mod browser;
pub mod check;
pub mod content;
pub mod elicit;
pub mod http;
pub mod lines;
pub mod logs;
pub mod otlp;
#[cfg(feature = "server")]
pub mod probe;
pub mod process;
pub mod python;
pub mod rpc;
pub mod serve;
pub mod services;

/// How long any single wait of a test may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// Awaits `fut`, failing the test with `what` if it takes longer than [`TIMEOUT`].
pub async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    within_for(TIMEOUT, what, fut).await
}

/// Awaits `fut`, failing the test with `what` if it takes longer than `limit`.
pub async fn within_for<F: Future>(limit: Duration, what: &str, fut: F) -> F::Output {
    match tokio::time::timeout(limit, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {limit:?} waiting for {what}"),
    }
}

/// Polls `cond` every few milliseconds until it holds, failing the test with `what`
/// after [`TIMEOUT`].
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    within(what, async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
}
