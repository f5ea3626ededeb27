//! The real `ferry-everything --stdio` binary: nothing but MCP messages on stdout, one per
//! line; a prompt exit on end of input; and bounded memory under a client that writes
//! without reading (transports/stdio.mdx).

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use ferry_testkit::rpc::{self, SUBSCRIPTION_ID, all_caps, call, request, request_with};
use ferry_testkit::{within, within_for};
use serde_json::{Value, json};
use support::{rss_kib, spawn_stdio};
use tokio::io::AsyncWriteExt;

fn with_meta(mut msg: Value, key: &str, value: Value) -> Value {
    msg["params"]["_meta"][key] = value;
    msg
}

/// A session's worth of varied traffic, bad lines included: every line on stdout parses
/// as one JSON-RPC message valid against the schema, every request is answered once, and
/// the process exits cleanly on end of input.
#[tokio::test]
async fn stdout_carries_only_mcp_messages_one_per_line() {
    let (mut child, mut c) = spawn_stdio();
    let mut requests = vec![
        request(1, "server/discover", json!({})),
        request(2, "tools/list", json!({})),
        request(3, "prompts/list", json!({})),
        request(4, "resources/list", json!({})),
        request(5, "resources/templates/list", json!({})),
        request(6, "resources/read", json!({"uri": "test://static-text"})),
        request(
            7,
            "resources/read",
            json!({"uri": "test://template/42/data"}),
        ),
        request(8, "resources/read", json!({"uri": "test://nope"})),
        request(
            9,
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
        ),
        request(
            10,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "te"}}),
        ),
        call(11, "test_simple_text", json!({}), json!({})),
        call(12, "test_multiple_content_types", json!({}), json!({})),
        call(13, "test_error_handling", json!({}), json!({})),
        with_meta(
            call(14, "test_tool_with_progress", json!({}), json!({})),
            "progressToken",
            json!("p14"),
        ),
        with_meta(
            call(15, "test_tool_with_logging", json!({}), json!({})),
            "io.modelcontextprotocol/logLevel",
            json!("debug"),
        ),
        call(16, "test_sampling", json!({"prompt": "hi"}), all_caps()),
        call(
            17,
            "test_input_required_result_multiple_inputs",
            json!({}),
            all_caps(),
        ),
        call(18, "generate_image", json!({"prompt": "x"}), all_caps()),
        call(
            19,
            "echo",
            json!({"text": "line1\nline2 \u{2028} \"quoted\""}),
            json!({}),
        ),
        request(20, "ping", json!({})),
        request(21, "no/such/method", json!({})),
        call(22, "no_such_tool", json!({}), json!({})),
        request_with(
            "s",
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
            json!({}),
        ),
    ];
    requests.push(call(23, "test_trigger_tool_change", json!({}), json!({})));
    for r in &requests {
        c.send(r).await;
    }
    c.send(&rpc::notification("notifications/initialized", json!({})))
        .await;
    c.send_raw(b"this is not json\n").await;
    c.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"tools/list\"}\n")
        .await;
    c.send_raw(b"\n").await;
    // Let the listener hear the tool change before input ends.
    let mut out = Vec::new();
    within("the tools/list_changed notification", async {
        loop {
            let m = c.next().await.expect("output");
            let changed = m["method"] == "notifications/tools/list_changed";
            out.push(m);
            if changed {
                break;
            }
        }
    })
    .await;
    c.close_input().await;
    out.extend(c.drain().await);
    let status = within_for(Duration::from_secs(5), "the process to exit", child.wait())
        .await
        .unwrap();
    assert!(status.success(), "{status}");
    let changed: Vec<&Value> = out
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["params"]["_meta"][SUBSCRIPTION_ID], "s");
    for r in &requests {
        let n = out
            .iter()
            .filter(|m| m.get("method").is_none() && m["id"] == r["id"])
            .count();
        assert_eq!(n, 1, "request {} answered {n} times", r["id"]);
    }
    let completion = out
        .iter()
        .find(|m| m["id"] == "s" && m.get("method").is_none())
        .unwrap();
    assert_eq!(
        completion["result"]["_meta"][SUBSCRIPTION_ID], "s",
        "the listen stream ended with its completion"
    );
    let progress = out
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    let logs = out
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .count();
    assert_eq!((progress, logs), (3, 3));
    let unanswered_lines = out
        .iter()
        .filter(|m| m.get("id").is_none() && m.get("error").is_some())
        .count();
    assert!(
        unanswered_lines >= 1,
        "the line that is not JSON got a parse error"
    );
}

