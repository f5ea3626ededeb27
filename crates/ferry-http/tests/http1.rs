//! Ferry's own HTTP/1.1 connection (`src/h1/`) on the wire: raw bytes over
//! `tokio::net::TcpStream` on 127.0.0.1 (`support::wire`), checked against RFC 9112
//! (message syntax, framing, persistence) and RFC 9110 (semantics).

mod support;

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ferry_http::{HttpConfig, McpService};
use ferry_testkit::eventually;
use ferry_testkit::http::mcp_headers;
use ferry_testkit::rpc::{self, call, progress_call, request};
use serde_json::{Value, json};
use support::wire::{Conn, Resp, assert_echoed, echo, post_head};
use support::{PATH, Running, quick_keep_alive, server, start};

/// Splits an SSE stream into its JSON-RPC messages, skipping comments.
fn sse_messages(stream: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(stream).expect("SSE is UTF-8");
    assert!(text.ends_with("\n\n"), "unterminated SSE event: {text:?}");
    text.split_terminator("\n\n")
        .filter_map(|event| {
            let data: Vec<_> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            match data.as_slice() {
                [] => None,
                [one] => Some(serde_json::from_str(one).expect("JSON in a data line")),
                _ => panic!("several data lines: {event:?}"),
            }
        })
        .collect()
}

/// Serves the test server at [`PATH`] with `config`.
async fn start_with(config: HttpConfig) -> Running {
    let (s, _) = server();
    start(s, config).await
}

async fn endpoint() -> Running {
    let (s, _) = server();
    start(s, HttpConfig::default()).await
}

/// Requests pipelined in one write are all answered, in order, on the same connection
/// (RFC 9112 §9.3.2), whether their bodies are small or larger than one read.
#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let run = endpoint().await;
    let mut c = Conn::connect(run.client.addr()).await;
    let big = "b".repeat(40 * 1024);
    let mut out = c.post(&echo(1, "first"), &[]);
    out.extend(c.post(&echo(2, "second"), &[]));
    out.extend(c.post(&echo(3, &big), &[]));
    out.extend(c.post(&echo(4, "fourth"), &[]));
    c.send(&out).await;
    for (id, text) in [
        (1, "first"),
        (2, "second"),
        (3, big.as_str()),
        (4, "fourth"),
    ] {
        let r = c.read_response().await;
        assert_echoed(&r, id, text);
        assert_eq!(r.header("connection"), None, "{r:?}");
    }
    // The connection persists after them.
    c.echo(5, "after").await;
    run.stop().await;
}

/// A chunked request body, split over several writes, with chunk extensions, upper- and
/// lower-case hex sizes and a trailer section, is decoded and served (RFC 9112 §7.1,
/// §7.1.1, §7.1.2); the connection then carries the next request.
#[tokio::test]
async fn chunked_request_bodies_are_decoded() {
    let run = endpoint().await;
    let mut c = Conn::connect(run.client.addr()).await;
    let text = "chunked ".repeat(40);
    let body = serde_json::to_vec(&echo(1, &text)).unwrap();
    let (a, rest) = body.split_at(10);
    let (b, d) = rest.split_at(rest.len() - 30);
    let mut head = post_head(
        &c.host,
        &echo(1, &text),
        &[("transfer-encoding", "chunked")],
    );
    head.extend_from_slice(b"\r\n");
    c.send(&head).await;
    c.send(format!("{:x};x=1\r\n", a.len()).as_bytes()).await;
    c.send(a).await;
    c.send(b"\r\n").await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut chunk = format!("{:X}; name=\"quoted value\"\r\n", b.len()).into_bytes();
    chunk.extend_from_slice(b);
    chunk.extend_from_slice(format!("\r\n{:x}\r\n", d.len()).as_bytes());
    chunk.extend_from_slice(d);
    chunk.extend_from_slice(b"\r\n");
    c.send(&chunk).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    c.send(b"0;last\r\nx-trailer: done\r\nx-checksum: 1234\r\n\r\n")
        .await;
    let r = c.read_response().await;
    assert_echoed(&r, 1, &text);
    c.echo(2, "next").await;
    run.stop().await;
}

