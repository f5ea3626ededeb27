//! The Streamable HTTP transport over real TCP on 127.0.0.1 (transports/streamable-http.mdx;
//! transports/streamable-http.mdx): methods, origins, hosts, sizes, response kinds,
//! cancellation by disconnect, timeouts, and mounting in an axum app.

mod support;

use std::time::Duration;

use ferry_http::{HttpConfig, McpService};
use ferry_testkit::http::Client;
use ferry_testkit::rpc::{self, call, progress_call, request};
use ferry_testkit::{eventually, within};
use http::{Method, StatusCode};
use serde_json::json;
use support::{PATH, server, start};

/// A modern-only endpoint accepts POST only: GET and DELETE get 405 with `Allow: POST`,
/// and a JSON-RPC error body without id, whatever `Mcp-Session-Id` says (transports/streamable-http.mdx).
#[tokio::test]
async fn get_and_delete_are_method_not_allowed() {
    let s = ferry_server::Server::builder("modern", "1")
        .modern_only()
        .build()
        .expect("server builds");
    let run = start(s, HttpConfig::default()).await;
    for method in [Method::GET, Method::DELETE, Method::PUT] {
        let res = run
            .client
            .call(method.clone())
            .header("accept", "text/event-stream")
            .header("mcp-session-id", "abc")
            .header("last-event-id", "7")
            .send()
            .await;
        assert_eq!(res.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(res.header("allow"), Some("POST"));
        let body = res.json().await;
        assert!(
            body.get("id").is_none() && body.get("error").is_some(),
            "{body}"
        );
    }
    run.stop().await;
}

/// A dual-era endpoint (the default) keeps GET and DELETE for 2025-11-25 sessions only:
/// without a session they get 405, with an unknown session 404 (2025-11-25 transports).
#[tokio::test]
async fn dual_era_get_and_delete_need_a_live_session() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    for method in [Method::GET, Method::DELETE] {
        let res = run
            .client
            .call(method.clone())
            .header("accept", "text/event-stream")
            .send()
            .await;
        assert_eq!(res.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        let res = run
            .client
            .call(method.clone())
            .header("accept", "text/event-stream")
            .header("mcp-session-id", "no-such-session")
            .send()
            .await;
        assert_eq!(res.status, StatusCode::NOT_FOUND, "{method}");
    }
    run.stop().await;
}

/// `Mcp-Session-Id` is ignored on modern requests and never set on responses (transports/streamable-http.mdx).
#[tokio::test]
async fn session_ids_are_ignored_and_never_set() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    let msgs = [
        request(1, "tools/list", json!({})),
        call(2, "echo", json!({"text": "hi"}), json!({})),
        progress_call(3, "progress"),
        request(4, "nope", json!({})),
    ];
    for msg in &msgs {
        for session in [None, Some("made-up-session"), Some("")] {
            let mut post = run.client.post(msg);
            if let Some(id) = session {
                post = post.header("mcp-session-id", id);
            }
            let res = post.send().await;
            assert!(
                res.header("mcp-session-id").is_none(),
                "{msg}: a session id was set"
            );
            let (reply, _) = res.message().await;
            assert_eq!(reply["id"], msg["id"]);
        }
    }
    run.stop().await;
}

/// A present `Origin` must be allowed, or the answer is 403 with a JSON-RPC error without
/// id; local origins pass by default (transports/streamable-http.mdx).
#[tokio::test]
async fn origins_are_checked() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    let msg = request(1, "tools/list", json!({}));
    for bad in [
        "http://evil.example.com",
        "http://localhost.evil.com",
        "null",
        "http://127.0.0.1.nip.io",
        "file://",
    ] {
        let res = run.client.post(&msg).header("origin", bad).send().await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{bad}");
        let body = res.json().await;
        assert!(body.get("id").is_none(), "{body}");
        assert!(body["error"]["code"].is_i64());
    }
    for good in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "https://[::1]:8443",
        "HTTP://LOCALHOST",
    ] {
        let res = run.client.post(&msg).header("origin", good).send().await;
        assert_eq!(res.status, StatusCode::OK, "{good}");
        res.json().await;
    }
    // Notifications are checked too.
    let note = rpc::notification("notifications/initialized", json!({}));
    let res = run
        .client
        .post(&note)
        .header("origin", "http://evil.example.com")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    run.stop().await;
}

/// A `Host` that is not local is refused on a local endpoint (DNS rebinding; transports/streamable-http.mdx).
#[tokio::test]
async fn hosts_are_checked() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    let msg = request(1, "tools/list", json!({}));
    for bad in [
        "evil.example.com",
        "evil.example.com:80",
        "localhost.evil.com",
        "10.0.0.1:3000",
    ] {
        let res = run.client.post(&msg).header("host", bad).send().await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{bad}");
        res.json().await;
    }
    for good in ["localhost", "localhost:3000", "127.0.0.1:1", "[::1]:9"] {
        let res = run.client.post(&msg).header("host", good).send().await;
        assert_eq!(res.status, StatusCode::OK, "{good}");
        res.json().await;
    }
    run.stop().await;
}

