//! Behaviour no real server here exhibits: legacy-only servers, protocol violations,
//! oversized answers. Each test serves a few hand-written HTTP answers on 127.0.0.1.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use axum::routing::any;
use ferry_client::{Client, Era, EraCache, Error};
use serde_json::{Value, json};

/// One request the mock saw.
#[derive(Clone, Debug)]
struct Seen {
    http: Method,
    headers: HeaderMap,
    body: Value,
}

type Handler = dyn Fn(&Seen, usize) -> Response + Send + Sync;

/// Serves `answer(request, index)` for every request, recording them.
async fn mock(
    answer: impl Fn(&Seen, usize) -> Response + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
    let log = seen.clone();
    let answer: Arc<Handler> = Arc::new(answer);
    let app = Router::new().route(
        "/mcp",
        any(
            move |method: Method, headers: HeaderMap, body: axum::body::Bytes| {
                let log = log.clone();
                let answer = answer.clone();
                async move {
                    let s = Seen {
                        http: method,
                        headers,
                        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                    };
                    let i = {
                        let mut l = log.lock().unwrap();
                        l.push(s.clone());
                        l.len() - 1
                    };
                    answer(&s, i)
                }
            },
        ),
    );
    let server = common::serve(app).await;
    let url = server.url.clone();
    std::mem::forget(server);
    (url, seen)
}

fn json_response(status: u16, body: Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn result(req: &Seen, result: Value) -> Response {
    json_response(
        200,
        json!({"jsonrpc": "2.0", "id": req.body["id"], "result": result}),
    )
}

fn method(s: &Seen) -> &str {
    s.body["method"].as_str().unwrap_or("")
}

fn connect(url: &str) -> ferry_client::ClientBuilder {
    Client::builder()
        .http(url)
        .era_cache(Arc::new(EraCache::new()))
        .timeout(Duration::from_secs(5))
}

/// A 2025-11-25 server with sessions, as the TypeScript SDK answers a modern probe.
fn legacy_server(s: &Seen, _: usize) -> Response {
    if s.http == Method::GET {
        return Response::builder().status(405).body(Body::empty()).unwrap();
    }
    match method(s) {
        "initialize" => {
            let mut r = result(
                s,
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "old", "version": "0.9"}}),
            );
            r.headers_mut()
                .insert("mcp-session-id", "sess-1".parse().unwrap());
            r
        }
        "notifications/initialized" => Response::builder().status(202).body(Body::empty()).unwrap(),
        _ if s.headers.get("mcp-session-id").is_none() => json_response(
            400,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}),
        ),
        "tools/list" => result(
            s,
            json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        ),
        "resources/read" => json_response(
            200,
            json!({"jsonrpc":"2.0","id": s.body["id"],"error":{"code":-32002,"message":"Resource not found"}}),
        ),
        _ => result(s, json!({})),
    }
}

#[tokio::test]
async fn falls_back_to_initialize_and_keeps_the_session() {
    let (url, seen) = mock(legacy_server).await;
    let client = connect(&url).build().await.expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.server_info().unwrap().name, "old");
    let tools = client.list_tools().await.expect("tools");
    assert_eq!(tools[0].name, "t");
    let err = client
        .read_resource("file:///nope")
        .await
        .expect_err("missing");
    assert!(matches!(err, Error::ResourceNotFound { .. }), "{err:?}");
    client.close().await.expect("close");

    let seen = seen.lock().unwrap();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.http == Method::POST).collect();
    let methods: Vec<&str> = posts.iter().map(|s| method(s)).collect();
    assert_eq!(
        methods[..4],
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    let init = &posts[1].body["params"];
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["clientInfo"]["name"], "ferry-client");
    let list = posts[3];
    assert_eq!(list.headers["mcp-session-id"], "sess-1");
    assert_eq!(list.headers["mcp-protocol-version"], "2025-11-25");
    assert!(
        list.body["params"].get("_meta").is_none(),
        "no modern _meta on legacy requests"
    );
    for p in &posts {
        assert_eq!(p.headers["accept"], "application/json, text/event-stream");
        assert_eq!(p.headers["content-type"], "application/json");
    }
    assert!(
        seen.iter()
            .any(|s| s.http == Method::DELETE && s.headers["mcp-session-id"] == "sess-1")
    );
}

#[tokio::test]
async fn an_expired_session_is_renewed() {
    let (url, seen) = mock(|s, i| {
        if method(s) == "tools/list" && i < 5 {
            return Response::builder().status(404).body(Body::empty()).unwrap();
        }
        legacy_server(s, i)
    })
    .await;
    let client = connect(&url)
        .legacy_get_stream(false)
        .build()
        .await
        .expect("connect");
    client
        .list_tools()
        .await
        .expect("tools after a new session");
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| method(s).to_owned())
        .collect();
    assert_eq!(
        methods.iter().filter(|m| *m == "initialize").count(),
        2,
        "{methods:?}"
    );
}

