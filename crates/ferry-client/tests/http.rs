//! The client against ferry-everything over Streamable HTTP on 127.0.0.1.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{custom, everything, text};
use ferry_client::ferry_protocol::content::ContentBlock;
use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::ferry_protocol::mrtr::MrtrResult;
use ferry_client::ferry_protocol::result::CacheScope;
use ferry_client::ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_client::{
    CallOptions, Client, Era, EraCache, Error, FnHandler, KnownEra, Retry, ServerNotification,
};
use ferry_server::{CacheHint, Context, Server, tool};
use ferry_testkit::elicit::confirm;
use serde_json::json;

async fn client_with(url: &str, handler: FnHandler) -> Client {
    Client::builder()
        .http(url)
        .era_cache(Arc::new(EraCache::new()))
        // These exercise plain MRTR rounds; calls that become tasks are covered by
        // ferry-everything's tasks_client tests.
        .tasks(false)
        .input_handler(handler)
        .build()
        .await
        .expect("connect")
}

fn answer_confirm(action: &'static str) -> FnHandler {
    FnHandler::new().on_form(move |form| {
        assert_eq!(form.context.server.name, "ferry-everything");
        let origin = form.context.origin.clone().expect("origin");
        assert_eq!(
            (origin.method.as_str(), origin.target.as_str()),
            ("tools/call", "confirm_delete")
        );
        assert_eq!(form.context.key.as_deref(), Some("confirm"));
        assert!(
            form.message.starts_with("Delete notes.txt from "),
            "{}",
            form.message
        );
        async move { confirm(action) }
    })
}

#[tokio::test]
async fn discover_finds_a_modern_server() {
    let server = everything(100).await;
    let client = server.client().await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(
        client.server_info().expect("server info").name,
        "ferry-everything"
    );
    let d = client.discover().await.expect("discover");
    assert!(d.supports("2026-07-28"));
    assert!(d.capabilities.tools.is_some());
    assert_eq!(
        server.count("server/discover"),
        1,
        "the probe's result is cached"
    );
}

#[tokio::test]
async fn list_tools_follows_pages() {
    let server = everything(3).await;
    let client = server.client().await;
    let first = client.list_tools_page(None).await.expect("page");
    assert_eq!(first.tools.len(), 3);
    let next = first.next_cursor.expect("more pages");
    let second = client.list_tools_page(Some(&next)).await.expect("page 2");
    assert_ne!(first.tools[0].name, second.tools[0].name);
    let all = client.list_tools().await.expect("all tools");
    assert!(all.len() > 6, "{} tools", all.len());
    for name in [
        "echo",
        "confirm_delete",
        "generate_image",
        "test_tool_with_progress",
    ] {
        assert!(all.iter().any(|t| t.name == name), "{name} missing");
    }
    let prompts = client.list_prompts().await.expect("prompts");
    assert!(prompts.iter().any(|p| p.name == "test_simple_prompt"));
    let resources = client.list_resources().await.expect("resources");
    assert!(resources.iter().any(|r| r.uri == "test://static-text"));
    let templates = client.list_resource_templates().await.expect("templates");
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "test://template/{id}/data"),
        "{templates:?}"
    );
}

