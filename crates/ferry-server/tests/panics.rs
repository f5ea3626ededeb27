//! A handler that panics (tool, prompt, resource, completion; before its future exists,
//! while it runs, or after an ask) fails only its own call with `-32603`, naming the
//! handler but not the panic's payload; the server answers every other call as before.

mod support;

use ferry_protocol::prompts::PromptMessage;
use ferry_protocol::resources::TextResourceContents;
use ferry_server::{Context, ResourceRequest, Server, prompt, resource_template, tool};
use ferry_testkit::rpc::{self, accept, call, form_caps, request, request_with, retry};
use serde::Deserialize;
use serde_json::{Value, json};
use support::{Out, send};

/// What each panic carries: it must never reach the client.
const SECRET: &str = "sk-live-0123456789";

#[derive(Deserialize, ferry_form::Form)]
struct Confirm {
    confirm: bool,
}

fn server() -> Server {
    Server::builder("panics", "1")
        .tool(tool("ok").handler(|| async { Ok("fine") }))
        .tool(
            tool("boom").json_handler(|_: Context, _: Value| async move {
                if SECRET.len() > 1 {
                    panic!("the key is {SECRET}");
                }
                Ok("unreachable")
            }),
        )
        .tool(tool("boom_early").json_handler(|_: Context, _: Value| {
            // Panics before it returns its future.
            panic!("the key is {SECRET}");
            #[allow(unreachable_code)]
            async {
                Ok("unreachable")
            }
        }))
        .tool(tool("boom_after_ask").handler(|ctx: Context| async move {
            let sure = ctx.elicit::<Confirm>("Sure?").key("sure").await?;
            panic!(
                "answered {:?}, the key is {SECRET}",
                sure.accepted().map(|c| c.confirm)
            );
            #[allow(unreachable_code)]
            Ok("unreachable")
        }))
        .prompt(prompt("boom").handler(|| async move {
            if SECRET.len() > 1 {
                panic!("the key is {SECRET}");
            }
            Ok(PromptMessage::user_text("unreachable"))
        }))
        .resource_template(
            resource_template("test://boom/{id}", "boom")
                .complete("id", |_: Context, _| async move {
                    if SECRET.len() > 1 {
                        panic!("the key is {SECRET}");
                    }
                    Ok(vec!["unreachable".to_owned()])
                })
                .handler(|_: Context, r: ResourceRequest| async move {
                    if SECRET.len() > 1 {
                        panic!("the key is {SECRET}");
                    }
                    Ok(TextResourceContents::new(r.uri.clone(), "unreachable"))
                }),
        )
        .build()
        .expect("server builds")
}

/// The call failed with -32603, naming `names` and nothing of the payload.
fn assert_panicked(out: &Out, names: &str) {
    assert_eq!(out.code(), -32603, "{}", out.msg);
    let message = out.msg["error"]["message"].as_str().expect("a message");
    assert!(
        message.starts_with("Internal error in handler for "),
        "{message}"
    );
    assert!(message.contains(names), "{message} names {names}");
    assert!(!out.msg.to_string().contains(SECRET), "{}", out.msg);
}

async fn still_serving(s: &Server, id: i64) {
    let out = send(s, &call(id, "ok", json!({}), json!({}))).await;
    assert_eq!(rpc::text(&out.msg), "fine", "{}", out.msg);
}

#[tokio::test]
async fn a_panicking_tool_fails_its_call_and_nothing_else() {
    let s = server();
    for (id, name) in [(1, "boom"), (2, "boom_early")] {
        let out = send(&s, &call(id, name, json!({}), json!({}))).await;
        assert_panicked(&out, &format!("tools/call \"{name}\""));
        assert_eq!(out.msg["id"], id);
        still_serving(&s, id + 100).await;
    }
}

/// A handler that asks, gets its answer on the retry, then panics.
#[tokio::test]
async fn a_tool_that_panics_after_its_ask_fails_on_the_retry() {
    let s = server();
    let first = call(1, "boom_after_ask", json!({}), form_caps());
    let asked = send(&s, &first).await;
    assert_eq!(
        rpc::result_type(&asked.msg),
        "input_required",
        "{}",
        asked.msg
    );
    let answers = json!({"sure": accept(json!({"confirm": true}))});
    let out = send(
        &s,
        &retry(&first, 2, Some(answers), Some(rpc::state(&asked.msg))),
    )
    .await;
    assert_panicked(&out, "\"boom_after_ask\"");
    still_serving(&s, 3).await;
}

#[tokio::test]
async fn panicking_prompts_resources_and_completions_fail_their_calls() {
    let s = server();
    let out = send(&s, &request(1, "prompts/get", json!({"name": "boom"}))).await;
    assert_panicked(&out, "prompts/get \"boom\"");

    let out = send(
        &s,
        &request(2, "resources/read", json!({"uri": "test://boom/7"})),
    )
    .await;
    assert_panicked(&out, "resources/read \"test://boom/7\"");

    let complete = request_with(
        3,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "test://boom/{id}"}, "argument": {"name": "id", "value": ""}}),
        rpc::all_caps(),
    );
    let out = send(&s, &complete).await;
    assert_panicked(&out, "completion/complete");
    still_serving(&s, 4).await;
}

/// Many calls at once, every other one panicking: each gets its own answer.
#[tokio::test]
async fn panics_among_concurrent_calls_touch_only_their_own() {
    let s = server();
    let calls = (0..40).map(|id| {
        let s = s.clone();
        async move {
            let name = if id % 2 == 0 { "boom" } else { "ok" };
            (id, send(&s, &call(id, name, json!({}), json!({}))).await)
        }
    });
    for (id, out) in futures::future::join_all(calls).await {
        assert_eq!(out.msg["id"], id);
        if id % 2 == 0 {
            assert_panicked(&out, "\"boom\"");
        } else {
            assert_eq!(rpc::text(&out.msg), "fine");
        }
    }
}
