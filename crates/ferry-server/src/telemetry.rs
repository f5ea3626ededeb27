//! One `tracing` span per request, named and attributed after the OpenTelemetry semantic
//! conventions for MCP (span `{mcp.method.name} {target}`, attributes `mcp.method.name`,
//! `mcp.protocol.version`, `mcp.session.id`, `jsonrpc.request.id`, `gen_ai.tool.name`,
//! `gen_ai.operation.name`, `error.type`, `network.transport`).
//!
//! The span is made with every field empty and filled in only when a subscriber records
//! it: with no subscriber interested a request pays one callsite check. Parenting on the
//! request's `_meta` `traceparent` and linking the rounds of a multi round-trip call go
//! through [`ferry_protocol::trace`]'s hooks, which an OpenTelemetry integration installs.

use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::meta::RequestMeta;
use ferry_protocol::methods;
use ferry_protocol::trace;
use ferry_state::CallTrace;
use tracing::Span;
use tracing::field::Empty;

use crate::dispatch::{RequestEnv, Transport};
use crate::reply::{Reply, ReplyKind};

/// The `tracing` target of request spans (for filters: `ferry_server::request=info`).
pub const REQUEST_TARGET: &str = "ferry_server::request";

/// The `tracing` target of the events that refuse a `requestState` (span events with a
/// `reason` field; the state itself is never logged).
pub const STATE_TARGET: &str = "ferry_server::state";

/// The `tracing` target of the events that open and close `subscriptions/listen`
/// streams (field `change`: `1` opened, `-1` closed).
pub const LISTEN_TARGET: &str = "ferry_server::listen";

/// The `tracing` target of the events that record a task's status (field `status`:
/// `working` when created, then `input_required`, `completed`, `failed`, `cancelled`).
pub const TASK_TARGET: &str = "ferry_server::task";

/// The span of one incoming request. Disabled (and free) unless a subscriber wants it.
pub(crate) fn request_span(
    method: &str,
    target: &str,
    id: &RequestId,
    meta: Option<&RequestMeta>,
    env: &RequestEnv,
) -> Span {
    let span = tracing::info_span!(
        target: REQUEST_TARGET,
        "mcp.server.request",
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = Empty,
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        mcp.resource.uri = Empty,
        jsonrpc.request.id = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        gen_ai.operation.name = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
        network.transport = Empty,
        network.protocol.name = Empty,
        ferry.mcp.call.id = Empty,
        ferry.mcp.call.round = Empty,
        ferry.mcp.input_required = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    describe(&span, method, target, id, meta, env);
    span
}

fn describe(
    span: &Span,
    method: &str,
    target: &str,
    id: &RequestId,
    meta: Option<&RequestMeta>,
    env: &RequestEnv,
) {
    span.record("mcp.method.name", method);
    span.record("jsonrpc.request.id", tracing::field::display(id));
    // Tool and prompt names are low-cardinality targets; a resource URI is not
    // (it goes in its own attribute, never in the name).
    let named = matches!(method, methods::TOOLS_CALL | methods::PROMPTS_GET) && !target.is_empty();
    if named {
        span.record("otel.name", format!("{method} {target}"));
    } else {
        span.record("otel.name", method);
    }
    match method {
        methods::TOOLS_CALL if named => {
            span.record("gen_ai.tool.name", target);
            span.record("gen_ai.operation.name", "execute_tool");
        }
        methods::PROMPTS_GET if named => {
            span.record("gen_ai.prompt.name", target);
        }
        methods::RESOURCES_READ if !target.is_empty() => {
            span.record("mcp.resource.uri", target);
        }
        _ => {}
    }
    match &env.transport {
        Transport::Stdio => {
            span.record("network.transport", "pipe");
        }
        Transport::Http(headers) => {
            span.record("network.transport", "tcp");
            span.record("network.protocol.name", "http");
            if let Some(s) = headers
                .get(ferry_protocol::headers::SESSION_ID)
                .and_then(|v| v.to_str().ok())
            {
                span.record("mcp.session.id", s);
            }
        }
        Transport::Other => {}
    }
    if let Some(session) = &env.session {
        span.record("mcp.session.id", session.id());
    }
    if let Some(meta) = meta {
        if let Some(v) = meta.protocol_version.as_deref() {
            span.record("mcp.protocol.version", v);
        }
        if let Some(cx) = trace::from_meta(&meta.other) {
            trace::set_parent(span, &cx);
        }
    }
}

/// Records how a request ended: JSON-RPC errors set `error.type` to the error code and
/// the span's status to error.
pub(crate) fn finish(span: &Span, reply: &Reply) {
    if span.is_disabled() || reply.kind == ReplyKind::Result {
        return;
    }
    let (code, message) = error_of(&reply.body);
    span.record("error.type", code.as_str());
    span.record("rpc.response.status_code", code.as_str());
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", message.as_str());
}

/// A tool result with `isError: true`: the convention's `error.type` is `tool_error`.
pub(crate) fn tool_error(message: &str) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("error.type", "tool_error");
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", message);
}

