//! Real peers for the gateway's tests: the official Python SDK server, ferry-everything,
//! and the gateway itself, all on 127.0.0.1 with ports chosen by the system.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use ferry_gateway::{Gateway, GatewayConfig, UpstreamConfig};
use ferry_http::{HttpConfig, McpService};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

const PACKAGE_VERSION: &str = "2.3.0";

/// Whether the Python SDK is installed; a missing SDK fails in CI (`FERRY_CI` or
/// `FERRY_REQUIRE_INTEROP` set) and skips elsewhere, saying why.
pub fn python_sdk_available() -> bool {
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
            format!("mcp {version} is installed, these tests need {PACKAGE_VERSION}")
        }
    };
    let required = ["FERRY_REQUIRE_INTEROP", "FERRY_CI"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    assert!(!required, "the Python SDK is required here, but {problem}");
    eprintln!("skipping: {problem} (pip install mcp=={PACKAGE_VERSION})");
    false
}

/// The Python upstream over Streamable HTTP; it binds port 0 and prints its port.
pub async fn python_upstream() -> (Child, String) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/upstream.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the Python upstream");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let port = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the Python upstream printed its port in time")
        .expect("read")
        .expect("a line")
        .trim()
        .to_owned();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap()))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no Python upstream"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, url)
}

/// ferry-everything over Streamable HTTP, in this process.
pub async fn everything_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let everything = ferry_everything::build(ferry_everything::Options::default()).unwrap();
    let mcp = McpService::new(everything.server, HttpConfig::default());
    tokio::spawn(async move {
        let _ = ferry_http::serve(listener, mcp).await;
    });
    format!("http://{addr}/mcp")
}

/// A gateway in front of `upstreams`, with principals alice and bob and a usage log in
/// `dir`; returns its base URL (`http://addr`).
pub async fn gateway(upstreams: Vec<UpstreamConfig>, dir: &Path, max_rounds: u32) -> String {
    let mut config = GatewayConfig::default();
    config.upstreams = upstreams;
    config.usage_log = Some(dir.join("usage.jsonl"));
    config.max_rounds = max_rounds;
    config.dev_tokens = vec!["alice=alice-token".into(), "bob=bob-token".into()];
    let gateway = Gateway::builder(config)
        .build()
        .await
        .expect("gateway starts");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    format!("http://{addr}")
}

/// The usage log's records.
pub fn usage(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("usage.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// One raw 2026-07-28 JSON-RPC request over Streamable HTTP, as a client sends it;
/// returns the response message.
pub async fn post(url: &str, token: Option<&str>, id: u64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(body.to_string());
    if let Some(n) = name {
        req = req.header("mcp-name", n);
    }
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.expect("the request is answered");
    let text = resp.text().await.expect("a body");
    // A JSON body, or an SSE stream whose last data line is the response.
    let json_text = if text.trim_start().starts_with('{') {
        text
    } else {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|l| l.starts_with('{'))
            .unwrap_or_default()
            .to_owned()
    };
    serde_json::from_str(&json_text).unwrap_or_else(|e| panic!("not JSON ({e}): {json_text}"))
}

/// The answer accepting a `confirm` form, keyed like the result's only input request.
pub fn accept_all(result: &Value) -> Value {
    let mut answers = serde_json::Map::new();
    for key in result["inputRequests"]
        .as_object()
        .expect("inputRequests")
        .keys()
    {
        answers.insert(
            key.clone(),
            json!({"action": "accept", "content": {"confirm": true}}),
        );
    }
    Value::Object(answers)
}

/// The first text block of a result.
pub fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
