//! A loopback server speaking OpenAI's chat-completions API, for the tests.
//!
//! It answers as OpenAI does: `chat.completion` objects, or `chat.completion.chunk` events
//! ending in `data: [DONE]` (content in small deltas, tool-call arguments in fragments, a
//! final usage chunk when `stream_options.include_usage` is set); 404 `model_not_found` for
//! models it does not serve; 400 `invalid_request_error` for requests OpenAI refuses (tool
//! messages that answer no call, calls left unanswered, `tool_choice` without `tools`, ...).
//! Each test scripts the replies it needs and reads back every request received.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use axum::routing::post;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// What the model says.
#[derive(Clone, Debug, Default)]
pub struct Message {
    pub content: Option<String>,
    /// (id, name, arguments as JSON text)
    pub tool_calls: Vec<(String, String, String)>,
    pub finish_reason: String,
    /// Members added to the choice (say vLLM's `stop_reason`).
    pub choice_extra: Vec<(String, Value)>,
    /// Overrides the computed usage.
    pub usage: Option<(u64, u64)>,
    /// Leaves usage out of the answer.
    pub no_usage: bool,
}

impl Message {
    pub fn text(text: &str) -> Self {
        Message {
            content: Some(text.to_owned()),
            finish_reason: "stop".into(),
            ..Default::default()
        }
    }

    pub fn finish(mut self, reason: &str) -> Self {
        self.finish_reason = reason.into();
        self
    }

    pub fn tool_call(mut self, id: &str, name: &str, arguments: &str) -> Self {
        self.tool_calls
            .push((id.into(), name.into(), arguments.into()));
        self.finish_reason = "tool_calls".into();
        self
    }

    pub fn tools_only() -> Self {
        Message {
            content: None,
            finish_reason: "tool_calls".into(),
            ..Default::default()
        }
    }
}

/// One scripted reply.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Echoes the last user text: `You said: ...`.
    Echo,
    /// This message, whole or streamed as the request asks.
    Say(Message),
    /// An error in OpenAI's shape.
    Error {
        status: u16,
        code: Option<&'static str>,
        message: String,
        headers: Vec<(&'static str, String)>,
    },
    /// Exactly these bytes.
    Raw {
        status: u16,
        content_type: &'static str,
        body: Vec<u8>,
    },
    /// Streams these events (`data: ...` each), with no `[DONE]` unless given.
    Events(Vec<String>),
    /// Waits, then replies.
    After(Duration, Box<Reply>),
    /// Streams the first `n` chunks of the message, then stalls for `Duration`, then the rest.
    StallStream(Message, usize, Duration),
}

impl Reply {
    pub fn error(status: u16, code: Option<&'static str>, message: &str) -> Self {
        Reply::Error {
            status,
            code,
            message: message.into(),
            headers: Vec::new(),
        }
    }

    pub fn rate_limited(retry_after: &str) -> Self {
        Reply::Error {
            status: 429,
            code: Some("rate_limit_exceeded"),
            message: "Rate limit reached for requests".into(),
            headers: vec![("retry-after", retry_after.to_owned())],
        }
    }

    pub fn after(delay: Duration, then: Reply) -> Self {
        Reply::After(delay, Box::new(then))
    }
}

/// A request as received.
#[derive(Clone, Debug)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Value,
    pub at: tokio::time::Instant,
}

#[derive(Default)]
struct Inner {
    /// (requested name, name reported back)
    models: Vec<(String, String)>,
    script: Mutex<VecDeque<Reply>>,
    received: Mutex<Vec<Received>>,
}

/// The running server.
#[derive(Clone)]
pub struct FakeOpenAi {
    pub base_url: String,
    inner: Arc<Inner>,
}

impl FakeOpenAi {
    /// Serves the models named; `name=reported` serves `name` and reports `reported`.
    pub async fn start(models: &[&str]) -> Self {
        let models = models
            .iter()
            .map(|m| match m.split_once('=') {
                Some((a, b)) => (a.to_owned(), b.to_owned()),
                None => (m.to_string(), m.to_string()),
            })
            .collect();
        let inner = Arc::new(Inner {
            models,
            ..Default::default()
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .with_state(inner.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app.into_make_service()).await;
        });
        FakeOpenAi {
            base_url: format!("http://{addr}/v1"),
            inner,
        }
    }

    /// Queues replies, used in order; once they run out, requests are echoed.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.script.lock().extend(replies);
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().clone()
    }

    /// The body of the only request received.
    pub fn only_body(&self) -> Value {
        let got = self.received();
        assert_eq!(got.len(), 1, "requests: {got:#?}");
        got[0].body.clone()
    }
}

