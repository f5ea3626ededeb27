//! 2025-11-25 clients over Streamable HTTP on a dual-era endpoint (2025-11-25
//! transports; versioning.mdx, backward compatibility): `initialize` opens a session named by `Mcp-Session-Id`,
//! requests without it or with an unknown one are refused, the server's requests to the
//! client travel on the POST's SSE stream and come back as POSTed responses, the GET
//! stream carries change notifications, streams resume with `Last-Event-ID`, and DELETE,
//! the idle timeout and the session cap end or refuse sessions.

use std::sync::Arc;
use std::time::Duration;

use std::future::IntoFuture;

use ferry_http::{HttpConfig, McpService};
use ferry_server::{Context, Elicitation, Form, Server, tool};
use ferry_testkit::http::legacy_post;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

#[derive(Deserialize, Form)]
struct Confirm {
    confirm: bool,
}

struct Endpoint {
    url: String,
    http: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    gate: Arc<Notify>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

async fn endpoint(
    configure: impl FnOnce(ferry_server::ServerBuilder) -> ferry_server::ServerBuilder,
) -> Endpoint {
    let gate = Arc::new(Notify::new());
    let g = gate.clone();
    let builder = Server::builder("legacy-test", "1")
        .tool(tool("confirm").description("Asks first").json_handler(
            |ctx: Context, _: Value| async move {
                Ok(match ctx.elicit::<Confirm>("Sure?").await? {
                    Elicitation::Accept(Confirm { confirm: true }) => "yes",
                    _ => "no",
                })
            },
        ))
        .tool(
            tool("slow")
                .description("Reports progress, then waits")
                .json_handler(move |ctx: Context, _: Value| {
                    let g = g.clone();
                    async move {
                        ctx.progress(1.0, Some(2.0), Some("half")).await;
                        g.notified().await;
                        Ok("finished")
                    }
                }),
        )
        .tool(
            tool("add_tool")
                .description("Changes the tool list")
                .json_handler(|ctx: Context, _: Value| async move {
                    ctx.server()
                        .add_tool(
                            tool("added")
                                .description("New")
                                .json_handler(|_: Context, _: Value| async { Ok("") }),
                        )
                        .map_err(|e| ferry_server::Error::execution(e.to_string()))?;
                    Ok("added")
                }),
        );
    let server = configure(builder).build().expect("server builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (stop, stopped) = oneshot::channel::<()>();
    let service = McpService::new(server, HttpConfig::default());
    tokio::spawn(
        ferry_http::serve(listener, service)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .into_future(),
    );
    Endpoint {
        url,
        http: reqwest::Client::new(),
        stop: Some(stop),
        gate,
    }
}

fn msg(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

impl Endpoint {
    fn post(&self, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        legacy_post(&self.http, &self.url, session, body)
    }

    async fn initialize(&self) -> String {
        let init = msg(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "t", "version": "1"}}),
        );
        let res = self.post(None, &init).send().await.expect("initialize");
        assert_eq!(res.status(), 200);
        let sid = res
            .headers()
            .get("mcp-session-id")
            .expect("a session id")
            .to_str()
            .expect("visible ASCII")
            .to_owned();
        assert!(
            sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "{sid}"
        );
        let body: Value = res.json().await.expect("JSON");
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
        assert!(
            body["result"].get("resultType").is_none(),
            "legacy results have no resultType"
        );
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let res = self
            .post(Some(&sid), &note)
            .send()
            .await
            .expect("initialized");
        assert_eq!(res.status(), 202);
        sid
    }
}

/// Reads SSE events (`id`, data) from a response body.
struct Events {
    stream: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buf: Vec<u8>,
}

impl Events {
    fn new(res: reqwest::Response) -> Self {
        assert!(
            res.headers()["content-type"]
                .to_str()
                .unwrap_or("")
                .starts_with("text/event-stream"),
            "an SSE response"
        );
        Events {
            stream: res.bytes_stream().boxed(),
            buf: Vec::new(),
        }
    }

    /// The next event with data: its id and message.
    async fn next(&mut self) -> (Option<String>, Value) {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                    let block: Vec<u8> = self.buf.drain(..end + 2).collect();
                    let text = String::from_utf8_lossy(&block[..end]).into_owned();
                    let id = text
                        .lines()
                        .find_map(|l| l.strip_prefix("id: "))
                        .map(str::to_owned);
                    if let Some(data) = text.lines().find_map(|l| l.strip_prefix("data: ")) {
                        return (id, serde_json::from_str(data).expect("JSON data"));
                    }
                    continue;
                }
                let chunk = self
                    .stream
                    .next()
                    .await
                    .expect("stream open")
                    .expect("bytes");
                self.buf.extend_from_slice(&chunk);
            }
        })
        .await
        .expect("an SSE event in time")
    }
}

