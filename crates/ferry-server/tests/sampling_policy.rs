//! Sampling answered under the server's policy: the provider for a client without the
//! `sampling` capability, the client when it declared it and the policy prefers it, and
//! a provider's answer kept across MRTR rounds rather than bought twice.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferry_llm::{LlmError, Provider, ProviderFuture, SampleContext};
use ferry_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage};
use ferry_server::{Context, Elicitation, SamplingPolicy, Server, tool};
use ferry_testkit::rpc::{self, accept, all_caps, call, form_caps, retry};
use parking_lot::Mutex;
use serde_json::{Value, json};
use support::send;

/// A provider that answers with the prompt upper-cased and remembers whom it served.
#[derive(Default)]
struct Shouting {
    calls: AtomicUsize,
    seen: Mutex<Vec<(Option<String>, Option<String>)>>,
    fail: bool,
}

impl Provider for Shouting {
    fn create_message<'a>(
        &'a self,
        params: &'a CreateMessageRequestParams,
        ctx: &'a SampleContext,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.seen
                .lock()
                .push((ctx.principal.clone(), ctx.tool.clone()));
            if self.fail {
                return Err(LlmError::InvalidResponse("no choices".into()));
            }
            let prompt = params.messages[0].content.text();
            Ok(CreateMessageResult::text("shout-1", prompt.to_uppercase()))
        })
    }
}

#[derive(serde::Deserialize, ferry_form::Form)]
struct Confirm {
    confirm: bool,
}

fn server(policy: SamplingPolicy) -> Server {
    Server::builder("sampling", "1")
        .sampling(policy)
        .tool(tool("summarize").handler(|ctx: Context| async move {
            let params = CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text("keep it short")],
                50,
            );
            let answer = ctx.generate(params).await?;
            Ok(format!("{}: {}", answer.model, answer.content.text()))
        }))
        .tool(
            tool("summarize_then_confirm").handler(|ctx: Context| async move {
                let params =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user_text("draft")], 50);
                let draft = ctx.generate(params).key("draft").await?;
                let ok = ctx.elicit::<Confirm>("Publish it?").key("publish").await?;
                let publish = matches!(ok, Elicitation::Accept(Confirm { confirm: true }));
                Ok(format!("{} published={publish}", draft.content.text()))
            }),
        )
        .build()
        .expect("server builds")
}

fn sampling_answer(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "client-model"})
}

#[tokio::test]
async fn a_client_without_sampling_is_answered_by_the_provider() {
    let provider = Arc::new(Shouting::default());
    let s = server(SamplingPolicy::prefer_client(provider.clone()));
    let out = send(&s, &call(1, "summarize", json!({}), form_caps())).await;
    assert_eq!(rpc::text(&out.msg), "shout-1: KEEP IT SHORT", "{}", out.msg);
    assert_eq!(provider.calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        provider.seen.lock()[0],
        (None, Some("summarize".to_owned())),
        "accounted to the tool"
    );
}

#[tokio::test]
async fn a_client_with_sampling_is_asked_when_the_policy_prefers_it() {
    let provider = Arc::new(Shouting::default());
    let s = server(SamplingPolicy::prefer_client(provider.clone()));
    let first = call(1, "summarize", json!({}), all_caps());
    let asked = send(&s, &first).await;
    assert_eq!(
        rpc::result_type(&asked.msg),
        "input_required",
        "{}",
        asked.msg
    );
    let requests = &asked.result()["inputRequests"];
    assert_eq!(requests["sampling"]["method"], "sampling/createMessage");
    let done = send(
        &s,
        &retry(
            &first,
            2,
            Some(json!({"sampling": sampling_answer("from the client")})),
            Some(rpc::state(&asked.msg)),
        ),
    )
    .await;
    assert_eq!(rpc::text(&done.msg), "client-model: from the client");
    assert_eq!(provider.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn provider_only_never_asks_the_client() {
    let provider = Arc::new(Shouting::default());
    let s = server(SamplingPolicy::provider_only(provider.clone()));
    let out = send(&s, &call(1, "summarize", json!({}), all_caps())).await;
    assert_eq!(rpc::text(&out.msg), "shout-1: KEEP IT SHORT", "{}", out.msg);
}

#[tokio::test]
async fn client_only_refuses_a_client_without_sampling() {
    let s = server(SamplingPolicy::client_only());
    let out = send(&s, &call(1, "summarize", json!({}), form_caps())).await;
    assert_eq!(out.code(), -32021, "{}", out.msg);
}

/// The handler runs again from the top on the second round; the provider's draft rode
/// along in the sealed state and is not bought twice.
#[tokio::test]
async fn a_provider_answer_is_kept_across_rounds() {
    let provider = Arc::new(Shouting::default());
    let s = server(SamplingPolicy::prefer_client(provider.clone()));
    let first = call(1, "summarize_then_confirm", json!({}), form_caps());
    let asked = send(&s, &first).await;
    let requests = asked.result()["inputRequests"].as_object().unwrap();
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        ["publish"],
        "{}",
        asked.msg
    );
    let done = send(
        &s,
        &retry(
            &first,
            2,
            Some(json!({"publish": accept(json!({"confirm": true}))})),
            Some(rpc::state(&asked.msg)),
        ),
    )
    .await;
    assert_eq!(rpc::text(&done.msg), "DRAFT published=true", "{}", done.msg);
    assert_eq!(provider.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_provider_failure_is_a_clear_error() {
    let provider = Arc::new(Shouting {
        fail: true,
        ..Shouting::default()
    });
    let s = server(SamplingPolicy::provider_only(provider));
    let out = send(&s, &call(1, "summarize", json!({}), form_caps())).await;
    assert_eq!(out.code(), -32603, "{}", out.msg);
    let message = out.msg["error"]["message"].as_str().unwrap();
    assert!(message.contains("model provider failed"), "{message}");
}