/// `Expect: 100-continue` with the body held back: the server sends exactly
/// `HTTP/1.1 100 Continue` and an empty line before reading the body, then the final
/// response (RFC 9110 §10.1.1, §15.2.1; RFC 9112 §9.2).
#[tokio::test]
async fn expect_continue_gets_an_interim_response_first() {
    let run = endpoint().await;
    let mut c = Conn::connect(run.client.addr()).await;
    let msg = echo(1, "continued");
    let body = serde_json::to_vec(&msg).unwrap();
    let mut head = post_head(&c.host, &msg, &[("expect", "100-continue")]);
    head.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    c.send(&head).await;
    let interim = c.take_through(b"\r\n\r\n").await;
    assert_eq!(
        String::from_utf8_lossy(&interim),
        "HTTP/1.1 100 Continue\r\n\r\n"
    );
    assert!(c.buf.is_empty(), "nothing before the body is sent");
    c.send(&body).await;
    let r = c.read_response().await;
    assert_echoed(&r, 1, "continued");
    // Chunked bodies get the interim response too.
    let msg = echo(2, "chunked and continued");
    let body = serde_json::to_vec(&msg).unwrap();
    let mut head = post_head(
        &c.host,
        &msg,
        &[("expect", "100-Continue"), ("transfer-encoding", "chunked")],
    );
    head.extend_from_slice(b"\r\n");
    c.send(&head).await;
    let interim = c.read_response().await;
    assert_eq!(interim.status_line, "HTTP/1.1 100 Continue");
    assert!(interim.headers.is_empty(), "{interim:?}");
    let mut chunked = format!("{:x}\r\n", body.len()).into_bytes();
    chunked.extend_from_slice(&body);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    c.send(&chunked).await;
    assert_echoed(&c.read_response().await, 2, "chunked and continued");
    run.stop().await;
}

/// `Connection: close` on a request: the response says `connection: close` and the
/// server closes the connection after it (RFC 9112 §9.3, §9.6).
#[tokio::test]
async fn connection_close_closes_after_the_response() {
    let run = endpoint().await;
    let mut c = Conn::connect(run.client.addr()).await;
    let out = c.post(&echo(1, "bye"), &[("connection", "close")]);
    c.send(&out).await;
    let r = c.read_response().await;
    assert_echoed(&r, 1, "bye");
    assert_eq!(r.header("connection"), Some("close"));
    c.expect_closed().await;
    // A request pipelined after the close is not answered either.
    let mut c = Conn::connect(run.client.addr()).await;
    let mut out = c.post(&echo(2, "last"), &[("connection", "keep-alive, Close")]);
    out.extend(c.post(&echo(3, "ignored"), &[]));
    c.send(&out).await;
    let r = c.read_response().await;
    assert_echoed(&r, 2, "last");
    assert_eq!(r.header("connection"), Some("close"));
    c.expect_closed().await;
    run.stop().await;
}

