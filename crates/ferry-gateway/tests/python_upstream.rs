//! The gateway in front of the official Python SDK's server (mcp 2.3.0), whose
//! `confirm_delete` elicits: Ferry's client completes it through the gateway; a replayed
//! retry, a tampered state, another principal's state and a state for other arguments
//! are refused at the gateway although the Python server alone accepts a replay; the
//! usage log links the rounds of one call.
//!
//! Skipped when python3 or the `mcp` package is missing, except in CI (`FERRY_CI` or
//! `FERRY_REQUIRE_INTEROP` set), where that is a failure.

mod support;

use ferry_client::ferry_protocol::content::ContentBlock;
use ferry_client::{Client, FnHandler};
use ferry_gateway::UpstreamConfig;
use ferry_testkit::elicit::confirm;
use serde_json::{Value, json};
use support::*;

const INVALID_STATE: &str = "Invalid or expired requestState";

fn confirm_handler() -> FnHandler {
    FnHandler::new().on_form(|form| {
        assert_eq!(form.message, "Delete /tmp/report.txt?");
        async move { confirm("accept") }
    })
}

fn call_params(path: &str) -> Value {
    json!({"name": "confirm_delete", "arguments": {"path": path}})
}

fn with_retry(mut params: Value, first: &Value) -> Value {
    params["inputResponses"] = accept_all(first);
    params["requestState"] = first["requestState"].clone();
    params
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ferry_client_completes_an_eliciting_call_and_the_log_shows_two_linked_rounds() {
    if !python_sdk_available() {
        return;
    }
    let (_python, python_url) = python_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![UpstreamConfig::http("py", &python_url)], dir.path(), 8).await;

    let client = Client::builder()
        .http(format!("{base}/mcp"))
        .bearer_token("alice-token")
        .input_handler(confirm_handler())
        .build()
        .await
        .expect("the client connects to the gateway");
    let tools = client.list_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"confirm_delete"), "{names:?}");
    let result = client
        .call_tool("confirm_delete", json!({"path": "/tmp/report.txt"}))
        .await
        .expect("tools/call through the gateway");
    let text = result.content.iter().find_map(|b| match b {
        ContentBlock::Text(t) => Some(t.text.clone()),
        _ => None,
    });
    assert_eq!(text.as_deref(), Some("Deleted /tmp/report.txt"));

    let records = usage(dir.path());
    assert_eq!(records.len(), 2, "{records:#?}");
    let (first, second) = (&records[0], &records[1]);
    assert_eq!(first["outcome"], "input_required");
    assert_eq!(first["round"], 1);
    assert_eq!(first["input_kinds"], json!(["elicitation/form"]));
    assert_eq!(second["outcome"], "complete");
    assert_eq!(second["round"], 2);
    assert_eq!(first["call_id"], second["call_id"]);
    assert!(first["call_id"].as_str().is_some_and(|c| c.len() >= 16));
    for r in &records {
        assert_eq!(r["principal"], "alice");
        assert_eq!(r["upstream"], "py");
        assert_eq!(r["tool"], "confirm_delete");
        assert!(r["request_bytes"].as_u64().unwrap() > 0);
        assert!(r["response_bytes"].as_u64().unwrap() > 0);
    }

    let metrics = metrics(&base).await;
    assert!(
        metrics.contains(r#"ferry_gateway_rounds_total{upstream="py",outcome="input_required"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"ferry_gateway_rounds_total{upstream="py",outcome="complete"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains("ferry_gateway_upstream_latency_seconds_bucket"));
    assert!(
        metrics.contains(r#"ferry_gateway_rounds_per_call_sum{upstream="py"} 2.0"#),
        "{metrics}"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_retry_is_refused_at_the_gateway_though_python_accepts_it() {
    if !python_sdk_available() {
        return;
    }
    let (_python, python_url) = python_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![UpstreamConfig::http("py", &python_url)], dir.path(), 8).await;
    let url = format!("{base}/mcp");
    let alice = Some("alice-token");

    // The Python server alone: the same retry, sent twice, is answered twice.
    let first = post(&python_url, None, 1, "tools/call", call_params("/tmp/a")).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let retry = with_retry(call_params("/tmp/a"), &first["result"]);
    let once = post(&python_url, None, 2, "tools/call", retry.clone()).await;
    assert_eq!(text(&once["result"]), "Deleted /tmp/a", "{once}");
    let twice = post(&python_url, None, 3, "tools/call", retry).await;
    assert_eq!(text(&twice["result"]), "Deleted /tmp/a", "{twice}");

    // Through the gateway: the replay is refused.
    let first = post(&url, alice, 1, "tools/call", call_params("/tmp/a")).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(
        !state.starts_with("v1."),
        "the upstream's state is sealed inside the gateway's"
    );
    let retry = with_retry(call_params("/tmp/a"), &first["result"]);
    let once = post(&url, alice, 2, "tools/call", retry.clone()).await;
    assert_eq!(text(&once["result"]), "Deleted /tmp/a", "{once}");
    let twice = post(&url, alice, 3, "tools/call", retry).await;
    assert_eq!(twice["error"]["code"], -32602, "{twice}");
    assert_eq!(twice["error"]["message"], INVALID_STATE);

    let metrics = metrics(&base).await;
    assert!(
        metrics.contains(r#"ferry_gateway_state_refusals_total{reason="replayed"} 1"#),
        "{metrics}"
    );
    // The refused replay never reached the upstream: two rounds metered, not three.
    assert_eq!(usage(dir.path()).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_foreign_and_misdirected_states_are_refused() {
    if !python_sdk_available() {
        return;
    }
    let (_python, python_url) = python_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![UpstreamConfig::http("py", &python_url)], dir.path(), 8).await;
    let url = format!("{base}/mcp");

    let first = post(
        &url,
        Some("alice-token"),
        1,
        "tools/call",
        call_params("/tmp/b"),
    )
    .await;
    let retry = with_retry(call_params("/tmp/b"), &first["result"]);

    // Bob presents Alice's state.
    let bob = post(&url, Some("bob-token"), 2, "tools/call", retry.clone()).await;
    assert_eq!(bob["error"]["message"], INVALID_STATE, "{bob}");

    // Alice's state, one character changed.
    let mut tampered = retry.clone();
    let state = retry["requestState"].as_str().unwrap();
    let mut bytes = state.as_bytes().to_vec();
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    tampered["requestState"] = Value::String(String::from_utf8(bytes).unwrap());
    let r = post(&url, Some("alice-token"), 3, "tools/call", tampered).await;
    assert_eq!(r["error"]["message"], INVALID_STATE, "{r}");

    // Alice's state on a call with other arguments.
    let other = with_retry(call_params("/etc/passwd"), &first["result"]);
    let r = post(&url, Some("alice-token"), 4, "tools/call", other).await;
    assert_eq!(r["error"]["message"], INVALID_STATE, "{r}");

    // None of those redeemed it: Alice's own retry still completes.
    let r = post(&url, Some("alice-token"), 5, "tools/call", retry).await;
    assert_eq!(text(&r["result"]), "Deleted /tmp/b", "{r}");

    let metrics = metrics(&base).await;
    for reason in ["principal", "tampered", "request"] {
        let line = format!(r#"ferry_gateway_state_refusals_total{{reason="{reason}"}} 1"#);
        assert!(metrics.contains(&line), "{line} in {metrics}");
    }

    // Without a token the gateway does not answer at all.
    let resp = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_cap_ends_a_call_with_a_clear_error_and_denied_tools_are_hidden() {
    if !python_sdk_available() {
        return;
    }
    let (_python, python_url) = python_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let upstream = UpstreamConfig::http("py", &python_url).with_deny(["echo"]);
    let base = gateway(vec![upstream], dir.path(), 1).await;
    let url = format!("{base}/mcp");

    let r = post(
        &url,
        Some("alice-token"),
        1,
        "tools/call",
        call_params("/tmp/c"),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Too many rounds"), "{message}");
    assert_eq!(r["error"]["data"]["maxRounds"], 1);
    assert_eq!(usage(dir.path())[0]["outcome"], "error");

    let list = post(&url, Some("alice-token"), 2, "tools/list", json!({})).await;
    // A merged list is a complete 2026-07-28 result with the narrowest caching hints.
    assert_eq!(list["result"]["resultType"], "complete", "{list}");
    assert!(list["result"]["ttlMs"].is_u64(), "{list}");
    assert!(list["result"]["cacheScope"].is_string(), "{list}");
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["confirm_delete"]);
    let echo = json!({"name": "echo", "arguments": {"text": "hi"}});
    let r = post(&url, Some("alice-token"), 3, "tools/call", echo).await;
    assert_eq!(r["error"]["message"], "Unknown tool: echo", "{r}");
}
