//! The official Python SDK's client (mcp 2.3.0) completes `confirm_delete` with an
//! elicitation against ferry-everything, in every mode it has (2026-07-28, auto, legacy)
//! and over both transports.
//!
//! Skipped when python3 or the `mcp` package is missing, except in CI (`FERRY_CI` or
//! `FERRY_REQUIRE_INTEROP` set), where that is a failure.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use ferry_everything::app::{PageState, StaticTokens, router};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use serde_json::Value;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/python_client.py")
}

fn python_ready() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import mcp"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok
        && (std::env::var_os("FERRY_CI").is_some()
            || std::env::var_os("FERRY_REQUIRE_INTEROP").is_some())
    {
        panic!("python3 with mcp==2.3.0 is required here: python3 -m pip install mcp==2.3.0");
    }
    ok
}

async fn run(target: String, mode: &'static str, action: &'static str) -> Value {
    let out = tokio::task::spawn_blocking(move || {
        Command::new("timeout")
            .args(["60", "python3"])
            .arg(script())
            .args([target.as_str(), mode, action])
            .output()
            .expect("python3 runs")
    })
    .await
    .expect("joined");
    assert!(
        out.status.success(),
        "python client failed ({mode}, {action}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(line.trim().lines().last().unwrap_or_default()).expect("one JSON line")
}

fn check(v: &Value, protocol: &str, action: &str) {
    assert_eq!(v["protocol"], protocol, "{v}");
    assert_eq!(v["asked"][0], "Delete /tmp/report.txt?", "{v}");
    let expected = match action {
        "accept" => "Deleted /tmp/report.txt",
        "decline" => "Kept /tmp/report.txt",
        _ => "Cancelled",
    };
    assert_eq!(v["text"], expected, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_over_http_in_every_mode() {
    if !python_ready() {
        eprintln!("skipped: python3 with mcp==2.3.0 not installed");
        return;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let everything = build(Options::default()).expect("server builds");
    let state = Arc::new(PageState {
        connections: everything.connections.clone(),
        links: everything.links.clone(),
        tokens: StaticTokens::new(),
    });
    let app = router(everything.server, HttpConfig::default(), state, false)
        .expect("the application builds");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app.into_make_service()).await;
    });
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
    if !python_ready() {
        eprintln!("skipped: python3 with mcp==2.3.0 not installed");
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