/// An HTTP/1.0 request (no Host) is answered with HTTP/1.1 and closed; with
/// `Connection: keep-alive` the response says so and the connection persists
/// (RFC 9112 §9.3, RFC 9110 §2.5; keep-alive as in RFC 9112 Appendix C.2.2).
#[tokio::test]
async fn http10_requests_close_unless_kept_alive() {
    let run = endpoint().await;
    let http10 = |id: i64, text: &str, connection: Option<&str>| {
        let msg = echo(id, text);
        let body = serde_json::to_vec(&msg).unwrap();
        let mut out = format!("POST {PATH} HTTP/1.0\r\n").into_bytes();
        for (name, value) in &mcp_headers(&msg) {
            out.extend_from_slice(format!("{name}: ").as_bytes());
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        if let Some(v) = connection {
            out.extend_from_slice(format!("connection: {v}\r\n").as_bytes());
        }
        out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        out.extend_from_slice(&body);
        out
    };

    let mut c = Conn::connect(run.client.addr()).await;
    c.send(&http10(1, "old", None)).await;
    let r = c.read_response().await;
    assert_echoed(&r, 1, "old");
    assert_eq!(r.header("connection"), Some("close"));
    assert!(r.header("content-length").is_some(), "{r:?}");
    c.expect_closed().await;

    let mut c = Conn::connect(run.client.addr()).await;
    c.send(&http10(2, "kept", Some("keep-alive"))).await;
    let r = c.read_response().await;
    assert_echoed(&r, 2, "kept");
    assert_eq!(r.header("connection"), Some("keep-alive"));
    assert!(
        r.header("content-length").is_some(),
        "a 1.0 peer needs a length to keep the connection: {r:?}"
    );
    c.expect_open_and_quiet(Duration::from_millis(100)).await;
    c.send(&http10(3, "again", Some("Keep-Alive"))).await;
    let r = c.read_response().await;
    assert_echoed(&r, 3, "again");
    assert_eq!(r.header("connection"), Some("keep-alive"));
    run.stop().await;
}

/// Sends `bytes` on a fresh connection and reads the rejection, which must be a JSON
/// error with `status` and -32600, `connection: close`, then the end of the connection
/// (RFC 9112 §9.6); a fresh connection is then still served.
async fn expect_rejected(addr: SocketAddr, bytes: &[u8], status: u16, what: &str) -> Resp {
    let mut c = Conn::connect(addr).await;
    c.send(bytes).await;
    let r = c.read_response().await;
    assert_eq!(r.status, status, "{what}: {r:?}");
    r.assert_rpc_error(status, -32600);
    assert_eq!(r.header("connection"), Some("close"), "{what}");
    c.expect_closed().await;
    Conn::connect(addr).await.echo(99, what).await;
    r
}

/// Unacceptable requests are refused with the right status and a JSON-RPC error body,
/// then the connection closes and the server keeps serving others: a head over
/// `max_head_bytes` (431, RFC 6585 §5), a `Content-Length` over `max_body_bytes` (413 at
/// once, before any body, RFC 9110 §15.5.14), a malformed request line (400, RFC 9112
/// §3), both `Transfer-Encoding` and `Content-Length` (400, RFC 9112 §6.3), an unknown
/// transfer coding (501, RFC 9112 §6.1) and an HTTP/1.1 request without Host (400,
/// RFC 9112 §3.2).
#[tokio::test]
async fn bad_requests_are_rejected_and_the_server_keeps_serving() {
    let run = endpoint().await;
    let addr = run.client.addr();
    let host = addr.to_string();

    let mut big = format!("POST {PATH} HTTP/1.1\r\nhost: {host}\r\nx-big: ").into_bytes();
    big.extend(std::iter::repeat_n(b'a', 70 * 1024));
    big.extend_from_slice(b"\r\ncontent-length: 0\r\n\r\n");
    expect_rejected(addr, &big, 431, "a 70 KiB head").await;
    // The same head without its end: the server must not wait for more.
    let unfinished = &big[..big.len() - b"content-length: 0\r\n\r\n".len()];
    expect_rejected(addr, unfinished, 431, "a 70 KiB head that never ends").await;

    let mut many = format!("POST {PATH} HTTP/1.1\r\nhost: {host}\r\n").into_bytes();
    for i in 0..150 {
        many.extend_from_slice(format!("x-field-{i}: {i}\r\n").as_bytes());
    }
    many.extend_from_slice(b"content-length: 0\r\n\r\n");
    expect_rejected(addr, &many, 431, "150 fields").await;

    // No body is ever sent: the 413 must come from the head alone.
    let mut huge = post_head(&host, &echo(1, "x"), &[]);
    huge.extend_from_slice(format!("content-length: {}\r\n\r\n", 5 * 1024 * 1024).as_bytes());
    expect_rejected(addr, &huge, 413, "a 5 MiB Content-Length").await;

    for line in [
        "P@ST /mcp HTTP/1.1",
        "POST /mcp HTTP/1.1 trailing",
        "POST\t/mcp",
        "POST /mcp",
    ] {
        let bytes = format!("{line}\r\nhost: {host}\r\ncontent-length: 0\r\n\r\n");
        expect_rejected(addr, bytes.as_bytes(), 400, line).await;
    }

    let mut both = post_head(&host, &echo(1, "x"), &[("transfer-encoding", "chunked")]);
    both.extend_from_slice(b"content-length: 5\r\n\r\n0\r\n\r\n");
    expect_rejected(addr, &both, 400, "Transfer-Encoding and Content-Length").await;

    let mut gzip = post_head(&host, &echo(1, "x"), &[("transfer-encoding", "gzip")]);
    gzip.extend_from_slice(b"\r\n");
    expect_rejected(addr, &gzip, 501, "Transfer-Encoding: gzip").await;

    let msg = echo(1, "x");
    let body = serde_json::to_vec(&msg).unwrap();
    let mut no_host =
        format!("POST {PATH} HTTP/1.1\r\ncontent-type: application/json\r\n").into_bytes();
    no_host.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    no_host.extend_from_slice(&body);
    expect_rejected(addr, &no_host, 400, "an HTTP/1.1 request without Host").await;

    let mut bad_chunk = post_head(&host, &echo(1, "x"), &[("transfer-encoding", "chunked")]);
    bad_chunk.extend_from_slice(b"\r\nzz\r\n{}\r\n0\r\n\r\n");
    expect_rejected(addr, &bad_chunk, 400, "a malformed chunk size").await;
    run.stop().await;
}

/// A head that never completes is answered with 408 once `head_timeout` has passed since
/// its first byte, and the connection closes (RFC 9110 §15.5.9); the server keeps
/// serving. An idle connection with no byte sent is not timed out.
#[tokio::test]
async fn slow_heads_time_out_with_408() {
    let config = HttpConfig::builder()
        .head_timeout(Duration::from_millis(300))
        .build()
        .expect("a valid config");
    let run = start_with(config).await;
    let addr = run.client.addr();
    let mut idle = Conn::connect(addr).await;

    let mut c = Conn::connect(addr).await;
    let started = Instant::now();
    c.send(format!("POST {PATH} HTTP/1.1\r\nhost: {addr}\r\n").as_bytes())
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    c.send(b"x-slow: 1\r\n").await;
    let r = c.read_response().await;
    let waited = started.elapsed();
    r.assert_rpc_error(408, -32600);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "408 after {waited:?}"
    );
    c.expect_closed().await;

    // The idle connection outlived the head timeout and still works.
    idle.expect_open_and_quiet(Duration::from_millis(50)).await;
    idle.echo(1, "idle but fine").await;
    Conn::connect(addr).await.echo(2, "fresh").await;
    run.stop().await;
}

