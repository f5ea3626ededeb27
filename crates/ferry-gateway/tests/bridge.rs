//! 2026-07-28 clients through the gateway to an upstream spoken to in 2025-11-25 (the
//! upstream's `era = "2025-11-25"`): the question the upstream asks in the middle of the
//! call (`elicitation/create` on the call's stream) reaches the client as an
//! `InputRequiredResult`, the call is held on the gateway, and the retry's answer goes to
//! the waiting upstream call. Ferry's client and the official Python SDK's (mcp 2.3.0)
//! complete `confirm_delete`, in front of ferry-everything and of the Python SDK's server;
//! a replayed retry is refused; a retry without the answer is asked again; an answer of
//! the wrong shape is refused; a call asking beyond the cap on held calls ends with an
//! error. On stdio, where the upstream's questions arrive tied to no call, two calls held
//! at once on the Python SDK's server each get their own answer. With two instances
//! sharing state keys and a ledger, a retry reaching the instance that does not hold the
//! call is passed on to the one that does (`advertise_url`); a forged pass-on is refused.

mod support;

use std::sync::Arc;

use ferry_client::{Client, Era};
use ferry_gateway::{Gateway, GatewayConfig, INPUT_KEY, UpstreamConfig, UpstreamEra};
use ferry_state::{KeyRing, MemoryLedger, ReplayLedger};
use ferry_testkit::python;
use serde_json::{Value, json};
use support::*;

const INVALID_STATE: &str = "Invalid or expired requestState";

fn legacy(name: &str, url: &str) -> UpstreamConfig {
    UpstreamConfig::http(name, url).with_era(UpstreamEra::Legacy)
}

fn call(path: &str) -> Value {
    json!({"name": "confirm_delete", "arguments": {"path": path}})
}

