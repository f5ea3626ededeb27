//! The client against the `ferry-everything --stdio` binary, in both eras: the modern
//! stdio transport, child process management, and a 2025-11-25 session over stdio.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_client::{
    CallOptions, Client, ClientBuilder, Era, EraMode, Error, FnHandler, ServerNotification,
    StdioOptions,
};
use ferry_testkit::content::text;
use ferry_testkit::elicit::confirm;
use serde_json::json;

/// The command starting this package's `ferry-everything` binary over stdio, its logs
/// silenced.
fn everything_stdio(extra: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferry-everything"));
    cmd.arg("--stdio").args(extra).env("RUST_LOG", "error");
    cmd.stderr(std::process::Stdio::null());
    cmd
}

async fn connect(extra: &[&str], handler: FnHandler) -> Client {
    Client::builder()
        .stdio(everything_stdio(extra))
        .input_handler(handler)
        .build()
        .await
        .expect("connect over stdio")
}

#[tokio::test]
async fn discover_and_echo() {
    let client = connect(&[], FnHandler::new()).await;
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().expect("info").name, "ferry-everything");
    let d = client.discover().await.expect("discover");
    assert!(d.supports("2026-07-28"));
    let r = client
        .call_tool("echo", json!({"text": "over stdio"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "over stdio");
    let started = Instant::now();
    client.close().await.expect("close");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the server exits when stdin closes"
    );
    let err = client
        .call_tool("echo", json!({"text": "x"}))
        .await
        .expect_err("closed");
    assert!(matches!(err, Error::Closed), "{err:?}");
}

#[tokio::test]
async fn list_tools_follows_pages() {
    let client = connect(&["--page-size", "3"], FnHandler::new()).await;
    let first = client.list_tools_page(None).await.expect("page");
    assert_eq!(first.tools.len(), 3);
    assert!(first.next_cursor.is_some());
    let all = client.list_tools().await.expect("all");
    assert!(all.len() > 6);
    assert!(all.iter().any(|t| t.name == "generate_image"));
    client.close().await.expect("close");
}

#[tokio::test]
async fn confirm_delete_accept_decline_cancel() {
    let handler = FnHandler::new().on_form(|form| {
        let path_in_message =
            form.message.contains("notes.txt") || form.message.contains("draft.md");
        let action = if form.message.contains("notes.txt") {
            "accept"
        } else if form.message.contains("draft.md") {
            "decline"
        } else {
            "cancel"
        };
        assert!(path_in_message || form.message.contains("old/report.csv"));
        async move { confirm(action) }
    });
    let client = connect(&[], handler).await;
    // The binary's temporary sandbox starts with the demo files.
    for (path, expected) in [
        ("notes.txt", "Deleted notes.txt ("),
        ("draft.md", "Kept draft.md: nothing deleted"),
        ("old/report.csv", "Cancelled: nothing deleted"),
    ] {
        let r = client
            .call_tool("confirm_delete", json!({"path": path}))
            .await
            .expect("call");
        assert!(text(&r).starts_with(expected), "{}", text(&r));
    }
    client.close().await.expect("close");
}

#[tokio::test]
async fn generate_image_answers_two_questions_in_one_round() {
    let count = Arc::new(Mutex::new(0));
    let seen = count.clone();
    let handler = FnHandler::new().on_form(move |form| {
        *seen.lock().unwrap() += 1;
        let field = form.fields().next().expect("field").name.to_owned();
        let value = match field.as_str() {
            "aspect_ratio" => ElicitValue::String("16:9".into()),
            _ => ElicitValue::Bool(true),
        };
        async move { ElicitResult::accept(BTreeMap::from([(field, value)])) }
    });
    let client = connect(&[], handler).await;
    let r = client
        .call_tool("generate_image", json!({"prompt": "waves"}))
        .await
        .expect("call");
    assert!(text(&r).contains("16:9"));
    assert_eq!(*count.lock().unwrap(), 2);
    client.close().await.expect("close");
}