async fn handle(State(inner): State<Arc<Inner>>, headers: HeaderMap, body: Bytes) -> Response {
    let parsed: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                400,
                None,
                &format!("We could not parse the JSON body: {e}"),
                &[],
            );
        }
    };
    inner.received.lock().push(Received {
        headers,
        body: parsed.clone(),
        at: tokio::time::Instant::now(),
    });
    if let Err(message) = validate(&parsed) {
        return error(400, None, &message, &[]);
    }
    let model = parsed["model"].as_str().unwrap_or_default();
    let Some((_, reported)) = inner.models.iter().find(|(m, _)| m == model) else {
        return error(
            404,
            Some("model_not_found"),
            &format!("The model `{model}` does not exist or you do not have access to it."),
            &[],
        );
    };
    let reported = reported.clone();
    let mut reply = inner.script.lock().pop_front().unwrap_or(Reply::Echo);
    loop {
        match reply {
            Reply::After(delay, then) => {
                tokio::time::sleep(delay).await;
                reply = *then;
            }
            other => return render(other, &parsed, &reported),
        }
    }
}

/// The checks OpenAI makes that matter for this bridge.
fn validate(req: &Value) -> Result<(), String> {
    if !req["model"].is_string() {
        return Err("you must provide a model parameter".into());
    }
    let Some(messages) = req["messages"].as_array().filter(|m| !m.is_empty()) else {
        return Err("'messages' must contain at least one message".into());
    };
    if req.get("max_tokens").is_some() && req.get("max_completion_tokens").is_some() {
        return Err("max_tokens and max_completion_tokens cannot both be set".into());
    }
    if req.get("tool_choice").is_some() && req.get("tools").is_none() {
        return Err("'tool_choice' is only allowed when 'tools' are specified.".into());
    }
    if req.get("stream_options").is_some() && req["stream"] != json!(true) {
        return Err(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.".into(),
        );
    }
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or_default();
        if role == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or_default();
            let Some(pos) = pending.iter().position(|p| p == id) else {
                return Err(format!(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[{i}])"
                ));
            };
            pending.remove(pos);
            if !m["content"].is_string() && !m["content"].is_array() {
                return Err(format!("messages[{i}].content: expected a string"));
            }
            continue;
        }
        if !pending.is_empty() {
            return Err(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                pending.join(", ")
            ));
        }
        match role {
            "system" | "developer" | "user" => {
                if m["content"].is_null() {
                    return Err(format!("messages[{i}].content: expected a value"));
                }
            }
            "assistant" => {
                if let Some(calls) = m["tool_calls"].as_array() {
                    for c in calls {
                        if c["type"] != "function" || !c["function"]["arguments"].is_string() {
                            return Err(format!("messages[{i}].tool_calls: invalid call"));
                        }
                        pending.push(c["id"].as_str().unwrap_or_default().to_owned());
                    }
                } else if m["content"].is_null() {
                    return Err(format!(
                        "messages[{i}]: an assistant message needs content or tool_calls"
                    ));
                }
            }
            other => return Err(format!("messages[{i}].role: unknown role {other:?}")),
        }
    }
    if !pending.is_empty() {
        return Err(format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
            pending.join(", ")
        ));
    }
    Ok(())
}

