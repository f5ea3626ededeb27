//! Handlers take only what they use (context, application state, the input, or nothing),
//! and the replay model of multi round-trip requests is safe: an ask whose interrupt a
//! handler swallows fails the call, and an answer counts only for the question it
//! answered.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use ferry_protocol::prompts::PromptMessage;
use ferry_protocol::resources::TextResourceContents;
use ferry_server::{
    BuildError, Context, Elicitation, ResourceRequest, Server, State, prompt, resource, tool,
};
use ferry_testkit::rpc::{self, accept, call, form_caps, request_with, retry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::send;

#[derive(Default)]
struct Counter {
    total: AtomicU64,
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// How much to add.
    by: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
    /// How warmly.
    tone: Option<String>,
}

#[derive(Deserialize, ferry_form::Form)]
struct Confirm {
    confirm: bool,
}

/// Which wording of the question the "deployed build" uses.
#[derive(Default)]
struct Wording {
    reworded: AtomicBool,
}

fn server() -> Server {
    Server::builder("handlers", "1")
        .state(Counter::default())
        .state(Wording::default())
        .tool(tool("ping").handler(|| async { Ok("pong") }))
        .tool(tool("method").handler(|ctx: Context| async move { Ok(ctx.method()) }))
        .tool(tool("double").handler(|args: AddArgs| async move { Ok((args.by * 2).to_string()) }))
        .tool(
            tool("add").handler(|counter: State<Counter>, args: AddArgs| async move {
                Ok((counter.total.fetch_add(args.by, Ordering::SeqCst) + args.by).to_string())
            }),
        )
        .tool(tool("add_seen").handler(
            |ctx: Context, counter: State<Counter>, args: AddArgs| async move {
                let now = counter.total.fetch_add(args.by, Ordering::SeqCst) + args.by;
                Ok(format!("{} {now}", ctx.method()))
            },
        ))
        .tool(tool("peek").handler(|counter: State<Counter>| async move {
            Ok(counter.total.load(Ordering::SeqCst).to_string())
        }))
        .tool(tool("swallow_let").handler(|ctx: Context| async move {
            let _ = ctx.elicit::<Confirm>("Go?").key("go").await;
            Ok("went ahead without an answer")
        }))
        .tool(tool("swallow_ok").handler(|ctx: Context| async move {
            let answer = ctx.elicit::<Confirm>("Go?").key("go").await.ok();
            Ok(if answer.is_some() {
                "answered"
            } else {
                "assumed no"
            })
        }))
        .tool(tool("swallow_map").handler(|ctx: Context| async move {
            ctx.elicit::<Confirm>("Go?")
                .key("go")
                .await
                .map_err(|_| ferry_server::fail("no answer"))?;
            Ok("unreachable")
        }))
        .tool(
            tool("reworded").handler(|ctx: Context, wording: State<Wording>| async move {
                let question = if wording.reworded.load(Ordering::SeqCst) {
                    "Delete it permanently, with no undo?"
                } else {
                    "Delete it?"
                };
                let keep = ctx.elicit::<Confirm>("Keep a backup?").key("backup");
                let delete = ctx.elicit::<Confirm>(question).key("delete");
                let (keep, delete) = ctx.ask_all((keep, delete)).await?;
                let yes = |e: Elicitation<Confirm>| e.accepted().is_some_and(|c| c.confirm);
                Ok(format!("backup={} delete={}", yes(keep), yes(delete)))
            }),
        )
        .tool(
            tool("fresh_link").handler(|ctx: Context, counter: State<Counter>| async move {
                // A signed, short-lived link minted afresh on every round.
                let n = counter.total.fetch_add(1, Ordering::SeqCst);
                let link = format!("https://example.test/connect?t={n}");
                let consent = ctx
                    .elicit_url("Connect your account.", link)
                    .key("connect")
                    .await?;
                Ok(format!("{consent:?}"))
            }),
        )
        .prompt(prompt("greet").handler(|args: Greeting| async move {
            Ok(PromptMessage::user_text(format!(
                "Greet {} {}",
                args.name,
                args.tone.as_deref().unwrap_or("kindly")
            )))
        }))
        .resource(resource("test://count", "count").handler(
            |counter: State<Counter>, req: ResourceRequest| async move {
                Ok(TextResourceContents::new(
                    req.uri,
                    counter.total.load(Ordering::SeqCst).to_string(),
                ))
            },
        ))
        .build()
        .expect("server builds")
}

#[tokio::test]
async fn handlers_take_only_what_they_use() {
    let s = server();
    for (tool, args, text) in [
        ("ping", json!({}), "pong"),
        ("method", json!({}), "tools/call"),
        ("double", json!({"by": 21}), "42"),
        ("add", json!({"by": 2}), "2"),
        ("add_seen", json!({"by": 3}), "tools/call 5"),
        ("peek", json!({}), "5"),
    ] {
        let out = send(&s, &call(1, tool, args, json!({}))).await;
        assert_eq!(rpc::text(&out.msg), text, "{tool}: {}", out.msg);
    }
    let read = send(
        &s,
        &request_with(
            2,
            "resources/read",
            json!({"uri": "test://count"}),
            json!({}),
        ),
    )
    .await;
    assert_eq!(read.result()["contents"][0]["text"], "5");
}

#[tokio::test]
async fn schemas_come_from_what_handlers_take() {
    let s = server();
    let list = send(&s, &request_with(1, "tools/list", json!({}), json!({}))).await;
    let tools = list.result()["tools"].as_array().unwrap().clone();
    let schema = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed"))["inputSchema"]
            .clone()
    };
    // No input: the schema of no parameters (tools.mdx), with no NoArgs type.
    let none = json!({"type": "object", "additionalProperties": false});
    assert_eq!(schema("ping"), none);
    assert_eq!(schema("peek"), none);
    assert_eq!(schema("add")["required"], json!(["by"]));
    assert_eq!(schema("add_seen")["properties"]["by"]["type"], "integer");
    // A prompt's declared arguments come from its argument type.
    let prompts = send(&s, &request_with(2, "prompts/list", json!({}), json!({}))).await;
    let args = &prompts.result()["prompts"][0]["arguments"];
    assert_eq!(
        args,
        &json!([
            {"name": "name", "description": "Who to greet.", "required": true},
            {"name": "tone", "description": "How warmly.", "required": false},
        ])
    );
    let got = send(
        &s,
        &request_with(
            3,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
            json!({}),
        ),
    )
    .await;
    assert_eq!(
        got.result()["messages"][0]["content"]["text"],
        "Greet Ada kindly"
    );
    let missing = send(
        &s,
        &request_with(4, "prompts/get", json!({"name": "greet"}), json!({})),
    )
    .await;
    assert_eq!(missing.code(), -32602, "a required argument is missing");
}