/// A request body larger than the config's `max_body_bytes` is refused by the connection
/// with 413, framed by length or chunked (RFC 9110 §15.5.14).
#[tokio::test]
async fn body_limits_come_from_the_config() {
    let config = HttpConfig::builder()
        .max_body_bytes(1024)
        .build()
        .expect("a valid config");
    let run = start_with(config).await;
    let addr = run.client.addr();
    let host = addr.to_string();
    let msg = echo(1, &"x".repeat(2000));
    let mut out = post_head(&host, &msg, &[]);
    out.extend_from_slice(b"content-length: 1025\r\n\r\n");
    expect_rejected(addr, &out, 413, "1025 bytes by length").await;

    let body = serde_json::to_vec(&msg).unwrap();
    let mut chunked = post_head(&host, &msg, &[("transfer-encoding", "chunked")]);
    chunked.extend_from_slice(b"\r\n");
    for part in body.chunks(500) {
        chunked.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        chunked.extend_from_slice(part);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    expect_rejected(addr, &chunked, 413, "2 KB chunked").await;
    run.stop().await;
}

/// A HEAD request gets the 405 a GET gets, with the same `content-length` and no body
/// bytes: the next pipelined responses parse right after its head (RFC 9110 §9.3.2,
/// RFC 9112 §6.3 rule 1).
#[tokio::test]
async fn head_requests_get_a_length_and_no_body() {
    let run = endpoint().await;
    let mut c = Conn::connect(run.client.addr()).await;
    let host = c.host.clone();
    let mut out = format!("HEAD {PATH} HTTP/1.1\r\nhost: {host}\r\n\r\n").into_bytes();
    out.extend_from_slice(format!("GET {PATH} HTTP/1.1\r\nhost: {host}\r\n\r\n").as_bytes());
    out.extend(c.post(&echo(1, "after head"), &[]));
    c.send(&out).await;

    let head = c.read_head_response().await;
    assert_eq!(head.status_line, "HTTP/1.1 405 Method Not Allowed");
    assert_eq!(head.header("allow"), Some("POST"));
    assert_eq!(head.header("content-type"), Some("application/json"));
    assert_eq!(head.header("transfer-encoding"), None);
    head.assert_one_date();
    let length = head
        .header("content-length")
        .expect("HEAD response with content-length")
        .to_owned();
    // Whatever follows the HEAD response's head must be the next status line.
    while c.buf.len() < 9 {
        c.fill_some().await;
    }
    assert!(
        c.buf.starts_with(b"HTTP/1.1 "),
        "body bytes after a HEAD response: {:?}",
        String::from_utf8_lossy(&c.buf)
    );

    let get = c.read_response().await;
    get.assert_rpc_error(405, -32600);
    assert_eq!(get.header("content-length"), Some(length.as_str()));
    assert_echoed(&c.read_response().await, 1, "after head");
    run.stop().await;
}

/// A handler that streams progress gets a chunked response (RFC 9112 §6.1, §7.1) with
/// no `content-length`, whose chunks decode to SSE events: the progress notifications,
/// then the response.
#[tokio::test]
async fn streamed_responses_are_chunked_sse() {
    let run = endpoint().await;
    let mut c = Conn::connect(run.client.addr()).await;
    let out = c.post(&progress_call(1, "progress"), &[]);
    c.send(&out).await;
    let mut r = c.read_head().await;
    assert_eq!(r.status_line, "HTTP/1.1 200 OK");
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert_eq!(r.header("content-length"), None);
    r.assert_one_date();
    let mut chunks = 0;
    while let Some(data) = c.read_chunk().await {
        assert!(!data.is_empty());
        chunks += 1;
        r.body.extend_from_slice(&data);
    }
    assert!(chunks >= 1);
    let messages = sse_messages(&r.body);
    let progress: Vec<_> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0], "{messages:?}");
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 1);
    assert_eq!(rpc::text(last), "progress done");
    // The connection persists after the last chunk.
    c.echo(2, "after the stream").await;
    run.stop().await;
}