#[tokio::test]
async fn sessions_are_required_and_named() {
    let ep = endpoint(|b| b).await;
    let sid = ep.initialize().await;
    let list = ep
        .post(Some(&sid), &msg(2, "tools/list", json!({})))
        .send()
        .await
        .expect("list");
    let body: Value = list.json().await.expect("JSON");
    assert!(body["result"]["tools"].is_array());
    assert!(body["result"].get("resultType").is_none() && body["result"].get("ttlMs").is_none());

    // No session and no modern metadata: refused.
    let res = ep
        .post(None, &msg(3, "tools/list", json!({})))
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), 400);
    // An unknown session: 404, so the client starts a new one.
    let res = ep
        .post(
            Some("0123456789abcdef0123456789abcdef"),
            &msg(4, "tools/list", json!({})),
        )
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), 404);
    // A version other than the negotiated one: 400.
    let res = ep
        .http
        .post(&ep.url)
        .header("content-type", "application/json")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-06-18")
        .json(&msg(5, "ping", json!({})))
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), 400);
    // Ping answers exactly {}.
    let res = ep
        .post(Some(&sid), &msg(6, "ping", json!({})))
        .send()
        .await
        .expect("ping");
    let body: Value = res.json().await.expect("JSON");
    assert_eq!(body["result"], json!({}));
}

#[tokio::test]
async fn server_requests_ride_the_post_stream_and_answers_come_back_as_posts() {
    let ep = endpoint(|b| b).await;
    let sid = ep.initialize().await;
    let call = msg(7, "tools/call", json!({"name": "confirm", "arguments": {}}));
    let res = ep.post(Some(&sid), &call).send().await.expect("call");
    let mut events = Events::new(res);
    let (id, ask) = events.next().await;
    assert!(id.is_some(), "legacy SSE events carry ids for resumption");
    assert_eq!(ask["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": true}}});
    let res = ep.post(Some(&sid), &answer).send().await.expect("answer");
    assert_eq!(res.status(), 202);
    let (_, done) = events.next().await;
    assert_eq!(done["id"], 7);
    assert_eq!(done["result"]["content"][0]["text"], "yes");
}

#[tokio::test]
async fn a_dropped_stream_resumes_with_last_event_id() {
    let ep = endpoint(|b| b).await;
    let sid = ep.initialize().await;
    let call = msg(
        8,
        "tools/call",
        json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}),
    );
    let res = ep.post(Some(&sid), &call).send().await.expect("call");
    let mut events = Events::new(res);
    let (id, progress) = events.next().await;
    assert_eq!(progress["method"], "notifications/progress");
    let last = id.expect("an event id");
    drop(events); // The connection goes away; in 2025-11-25 that is not a cancellation.
    ep.gate.notify_one();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let res = ep
        .http
        .get(&ep.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", &last)
        .send()
        .await
        .expect("resume");
    assert_eq!(res.status(), 200);
    let mut resumed = Events::new(res);
    let (_, done) = resumed.next().await;
    assert_eq!(done["id"], 8, "the response the client missed");
    assert_eq!(done["result"]["content"][0]["text"], "finished");
}

#[tokio::test]
async fn the_get_stream_carries_list_changes() {
    let ep = endpoint(|b| b).await;
    let sid = ep.initialize().await;
    let res = ep
        .http
        .get(&ep.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("GET");
    assert_eq!(res.status(), 200);
    let mut stream = Events::new(res);
    let call = msg(
        9,
        "tools/call",
        json!({"name": "add_tool", "arguments": {}}),
    );
    let res = ep.post(Some(&sid), &call).send().await.expect("call");
    assert_eq!(res.status(), 200);
    let (_, note) = stream.next().await;
    assert_eq!(note["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn delete_ends_the_session() {
    let ep = endpoint(|b| b).await;
    let sid = ep.initialize().await;
    let res = ep
        .http
        .delete(&ep.url)
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("DELETE");
    assert!(res.status().is_success());
    let res = ep
        .post(Some(&sid), &msg(10, "ping", json!({})))
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn idle_sessions_expire_and_the_number_of_sessions_is_capped() {
    let ep = endpoint(|b| {
        b.session_idle_timeout(Duration::from_millis(100))
            .max_sessions(2)
    })
    .await;
    let first = ep.initialize().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let res = ep
        .post(Some(&first), &msg(11, "ping", json!({})))
        .send()
        .await
        .expect("post");
    assert_eq!(res.status(), 404, "expired");

    let _a = ep.initialize().await;
    let _b = ep.initialize().await;
    let init = msg(
        12,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let res = ep.post(None, &init).send().await.expect("initialize");
    assert_eq!(res.status(), 503, "over the cap");
}

#[tokio::test]
async fn modern_requests_on_the_same_endpoint_stay_stateless() {
    let ep = endpoint(|b| b).await;
    let sid = ep.initialize().await;
    let modern = msg(
        13,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                         "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    let res = ep
        .http
        .post(&ep.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .header("mcp-session-id", &sid)
        .json(&modern)
        .send()
        .await
        .expect("modern");
    assert!(
        res.headers().get("mcp-session-id").is_none(),
        "never echoed on modern requests"
    );
    let body: Value = res.json().await.expect("JSON");
    assert_eq!(body["result"]["resultType"], "complete");
}
