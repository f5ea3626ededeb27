//! Interop with the official Python SDK (`mcp` 2.3.0): Ferry's client calls a tool of
//! `tests/interop/server.py` that elicits, in the modern era and in the legacy era, over
//! Streamable HTTP and over stdio.
//!
//! Skipped (with a message) when `python3` or the `mcp` package is missing, unless
//! `FERRY_REQUIRE_INTEROP` or `FERRY_CI` is set (CI installs the package), which turns a
//! missing peer into a failure. See `tests/interop/README.md`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_client::ferry_protocol::content::ContentBlock;
use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::{Client, ClientBuilder, Era, EraCache, EraMode, FnHandler};
use serde_json::json;
use tokio::process::{Child, Command};

const PACKAGE_VERSION: &str = "2.3.0";

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/server.py")
}

/// Whether the Python SDK is there; prints why not.
fn python_sdk_available() -> bool {
    let probe = std::process::Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output();
    let problem = match probe {
        Err(e) => format!("python3 is not available ({e})"),
        Ok(out) if !out.status.success() => "the Python package `mcp` is not installed".to_owned(),
        Ok(out) => {
            let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if version == PACKAGE_VERSION {
                return true;
            }
            format!("mcp {version} is installed, the interop tests need {PACKAGE_VERSION}")
        }
    };
    let required = ["FERRY_REQUIRE_INTEROP", "FERRY_CI"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    assert!(
        !required,
        "the interop test is required here, but {problem}"
    );
    eprintln!(
        "skipping the Python SDK interop test: {problem} (pip install mcp=={PACKAGE_VERSION})"
    );
    false
}

/// The Python server over Streamable HTTP on a free 127.0.0.1 port.
async fn python_http() -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let child = Command::new("python3")
        .arg(script())
        .args(["http", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the Python server");
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the Python server did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

fn python_stdio() -> Command {
    let mut cmd = Command::new("python3");
    cmd.arg(script()).arg("stdio").stderr(Stdio::null());
    cmd
}

fn handler(action: &'static str) -> FnHandler {
    FnHandler::new().on_form(move |form| {
        assert_eq!(form.message, "Delete /tmp/report.txt?");
        assert_eq!(form.context.server.name, "python-interop");
        assert!(form.schema.property("confirm").is_some());
        async move {
            match action {
                "accept" => ElicitResult::accept(BTreeMap::from([(
                    "confirm".to_owned(),
                    ElicitValue::Bool(true),
                )])),
                "decline" => ElicitResult::decline(),
                _ => ElicitResult::cancel(),
            }
        }
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