/// The server exits promptly when its input ends, even with a listen stream open.
#[tokio::test]
async fn the_process_exits_promptly_on_end_of_input() {
    let (mut child, mut c) = spawn_stdio();
    c.close_input().await;
    let status = within_for(
        Duration::from_secs(3),
        "the idle process to exit",
        child.wait(),
    )
    .await
    .unwrap();
    assert!(status.success());
    assert!(c.drain().await.is_empty());

    let (mut child, mut c) = spawn_stdio();
    let listen = request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true}}),
    );
    c.send(&listen).await;
    assert_eq!(
        c.recv().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    let started = std::time::Instant::now();
    c.close_input().await;
    let rest = c.drain().await;
    let status = within_for(
        Duration::from_secs(3),
        "the listening process to exit",
        child.wait(),
    )
    .await
    .unwrap();
    assert!(status.success());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["result"]["_meta"][SUBSCRIPTION_ID], 1);
}

/// A client that writes 100k requests without reading: the server stops reading once its
/// bounded queues are full, so the writer blocks and the server's memory stays flat
/// (under 64 MiB, and not growing while the writer is blocked). Once the client reads,
/// every request is answered, once and correctly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_without_reading_keeps_memory_bounded() {
    const N: usize = 100_000;
    const LIMIT_KIB: u64 = 64 * 1024;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferry-everything"))
        .arg("--stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let written = Arc::new(AtomicUsize::new(0));
    let done_writing = Arc::new(AtomicBool::new(false));
    let (w, d) = (written.clone(), done_writing.clone());
    let writer = tokio::spawn(async move {
        let mut buf = Vec::with_capacity(64 * 1024);
        for id in 0..N {
            serde_json::to_writer(
                &mut buf,
                &call(
                    id,
                    "echo",
                    json!({"text": format!("flood {id}")}),
                    json!({}),
                ),
            )
            .unwrap();
            buf.push(b'\n');
            if buf.len() > 32 * 1024 || id + 1 == N {
                stdin.write_all(&buf).await.unwrap();
                buf.clear();
                w.store(id + 1, Ordering::SeqCst);
            }
        }
        d.store(true, Ordering::SeqCst);
        stdin
    });

    // Sample memory until the writer has been stuck for a while.
    let mut peak = 0;
    let mut stuck_since = None;
    let mut last_written = 0;
    let mut rss_when_stuck = 0;
    within("the writer to be held back", async {
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let rss = rss_kib(pid);
            peak = peak.max(rss);
            assert!(
                !done_writing.load(Ordering::SeqCst),
                "all {N} requests were taken without anyone reading"
            );
            let now = written.load(Ordering::SeqCst);
            if now != last_written {
                last_written = now;
                stuck_since = None;
                continue;
            }
            let since = *stuck_since.get_or_insert_with(|| {
                rss_when_stuck = rss;
                std::time::Instant::now()
            });
            if since.elapsed() > Duration::from_millis(1500) {
                assert!(
                    rss <= rss_when_stuck + 1024,
                    "memory grew while blocked: {rss_when_stuck} -> {rss} KiB"
                );
                break;
            }
        }
    })
    .await;
    let held = written.load(Ordering::SeqCst);
    eprintln!(
        "stdio flood: peak {peak} KiB while flooding, {rss_when_stuck} KiB when the writer blocked; held back after {held} of {N} requests"
    );
    assert!(
        peak < LIMIT_KIB,
        "peak RSS {peak} KiB is over {LIMIT_KIB} KiB"
    );
    assert!(
        held < N / 2,
        "the server took {held} requests without back-pressure"
    );

    let mut reader =
        ferry_testkit::lines::JsonLines::new(stdout, tokio::io::empty()).answering("tools/call");
    let mut seen = vec![false; N];
    for _ in 0..N {
        let m = reader.recv().await;
        let id = m["id"].as_u64().unwrap_or_else(|| panic!("{m}")) as usize;
        assert!(
            !std::mem::replace(&mut seen[id], true),
            "request {id} answered twice"
        );
        assert_eq!(rpc::text(&m), format!("flood {id}"));
        if id.is_multiple_of(10_000) {
            peak = peak.max(rss_kib(pid));
        }
    }
    let stdin = within("the writer to finish", writer).await.unwrap();
    drop(stdin);
    assert!(reader.drain().await.is_empty());
    let status = within("the process to exit", child.wait()).await.unwrap();
    assert!(status.success());
    eprintln!("stdio flood: peak {peak} KiB over the whole run");
    assert!(
        peak < LIMIT_KIB,
        "peak RSS {peak} KiB is over {LIMIT_KIB} KiB"
    );
}