#[tokio::test]
async fn progress_reaches_the_callback() {
    let client = connect(&[], FnHandler::new()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let opts = CallOptions::new().on_progress(move |p| log.lock().unwrap().push(p.progress));
    client
        .call_tool_with("test_tool_with_progress", json!({}), &opts)
        .await
        .expect("call");
    assert_eq!(*seen.lock().unwrap(), [0.0, 50.0, 100.0]);
    client.close().await.expect("close");
}

#[tokio::test]
async fn timeout_cancels_and_the_connection_stays_usable() {
    let client = connect(&[], FnHandler::new()).await;
    let opts = CallOptions::new().timeout(Duration::from_millis(30));
    let err = client
        .call_tool_with("test_tool_with_progress", json!({}), &opts)
        .await
        .expect_err("too slow");
    assert!(err.is_timeout(), "{err:?}");
    // The cancelled request's late messages are ignored; the next call works.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let r = client
        .call_tool("echo", json!({"text": "still here"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "still here");
    client.close().await.expect("close");
}

#[tokio::test]
async fn subscriptions_are_demultiplexed() {
    let client = connect(&[], FnHandler::new()).await;
    let mut tools = client
        .listen(SubscriptionFilter::new().with_tools_list_changed())
        .await
        .expect("listen tools");
    let mut prompts = client
        .listen(SubscriptionFilter::new().with_prompts_list_changed())
        .await
        .expect("listen prompts");
    assert_ne!(tools.id(), prompts.id());
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .expect("trigger");
    let n = tokio::time::timeout(Duration::from_secs(5), tools.recv())
        .await
        .expect("in time")
        .expect("open")
        .expect("ok");
    assert_eq!(n, ServerNotification::ToolsListChanged);
    client
        .call_tool("test_trigger_prompt_change", json!({}))
        .await
        .expect("trigger");
    let n = tokio::time::timeout(Duration::from_secs(5), prompts.recv())
        .await
        .expect("in time")
        .expect("open")
        .expect("ok");
    assert_eq!(n, ServerNotification::PromptsListChanged);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), tools.recv())
            .await
            .is_err(),
        "the tools subscription got nothing else"
    );
    drop(tools);
    drop(prompts);
    let r = client
        .call_tool("echo", json!({"text": "after"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "after");
    client.close().await.expect("close");
}

/// A process that never answers, ignores the end of its stdin and writes its pid to a
/// file; with `ignore_term` it also ignores SIGTERM.
fn stubborn(pid_file: &std::path::Path, ignore_term: bool) -> tokio::process::Command {
    let script = format!(
        "import os, signal, sys, time\n{}open({:?}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n",
        if ignore_term {
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        } else {
            ""
        },
        pid_file.display().to_string()
    );
    let mut cmd = tokio::process::Command::new("python3");
    cmd.arg("-c").arg(script);
    cmd
}

#[cfg(unix)]
async fn shutdown_escalates(ignore_term: bool) {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipping: python3 is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!(
        "ferry-client-stdio-{}-{ignore_term}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let pid_file = dir.join("pid");
    let options = StdioOptions {
        exit_grace: Duration::from_millis(200),
        term_grace: Duration::from_millis(200),
        ..StdioOptions::default()
    };
    let started = Instant::now();
    let err = Client::builder()
        .stdio(stubborn(&pid_file, ignore_term))
        .stdio_options(options)
        .probe_timeout(Duration::from_millis(500))
        .timeout(Duration::from_millis(300))
        .build()
        .await
        .expect_err("the server never answers");
    assert!(err.is_timeout(), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let pid = std::fs::read_to_string(&pid_file).expect("pid written");
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the server process is gone"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[tokio::test]
async fn shutdown_sends_sigterm_when_stdin_eof_is_ignored() {
    shutdown_escalates(false).await;
}

#[cfg(unix)]
#[tokio::test]
async fn shutdown_kills_when_sigterm_is_ignored() {
    shutdown_escalates(true).await;
}

fn confirm_and_pick() -> FnHandler {
    FnHandler::new().on_form(|form| {
        let field = form.fields().next().expect("a field").name.to_owned();
        let value = match field.as_str() {
            "aspect_ratio" => ElicitValue::String("9:16".into()),
            _ => ElicitValue::Bool(true),
        };
        assert!(
            form.context.key.is_none(),
            "legacy questions have no MRTR key"
        );
        async move { ElicitResult::accept(BTreeMap::from([(field, value)])) }
    })
}

async fn exercise(builder: ClientBuilder) -> Client {
    let client = builder
        .era(EraMode::Legacy)
        .input_handler(confirm_and_pick())
        .build()
        .await
        .expect("initialize");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(
        client.server_info().expect("server info").name,
        "ferry-everything"
    );
    let d = client.discover().await.expect("discover from initialize");
    assert_eq!(d.supported_versions, ["2025-11-25"]);

    let tools = client.list_tools().await.expect("tools");
    assert!(tools.iter().any(|t| t.name == "confirm_delete"));
    let r = client
        .call_tool("echo", json!({"text": "legacy"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "legacy");
    let r = client
        .call_tool("confirm_delete", json!({"path": "draft.md"}))
        .await
        .expect("confirm_delete");
    assert!(text(&r).starts_with("Deleted draft.md ("), "{}", text(&r));
    let r = client
        .call_tool("generate_image", json!({"prompt": "sky"}))
        .await
        .expect("generate_image");
    assert!(text(&r).contains("9:16"), "{}", text(&r));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let opts = CallOptions::new().on_progress(move |p| log.lock().unwrap().push(p.progress));
    client
        .call_tool_with("test_tool_with_progress", json!({}), &opts)
        .await
        .expect("progress");
    assert_eq!(*seen.lock().unwrap(), [0.0, 50.0, 100.0]);

    let r = client
        .read_resource("test://static-text")
        .await
        .expect("read");
    assert_eq!(r.contents.len(), 1);
    client
}

#[tokio::test]
async fn legacy_over_stdio() {
    let client = exercise(Client::builder().stdio(everything_stdio(&[]))).await;
    let mut sub = client
        .listen(SubscriptionFilter::new().with_tools_list_changed())
        .await
        .expect("listen");
    assert!(sub.id().is_none());
    assert!(sub.granted().wants_tools_list_changed());
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .expect("trigger");
    let n = tokio::time::timeout(Duration::from_secs(5), sub.recv())
        .await
        .expect("in time")
        .expect("open")
        .expect("ok");
    assert_eq!(n, ServerNotification::ToolsListChanged);
    drop(sub);
    client.close().await.expect("close");
}
