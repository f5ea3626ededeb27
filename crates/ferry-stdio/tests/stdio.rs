//! The stdio transport (transports/stdio.mdx): one
//! message per line, concurrent requests answered by id, cancellation, size limits, end
//! of input, and bounded memory under a client that does not read.

mod support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ferry_stdio::StdioConfig;
use ferry_testkit::rpc::{self, SUBSCRIPTION_ID, call, request};
use ferry_testkit::{eventually, within, within_for};
use serde_json::{Value, json};
use support::{COUNT_TEXT_LEN, connect, server};
use tokio::io::AsyncWriteExt;

const PIPE: usize = 64 * 1024;

fn config() -> StdioConfig {
    StdioConfig::default()
}

/// Many requests run at once on one connection and each is answered by id when it
/// finishes, not in the order sent (basic/index.mdx, transports/stdio.mdx).
#[tokio::test]
async fn concurrent_requests_are_answered_by_id_out_of_order() {
    let (s, _) = server();
    let (mut c, task) = connect(s, config(), PIPE);
    for id in 0..20 {
        c.send(&call(format!("gate-{id}"), "gate", json!({}), json!({})))
            .await;
    }
    for id in 0..20 {
        let r = c
            .ask(&call(
                id,
                "echo",
                json!({"text": format!("echo {id}")}),
                json!({}),
            ))
            .await;
        assert_eq!(
            rpc::text(&r),
            format!("echo {id}"),
            "echoes are answered while the gates wait"
        );
    }
    let released = c
        .ask(&call("release", "release", json!({}), json!({})))
        .await;
    assert_eq!(rpc::text(&released), "released");
    for id in 0..20 {
        let r = c.response(format!("gate-{id}")).await;
        assert_eq!(rpc::text(&r), "passed");
    }
    c.close_input().await;
    assert!(
        c.drain().await.is_empty(),
        "nothing but the answers was sent"
    );
    within("serve to return", task).await.unwrap().unwrap();
}

/// A request reusing the id of one still in flight is refused with an error for that id,
/// and the first request still completes (basic/index.mdx: ids are unique while outstanding).
#[tokio::test]
async fn a_duplicate_in_flight_id_gets_an_error_not_silence() {
    let (s, _) = server();
    let (mut c, _task) = connect(s, config(), PIPE);
    c.send(&call("dup", "gate", json!({}), json!({}))).await;
    c.send(&call("dup", "echo", json!({"text": "second"}), json!({})))
        .await;
    let refused = c.response("dup").await;
    assert_eq!(rpc::error_code(&refused), -32600, "{refused}");
    c.ask(&call("r", "release", json!({}), json!({}))).await;
    let first = c.response("dup").await;
    assert_eq!(rpc::text(&first), "passed");
    // Once answered, the id is free again.
    let again = c
        .ask(&call("dup", "echo", json!({"text": "third"}), json!({})))
        .await;
    assert_eq!(rpc::text(&again), "third");
}

/// `notifications/cancelled` stops the handler (its future is dropped) and nothing is
/// ever sent for the cancelled request; unknown ids are ignored (transports/stdio.mdx, cancellation.mdx).
#[tokio::test]
async fn cancellation_drops_the_handler_and_sends_nothing_for_it() {
    let (s, probe) = server();
    let (mut c, task) = connect(s, config(), PIPE);
    c.send(&call(7, "hang", json!({}), json!({}))).await;
    eventually("the handler to start", || {
        probe.started.load(Ordering::SeqCst)
    })
    .await;
    assert!(!probe.dropped.load(Ordering::SeqCst));
    c.send(&rpc::cancel(7)).await;
    eventually("the handler's future to be dropped", || {
        probe.dropped.load(Ordering::SeqCst)
    })
    .await;
    c.send(&rpc::cancel(12345)).await;
    c.send(&rpc::cancel("never-sent")).await;
    let r = c
        .ask(&call(
            8,
            "echo",
            json!({"text": "still serving"}),
            json!({}),
        ))
        .await;
    assert_eq!(rpc::text(&r), "still serving");
    c.close_input().await;
    let rest = c.drain().await;
    assert!(
        rest.iter().all(|m| m.get("id") != Some(&json!(7))),
        "a cancelled request was answered: {rest:?}"
    );
    within("serve to return", task).await.unwrap().unwrap();
}