#[tokio::test]
async fn resumes_a_legacy_stream_after_the_retry_delay() {
    let call_id = Arc::new(Mutex::new(Value::Null));
    let remembered = call_id.clone();
    let closed_at = Arc::new(Mutex::new(None::<Instant>));
    let closed = closed_at.clone();
    let (url, seen) = mock(move |s, i| {
        if s.http == Method::GET {
            if s.headers.get("last-event-id").is_none() {
                return Response::builder().status(405).body(Body::empty()).unwrap();
            }
            let answer = json!({"jsonrpc":"2.0","id": remembered.lock().unwrap().clone(),
                "result":{"content":[{"type":"text","text":"resumed"}]}});
            return Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from(format!(
                    ": resumed\nid: e2\nevent: message\ndata: {answer}\n\n"
                )))
                .unwrap();
        }
        if method(s) == "tools/call" {
            *remembered.lock().unwrap() = s.body["id"].clone();
            *closed.lock().unwrap() = Some(Instant::now());
            return Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from("id: e1\nretry: 300\ndata: \n\n"))
                .unwrap();
        }
        legacy_server(s, i)
    })
    .await;
    let client = connect(&url)
        .legacy_get_stream(false)
        .build()
        .await
        .expect("connect");
    let r = client
        .call_tool("t", json!({}))
        .await
        .expect("resumed answer");
    assert_eq!(common::text(&r), "resumed");
    let waited = closed_at.lock().unwrap().expect("call seen").elapsed();
    assert!(
        waited >= Duration::from_millis(300),
        "reconnected after {waited:?}"
    );
    let seen = seen.lock().unwrap();
    let get = seen
        .iter()
        .find(|s| s.http == Method::GET)
        .expect("a GET to resume");
    assert_eq!(get.headers["last-event-id"], "e1");
    assert_eq!(get.headers["mcp-session-id"], "sess-1");
    assert_eq!(get.headers["mcp-protocol-version"], "2025-11-25");
    assert_eq!(get.headers["accept"], "text/event-stream");
}

#[tokio::test]
async fn unknown_result_types_are_invalid() {
    let (url, _) = mock(|s, _| match method(s) {
        "server/discover" => result(
            s,
            json!({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":-5,"cacheScope":"public"}),
        ),
        _ => result(s, json!({"resultType": "banana", "content": []})),
    })
    .await;
    let client = connect(&url).build().await.expect("connect");
    assert_eq!(client.era(), Era::Modern);
    let err = client.call_tool("x", json!({})).await.expect_err("invalid");
    assert!(
        matches!(err, Error::Protocol(ref m) if m.contains("banana")),
        "{err:?}"
    );
    assert!(!err.is_from_server());
}

#[tokio::test]
async fn a_modern_error_on_the_probe_means_modern() {
    let (url, seen) = mock(|s, i| match (method(s), i) {
        ("server/discover", 0) => json_response(
            400,
            json!({"jsonrpc":"2.0","id":s.body["id"],"error":{"code":-32022,"message":"Unsupported protocol version",
                   "data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}),
        ),
        ("server/discover", _) => result(
            s,
            json!({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"private",
                   "serverInfo":{"name":"top-level-info","version":"1"}}),
        ),
        _ => result(s, json!({"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"private"})),
    })
    .await;
    let client = connect(&url).build().await.expect("connect");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().unwrap().name, "top-level-info");
    client.list_tools().await.expect("tools");
    let seen = seen.lock().unwrap();
    assert!(seen.iter().all(|s| method(s) != "initialize"));
    let ids: Vec<&Value> = seen.iter().map(|s| &s.body["id"]).collect();
    assert_ne!(ids[0], ids[1], "the retry has a new id");
    let meta = &seen[2].body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
        "no input capabilities without a handler; the Tasks extension by default"
    );
    assert_eq!(seen[2].headers["mcp-protocol-version"], "2026-07-28");
    assert_eq!(seen[2].headers["mcp-method"], "tools/list");
}

#[tokio::test]
async fn oversized_answers_are_refused() {
    let (url, _) = mock(|s, _| match method(s) {
        "server/discover" => result(
            s,
            json!({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"private"}),
        ),
        _ => result(s, json!({"resultType":"complete","content":[{"type":"text","text":"x".repeat(10_000)}]})),
    })
    .await;
    let client = connect(&url)
        .max_message_bytes(4096)
        .build()
        .await
        .expect("connect");
    let err = client
        .call_tool("big", json!({}))
        .await
        .expect_err("too big");
    assert!(matches!(err, Error::TooLarge { limit: 4096 }), "{err:?}");
}

#[tokio::test]
async fn http_errors_without_json_rpc_are_reported_as_such() {
    let (url, _) = mock(|s, _| match method(s) {
        "server/discover" => result(
            s,
            json!({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"private"}),
        ),
        _ => Response::builder()
            .status(StatusCode::BAD_GATEWAY)
            .body(Body::from("upstream down"))
            .unwrap(),
    })
    .await;
    let client = connect(&url).build().await.expect("connect");
    let err = client.call_tool("x", json!({})).await.expect_err("502");
    assert!(
        matches!(err, Error::HttpStatus { status: 502, ref body } if body == "upstream down"),
        "{err:?}"
    );
}