#[tokio::test]
async fn call_echo() {
    let server = everything(100).await;
    let client = server.client().await;
    let r = client
        .call_tool("echo", json!({"text": "hello, 世界"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "hello, 世界");
    assert!(!r.failed());
}

#[tokio::test]
async fn confirm_delete_accept_decline_cancel() {
    let server = everything(100).await;
    for (action, expected) in [
        // The server's fresh sandbox starts with notes.txt: deleted once, then kept.
        ("accept", "Deleted notes.txt ("),
        ("decline", "Kept notes.txt: nothing deleted"),
        ("cancel", "Cancelled: nothing deleted"),
    ] {
        let client = client_with(&server.url, answer_confirm(action)).await;
        let r = client
            .call_tool("confirm_delete", json!({"path": "notes.txt"}))
            .await
            .expect("call");
        assert!(text(&r).starts_with(expected), "{action}: {}", text(&r));
    }
    assert_eq!(server.count("tools/call"), 6, "one retry per call");
}

#[tokio::test]
async fn without_a_handler_the_elicitation_is_refused_by_the_server() {
    let server = everything(100).await;
    let client = server.client().await;
    let err = client
        .call_tool("confirm_delete", json!({"path": "notes.txt"}))
        .await
        .expect_err("needs elicitation");
    let rpc = err.rpc().expect("a server error");
    assert_eq!(rpc.code.get(), -32021);
    assert_eq!(rpc.http_status, Some(400));
}

/// A refused sampling request ends the call at once with a clear error: nothing waits on
/// the server's side, and retrying would only repeat the question (mrtr.mdx client rules).
#[tokio::test]
#[allow(deprecated)]
async fn a_refused_sampling_request_ends_the_call() {
    let server = everything(100).await;
    let refuses = FnHandler::new().on_sampling(false, |_| async { None });
    let client = client_with(&server.url, refuses).await;
    let err = client
        .call_tool("test_input_required_result_sampling", json!({}))
        .await
        .expect_err("refused");
    match err {
        Error::InputRefused { key, method } => {
            assert_eq!(
                (key.as_str(), method.as_str()),
                ("capital_question", "sampling/createMessage")
            );
        }
        other => panic!("unexpected {other}"),
    }
    assert_eq!(server.count("tools/call"), 1, "no retry after a refusal");
}

#[tokio::test]
async fn generate_image_answers_two_questions_in_one_round() {
    let server = everything(100).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let handler = FnHandler::new().on_form(move |form| {
        log.lock()
            .unwrap()
            .push(form.context.key.clone().unwrap_or_default());
        let field = form.fields().next().expect("one field").name.to_owned();
        let value = if field == "aspect_ratio" {
            ElicitValue::String("1:1".into())
        } else {
            ElicitValue::Bool(true)
        };
        async move { ElicitResult::accept(BTreeMap::from([(field, value)])) }
    });
    let client = client_with(&server.url, handler).await;
    let r = client
        .call_tool("generate_image", json!({"prompt": "a ferry at dawn"}))
        .await
        .expect("call");
    assert!(matches!(&r.content[0], ContentBlock::Image(i) if i.mime_type == "image/png"));
    assert!(text(&r).contains("1:1"), "{}", text(&r));
    assert_eq!(*asked.lock().unwrap(), ["aspect_ratio", "go_ahead"]);
    assert_eq!(
        server.count("tools/call"),
        2,
        "both answers went in one retry"
    );
}

#[tokio::test]
async fn manual_rounds() {
    let server = everything(100).await;
    let client = client_with(&server.url, answer_confirm("accept")).await;
    let args = json!({"path": "notes.txt"});
    let opts = CallOptions::new();
    let MrtrResult::InputRequired(ir) = client
        .call_tool_round("confirm_delete", args.clone(), &Retry::first(), &opts)
        .await
        .expect("round 1")
    else {
        panic!("expected a question");
    };
    assert!(
        ir.input_requests
            .as_ref()
            .is_some_and(|r| r.contains_key("confirm"))
    );
    let origin = ferry_client::AskOrigin {
        method: "tools/call".into(),
        target: "confirm_delete".into(),
    };
    let retry = client.answer(&ir, Some(origin)).await;
    assert_eq!(retry.request_state(), ir.request_state.as_deref());
    let done = client
        .call_tool_round("confirm_delete", args, &retry, &opts)
        .await
        .expect("round 2");
    assert!(
        matches!(done, MrtrResult::Complete(ref r) if text(r).starts_with("Deleted notes.txt ("))
    );
}

#[tokio::test]
async fn prompt_and_resource_ask_too() {
    let server = everything(100).await;
    let handler = FnHandler::new().on_form(|_| async {
        ElicitResult::accept(BTreeMap::from([(
            "context".to_owned(),
            ElicitValue::String("rust".into()),
        )]))
    });
    let client = client_with(&server.url, handler).await;
    let p = client
        .get_prompt("test_input_required_result_prompt", BTreeMap::new())
        .await
        .expect("prompt");
    assert!(format!("{:?}", p.messages).contains("rust"));
    let args = BTreeMap::from([
        ("arg1".to_owned(), "a".to_owned()),
        ("arg2".to_owned(), "b".to_owned()),
    ]);
    let p = client
        .get_prompt("test_prompt_with_arguments", args)
        .await
        .expect("prompt");
    assert!(format!("{:?}", p.messages).contains("arg1='a'"));
    let r = client
        .read_resource("test://template/123/data")
        .await
        .expect("read");
    assert_eq!(r.contents[0].uri(), "test://template/123/data");
    let missing = client
        .read_resource("test://nope")
        .await
        .expect_err("missing");
    assert!(
        matches!(missing, Error::ResourceNotFound { ref uri, .. } if uri == "test://nope"),
        "{missing:?}"
    );
}

#[tokio::test]
async fn progress_reaches_the_callback() {
    let server = everything(100).await;
    let client = server.client().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let opts =
        CallOptions::new().on_progress(move |p| log.lock().unwrap().push((p.progress, p.total)));
    let r = client
        .call_tool_with("test_tool_with_progress", json!({}), &opts)
        .await
        .expect("call");
    assert_eq!(text(&r), "Progress test completed");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (0.0, Some(100.0)),
            (50.0, Some(100.0)),
            (100.0, Some(100.0))
        ]
    );
}

