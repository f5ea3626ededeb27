//! Real peers for the gateway's tests: the official Python SDK server, ferry-everything,
//! and the gateway itself, all on 127.0.0.1 with ports chosen by the system.

#![allow(dead_code)]

use std::path::Path;

use ferry_gateway::{Gateway, GatewayConfig, UpstreamConfig};
use ferry_http::{HttpConfig, McpService};
use ferry_testkit::http::{post_url, post_url_response};
use ferry_testkit::python::PythonServer;
use ferry_testkit::rpc;
use serde_json::{Value, json};
use tokio::process::Child;

#[allow(unused_imports)]
pub use ferry_testkit::python::sdk_available as python_sdk_available;

/// The Python SDK's server over Streamable HTTP, its confirming tool `confirm_delete`.
pub async fn python_upstream() -> (Child, String) {
    PythonServer::new()
        .name("python-upstream")
        .delete_tool("confirm_delete")
        .http()
        .await
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
    serve(config).await
}

/// A gateway in front of `upstreams` that needs no token; returns its base URL.
pub async fn open_gateway(upstreams: Vec<UpstreamConfig>) -> String {
    let mut config = GatewayConfig::default();
    config.upstreams = upstreams;
    serve(config).await
}

/// The gateway `config` describes, on a free loopback port; returns its base URL.
pub async fn serve(config: GatewayConfig) -> String {
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
    post_url(
        url,
        token,
        &rpc::request_with(id, method, params, rpc::form_caps()),
    )
    .await
}

/// [`post`], with the HTTP status and headers of the response.
pub async fn post_response(
    url: &str,
    token: Option<&str>,
    id: u64,
    method: &str,
    params: Value,
) -> (http::StatusCode, http::HeaderMap, Value) {
    post_url_response(
        url,
        token,
        &rpc::request_with(id, method, params, rpc::form_caps()),
    )
    .await
}

/// The gateway's Prometheus text, from `GET {base}/metrics` (`base` as [`serve`] returns it).
pub async fn metrics(base: &str) -> String {
    reqwest::get(format!("{base}/metrics"))
        .await
        .expect("GET /metrics is answered")
        .text()
        .await
        .expect("a body")
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

/// A form handler that accepts `confirm: true` and records each question's message.
pub fn confirm_recording(
    asked: std::sync::Arc<parking_lot::Mutex<Vec<String>>>,
) -> ferry_client::FnHandler {
    ferry_client::FnHandler::new().on_form(move |form| {
        asked.lock().push(form.message.clone());
        async move { ferry_testkit::elicit::confirm("accept") }
    })
}