fn retry(first: &Value, answers: Value) -> Value {
    let mut params = call("notes.txt");
    params["inputResponses"] = answers;
    params["requestState"] = first["requestState"].clone();
    params
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_ferry_client_answers_a_legacy_upstreams_question_in_a_retry() {
    let upstream = everything_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![legacy("ev", &upstream)], dir.path(), 8).await;
    let asked = Arc::default();
    let client = Client::builder()
        .http(format!("{base}/mcp"))
        .bearer_token("alice-token")
        .input_handler(confirm_recording(Arc::clone(&asked)))
        .build()
        .await
        .expect("the client connects to the gateway");
    assert_eq!(client.era(), Era::Modern);

    let result = client
        .call_tool("confirm_delete", json!({"path": "notes.txt"}))
        .await
        .expect("tools/call through the bridge");
    let content = serde_json::to_value(&result.content).unwrap();
    let text = content[0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Deleted notes.txt"), "{content}");
    let asked = asked.lock().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].starts_with("Delete notes.txt from "), "{asked:?}");

    let records = usage(dir.path());
    assert_eq!(records.len(), 2, "{records:#?}");
    assert_eq!(records[0]["outcome"], "input_required");
    assert_eq!(records[0]["input_kinds"], json!(["elicitation/form"]));
    assert_eq!(records[1]["outcome"], "complete");
    assert_eq!(records[0]["call_id"], records[1]["call_id"]);
    assert_eq!(records[1]["round"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridged_call_is_redeemed_once_asked_again_without_an_answer_and_checks_its_answer() {
    let upstream = everything_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![legacy("ev", &upstream)], dir.path(), 8).await;
    let url = format!("{base}/mcp");
    let token = Some("alice-token");

    let first = post(&url, token, 1, "tools/call", call("notes.txt")).await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{first}");
    let question = &first["inputRequests"][INPUT_KEY];
    assert_eq!(question["method"], "elicitation/create", "{first}");
    assert!(
        question["params"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Delete notes.txt from ")),
        "{first}"
    );
    assert!(question["params"]["requestedSchema"]["properties"]["confirm"].is_object());

    // No answer in the retry: the same question, under a new state.
    let again = post(&url, token, 2, "tools/call", retry(first, json!({}))).await;
    let again = &again["result"];
    assert_eq!(again["resultType"], "input_required", "{again}");
    assert_eq!(again["inputRequests"][INPUT_KEY], *question);
    assert_ne!(again["requestState"], first["requestState"]);

    // The spent state is refused, although its call is still held.
    let spent = post(
        &url,
        token,
        3,
        "tools/call",
        retry(first, accept_all(first)),
    )
    .await;
    assert_eq!(spent["error"]["message"], INVALID_STATE, "{spent}");

    let done = post(
        &url,
        token,
        4,
        "tools/call",
        retry(again, accept_all(again)),
    )
    .await;
    assert!(
        text(&done["result"]).starts_with("Deleted notes.txt"),
        "{done}"
    );

    // Replaying the successful retry is refused at the gateway.
    let replay = post(
        &url,
        token,
        5,
        "tools/call",
        retry(again, accept_all(again)),
    )
    .await;
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    assert_eq!(replay["error"]["message"], INVALID_STATE, "{replay}");

    // An answer that is no elicitation result is refused, naming what it should be.
    let first = post(&url, token, 6, "tools/call", call("todo.txt")).await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{first}");
    let bad = json!({ INPUT_KEY: {"action": "maybe"} });
    let mut params = retry(first, bad);
    params["arguments"]["path"] = json!("todo.txt");
    let refused = post(&url, token, 7, "tools/call", params).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("inputResponses.upstream is not an elicitation result"),
        "{refused}"
    );

    let outcomes: Vec<Value> = usage(dir.path())
        .iter()
        .map(|r| r["outcome"].clone())
        .collect();
    assert_eq!(
        outcomes,
        [
            "input_required",
            "input_required",
            "complete",
            "input_required",
            "error"
        ],
        "the refused states never reach the meter"
    );
}

/// The `ferry_gateway_held_calls` lines of the gateway's `/metrics`, given its MCP
/// endpoint.
async fn held_calls(mcp: &str) -> String {
    metrics(mcp.trim_end_matches("/mcp"))
        .await
        .lines()
        .filter(|l| l.starts_with("ferry_gateway_held_calls"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_beyond_the_cap_on_held_calls_end_with_an_error() {
    let upstream = everything_upstream().await;
    let mut config = GatewayConfig::default();
    config.upstreams = vec![legacy("ev", &upstream)];
    config.max_held_calls = 1;
    let url = format!("{}/mcp", serve(config).await);

    let held = post(&url, None, 1, "tools/call", call("notes.txt")).await;
    let held = &held["result"];
    assert_eq!(held["resultType"], "input_required", "{held}");
    assert!(
        held_calls(&url)
            .await
            .contains("ferry_gateway_held_calls 1\n")
    );
    let refused = post(&url, None, 2, "tools/call", call("notes.txt")).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("too many calls waiting for input")),
        "{refused}"
    );
    // Once the held call is answered, the next one may wait.
    let done = post(&url, None, 3, "tools/call", retry(held, accept_all(held))).await;
    assert!(
        text(&done["result"]).starts_with("Deleted notes.txt"),
        "{done}"
    );
    assert!(
        held_calls(&url)
            .await
            .contains("ferry_gateway_held_calls 0\n")
    );
    let next = post(&url, None, 4, "tools/call", call("notes.txt")).await;
    assert_eq!(next["result"]["resultType"], "input_required", "{next}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_completes_a_call_to_the_python_sdk_server_over_the_bridge() {
    if !python_sdk_available() {
        return;
    }
    let (_python, python_url) = python_upstream().await;
    let open = open_gateway(vec![legacy("py", &python_url)]).await;
    let out = python::run_client(&format!("{open}/mcp"), "2026-07-28", "accept").await;
    assert!(
        out.status.success(),
        "python client: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = python::client_report(&out);
    assert_eq!(report["protocol"], "2026-07-28", "{report}");
    assert_eq!(report["asked"][0], "Delete report.txt?", "{report}");
    assert_eq!(report["text"], "Deleted report.txt", "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_calls_held_at_once_on_a_legacy_stdio_upstream_each_get_their_answer() {
    if !python_sdk_available() {
        return;
    }
    let script = python::script("server.py");
    let command = format!(
        "python3 {} --name python-upstream --delete-tool confirm_delete stdio",
        script.display()
    );
    let upstream = UpstreamConfig::stdio("py", command).with_era(UpstreamEra::Legacy);
    let url = format!("{}/mcp", open_gateway(vec![upstream]).await);
    let call = |path: &str| json!({"name": "confirm_delete", "arguments": {"path": path}});

    // A asks and is held; B then starts and asks while A waits: B's question is B's.
    let a = post(&url, None, 1, "tools/call", call("a.txt")).await;
    let a = &a["result"];
    assert_eq!(
        a["inputRequests"][INPUT_KEY]["params"]["message"], "Delete a.txt?",
        "{a}"
    );
    let b = post(&url, None, 2, "tools/call", call("b.txt")).await;
    let b = &b["result"];
    assert_eq!(
        b["inputRequests"][INPUT_KEY]["params"]["message"], "Delete b.txt?",
        "{b}"
    );

    let answer = |first: &Value, path: &str, confirm: bool| {
        let mut params = call(path);
        params["inputResponses"] =
            json!({ INPUT_KEY: {"action": "accept", "content": {"confirm": confirm}} });
        params["requestState"] = first["requestState"].clone();
        params
    };
    let b_done = post(&url, None, 3, "tools/call", answer(b, "b.txt", false)).await;
    assert_eq!(text(&b_done["result"]), "Kept b.txt", "{b_done}");
    let a_done = post(&url, None, 4, "tools/call", answer(a, "a.txt", true)).await;
    assert_eq!(text(&a_done["result"]), "Deleted a.txt", "{a_done}");
}

/// A gateway instance in front of `upstream` with `keys` and `ledger`, advertising its
/// own address; returns its MCP endpoint.
async fn instance(upstream: &str, keys: &KeyRing, ledger: Arc<dyn ReplayLedger>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let mut config = GatewayConfig::default();
    config.upstreams = vec![legacy("ev", upstream)];
    config.advertise_url = Some(base.clone());
    let gateway = Gateway::builder(config)
        .state_keys(keys.clone())
        .ledger(ledger)
        .build()
        .await
        .expect("the gateway starts");
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    format!("{base}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_reaching_another_instance_is_passed_on_to_the_one_holding_the_call() {
    let upstream = everything_upstream().await;
    let keys = KeyRing::random();
    let ledger: Arc<dyn ReplayLedger> = Arc::new(MemoryLedger::default());
    let a = instance(&upstream, &keys, Arc::clone(&ledger)).await;
    let b = instance(&upstream, &keys, Arc::clone(&ledger)).await;

    // Held on A; the retry without an answer reaches B, which asks A: still held on A.
    let first = post(&a, None, 1, "tools/call", call("notes.txt")).await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{first}");
    let again = post(&b, None, 2, "tools/call", retry(first, json!({}))).await;
    let again = &again["result"];
    assert_eq!(again["resultType"], "input_required", "{again}");
    assert_eq!(again["inputRequests"], first["inputRequests"]);

    // The answer reaches B again; B passes it on to A, whose upstream call completes.
    let done = post(&b, None, 3, "tools/call", retry(again, accept_all(again))).await;
    assert!(
        text(&done["result"]).starts_with("Deleted notes.txt"),
        "{done}"
    );
    let replay = post(&a, None, 4, "tools/call", retry(again, accept_all(again))).await;
    assert_eq!(replay["error"]["message"], INVALID_STATE, "{replay}");

    // A pass-on whose token was not made with the state keys is refused.
    let held_url = a.replace("/mcp", "/.ferry/held");
    let forged = json!({"held": "x", "upstream": "ev", "inputResponses": {}, "token": "forged"});
    let refused = reqwest::Client::new()
        .post(&held_url)
        .json(&forged)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
}