#[tokio::test]
async fn timeout_cancels_the_request_on_the_server() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    struct OnDrop(Arc<AtomicBool>, bool);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            if !self.1 {
                self.0.store(true, Ordering::SeqCst);
            }
        }
    }
    let server = Server::builder("slow", "1.0.0")
        .tool(tool("slow").description("Sleeps").json_handler(
            move |_: Context, _: serde_json::Value| {
                let flag = flag.clone();
                async move {
                    let mut guard = OnDrop(flag, false);
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    guard.1 = true;
                    Ok("done")
                }
            },
        ))
        .build()
        .expect("server");
    let server = custom(server).await;
    let client = server.client().await;
    let opts = CallOptions::new().timeout(Duration::from_millis(200));
    let err = client
        .call_tool_with("slow", json!({}), &opts)
        .await
        .expect_err("times out");
    assert!(err.is_timeout(), "{err:?}");
    assert!(!err.is_from_server());
    for _ in 0..50 {
        if cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        cancelled.load(Ordering::SeqCst),
        "closing the stream stops the handler"
    );
}

#[tokio::test]
async fn listen_receives_tools_list_changed_and_invalidates_the_cache() {
    let server = everything(100).await;
    let client = server.client().await;
    let before = client.list_tools().await.expect("tools");
    client.list_tools().await.expect("tools again");
    assert_eq!(server.count("tools/list"), 1, "served from the cache");

    let mut sub = client
        .listen(SubscriptionFilter::new().with_tools_list_changed())
        .await
        .expect("listen");
    assert!(sub.granted().wants_tools_list_changed());
    assert!(sub.id().is_some());
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .expect("trigger");
    let n = tokio::time::timeout(Duration::from_secs(5), sub.recv())
        .await
        .expect("a notification in time")
        .expect("open")
        .expect("ok");
    assert_eq!(n, ServerNotification::ToolsListChanged);

    let after = client.list_tools().await.expect("tools after");
    assert_eq!(
        server.count("tools/list"),
        2,
        "the notification dropped the cached list"
    );
    assert_eq!(after.len(), before.len() + 1);
    drop(sub);
}

