//! A 2025-11-25 server that sends its requests on the standalone GET stream and drops
//! them while that stream is not open (as the official TypeScript SDK's server does for
//! requests it does not tie to a call). It answers the GET slowly. Connecting waits
//! for that answer, so a question sent during the first call still reaches the client.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::{Client, EraMode, FnHandler};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// The server's session: the open standalone stream, and the answer it waits for.
#[derive(Default)]
struct Session {
    stream: Option<mpsc::Sender<Bytes>>,
    answer: Option<oneshot::Sender<Value>>,
}

type Shared = Arc<Mutex<Session>>;

fn json_response(body: Value) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::HeaderName::from_static("mcp-session-id"), "s1"),
        ],
        body.to_string(),
    )
        .into_response()
}

async fn get(State(shared): State<Shared>) -> Response {
    // Slow to open, like a busy server.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (tx, rx) = mpsc::channel::<Bytes>(4);
    shared.lock().stream = Some(tx);
    let events = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(events),
    )
        .into_response()
}

async fn post_mcp(State(shared): State<Shared>, _headers: HeaderMap, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = message.get("id").cloned();
    match message.get("method").and_then(Value::as_str) {
        Some("initialize") => json_response(json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow-stream", "version": "1"},
        }})),
        Some("tools/call") => {
            let stream = shared.lock().stream.clone();
            let Some(stream) = stream else {
                // Dropped, as such a server does; the call then fails.
                return json_response(json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32603, "message": "no standalone stream was open for the question",
                }}));
            };
            let (tx, rx) = oneshot::channel();
            shared.lock().answer = Some(tx);
            let ask = json!({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create", "params": {
                "message": "Go?",
                "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean"}}},
            }});
            let _ = stream
                .send(Bytes::from(format!("event: message\ndata: {ask}\n\n")))
                .await;
            let answer = rx.await.unwrap_or_default();
            let go = answer["result"]["content"]["go"].to_string();
            json_response(json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": go}],
            }}))
        }
        Some(_) => StatusCode::ACCEPTED.into_response(),
        None => {
            // The client's answer to the question.
            if let Some(tx) = shared.lock().answer.take() {
                let _ = tx.send(message);
            }
            StatusCode::ACCEPTED.into_response()
        }
    }
}

#[tokio::test]
async fn a_question_on_a_slow_standalone_stream_reaches_the_first_call() {
    let app = Router::new()
        .route("/mcp", post(post_mcp).get(get))
        .with_state(Shared::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let handler = FnHandler::new().on_form(|_| async {
        ElicitResult::accept(BTreeMap::from([("go".to_owned(), ElicitValue::Bool(true))]))
    });
    let client = Client::builder()
        .http(url)
        .era(EraMode::Legacy)
        .input_handler(handler)
        .timeout(Duration::from_secs(5))
        .build()
        .await
        .expect("a 2025-11-25 session");
    let result = client
        .call_tool("anything", json!({}))
        .await
        .expect("the question was asked and answered");
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert_eq!(text, "true");
}
