//! A handler that panics, over Streamable HTTP: its call is answered `-32603`, and the
//! connection, the server and the other calls go on, for 2026-07-28 requests and for a
//! 2025-11-25 session (`initialize`, `Mcp-Session-Id`).

mod support;

use ferry_http::HttpConfig;
use ferry_server::Server;
use ferry_testkit::http::legacy_post;
use ferry_testkit::probe::{assert_panicked, fine, panicking};
use ferry_testkit::rpc::{self, call};
use serde_json::{Value, json};
use support::start;
use support::wire::Conn;

fn server() -> Server {
    Server::builder("http-panics", "1")
        .tool(fine())
        .tool(panicking("boom"))
        .build()
        .expect("server builds")
}

/// Panicking calls and good ones alternate on one kept-alive connection.
#[tokio::test]
async fn a_panicking_handler_fails_its_call_and_the_connection_goes_on() {
    let run = start(server(), HttpConfig::default()).await;
    let mut c = Conn::connect(run.client.addr()).await;
    for id in 0..3 {
        let req = c.post(&call(id, "boom", json!({}), json!({})), &[]);
        c.send(&req).await;
        let r = c.read_response().await;
        assert_eq!(r.status_line, "HTTP/1.1 200 OK", "{r:?}");
        assert_panicked(&r.json(), "boom");
        let req = c.post(&call(100 + id, "ok", json!({}), json!({})), &[]);
        c.send(&req).await;
        let r = c.read_response().await;
        assert_eq!(rpc::text(&r.json()), "fine");
    }
    run.stop().await;
}

/// The JSON-RPC response in a body that is JSON or an SSE stream.
async fn response_of(res: reqwest::Response) -> Value {
    let sse = res
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let text = res.text().await.expect("a body");
    if !sse {
        return serde_json::from_str(&text).expect("JSON");
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).expect("JSON data"))
        .find(|m| m.get("id").is_some())
        .expect("a response in the stream")
}

#[tokio::test]
async fn a_panicking_handler_on_a_2025_11_25_session_fails_its_call_only() {
    let run = start(server(), HttpConfig::default()).await;
    let url = format!("http://{}{}", run.client.addr(), support::PATH);
    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: &Value| legacy_post(&http, &url, session, body);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    let res = post(None, &init).send().await.expect("initialize");
    let sid = res.headers()["mcp-session-id"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    assert_eq!(
        response_of(res).await["result"]["protocolVersion"],
        "2025-11-25"
    );
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let res = post(Some(&sid), &note).send().await.expect("initialized");
    assert_eq!(res.status(), 202);

    for id in 1..4 {
        let boom = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "boom", "arguments": {}}});
        let res = post(Some(&sid), &boom).send().await.expect("a response");
        assert_panicked(&response_of(res).await, "boom");
        let ok = json!({"jsonrpc": "2.0", "id": 100 + id, "method": "tools/call",
                        "params": {"name": "ok", "arguments": {}}});
        let res = post(Some(&sid), &ok).send().await.expect("a response");
        assert_eq!(rpc::text(&response_of(res).await), "fine");
    }
    run.stop().await;
}