/// A `subscriptions/listen` stream is chunked SSE that stays open; closing the socket
/// ends the subscription, and the server keeps serving new connections.
#[tokio::test]
async fn listen_streams_are_chunked_and_end_with_the_socket() {
    let (s, _) = server();
    let run = start(s.clone(), quick_keep_alive()).await;
    let mut c = Conn::connect(run.client.addr()).await;
    let msg = request(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let out = c.post(&msg, &[]);
    c.send(&out).await;
    let r = c.read_head().await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert_eq!(r.header("content-length"), None);
    let mut stream = Vec::new();
    let mut comments = 0;
    while comments < 2 {
        let data = c.read_chunk().await.expect("the stream stays open");
        stream.extend_from_slice(&data);
        comments = std::str::from_utf8(&stream)
            .unwrap()
            .split_terminator("\n\n")
            .filter(|e| e.starts_with(':'))
            .count();
    }
    let messages = sse_messages(&stream);
    assert_eq!(
        messages[0]["method"], "notifications/subscriptions/acknowledged",
        "{messages:?}"
    );
    eventually("the listener to be registered", || s.listener_count() == 1).await;
    drop(c);
    eventually("the listener to go away with the socket", || {
        s.listener_count() == 0
    })
    .await;
    Conn::connect(run.client.addr())
        .await
        .echo(1, "still serving")
        .await;
    run.stop().await;
}

/// A peer that closes its socket while its request runs drops the handler, before any
/// byte of the response; the server keeps serving (RFC 9112 §9.6: the connection is gone,
/// so is the request).
#[tokio::test]
async fn closing_the_socket_cancels_a_pending_handler() {
    let (s, probe) = server();
    let run = start(s, HttpConfig::default()).await;
    let mut c = Conn::connect(run.client.addr()).await;
    let out = c.post(&call(1, "hang", json!({}), json!({})), &[]);
    c.send(&out).await;
    eventually("the handler to start", || probe.started()).await;
    assert!(!probe.dropped());
    drop(c);
    eventually("the handler to be dropped after the socket closed", || {
        probe.dropped()
    })
    .await;
    Conn::connect(run.client.addr())
        .await
        .echo(2, "still serving")
        .await;
    run.stop().await;
}

/// Every response carries exactly one `date` field (RFC 9110 §6.6.1) and JSON replies
/// `content-type: application/json` with an exact `content-length` (RFC 9110 §8.6);
/// a notification's 202 has `content-length: 0`.
#[tokio::test]
async fn responses_carry_one_date_and_their_content_type() {
    let run = endpoint().await;
    let mut c = Conn::connect(run.client.addr()).await;
    let out = c.post(&request(1, "tools/list", json!({})), &[]);
    c.send(&out).await;
    let r = c.read_response().await;
    assert_eq!(r.status_line, "HTTP/1.1 200 OK");
    r.assert_one_date();
    assert_eq!(r.all("content-type"), ["application/json"]);
    assert_eq!(r.all("content-length"), [r.body.len().to_string()]);
    assert!(r.json()["result"]["tools"].is_array());

    let note = rpc::notification("notifications/initialized", json!({}));
    let out = c.post(&note, &[]);
    c.send(&out).await;
    let r = c.read_response().await;
    assert_eq!(r.status_line, "HTTP/1.1 202 Accepted");
    r.assert_one_date();
    assert_eq!(r.header("content-length"), Some("0"));
    assert!(r.body.is_empty());

    let out = c.post(&request(2, "no/such/method", json!({})), &[]);
    c.send(&out).await;
    let r = c.read_response().await;
    r.assert_one_date();
    assert_eq!(r.all("content-type"), ["application/json"]);
    assert_eq!(r.json()["id"], 2);
    assert!(r.json()["error"]["code"].is_i64());
    run.stop().await;
}

/// An endpoint behind a layer that must be polled ready before each call (a concurrency
/// limit of one) serves requests from many connections at once: each call waits for its
/// turn instead of breaking tower's readiness contract.
#[tokio::test]
async fn endpoints_behind_layers_that_need_readiness_are_served() {
    let (s, _) = server();
    let run = Running::spawn(PATH, move |listener, stop| {
        ferry_http::serve(listener, McpService::new(s, support::no_grace()))
            .layer(tower::limit::ConcurrencyLimitLayer::new(1))
            .with_graceful_shutdown(async {
                let _ = stop.await;
            })
            .into_future()
    })
    .await;
    let addr = run.client.addr();
    let clients = (0..8).map(|i| {
        tokio::spawn(async move {
            let mut c = Conn::connect(addr).await;
            for round in 0..4 {
                c.echo(i * 10 + round, &format!("client {i} round {round}"))
                    .await;
            }
        })
    });
    for client in futures::future::join_all(clients).await {
        client.expect("every client is answered");
    }
    run.stop().await;
}