#[tokio::test]
async fn caching_honours_ttl() {
    let server = Server::builder("ttl", "1.0.0")
        .list_cache(CacheHint::new(300, CacheScope::Public))
        .tool(
            tool("t")
                .description("A tool")
                .json_handler(|_: Context, _: serde_json::Value| async { Ok("t") }),
        )
        .build()
        .expect("server");
    let server = custom(server).await;
    let client = server.client().await;
    client.list_tools().await.expect("1");
    client.list_tools().await.expect("2");
    assert_eq!(server.count("tools/list"), 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    client.list_tools().await.expect("3");
    assert_eq!(server.count("tools/list"), 2, "expired after ttlMs");
    client.list_tools_page(None).await.expect("4");
    assert_eq!(server.count("tools/list"), 2);
    client.clear_cache();
    client.list_tools().await.expect("5");
    assert_eq!(server.count("tools/list"), 3);
}

#[tokio::test]
async fn era_is_cached_per_origin() {
    let server = everything(100).await;
    let eras = Arc::new(EraCache::new());
    let connect = || {
        Client::builder()
            .http(&server.url)
            .era_cache(eras.clone())
            .build()
    };
    let first = connect().await.expect("first");
    assert_eq!(server.count("server/discover"), 1);
    let origin = server.url.trim_end_matches("/mcp").to_owned();
    assert_eq!(
        eras.get(&origin),
        Some(KnownEra::Modern {
            version: "2026-07-28".into()
        })
    );
    let second = connect().await.expect("second");
    assert_eq!(server.count("server/discover"), 1, "no second probe");
    assert_eq!(second.era(), Era::Modern);
    assert_eq!(
        second.server_capabilities(),
        first.server_capabilities(),
        "the cached discover result gives the capabilities"
    );
    assert!(
        second
            .server_capabilities()
            .is_some_and(|c| c.tools.is_some())
    );
    assert_eq!(second.server_info(), first.server_info());
    let r = second
        .call_tool("echo", json!({"text": "x"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "x");
    drop(first);
}

#[tokio::test]
async fn many_calls_in_parallel() {
    let server = everything(100).await;
    let client = server.client().await;
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..20 {
        let client = client.clone();
        let done = done.clone();
        tasks.push(tokio::spawn(async move {
            let r = client
                .call_tool("echo", json!({"text": i.to_string()}))
                .await
                .expect("call");
            assert_eq!(text(&r), i.to_string());
            done.fetch_add(1, Ordering::SeqCst);
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    assert_eq!(done.load(Ordering::SeqCst), 20);
}

#[tokio::test]
async fn headers_are_checked_by_the_server() {
    // ferry-http rejects any header that does not match the body with -32020, so these
    // calls passing proves Mcp-Name (base64 for non-ASCII) and Mcp-Param headers are right.
    let server = Server::builder("headers", "1.0.0")
        .resource(ferry_server::resource("test://café/ménu", "menu").text("soup"))
        .tool(
            tool("regions")
                .description("A tool with mirrored arguments")
                .input_schema(json!({"type":"object","properties":{
                    "region":{"type":"string","x-mcp-header":"Region"},
                    "n":{"type":"integer","x-mcp-header":"N"},
                    "flag":{"type":"boolean","x-mcp-header":"Flag"}
                }}))
                .json_handler(
                    |_: Context, args: serde_json::Value| async move { Ok(args.to_string()) },
                ),
        )
        .build()
        .expect("server");
    let server = custom(server).await;
    let client = server.client().await;
    let tools = client.list_tools().await.expect("tools");
    assert_eq!(tools.len(), 1);
    for args in [
        json!({"region": " leading space", "n": 42, "flag": true}),
        json!({"region": "Hello, 世界", "n": -7}),
        json!({"n": 1}),
    ] {
        let r = client
            .call_tool("regions", args.clone())
            .await
            .expect("call");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text(&r)).unwrap(),
            args
        );
    }
    let r = client
        .read_resource("test://café/ménu")
        .await
        .expect("read");
    assert_eq!(r.contents.len(), 1);
}

#[tokio::test]
async fn calling_before_listing_refreshes_tools_after_a_header_error() {
    let server = Server::builder("headers", "1.0.0")
        .tool(
            tool("region_tool")
                .description("Mirrors region")
                .input_schema(json!({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}))
                .json_handler(|_: Context, _: serde_json::Value| async move { Ok("ok") }),
        )
        .build()
        .expect("server");
    let server = custom(server).await;
    let client = server.client().await;
    let r = client
        .call_tool("region_tool", json!({"region": "eu"}))
        .await
        .expect("call after refresh");
    assert_eq!(text(&r), "ok");
    assert_eq!(server.count("tools/call"), 2);
    assert_eq!(server.count("tools/list"), 1);
}