fn error(status: u16, code: Option<&str>, message: &str, headers: &[(&str, String)]) -> Response {
    let body = json!({"error": {
        "message": message,
        "type": if status == 429 { "requests" } else { "invalid_request_error" },
        "param": null,
        "code": code,
    }});
    let mut b = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json");
    for (k, v) in headers {
        b = b.header(*k, v);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

fn words(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.split_whitespace().count() as u64,
        Value::Array(a) => a.iter().map(words).sum(),
        Value::Object(o) => o
            .iter()
            .filter(|(k, _)| *k == "content" || *k == "text")
            .map(|(_, v)| words(v))
            .sum(),
        _ => 0,
    }
}

fn last_user_text(req: &Value) -> String {
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.iter().rev().find(|m| m["role"] == "user");
    match last.map(|m| &m["content"]) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn render(reply: Reply, req: &Value, model: &str) -> Response {
    let message = match reply {
        Reply::Echo => Message::text(&format!("You said: {}", last_user_text(req))),
        Reply::Say(m) => m,
        Reply::Error {
            status,
            code,
            message,
            headers,
        } => return error(status, code, &message, &headers),
        Reply::Raw {
            status,
            content_type,
            body,
        } => {
            return Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(body))
                .unwrap();
        }
        Reply::Events(events) => {
            let text: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            return sse(vec![(Duration::ZERO, text)]);
        }
        Reply::StallStream(m, n, stall) => {
            let chunks = stream_chunks(&m, req, model);
            let parts = chunks
                .into_iter()
                .enumerate()
                .map(|(i, c)| (if i == n { stall } else { Duration::ZERO }, c))
                .collect();
            return sse(parts);
        }
        Reply::After(..) => unreachable!("resolved by the handler"),
    };
    if req["stream"] == json!(true) {
        let parts = stream_chunks(&message, req, model)
            .into_iter()
            .map(|c| (Duration::ZERO, c))
            .collect();
        return sse(parts);
    }
    let (prompt, completion) = usage(&message, req);
    let mut msg = json!({"role": "assistant", "content": message.content, "refusal": null});
    if !message.tool_calls.is_empty() {
        msg["tool_calls"] = message
            .tool_calls
            .iter()
            .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
            .collect();
    }
    let mut choice = json!({"index": 0, "message": msg, "logprobs": null, "finish_reason": message.finish_reason});
    for (k, v) in &message.choice_extra {
        choice[k] = v.clone();
    }
    let mut body = json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [choice],
        "system_fingerprint": "fp_test",
    });
    if !message.no_usage {
        body["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion});
    }
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn usage(message: &Message, req: &Value) -> (u64, u64) {
    message.usage.unwrap_or_else(|| {
        let prompt = words(&req["messages"]);
        let completion = message
            .content
            .as_deref()
            .map_or(0, |c| c.split_whitespace().count() as u64)
            + message.tool_calls.len() as u64;
        (prompt, completion)
    })
}

/// OpenAI's chunks for a message: role, content deltas of 3 characters, each tool call's
/// head then argument fragments of 5 characters, the finish, usage if asked, `[DONE]`.
fn stream_chunks(message: &Message, req: &Value, model: &str) -> Vec<String> {
    let include_usage = req["stream_options"]["include_usage"] == json!(true);
    let chunk = |choices: Value| {
        let mut c = json!({
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "system_fingerprint": "fp_test",
            "choices": choices,
        });
        if include_usage {
            c["usage"] = Value::Null;
        }
        format!("data: {c}\n\n")
    };
    let delta =
        |d: Value| json!([{"index": 0, "delta": d, "logprobs": null, "finish_reason": null}]);
    let mut out = vec![chunk(delta(
        json!({"role": "assistant", "content": if message.tool_calls.is_empty() { json!("") } else { Value::Null }, "refusal": null}),
    ))];
    if let Some(content) = &message.content {
        let chars: Vec<char> = content.chars().collect();
        for piece in chars.chunks(3) {
            out.push(chunk(delta(
                json!({"content": piece.iter().collect::<String>()}),
            )));
        }
    }
    for (i, (id, name, args)) in message.tool_calls.iter().enumerate() {
        out.push(chunk(delta(json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}))));
        let chars: Vec<char> = args.chars().collect();
        for piece in chars.chunks(5) {
            out.push(chunk(delta(json!({"tool_calls": [{"index": i, "function": {"arguments": piece.iter().collect::<String>()}}]}))));
        }
    }
    let mut last = json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": message.finish_reason}]);
    for (k, v) in &message.choice_extra {
        last[0][k] = v.clone();
    }
    out.push(chunk(last));
    if include_usage && !message.no_usage {
        let (p, c) = usage(message, req);
        let mut u = json!({
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "system_fingerprint": "fp_test",
            "choices": [],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
        });
        u["usage"]["prompt_tokens_details"] = json!({"cached_tokens": 0});
        out.push(format!("data: {u}\n\n"));
    }
    out.push("data: [DONE]\n\n".into());
    out
}

fn sse(parts: Vec<(Duration, String)>) -> Response {
    let stream = futures::stream::unfold(parts.into_iter(), |mut it| async move {
        let (delay, text) = it.next()?;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Some((Ok::<_, Infallible>(Bytes::from(text)), it))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// A provider for `fake` whose default model is `gpt-4o-mini`, with no API key, adjusted by
/// `adjust`.
pub fn provider(
    fake: &FakeOpenAi,
    adjust: impl FnOnce(ferry_llm::OpenAiConfig) -> ferry_llm::OpenAiConfig,
) -> ferry_llm::OpenAiProvider {
    let config =
        ferry_llm::OpenAiConfig::new(&fake.base_url, ferry_llm::ModelTable::new("gpt-4o-mini"))
            .without_api_key();
    adjust(config).build().expect("provider")
}

/// Params from JSON in the spec's shape.
pub fn params(v: Value) -> ferry_llm::ferry_protocol::sampling::CreateMessageRequestParams {
    serde_json::from_value(v).expect("params")
}

/// A spec example of `CreateMessageRequestParams`, from ferry-protocol's copy of the spec.
pub fn spec_params(name: &str) -> ferry_llm::ferry_protocol::sampling::CreateMessageRequestParams {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ferry-protocol/tests/spec/2026-07-28/examples/CreateMessageRequestParams")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("spec example")
}

/// Checks a result against the spec's schema and returns it as JSON.
pub fn checked(result: &ferry_llm::ferry_protocol::sampling::CreateMessageResult) -> Value {
    let v = serde_json::to_value(result).unwrap();
    ferry_llm::ferry_protocol::testing::validate("CreateMessageResult", &v)
        .unwrap_or_else(|e| panic!("{v}: {e}"));
    v
}
