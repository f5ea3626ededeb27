//! `summarize` samples through the server's policy: with `--llm-base-url` an
//! OpenAI-compatible provider answers a client that did not declare `sampling`. The
//! provider here is a loopback HTTP endpoint speaking the chat-completions API.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::post;
use ferry_client::Client;
use ferry_everything::llm::LlmOptions;
use ferry_everything::{Options, build};
use parking_lot::Mutex;
use serde_json::{Value, json};

/// Starts the provider; returns its base URL and the requests it received.
async fn provider() -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new()
        .route(
            "/v1/chat/completions",
            post(
                |State(seen): State<Arc<Mutex<Vec<Value>>>>, body: String| async move {
                    let body: Value = serde_json::from_str(&body).expect("a JSON request");
                    let model = body["model"].clone();
                    seen.lock().push(body);
                    let answer = json!({
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 1,
                        "model": model,
                        "choices": [{
                            "index": 0,
                            "message": {"role": "assistant", "content": "Sampling moved to provider APIs."},
                            "finish_reason": "stop"
                        }],
                        "usage": {"prompt_tokens": 30, "completion_tokens": 7, "total_tokens": 37}
                    });
                    ([("content-type", "application/json")], answer.to_string())
                },
            ),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), seen)
}

#[tokio::test]
async fn summarize_is_answered_by_the_provider() {
    let (base_url, seen) = provider().await;
    let sampling = LlmOptions {
        base_url: Some(base_url),
        model: "small-model".into(),
        fallback_model: None,
    }
    .policy()
    .expect("provider configured");
    let everything = build(Options {
        sampling,
        ..Options::default()
    })
    .expect("server builds");

    // The server on one end of an in-process pipe, the client on the other.
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(ferry_stdio::serve(
        everything.server,
        server_read,
        server_write,
        ferry_stdio::StdioConfig::default(),
    ));
    let (read, write) = tokio::io::split(client_end);
    let client = Client::builder()
        .streams(read, write)
        .build()
        .await
        .expect("client connects");

    let text = "MCP revision 2026-07-28 deprecates sampling; servers call LLM APIs directly.";
    let result = client
        .call_tool("summarize", json!({ "text": text }))
        .await
        .expect("summarize answers");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let answer = serde_json::to_value(&result.content).unwrap();
    assert_eq!(
        answer[0]["text"], "Sampling moved to provider APIs.",
        "{answer}"
    );

    let requests = seen.lock();
    assert_eq!(requests.len(), 1, "one completion bought");
    let request = &requests[0];
    assert_eq!(request["model"], "small-model");
    assert_eq!(request["messages"][0]["role"], "system");
    let prompt = request["messages"][1]["content"].to_string();
    assert!(prompt.contains(text), "{prompt}");
}
