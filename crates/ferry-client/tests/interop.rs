//! Interop with the official Python SDK (`mcp` 2.3.0): Ferry's client calls a tool of
//! `ferry-testkit`'s `python/server.py` that elicits, in the modern era and in the legacy era, over
//! Streamable HTTP and over stdio.
//!
//! Skipped (with a message) when `python3` or the `mcp` package is missing, unless
//! `FERRY_REQUIRE_INTEROP` or `FERRY_CI` is set (CI installs the package), which turns a
//! missing peer into a failure. See `tests/interop/README.md`.

use std::sync::Arc;

use ferry_client::ferry_protocol::content::ContentBlock;
use ferry_client::{Client, ClientBuilder, Era, EraCache, EraMode, FnHandler};
use ferry_testkit::elicit::confirm;
use ferry_testkit::python::{PythonServer, sdk_available as python_sdk_available};
use serde_json::json;
use tokio::process::{Child, Command};

/// The Python server over Streamable HTTP on a free 127.0.0.1 port.
async fn python_http() -> (Child, String) {
    PythonServer::new().http().await
}

fn python_stdio() -> Command {
    PythonServer::new().stdio()
}

fn handler(action: &'static str) -> FnHandler {
    FnHandler::new().on_form(move |form| {
        assert_eq!(form.message, "Delete /tmp/report.txt?");
        assert_eq!(form.context.server.name, "python-interop");
        assert!(form.schema.property("confirm").is_some());
        async move { confirm(action) }
    })
}

async fn exercise(builder: impl Fn(FnHandler) -> ClientBuilder, era: Era) {
    for (action, expected) in [
        ("accept", "Deleted /tmp/report.txt"),
        ("decline", "Kept /tmp/report.txt"),
        ("cancel", "Cancelled"),
    ] {
        let client: Client = builder(handler(action)).build().await.expect("connect");
        assert_eq!(client.era(), era);
        let tools = client.list_tools().await.expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "delete_file"));
        let r = client
            .call_tool("delete_file", json!({"path": "/tmp/report.txt"}))
            .await
            .expect("tools/call");
        let text = r.content.iter().find_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        });
        assert_eq!(
            text.as_deref(),
            Some(expected),
            "{action} in {era:?}: {r:?}"
        );
        let echo = client
            .call_tool("echo", json!({"text": "hé"}))
            .await
            .expect("echo");
        assert!(format!("{:?}", echo.content).contains("hé"));
        client.close().await.expect("close");
    }
}

#[tokio::test]
async fn python_sdk_over_http_modern_and_legacy() {
    if !python_sdk_available() {
        return;
    }
    let (_server, url) = python_http().await;
    let eras = Arc::new(EraCache::new());
    exercise(
        |h| {
            Client::builder()
                .http(&url)
                .era_cache(eras.clone())
                .input_handler(h)
        },
        Era::Modern,
    )
    .await;
    exercise(
        |h| {
            Client::builder()
                .http(&url)
                .era(EraMode::Legacy)
                .input_handler(h)
        },
        Era::Legacy,
    )
    .await;
}

#[tokio::test]
async fn python_sdk_over_stdio_modern_and_legacy() {
    if !python_sdk_available() {
        return;
    }
    exercise(
        |h| Client::builder().stdio(python_stdio()).input_handler(h),
        Era::Modern,
    )
    .await;
    exercise(
        |h| {
            Client::builder()
                .stdio(python_stdio())
                .era(EraMode::Legacy)
                .input_handler(h)
        },
        Era::Legacy,
    )
    .await;
}