#[test]
fn missing_state_is_refused_when_the_server_is_built() {
    let err = Server::builder("s", "1")
        .tool(tool("peek").handler(|c: State<Counter>| async move {
            Ok(c.total.load(Ordering::SeqCst).to_string())
        }))
        .build()
        .expect_err("no Counter state");
    let BuildError::Definition(e) = err else {
        panic!("a definition error: {err}")
    };
    assert!(e.to_string().contains("Counter"), "{e}");
}

#[test]
fn definitions_added_later_must_be_reachable() {
    let no_tools = Server::builder("s", "1").build().unwrap();
    let err = no_tools
        .add_tool(tool("late").handler(|| async { Ok("x") }))
        .expect_err("a server without tools cannot add one");
    assert!(err.to_string().contains("enable_tools"), "{err}");
    let tools = Server::builder("s", "1").enable_tools().build().unwrap();
    tools
        .add_tool(tool("late").handler(|| async { Ok("x") }))
        .unwrap();
    let err = tools
        .add_tool(tool("needs").handler(|_: State<Counter>| async { Ok("x") }))
        .expect_err("state the server lacks");
    assert!(err.to_string().contains("Counter"), "{err}");
    assert!(
        no_tools
            .add_prompt(prompt("p").handler(|| async { Ok(PromptMessage::user_text("x")) }))
            .is_err()
    );
    assert!(
        no_tools
            .add_resource(resource("test://x", "x").text("x"))
            .is_err()
    );
}

