//! Drives `Server::handle` the way a transport does: replies at once, or runs the pending
//! call while collecting its notifications. Every message is checked against the spec's
//! schema (`ferry_testkit::check`) before a test sees it.

#![allow(dead_code)]

use bytes::Bytes;
use ferry_server::{Handled, Outbound, RequestEnv, Server};
use ferry_testkit::{check, http::mcp_headers, within};
use serde_json::Value;
use tokio::sync::mpsc;

/// The response to one request, with the notifications sent before it.
#[derive(Debug)]
pub struct Out {
    /// The HTTP status a Streamable HTTP transport would answer with.
    pub status: u16,
    /// The JSON-RPC response.
    pub msg: Value,
    /// Notifications the handler sent while running.
    pub notes: Vec<Value>,
}

impl Out {
    /// The error code; fails when the response is a result.
    pub fn code(&self) -> i64 {
        ferry_testkit::rpc::error_code(&self.msg)
    }

    /// The result object; fails when the response is an error.
    pub fn result(&self) -> &Value {
        self.msg
            .get("result")
            .unwrap_or_else(|| panic!("expected a result, got {}", self.msg))
    }
}

/// Sends `msg` as a stdio transport would (no headers, no principal).
pub async fn send(server: &Server, msg: &Value) -> Out {
    send_env(server, msg, RequestEnv::stdio()).await
}

/// Sends `msg` with the headers a conforming HTTP client derives from it.
pub async fn send_http(server: &Server, msg: &Value) -> Out {
    send_env(server, msg, http_env(msg)).await
}

/// The request environment of an HTTP POST of `msg` with conforming headers.
pub fn http_env(msg: &Value) -> RequestEnv {
    RequestEnv::http(mcp_headers(msg))
}

/// Sends `msg` with `env` and returns its response.
pub async fn send_env(server: &Server, msg: &Value, env: RequestEnv) -> Out {
    let bytes = serde_json::to_vec(msg).expect("serializable");
    let out = send_bytes_env(server, &bytes, msg["method"].as_str(), env).await;
    if let Some(id) = msg.get("id") {
        assert_eq!(
            out.msg.get("id"),
            Some(id),
            "the response must echo the request id"
        );
    }
    out
}

/// Sends a request of `method` as the bytes given (for what `Value` cannot hold), as a
/// stdio transport would.
pub async fn send_bytes(server: &Server, bytes: &[u8], method: &str) -> Out {
    send_bytes_env(server, bytes, Some(method), RequestEnv::stdio()).await
}

async fn send_bytes_env(
    server: &Server,
    bytes: &[u8],
    method: Option<&str>,
    env: RequestEnv,
) -> Out {
    let out = match server.handle(bytes, env) {
        Handled::Reply(r) => Out {
            status: ferry_http::reply_status(&r).as_u16(),
            msg: parse(&r.body),
            notes: Vec::new(),
        },
        Handled::Pending(call) => {
            let (tx, mut rx) = mpsc::channel::<Bytes>(64);
            let collect = async move {
                let mut notes = Vec::new();
                while let Some(b) = rx.recv().await {
                    notes.push(parse(&b));
                }
                notes
            };
            let (outcome, notes) = within("the handler", async {
                tokio::join!(call.run(Outbound::channel(tx)), collect)
            })
            .await;
            let reply = outcome.into_reply().expect("a reply, not a cancellation");
            Out {
                status: ferry_http::reply_status(&reply).as_u16(),
                msg: parse(&reply.body),
                notes,
            }
        }
        _ => panic!(
            "expected a response to {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        ),
    };
    check::received(&out.msg, method);
    for n in &out.notes {
        check::received(n, None);
        assert!(
            n.get("method").is_some(),
            "a notification was expected: {n}"
        );
    }
    out
}

/// Parses one serialized message, which must be a single line.
pub fn parse(bytes: &[u8]) -> Value {
    check::parse_line(bytes)
}
