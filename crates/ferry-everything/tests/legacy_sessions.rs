//! 2025-11-25 sessions shared through Redis: two real `ferry-everything --redis`
//! processes on one real `redis-server` (loopback, free ports), each reached directly,
//! with no load balancer choosing for them:
//!
//! - a session opened on instance A serves `notifications/initialized`, `tools/list` and
//!   `tools/call` on instance B; Redis holds no usable session id;
//! - `DELETE` on B ends it everywhere: A refuses it (within its refresh interval);
//! - with Redis stopped, B answers a session it does not hold with 503 and a JSON-RPC
//!   error, A's session keeps serving on A, `initialize` still works (served by A alone),
//!   and once Redis is back A writes that session and B adopts it.
//!
//! Skipped when redis-server is missing, except under `FERRY_CI`.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ferry_testkit::http::{Client, Response};
use ferry_testkit::rpc;
use ferry_testkit::services::{RedisServer, available, free_port, wait_for_port};
use http::StatusCode;
use serde_json::{Value, json};

struct Instance {
    port: u16,
    child: Child,
    /// Its sandbox folder, removed after it is killed (a killed server cannot remove a
    /// temporary one of its own).
    _sandbox: tempfile::TempDir,
}

impl Instance {
    fn start(redis: &RedisServer) -> Instance {
        let port = free_port();
        let sandbox = tempfile::tempdir().expect("a sandbox folder");
        let child = Command::new(env!("CARGO_BIN_EXE_ferry-everything"))
            .args(["--http", &format!("127.0.0.1:{port}")])
            .args(["--redis", &redis.url()])
            .arg("--sandbox")
            .arg(sandbox.path())
            .env("RUST_LOG", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ferry-everything");
        assert!(
            wait_for_port(port, Duration::from_secs(20)),
            "ferry-everything did not start on {port}"
        );
        Instance {
            port,
            child,
            _sandbox: sandbox,
        }
    }

    fn client(&self) -> Client {
        Client::new(SocketAddr::from(([127, 0, 0, 1], self.port)), "/mcp")
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "legacy-test", "version": "1.0.0"}
    }})
}

/// Opens a session on `client`; returns its id.
async fn open(client: &Client) -> String {
    let res = client.post(&initialize()).send().await;
    assert_eq!(res.status, StatusCode::OK);
    let id = res
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let body = json_body(res).await;
    assert_eq!(body["result"]["protocolVersion"], "2025-11-25", "{body}");
    id
}

/// A JSON body, as a 2025-11-25 client reads it (the 2026-07-28 checks do not apply).
async fn json_body(res: Response) -> Value {
    let bytes = res.bytes().await;
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
}

async fn on_session(client: &Client, session: &str, msg: Value) -> Response {
    client
        .post(&msg)
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .send()
        .await
}

fn list(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}})
}

fn echo(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": text}}})
}

async fn lists_tools(client: &Client, session: &str) -> bool {
    let res = on_session(client, session, list(2)).await;
    if res.status != StatusCode::OK {
        return false;
    }
    let body = json_body(res).await;
    body["result"]["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "echo"))
}

async fn delete(client: &Client, session: &str) -> StatusCode {
    client
        .call(http::Method::DELETE)
        .header("mcp-session-id", session)
        .send()
        .await
        .status
}

/// A refresh interval (1 s by default) and a little more.
async fn past_refresh() {
    tokio::time::sleep(Duration::from_millis(1300)).await;
}

fn redis_keys(redis: &RedisServer) -> Vec<String> {
    let client = ferry_redis::redis::Client::open(redis.url()).expect("client");
    let mut conn = client.get_connection().expect("connects");
    ferry_redis::redis::cmd("KEYS")
        .arg("*")
        .query(&mut conn)
        .expect("KEYS")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_on_one_instance_is_served_and_ended_on_another() {
    if !available("redis-server") {
        return;
    }
    let redis = RedisServer::start();
    let (a, b) = (Instance::start(&redis), Instance::start(&redis));
    let (a, b) = (a.client(), b.client());
    let session = open(&a).await;

    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        on_session(&b, &session, note).await.status,
        StatusCode::ACCEPTED
    );
    assert!(lists_tools(&b, &session).await, "tools/list on B");
    let called = json_body(on_session(&b, &session, echo(3, "from b")).await).await;
    assert_eq!(rpc::text(&called), "from b", "{called}");
    // A version other than the negotiated one is refused on B as it would be on A.
    let wrong = b
        .post(&list(4))
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", &session)
        .send()
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);

    // Redis holds the session under a hash: no key or value shows its id.
    let keys = redis_keys(&redis);
    assert!(
        keys.iter().any(|k| k.starts_with("ferry:session:")),
        "{keys:?}"
    );
    assert!(keys.iter().all(|k| !k.contains(&session)), "{keys:?}");

    assert_eq!(delete(&b, &session).await, StatusCode::NO_CONTENT);
    assert!(
        !redis_keys(&redis)
            .iter()
            .any(|k| k.starts_with("ferry:session:"))
    );
    past_refresh().await;
    let refused = on_session(&a, &session, list(5)).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND, "A refuses it too");
    assert!(!lists_tools(&b, &session).await);
    assert_eq!(delete(&a, &session).await, StatusCode::NOT_FOUND);

    // An unknown id is 404 (not 503) while Redis answers.
    let unknown = on_session(&b, "00000000000000000000000000000000", list(6)).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_unknown_sessions_get_503_and_known_ones_keep_serving() {
    if !available("redis-server") {
        return;
    }
    let mut redis = RedisServer::start();
    let (a, b) = (Instance::start(&redis), Instance::start(&redis));
    let (a, b) = (a.client(), b.client());
    let session = open(&a).await;

    redis.stop();
    let res = on_session(&b, &session, list(2)).await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
    let body = json_body(res).await;
    assert_eq!(rpc::error_code(&body), -32603, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("session store cannot be reached"),
        "{body}"
    );
    let get = b
        .call(http::Method::GET)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await;
    assert_eq!(get.status, StatusCode::SERVICE_UNAVAILABLE, "GET too");
    // A holds the session: it serves on, through its refresh checks as well.
    assert!(lists_tools(&a, &session).await);
    past_refresh().await;
    assert!(
        lists_tools(&a, &session).await,
        "the failed check ends nothing"
    );
    let called = json_body(on_session(&a, &session, echo(3, "still here")).await).await;
    assert_eq!(rpc::text(&called), "still here");
    // initialize works, served by A alone for now.
    let offline = open(&a).await;
    assert!(lists_tools(&a, &offline).await);

    redis.restart();
    // The session opened during the outage is written at A's first use of it after its
    // refresh interval once Redis answers; from then on B adopts it.
    let mut adopted = false;
    for _ in 0..100 {
        assert!(lists_tools(&a, &offline).await, "A serves it throughout");
        if lists_tools(&b, &offline).await {
            adopted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(adopted, "B adopts again once Redis is back");
    let called = json_body(on_session(&b, &offline, echo(7, "adopted")).await).await;
    assert_eq!(rpc::text(&called), "adopted");
}