/// An ask that stopped the handler for input, and a handler that went on anyway: the
/// call fails and names the ask, whichever way the interrupt was dropped.
#[tokio::test]
async fn a_swallowed_ask_fails_the_call() {
    let s = server();
    for name in ["swallow_let", "swallow_ok", "swallow_map"] {
        let out = send(&s, &call(1, name, json!({}), form_caps())).await;
        assert_eq!(out.code(), -32603, "{name}: {}", out.msg);
        let message = out.msg["error"]["message"].as_str().unwrap();
        assert!(message.contains("\"go\""), "{name}: {message}");
    }
}

fn accept_confirm(confirm: bool) -> Value {
    accept(json!({ "confirm": confirm }))
}

/// An answer is pinned to the question it answered: a question reworded between rounds
/// (by a new build mid-deploy) is asked again, while answers to questions still asked
/// the same way are kept.
#[tokio::test]
async fn a_reworded_question_is_asked_again() {
    let s = server();
    let wording = s.state::<Wording>().unwrap();
    let first = call(1, "reworded", json!({}), form_caps());
    let asked = send(&s, &first).await;
    let requests = asked.result()["inputRequests"].as_object().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests["delete"]["params"]["message"], "Delete it?",
        "{}",
        asked.msg
    );

    // The new build rewords one question before the retry arrives.
    wording.reworded.store(true, Ordering::SeqCst);
    let answers = json!({"backup": accept_confirm(true), "delete": accept_confirm(true)});
    let again = send(
        &s,
        &retry(&first, 2, Some(answers), Some(rpc::state(&asked.msg))),
    )
    .await;
    assert_eq!(
        rpc::result_type(&again.msg),
        "input_required",
        "{}",
        again.msg
    );
    let requests = again.result()["inputRequests"].as_object().unwrap();
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        ["delete"],
        "only the reworded question is asked again"
    );
    assert_eq!(
        requests["delete"]["params"]["message"],
        "Delete it permanently, with no undo?"
    );

    // Answering it completes the call; the kept answer came along in the state.
    let done = send(
        &s,
        &retry(
            &first,
            3,
            Some(json!({"delete": accept_confirm(false)})),
            Some(rpc::state(&again.msg)),
        ),
    )
    .await;
    assert_eq!(rpc::text(&done.msg), "backup=true delete=false");
}

#[tokio::test]
async fn an_unchanged_question_keeps_its_answer() {
    let s = server();
    let first = call(1, "reworded", json!({}), form_caps());
    let asked = send(&s, &first).await;
    let answers = json!({"backup": accept_confirm(false), "delete": accept_confirm(true)});
    let done = send(
        &s,
        &retry(&first, 2, Some(answers), Some(rpc::state(&asked.msg))),
    )
    .await;
    assert_eq!(rpc::text(&done.msg), "backup=false delete=true");
}

/// A URL ask is pinned to its message: a link minted afresh on each round keeps the
/// answer given to the round before.
#[tokio::test]
async fn a_fresh_link_keeps_its_answer() {
    let s = server();
    let first = call(1, "fresh_link", json!({}), rpc::all_caps());
    let asked = send(&s, &first).await;
    assert_eq!(
        rpc::result_type(&asked.msg),
        "input_required",
        "{}",
        asked.msg
    );
    let answers = json!({"connect": {"action": "decline"}});
    let done = send(
        &s,
        &retry(&first, 2, Some(answers), Some(rpc::state(&asked.msg))),
    )
    .await;
    assert_eq!(rpc::text(&done.msg), "Decline", "{}", done.msg);
}

/// Application state is shared, not cloned per call.
#[tokio::test]
async fn state_is_shared() {
    let counter = Arc::new(Counter::default());
    let s = Server::builder("s", "1")
        .state_arc(counter.clone())
        .tool(
            tool("add").handler(|c: State<Counter>, args: AddArgs| async move {
                Ok(c.total.fetch_add(args.by, Ordering::SeqCst).to_string())
            }),
        )
        .build()
        .unwrap();
    send(&s, &call(1, "add", json!({"by": 7}), json!({}))).await;
    assert_eq!(counter.total.load(Ordering::SeqCst), 7);
}