/// A line over the size limit is skipped and answered with -32600 (no id: it was not
/// read), and the connection keeps serving (basic/index.mdx).
#[tokio::test]
async fn oversized_lines_are_refused_and_the_connection_keeps_serving() {
    let (s, _) = server();
    let limit = 4096;
    let (mut c, task) = connect(
        s,
        StdioConfig {
            max_line_bytes: limit,
            ..config()
        },
        PIPE,
    );
    let big = call(1, "echo", json!({"text": "x".repeat(limit * 5)}), json!({}));
    c.send(&big).await;
    let refused = c.recv().await;
    assert_eq!(rpc::error_code(&refused), -32600);
    assert!(refused.get("id").is_none(), "{refused}");
    let fits = call(2, "echo", json!({"text": "y".repeat(limit / 2)}), json!({}));
    assert_eq!(rpc::text(&c.ask(&fits).await), "y".repeat(limit / 2));
    // An oversized last line without a newline is refused too.
    c.send_raw(serde_json::to_string(&big).unwrap().as_bytes())
        .await;
    c.close_input().await;
    let rest = c.drain().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rpc::error_code(&rest[0]), -32600);
    within("serve to return", task).await.unwrap().unwrap();
}

/// Framing details: blank lines are skipped, CRLF is accepted, a line that is not JSON
/// gets -32700 without id, and the connection goes on.
#[tokio::test]
async fn framing_errors_do_not_end_the_connection() {
    let (s, _) = server();
    let (mut c, _task) = connect(s, config(), PIPE);
    c.send_raw(b"\n   \n").await;
    c.send_raw(b"{not json}\n").await;
    let parse = c.recv().await;
    assert_eq!(rpc::error_code(&parse), -32700);
    assert!(parse.get("id").is_none());
    let mut crlf =
        serde_json::to_vec(&call(3, "echo", json!({"text": "crlf"}), json!({}))).unwrap();
    crlf.extend_from_slice(b"\r\n");
    c.send_raw(&crlf).await;
    c.send(&call(4, "echo", json!({"text": "after"}), json!({})))
        .await;
    assert_eq!(rpc::text(&c.response(3).await), "crlf");
    assert_eq!(rpc::text(&c.response(4).await), "after");
}

/// At end of input the server finishes promptly: a listen stream ends with its graceful
/// completion result, a request that never ends is dropped after the grace period
/// (transports/stdio.mdx, subscriptions.mdx).
#[tokio::test]
async fn end_of_input_ends_the_connection_promptly() {
    let (s, probe) = server();
    let grace = Duration::from_millis(200);
    let (mut c, task) = connect(
        s,
        StdioConfig {
            shutdown_grace: grace,
            ..config()
        },
        PIPE,
    );
    let listen = request(
        9,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    c.send(&listen).await;
    let ack = c.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 9);
    c.send(&call(10, "hang", json!({}), json!({}))).await;
    eventually("the handler to start", || {
        probe.started.load(Ordering::SeqCst)
    })
    .await;
    let start = Instant::now();
    c.close_input().await;
    let rest = c.drain().await;
    within_for(
        Duration::from_secs(2),
        "serve to return after end of input",
        task,
    )
    .await
    .unwrap()
    .unwrap();
    assert!(
        start.elapsed() < grace + Duration::from_secs(1),
        "took {:?}",
        start.elapsed()
    );
    assert!(
        probe.dropped.load(Ordering::SeqCst),
        "the hanging handler was dropped"
    );
    assert_eq!(
        rest.len(),
        1,
        "only the listen completion follows: {rest:?}"
    );
    assert_eq!(rest[0]["id"], 9);
    assert_eq!(rest[0]["result"]["resultType"], "complete");
    assert_eq!(rest[0]["result"]["_meta"][SUBSCRIPTION_ID], 9);
}

