//! The official Python SDK's client (mcp 2.3.0) completes `confirm_delete` with an
//! elicitation against ferry-everything, in every mode it has (2026-07-28, auto, legacy)
//! and over both transports.
//!
//! Skipped when python3 or the `mcp` package is missing, except in CI (`FERRY_CI` or
//! `FERRY_REQUIRE_INTEROP` set), where that is a failure.

use ferry_everything::app::{StaticTokens, app};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use ferry_testkit::python;
use ferry_testkit::serve::Background;
use serde_json::Value;

async fn run(target: String, mode: &'static str, action: &'static str) -> Value {
    let out = python::run_client(&target, mode, action).await;
    assert!(
        out.status.success(),
        "python client failed ({mode}, {action}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    python::client_report(&out)
}

fn check(v: &Value, protocol: &str, action: &str) {
    assert_eq!(v["protocol"], protocol, "{v}");
    let asked = v["asked"][0].as_str().unwrap_or_default();
    assert!(asked.starts_with("Delete report.txt from "), "{v}");
    let expected = match action {
        "accept" => "Nothing deleted: report.txt does not exist in ",
        "decline" => "Kept report.txt: nothing deleted",
        _ => "Cancelled: nothing deleted",
    };
    let text = v["text"].as_str().unwrap_or_default();
    assert!(text.starts_with(expected), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_http_in_every_mode() {
    if !python::sdk_available() {
        return;
    }
    let everything = build(Options::default()).expect("server builds");
    let app = app(
        everything,
        HttpConfig::default(),
        StaticTokens::new(),
        false,
    )
    .expect("the application builds");
    let addr = Background::router(app, "/mcp").await.detach();
    let url = format!("http://{addr}/mcp");
    for (mode, protocol) in [
        ("2026-07-28", "2026-07-28"),
        ("auto", "2026-07-28"),
        ("legacy", "2025-11-25"),
    ] {
        for action in ["accept", "decline", "cancel"] {
            check(&run(url.clone(), mode, action).await, protocol, action);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_stdio_in_every_mode() {
    if !python::sdk_available() {
        return;
    }
    let target = format!("stdio:{}", env!("CARGO_BIN_EXE_ferry-everything"));
    for (mode, protocol) in [
        ("2026-07-28", "2026-07-28"),
        ("auto", "2026-07-28"),
        ("legacy", "2025-11-25"),
    ] {
        check(
            &run(target.clone(), mode, "accept").await,
            protocol,
            "accept",
        );
    }
    check(
        &run(target, "legacy", "decline").await,
        "2025-11-25",
        "decline",
    );
}
