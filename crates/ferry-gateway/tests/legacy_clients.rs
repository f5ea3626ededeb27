//! 2025-11-25 clients through the gateway to a 2026-07-28 upstream (ferry-everything):
//! the upstream's `InputRequiredResult` becomes a question on the client's session, and
//! its answer goes back to the upstream in the retry, round by round, each round metered
//! and its state sealed and redeemed once at the gateway, as for modern clients. Ferry's
//! client in legacy mode and the official Python SDK's (mcp 2.3.0) both complete
//! `confirm_delete`.

mod support;

use ferry_client::{Client, Era, EraMode};
use ferry_gateway::UpstreamConfig;
use ferry_testkit::python;
use serde_json::json;
use support::{everything_upstream, gateway, usage};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_ferry_client_answers_the_upstreams_question_on_its_session() {
    let upstream = everything_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![UpstreamConfig::http("ev", &upstream)], dir.path(), 8).await;
    let asked = std::sync::Arc::default();
    let client = Client::builder()
        .http(format!("{base}/mcp"))
        .bearer_token("alice-token")
        .era(EraMode::Legacy)
        .input_handler(support::confirm_recording(std::sync::Arc::clone(&asked)))
        .build()
        .await
        .expect("a 2025-11-25 session with the gateway");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");

    let tools = client.list_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "confirm_delete"));
    let result = client
        .call_tool("confirm_delete", json!({"path": "notes.txt"}))
        .await
        .expect("tools/call through the gateway");
    let content = serde_json::to_value(&result.content).unwrap();
    let text = content[0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Deleted notes.txt"), "{content}");
    let asked = asked.lock().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].starts_with("Delete notes.txt from "), "{asked:?}");

    let records = usage(dir.path());
    assert_eq!(records.len(), 2, "{records:#?}");
    assert_eq!(records[0]["outcome"], "input_required");
    assert_eq!(records[1]["outcome"], "complete");
    assert_eq!(records[0]["call_id"], records[1]["call_id"]);
    assert_eq!(records[1]["round"], 2);
    for r in &records {
        assert_eq!(r["principal"], "alice");
        assert_eq!(r["upstream"], "ev");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_in_legacy_mode_completes_an_eliciting_call() {
    if !python::sdk_available() {
        return;
    }
    let upstream = everything_upstream().await;
    // The Python client sends no token: a gateway without dev tokens.
    let open = support::open_gateway(vec![UpstreamConfig::http("ev", &upstream)]).await;
    for (mode, protocol) in [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")] {
        let out = python::run_client(&format!("{open}/mcp"), mode, "accept").await;
        assert!(
            out.status.success(),
            "python client ({mode}): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = python::client_report(&out);
        assert_eq!(report["protocol"], protocol, "{report}");
        assert!(
            report["asked"][0]
                .as_str()
                .is_some_and(|q| q.starts_with("Delete report.txt from ")),
            "{report}"
        );
        assert!(
            report["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("Nothing deleted: report.txt does not exist")),
            "{report}"
        );
    }
}