/// A body over the limit gets 413, and the server goes on serving (basic/index.mdx).
#[tokio::test]
async fn oversized_bodies_get_413_and_the_server_keeps_serving() {
    let (s, _) = server();
    let limit = 64 * 1024;
    let run = start(
        s,
        HttpConfig::builder()
            .max_body_bytes(limit)
            .build()
            .expect("a valid config"),
    )
    .await;
    for size in [limit + 1, 1024 * 1024] {
        let msg = call(1, "echo", json!({"text": "x".repeat(size)}), json!({}));
        let res = run.client.post(&msg).send().await;
        assert_eq!(res.status, StatusCode::PAYLOAD_TOO_LARGE, "{size} bytes");
        res.json().await;
        let ok = run
            .client
            .post(&call(2, "echo", json!({"text": "small"}), json!({})))
            .send()
            .await;
        assert_eq!(rpc::text(&ok.json().await), "small");
    }
    let fits = call(
        3,
        "echo",
        json!({"text": "y".repeat(limit - 1024)}),
        json!({}),
    );
    assert_eq!(
        rpc::text(&run.client.post(&fits).send().await.json().await).len(),
        limit - 1024
    );
    run.stop().await;
}

/// A notification is accepted with 202 and an empty body (transports/streamable-http.mdx).
#[tokio::test]
async fn notifications_get_202_with_an_empty_body() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    for note in [
        rpc::notification("notifications/initialized", json!({})),
        rpc::cancel(5),
        rpc::notification("notifications/anything", json!({"_meta": {}})),
    ] {
        let res = run.client.post(&note).send().await;
        assert_eq!(res.status, StatusCode::ACCEPTED, "{note}");
        assert!(res.bytes().await.is_empty());
    }
    run.stop().await;
}

/// Requests are answered with `application/json`, or with `text/event-stream` when the
/// handler streams progress; SSE responses have `X-Accel-Buffering: no`, one `data:` line
/// per event, notifications for this request only, then the response (transports/streamable-http.mdx).
#[tokio::test]
async fn responses_are_json_or_sse_when_progress_streams() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    let plain = run
        .client
        .post(&call(1, "progress", json!({}), json!({})))
        .send()
        .await;
    assert_eq!(
        plain.content_type(),
        Some("application/json"),
        "no progressToken: no stream"
    );
    assert_eq!(rpc::text(&plain.json().await), "progress done");

    let res = run.client.post(&progress_call(2, "progress")).send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.content_type(), Some("text/event-stream"));
    assert_eq!(res.header("x-accel-buffering"), Some("no"));
    let (reply, notes) = res.message().await;
    assert_eq!(rpc::text(&reply), "progress done");
    let progress: Vec<f64> = notes
        .iter()
        .map(|n| n["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    for n in &notes {
        assert_eq!(n["method"], "notifications/progress");
        assert_eq!(n["params"]["progressToken"], "tok-2");
    }
    // A request that opted in but sends nothing is still answered with JSON.
    let quiet = run.client.post(&progress_call(3, "echo")).send().await;
    assert_eq!(quiet.content_type(), Some("application/json"));
    quiet.json().await;
    run.stop().await;
}

/// The same JSON-RPC id on many concurrent POSTs: each POST is its own request
/// (transports/streamable-http.mdx).
#[tokio::test]
async fn the_same_id_on_concurrent_posts_is_independent() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    let mut waiting = Vec::new();
    for _ in 0..10 {
        let c = run.client.clone();
        waiting.push(tokio::spawn(async move {
            c.post(&call(1, "gate", json!({}), json!({})))
                .send()
                .await
                .json()
                .await
        }));
    }
    let echoes: Vec<_> = (0..10)
        .map(|i| {
            let c = run.client.clone();
            tokio::spawn(async move {
                (
                    i,
                    c.post(&call(
                        1,
                        "echo",
                        json!({"text": format!("e{i}")}),
                        json!({}),
                    ))
                    .send()
                    .await
                    .json()
                    .await,
                )
            })
        })
        .collect();
    for e in echoes {
        let (i, r) = within("an echo", e).await.unwrap();
        assert_eq!(rpc::text(&r), format!("e{i}"));
    }
    let released = run
        .client
        .post(&call(1, "release", json!({}), json!({})))
        .send()
        .await
        .json()
        .await;
    assert_eq!(rpc::text(&released), "released");
    for w in waiting {
        let r = within("a gate", w).await.unwrap();
        assert_eq!(
            (r["id"].clone(), rpc::text(&r).to_owned()),
            (json!(1), "passed".to_owned())
        );
    }
    run.stop().await;
}

