//! A `Forward` hook behind a 2025-11-25 session: the server asks the session's client each
//! input request the hook returns, and only what the client declared: a question the
//! client cannot answer fails the call with -32021 before anything is sent. A call's own
//! input handler (`CallOptions::input_handler`) answers that call's questions instead of
//! the client's, in both eras.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{custom, text};
use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::{CallOptions, Client, EraMode, FnHandler};
use ferry_server::{Forward, ForwardFuture, ForwardRequest, Server};
use serde_json::json;

/// A tool `remote` that asks one form question, whatever the client declared (as a
/// misbehaving upstream might), and completes with the answer it is retried with.
struct AlwaysAsks;

impl Forward for AlwaysAsks {
    fn forward(&self, request: ForwardRequest) -> ForwardFuture {
        Box::pin(async move {
            if request.method == "tools/list" {
                let tool = json!({"name": "remote", "inputSchema": {"type": "object"}});
                return Ok(json!({"tools": [tool], "ttlMs": 0, "cacheScope": "private"}).into());
            }
            if let Some(answer) = request.params.get("inputResponses") {
                let answer = answer["go"]["content"]["go"].to_string();
                // As JSON text: the server reads it to answer a 2025-11-25 session.
                let text = json!({"content": [{"type": "text", "text": answer}]}).to_string();
                return Ok(serde_json::value::RawValue::from_string(text)
                    .unwrap()
                    .into());
            }
            Ok(json!({
                "resultType": "input_required",
                "inputRequests": {"go": {"method": "elicitation/create", "params": {
                    "mode": "form", "message": "Go?",
                    "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean"}}}
                }}},
                "requestState": "opaque"
            })
            .into())
        })
    }
}

async fn legacy_client(url: &str, handler: Option<FnHandler>) -> Client {
    let mut builder = Client::builder().http(url).era(EraMode::Legacy);
    if let Some(handler) = handler {
        builder = builder.input_handler(handler);
    }
    builder.build().await.expect("a 2025-11-25 session")
}

#[tokio::test]
async fn a_legacy_client_is_asked_only_what_it_declared() {
    let server = Server::builder("front", "1")
        .enable_tools()
        .forward(AlwaysAsks)
        .build()
        .unwrap();
    let served = custom(server).await;

    let asked = Arc::new(AtomicUsize::new(0));
    let handler = answering(true, Arc::clone(&asked));
    let willing = legacy_client(&served.url, Some(handler)).await;
    let result = willing
        .call_tool("remote", json!({}))
        .await
        .expect("answered");
    assert_eq!(text(&result), "true");
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // Without an input handler the client declares no elicitation: the question is never
    // sent, and the call fails with the missing capability.
    let unable = legacy_client(&served.url, None).await;
    let err = unable
        .call_tool("remote", json!({}))
        .await
        .expect_err("refused");
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!(rpc.code.0, -32021, "{err}");
    assert!(rpc.mentions("elicitation (form mode)"), "{err}");
}

/// A form handler answering `go` with `value`, counting its questions in `count`.
fn answering(value: bool, count: Arc<AtomicUsize>) -> FnHandler {
    FnHandler::new().on_form(move |_| {
        count.fetch_add(1, Ordering::SeqCst);
        async move {
            ElicitResult::accept(BTreeMap::from([(
                "go".to_owned(),
                ElicitValue::Bool(value),
            )]))
        }
    })
}

#[tokio::test]
async fn a_calls_own_input_handler_answers_its_questions_in_both_eras() {
    let server = Server::builder("front", "1")
        .enable_tools()
        .forward(AlwaysAsks)
        .build()
        .unwrap();
    let served = custom(server).await;
    for era in [EraMode::Modern, EraMode::Legacy] {
        let by_client = Arc::new(AtomicUsize::new(0));
        let by_call = Arc::new(AtomicUsize::new(0));
        let client = Client::builder()
            .http(&served.url)
            .era(era)
            .input_handler(answering(false, Arc::clone(&by_client)))
            .build()
            .await
            .expect("connects");
        let opts = CallOptions::new().input_handler(answering(true, Arc::clone(&by_call)));
        let result = client
            .call_tool_with("remote", json!({}), &opts)
            .await
            .expect("answered");
        assert_eq!(text(&result), "true", "{era:?}");
        assert_eq!(by_call.load(Ordering::SeqCst), 1, "{era:?}");
        assert_eq!(by_client.load(Ordering::SeqCst), 0, "{era:?}");

        let result = client
            .call_tool("remote", json!({}))
            .await
            .expect("answered");
        assert_eq!(text(&result), "false", "{era:?}");
        assert_eq!(by_client.load(Ordering::SeqCst), 1, "{era:?}");
    }
}
