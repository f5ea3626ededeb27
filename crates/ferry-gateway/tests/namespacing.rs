//! Two upstreams behind one gateway, the official Python SDK's server (`py`) and
//! ferry-everything (`ev`): lists merged with names prefixed by upstream, calls, prompts
//! and reads routed by prefix or URI, and a three-round call linked in the usage log.
//!
//! Skipped when python3 or the `mcp` package is missing, except in CI (`FERRY_CI` or
//! `FERRY_REQUIRE_INTEROP` set), where that is a failure.

mod support;

use std::collections::BTreeMap;

use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::{Client, FnHandler};
use ferry_gateway::UpstreamConfig;
use serde_json::json;
use support::*;

/// Answers every form: a name, a colour, a context or a confirmation.
fn answering() -> FnHandler {
    FnHandler::new().on_form(|form| {
        let (field, value) = if form.schema.property("name").is_some() {
            ("name", ElicitValue::String("Ada".into()))
        } else if form.schema.property("color").is_some() {
            ("color", ElicitValue::String("teal".into()))
        } else if form.schema.property("context").is_some() {
            ("context", ElicitValue::String("the gateway".into()))
        } else {
            ("confirm", ElicitValue::Bool(true))
        };
        async move { ElicitResult::accept(BTreeMap::from([(field.to_owned(), value)])) }
    })
}

fn first_text<T: serde::Serialize>(result: &T) -> String {
    let v = serde_json::to_value(result).unwrap();
    let text = v["content"][0]["text"]
        .as_str()
        .or_else(|| v["messages"][0]["content"]["text"].as_str())
        .or_else(|| v["contents"][0]["text"].as_str());
    text.unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_upstreams_are_namespaced_merged_and_routed() {
    if !python_sdk_available() {
        return;
    }
    let (_python, python_url) = python_upstream().await;
    let everything_url = everything_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(
        vec![
            UpstreamConfig::http("py", &python_url),
            UpstreamConfig::http("ev", &everything_url),
        ],
        dir.path(),
        8,
    )
    .await;
    let client = Client::builder()
        .http(format!("{base}/mcp"))
        .bearer_token("alice-token")
        .input_handler(answering())
        .build()
        .await
        .expect("connect");

    let tools: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in [
        "py.confirm_delete",
        "py.echo",
        "ev.echo",
        "ev.confirm_delete",
    ] {
        assert!(tools.iter().any(|t| t == name), "{name} in {tools:?}");
    }
    assert!(
        tools
            .iter()
            .all(|t| t.starts_with("py.") || t.starts_with("ev."))
    );
    assert!(
        tools.len() > 10,
        "ferry-everything's tools are merged in: {tools:?}"
    );

    let r = client
        .call_tool("py.echo", json!({"text": "from python"}))
        .await
        .unwrap();
    assert_eq!(first_text(&r), "from python");
    let r = client
        .call_tool("ev.echo", json!({"text": "from ferry"}))
        .await
        .unwrap();
    assert!(first_text(&r).contains("from ferry"), "{r:?}");
    let r = client
        .call_tool("py.confirm_delete", json!({"path": "/tmp/report.txt"}))
        .await
        .unwrap();
    assert_eq!(first_text(&r), "Deleted /tmp/report.txt");
    let unknown = client.call_tool("zz.echo", json!({"text": "x"})).await;
    assert!(unknown.is_err());

    // A call of three rounds on ferry-everything, linked by one call id.
    let before = usage(dir.path()).len();
    let r = client
        .call_tool("ev.test_input_required_result_multi_round", json!({}))
        .await
        .unwrap();
    assert_eq!(first_text(&r), "Ada likes teal");
    let rounds: Vec<_> = usage(dir.path()).split_off(before);
    assert_eq!(rounds.len(), 3, "{rounds:#?}");
    let outcomes: Vec<&str> = rounds
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["input_required", "input_required", "complete"]);
    assert!(rounds.iter().all(|r| r["call_id"] == rounds[0]["call_id"]));
    assert!(rounds.iter().all(|r| r["upstream"] == "ev"));
    assert_eq!(
        rounds
            .iter()
            .map(|r| r["round"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );

    // Prompts: namespaced, and MRTR on prompts/get goes through the gateway too.
    let prompts: Vec<String> = client
        .list_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert!(
        prompts.iter().any(|p| p == "ev.test_simple_prompt"),
        "{prompts:?}"
    );
    let p = client
        .get_prompt("ev.test_input_required_result_prompt", BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(first_text(&p), "Use this context: the gateway");

    // Resource templates: names prefixed, URIs kept, reads routed by template.
    let templates = client.list_resource_templates().await.unwrap();
    let t = templates
        .iter()
        .find(|t| t.uri_template == "test://template/{id}/data")
        .expect("ferry-everything's template");
    assert!(t.name.starts_with("ev."), "{t:?}");
    let read = client
        .read_resource("test://template/42/data")
        .await
        .unwrap();
    assert!(
        serde_json::to_string(&read).unwrap().contains("42"),
        "{read:?}"
    );
    client.close().await.unwrap();
}