/// Closing an SSE response cancels its request: the handler's future is dropped
/// (transports/streamable-http.mdx).
#[tokio::test]
async fn closing_the_stream_cancels_the_handler() {
    let (s, probe) = server();
    let run = start(s, HttpConfig::default()).await;
    let res = run.client.post(&progress_call(1, "hang")).send().await;
    let mut sse = res.sse();
    let first = sse.next_message().await.expect("the progress notification");
    assert_eq!(first["method"], "notifications/progress");
    eventually("the handler to start", || probe.started()).await;
    assert!(!probe.dropped());
    sse.close();
    eventually(
        "the handler to be dropped after the client went away",
        || probe.dropped(),
    )
    .await;
    let ok = run
        .client
        .post(&call(2, "echo", json!({"text": "on"}), json!({})))
        .send()
        .await;
    assert_eq!(rpc::text(&ok.json().await), "on");
    run.stop().await;
}

/// A client that goes away before any byte of the response also cancels the handler.
#[tokio::test]
async fn disconnecting_before_the_response_cancels_the_handler() {
    let (s, probe) = server();
    let run = start(s, HttpConfig::default()).await;
    let client = run.client.clone();
    let pending = tokio::spawn(async move {
        client
            .post(&call(1, "hang", json!({}), json!({})))
            .send()
            .await
    });
    eventually("the handler to start", || probe.started()).await;
    pending.abort();
    eventually(
        "the handler to be dropped after the client went away",
        || probe.dropped(),
    )
    .await;
    run.stop().await;
}

/// A handler running past `request_timeout` is stopped and answered with an error; the
/// server keeps serving (cancellation.mdx).
#[tokio::test]
async fn request_timeouts_answer_with_an_error() {
    let (s, probe) = server();
    let config = HttpConfig::builder()
        .request_timeout(Duration::from_millis(200))
        .build()
        .expect("a valid config");
    let run = start(s, config).await;
    let res = run
        .client
        .post(&call(1, "hang", json!({}), json!({})))
        .send()
        .await;
    let (reply, _) = res.message().await;
    assert_eq!(rpc::error_code(&reply), -32603, "{reply}");
    assert!(probe.dropped(), "the handler was stopped");
    // The same when the response already streams.
    let res = run.client.post(&progress_call(2, "hang")).send().await;
    let (reply, notes) = res.message().await;
    assert_eq!(rpc::error_code(&reply), -32603, "{reply}");
    assert_eq!(notes.len(), 1);
    let ok = run
        .client
        .post(&call(3, "echo", json!({"text": "on"}), json!({})))
        .send()
        .await;
    assert_eq!(rpc::text(&ok.json().await), "on");
    run.stop().await;
}

/// `McpService` works inside an axum app at any path; other paths are the app's.
#[tokio::test]
async fn the_service_mounts_in_an_axum_router() {
    let (s, _) = server();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service(
            "/api/v2/mcp",
            McpService::new(s.clone(), HttpConfig::default()),
        );
    let run = support::start_router(s, app, "/api/v2/mcp").await;
    let r = run
        .client
        .post(&call(1, "echo", json!({"text": "mounted"}), json!({})))
        .send()
        .await;
    assert_eq!(rpc::text(&r.json().await), "mounted");
    let (reply, notes) = run
        .client
        .post(&progress_call(2, "progress"))
        .send()
        .await
        .message()
        .await;
    assert_eq!((rpc::text(&reply), notes.len()), ("progress done", 3));
    let elsewhere = Client::new(run.client.addr(), PATH)
        .post(&request(3, "tools/list", json!({})))
        .send()
        .await;
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
    let health = Client::new(run.client.addr(), "/health")
        .call(Method::GET)
        .send()
        .await;
    assert_eq!(&health.bytes().await[..], b"ok");
    run.stop().await;
}

/// `serve` answers other paths with 404.
#[tokio::test]
async fn other_paths_are_not_found() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    let res = Client::new(run.client.addr(), "/other")
        .post(&request(1, "tools/list", json!({})))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    run.stop().await;
}

/// A client that never finishes sending its body gets 408 after `body_timeout`, instead of
/// holding the request open (slow-loris).
#[tokio::test]
async fn slow_bodies_time_out_with_408() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (s, _) = server();
    let config = HttpConfig::builder()
        .body_timeout(Duration::from_millis(200))
        .build()
        .expect("a valid config");
    let run = start(s, config).await;
    let mut tcp = tokio::net::TcpStream::connect(run.client.addr())
        .await
        .unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"";
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 1024];
    let n = within("the 408 response", tcp.read(&mut buf))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    drop(tcp);
    let ok = run
        .client
        .post(&call(1, "echo", json!({"text": "on"}), json!({})))
        .send()
        .await;
    assert_eq!(rpc::text(&ok.json().await), "on");
    run.stop().await;
}