/// The code and message of a JSON-RPC error response's body.
fn error_of(body: &[u8]) -> (String, String) {
    #[derive(serde::Deserialize)]
    struct Response {
        error: Option<ErrorPart>,
    }
    #[derive(serde::Deserialize)]
    struct ErrorPart {
        code: i64,
        #[serde(default)]
        message: String,
    }
    match serde_json::from_slice::<Response>(body) {
        Ok(Response {
            error: Some(ErrorPart { code, message }),
        }) => (code.to_string(), message),
        _ => ("_OTHER".to_owned(), String::new()),
    }
}

/// The round a request is, from the state it carries: records the call id and round on
/// the current span and links it to the previous round's span. `None` when nothing is
/// traced.
pub(crate) fn continue_call(previous: Option<CallTrace>) -> Option<CallTrace> {
    let span = Span::current();
    if span.is_disabled() {
        return None;
    }
    let call = match previous {
        Some(prev) => {
            if let Some(link) = prev.span.as_deref() {
                trace::add_link(&span, link);
            }
            CallTrace {
                call_id: prev.call_id,
                round: prev.round.saturating_add(1),
                span: None,
            }
        }
        None => CallTrace {
            call_id: new_call_id()?,
            round: 1,
            span: None,
        },
    };
    span.record("ferry.mcp.call.id", call.call_id.as_str());
    span.record("ferry.mcp.call.round", call.round);
    Some(call)
}

/// The trace to seal into the next round's state: this round's call, with this span's
/// context for the next round to link to.
pub(crate) fn carry(call: Option<CallTrace>) -> Option<CallTrace> {
    let call = match call {
        Some(c) => c,
        None => continue_call(None)?,
    };
    let span = Span::current();
    span.record("ferry.mcp.input_required", true);
    Some(CallTrace {
        span: trace::context_of(&span).map(|cx| cx.traceparent),
        ..call
    })
}

/// A `requestState` was refused: a span event with the reason, never the state.
pub(crate) fn state_refused(reason: &dyn std::fmt::Display) {
    tracing::info!(target: STATE_TARGET, reason = %reason, "requestState refused");
}

fn new_call_id() -> Option<String> {
    use base64::Engine as _;
    let mut id = [0u8; 12];
    getrandom::fill(&mut id).ok()?;
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id))
}

/// Counts a listen stream while it lives: an event when opened, another when dropped.
pub(crate) struct ListenCount(());

impl ListenCount {
    pub(crate) fn open() -> Self {
        tracing::debug!(target: LISTEN_TARGET, change = 1i64, "listen stream opened");
        ListenCount(())
    }
}

impl Drop for ListenCount {
    fn drop(&mut self) {
        tracing::debug!(target: LISTEN_TARGET, change = -1i64, "listen stream closed");
    }
}

/// A task reached `status`.
pub(crate) fn task_status(status: ferry_protocol::tasks::TaskStatus) {
    tracing::debug!(target: TASK_TARGET, status = status.as_str(), "task status");
}