/// A connection ending is not the server ending: with one server serving two
/// connections, the end of one leaves the other's listen stream open, and a later
/// connection still hears about changes (basic/index.mdx: a connection is not a session).
#[tokio::test]
async fn the_end_of_one_connection_does_not_stop_the_server() {
    let (s, _) = server();
    let (mut a, _ta) = connect(s.clone(), config(), PIPE);
    let (mut b, tb) = connect(s.clone(), config(), PIPE);
    a.send(&request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    ))
    .await;
    assert_eq!(
        a.recv().await["method"],
        "notifications/subscriptions/acknowledged"
    );
    b.close_input().await;
    assert!(b.drain().await.is_empty());
    within("the first connection to end", tb)
        .await
        .unwrap()
        .unwrap();
    assert!(
        !s.is_shutting_down(),
        "one connection's end shut the whole server down"
    );
    s.add_tool(
        ferry_server::tool("late")
            .json_handler(|_: ferry_server::Context, _: Value| async move { Ok("late") }),
    )
    .unwrap();
    let note = a.recv().await;
    assert_eq!(note["method"], "notifications/tools/list_changed", "{note}");
    assert_eq!(note["params"]["_meta"][SUBSCRIPTION_ID], 1);
}

/// Writes `n` `count` requests as fast as the server takes them, returning how many
/// lines were fully written.
fn flood_writer<W: tokio::io::AsyncWrite + Unpin + Send + 'static>(
    mut w: W,
    n: usize,
) -> (
    tokio::task::JoinHandle<W>,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let progress = written.clone();
    let task = tokio::spawn(async move {
        for id in 0..n {
            let mut line = serde_json::to_vec(&call(id, "count", json!({}), json!({}))).unwrap();
            line.push(b'\n');
            w.write_all(&line).await.unwrap();
            progress.store(id + 1, Ordering::SeqCst);
        }
        w.flush().await.unwrap();
        w
    });
    (task, written)
}

/// Waits until `value` stops changing for `quiet`, and returns it.
async fn settled(what: &str, quiet: Duration, value: impl Fn() -> usize) -> usize {
    within(what, async {
        let mut last = value();
        loop {
            tokio::time::sleep(quiet).await;
            let now = value();
            if now == last {
                return now;
            }
            last = now;
        }
    })
    .await
}

/// A client that writes requests without reading the answers is slowed down, not
/// buffered: with small output queues the server stops reading its input after a bounded
/// number of requests; once the client reads, every request is answered (transports/stdio.mdx).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_without_reading_is_held_back_then_fully_answered() {
    let (s, probe) = server();
    let n = 20_000;
    let cfg = StdioConfig {
        output_queue: 8,
        max_in_flight: 4,
        ..config()
    };
    let pipe = 16 * 1024;
    let (client_in, server_out) = tokio::io::duplex(pipe);
    let (server_in, client_out) = tokio::io::duplex(pipe);
    let serving = tokio::spawn(ferry_stdio::serve(s, server_in, server_out, cfg));
    let (writer, written) = flood_writer(client_out, n);

    let ran = settled(
        "the server to stop taking requests",
        Duration::from_millis(300),
        || probe.counted.load(Ordering::SeqCst),
    )
    .await;
    let sent = written.load(Ordering::SeqCst);
    // What can be held: the output queue, the requests in flight, and as many answers as
    // fit in the writer's 64 KiB buffer and the pipe.
    let answer = COUNT_TEXT_LEN + 100;
    let bound = 8 + 4 + (64 * 1024 + pipe) / answer + 8;
    eprintln!(
        "in-process flood: {ran} handlers ran and {sent} requests were written before the server pushed back (bound {bound})"
    );
    assert!(
        ran <= bound,
        "{ran} handlers ran while nobody read the output (bound {bound})"
    );
    assert!(
        sent < n / 10,
        "the writer was not held back: {sent} of {n} written"
    );

    let mut reader =
        ferry_testkit::lines::JsonLines::new(client_in, tokio::io::empty()).answering("tools/call");
    let mut seen = vec![false; n];
    for _ in 0..n {
        let m = reader.recv().await;
        let id = m["id"].as_u64().unwrap_or_else(|| panic!("{m}")) as usize;
        assert!(
            !std::mem::replace(&mut seen[id], true),
            "request {id} was answered twice"
        );
        assert_eq!(
            m["result"]["content"][0]["text"].as_str().map(str::len),
            Some(COUNT_TEXT_LEN)
        );
    }
    let w = within("the writer to finish", writer).await.unwrap();
    drop(w);
    assert!(reader.drain().await.is_empty());
    within("serve to return", serving).await.unwrap().unwrap();
    assert_eq!(probe.counted.load(Ordering::SeqCst), n);
}
