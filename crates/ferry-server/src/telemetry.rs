//! One `tracing` span per request, named and attributed after the OpenTelemetry semantic
//! conventions for MCP (span `{mcp.method.name} {target}`, attributes `mcp.method.name`,
//! `mcp.protocol.version`, `mcp.session.id`, `jsonrpc.request.id`, `gen_ai.tool.name`,
//! `gen_ai.operation.name`, `error.type`, `network.transport`).
//!
//! The span is made with every field empty and filled in only when a subscriber records
//! it: with no subscriber interested a request pays one callsite check. Parenting on the
//! request's `_meta` `traceparent` and linking the rounds of a multi round-trip call go
//! through [`ferry_protocol::trace`]'s hooks, which an OpenTelemetry integration installs.

use std::borrow::Cow;

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

/// The `tracing` target of the `debug` events that refuse a `requestState` (span events
/// with a `reason` field; the state itself is never logged). `ferry_server::state=debug`
/// logs every refusal; at `info`, a line at most every 10 s says how many there were.
pub const STATE_TARGET: &str = "ferry_server::state";

/// The `tracing` target of the events that open and close `subscriptions/listen`
/// streams (field `change`: `1` opened, `-1` closed).
pub const LISTEN_TARGET: &str = "ferry_server::listen";

/// The `tracing` target of the events that record a task's status (field `status`:
/// `working` when created, then `input_required`, `completed`, `failed`, `cancelled`).
pub const TASK_TARGET: &str = "ferry_server::task";

/// The span of one incoming request. Disabled (and free) unless a subscriber wants it.
///
/// Every attribute known when the request arrives is given at creation, so a subscriber
/// sees one new span rather than a dozen updates; the values are computed only when the
/// span is enabled.
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
        otel.name = span_name(method, target).as_ref(),
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        mcp.protocol.version = meta.and_then(|m| m.protocol_version.as_deref()),
        mcp.session.id = session_id(env),
        mcp.resource.uri = target_of(method, methods::RESOURCES_READ, target),
        jsonrpc.request.id = id_text(id, &mut itoa::Buffer::new()),
        gen_ai.tool.name = target_of(method, methods::TOOLS_CALL, target),
        gen_ai.prompt.name = target_of(method, methods::PROMPTS_GET, target),
        gen_ai.operation.name = target_of(method, methods::TOOLS_CALL, target).map(|_| "execute_tool"),
        error.type = Empty,
        rpc.response.status_code = Empty,
        network.transport = transport_of(env),
        network.protocol.name = matches!(env.transport, Transport::Http(_)).then_some("http"),
        ferry.mcp.call.id = Empty,
        ferry.mcp.call.round = Empty,
        ferry.mcp.input_required = Empty,
    );
    if !span.is_disabled()
        && let Some(cx) = meta.and_then(|m| trace::from_meta(&m.other))
    {
        trace::set_parent(&span, &cx);
    }
    span
}

/// The span name of the conventions: `{mcp.method.name} {target}` for a tool or prompt
/// (low-cardinality targets), the method alone otherwise (a resource URI is not: it goes
/// in its own attribute, never in the name). Made without the formatting machinery: the
/// span records it as text.
fn span_name<'a>(method: &'a str, target: &str) -> Cow<'a, str> {
    let named = matches!(method, methods::TOOLS_CALL | methods::PROMPTS_GET) && !target.is_empty();
    if !named {
        return Cow::Borrowed(method);
    }
    let mut name = String::with_capacity(method.len() + 1 + target.len());
    name.push_str(method);
    name.push(' ');
    name.push_str(target);
    Cow::Owned(name)
}

/// A request id as text (`jsonrpc.request.id` is a string attribute), an integer written
/// into `digits` without the formatting machinery.
fn id_text<'a>(id: &'a RequestId, digits: &'a mut itoa::Buffer) -> &'a str {
    match id {
        RequestId::String(s) => s,
        RequestId::Number(n) => digits.format(*n),
    }
}

/// The request's target (tool or prompt name, resource URI) when it is a `kind` request
/// that names one.
fn target_of<'a>(method: &str, kind: &str, target: &'a str) -> Option<&'a str> {
    (method == kind && !target.is_empty()).then_some(target)
}

/// `network.transport`: `pipe` on stdio, `tcp` on HTTP.
fn transport_of(env: &RequestEnv) -> Option<&'static str> {
    match env.transport {
        Transport::Stdio => Some("pipe"),
        Transport::Http(_) => Some("tcp"),
        Transport::Other => None,
    }
}

/// `Mcp-Session-Id`, parsed once: a lookup by text would parse the name per request.
const SESSION_HEADER: http::HeaderName =
    http::HeaderName::from_static(ferry_protocol::headers::SESSION_ID);

/// `mcp.session.id`: the 2025-11-25 session the request belongs to, else the
/// `Mcp-Session-Id` header it carries.
fn session_id(env: &RequestEnv) -> Option<&str> {
    if let Some(session) = &env.session {
        return Some(session.id());
    }
    match &env.transport {
        Transport::Http(headers) => headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()),
        _ => None,
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

/// Paces the `info` lines of refused states: a client sending stale, forged or replayed
/// states at a high rate would otherwise write a log line per request.
static REFUSAL_LINES: ferry_state::FailureLog =
    ferry_state::FailureLog::new(std::time::Duration::from_secs(10));

/// A `requestState` was refused: a `debug` event with the reason, never the state (a
/// span event, and a count in `ferry-otel`'s metrics), and an `info` line at most every
/// 10 s with the number of refusals it leaves out.
pub(crate) fn state_refused(reason: &dyn std::fmt::Display) {
    refused_paced(reason, &REFUSAL_LINES);
}

fn refused_paced(reason: &dyn std::fmt::Display, lines: &ferry_state::FailureLog) {
    tracing::debug!(target: STATE_TARGET, reason = %reason, "requestState refused");
    if let Some(unlogged) = lines.due() {
        tracing::info!(
            reason = %reason,
            unlogged,
            "requestState refused (logged at most every 10 s; `unlogged` refusals since the last line)"
        );
    }
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    use super::*;

    /// The fields each new span was created with, and each event's level, target and
    /// fields.
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<Fieldset>>>, Arc<Mutex<Vec<EventRecord>>>);

    type Fieldset = BTreeMap<String, String>;

    /// An event's level, target and fields.
    type EventRecord = (tracing::Level, String, Fieldset);

    struct Fields<'a>(&'a mut BTreeMap<String, String>);

    impl Visit for Fields<'_> {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.0.insert(field.name().to_owned(), format!("{value:?}"));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.insert(field.name().to_owned(), value.to_owned());
        }
    }

    impl Subscriber for Capture {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            let mut fields = BTreeMap::new();
            span.record(&mut Fields(&mut fields));
            let mut spans = self.0.lock().unwrap();
            spans.push(fields);
            Id::from_u64(spans.len() as u64)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            let meta = event.metadata();
            self.1
                .lock()
                .unwrap()
                .push((*meta.level(), meta.target().to_owned(), fields));
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    fn fields_of(method: &str, target: &str, env: &RequestEnv) -> BTreeMap<String, String> {
        let capture = Capture::default();
        let meta = RequestMeta::modern("2026-07-28", Default::default());
        tracing::subscriber::with_default(capture.clone(), || {
            drop(request_span(
                method,
                target,
                &RequestId::from(7),
                Some(&meta),
                env,
            ));
        });
        capture.0.lock().unwrap().pop().expect("a span")
    }

    #[test]
    fn a_tool_call_span_carries_the_conventions_attributes_from_creation() {
        let mut headers = http::HeaderMap::new();
        headers.insert(ferry_protocol::headers::SESSION_ID, "s-1".parse().unwrap());
        let f = fields_of(methods::TOOLS_CALL, "echo", &RequestEnv::http(headers));
        let get = |k: &str| f.get(k).map(String::as_str);
        assert_eq!(get("otel.name"), Some("tools/call echo"));
        assert_eq!(get("otel.kind"), Some("server"));
        assert_eq!(get("mcp.method.name"), Some("tools/call"));
        assert_eq!(get("mcp.protocol.version"), Some("2026-07-28"));
        assert_eq!(get("mcp.session.id"), Some("s-1"));
        assert_eq!(get("jsonrpc.request.id"), Some("7"));
        assert_eq!(get("gen_ai.tool.name"), Some("echo"));
        assert_eq!(get("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(get("network.transport"), Some("tcp"));
        assert_eq!(get("network.protocol.name"), Some("http"));
        assert_eq!(get("gen_ai.prompt.name"), None);
        assert_eq!(get("mcp.resource.uri"), None);
    }

    #[test]
    fn every_refusal_is_a_debug_event_and_the_log_gets_one_line_a_period() {
        let capture = Capture::default();
        let lines = ferry_state::FailureLog::new(std::time::Duration::from_secs(3600));
        tracing::subscriber::with_default(capture.clone(), || {
            for reason in ["expired", "replayed", "bad_seal"] {
                refused_paced(&reason, &lines);
            }
        });
        let events = capture.1.lock().unwrap();
        let refusals: Vec<_> = events
            .iter()
            .filter(|(level, target, _)| *level == tracing::Level::DEBUG && target == STATE_TARGET)
            .map(|(_, _, f)| f.get("reason").cloned().unwrap_or_default())
            .collect();
        assert_eq!(refusals, ["expired", "replayed", "bad_seal"]);
        let logged: Vec<_> = events
            .iter()
            .filter(|(level, _, _)| *level == tracing::Level::INFO)
            .collect();
        assert_eq!(logged.len(), 1, "one info line in the period: {events:?}");
        assert_ne!(
            logged[0].1, STATE_TARGET,
            "the line is not counted as a refusal"
        );
        assert_eq!(
            logged[0].2.get("reason").map(String::as_str),
            Some("expired")
        );
        assert_eq!(logged[0].2.get("unlogged").map(String::as_str), Some("0"));
    }

    #[test]
    fn request_ids_are_written_as_text() {
        for n in [0, 7, -7, 1_234_567, i64::MAX, i64::MIN] {
            let id = RequestId::from(n);
            assert_eq!(id_text(&id, &mut itoa::Buffer::new()), n.to_string());
        }
        let s = RequestId::String("req-1".into());
        assert_eq!(id_text(&s, &mut itoa::Buffer::new()), "req-1");
    }

    #[test]
    fn a_resource_uri_is_an_attribute_never_the_name() {
        let f = fields_of(methods::RESOURCES_READ, "note://a", &RequestEnv::stdio());
        assert_eq!(
            f.get("otel.name").map(String::as_str),
            Some("resources/read")
        );
        assert_eq!(
            f.get("mcp.resource.uri").map(String::as_str),
            Some("note://a")
        );
        assert_eq!(f.get("network.transport").map(String::as_str), Some("pipe"));
        assert!(!f.contains_key("network.protocol.name"));
        assert!(!f.contains_key("gen_ai.tool.name"));
    }

    #[test]
    fn a_prompt_is_named_and_a_nameless_call_is_the_method() {
        let f = fields_of(methods::PROMPTS_GET, "greet", &RequestEnv::stdio());
        assert_eq!(
            f.get("otel.name").map(String::as_str),
            Some("prompts/get greet")
        );
        assert_eq!(
            f.get("gen_ai.prompt.name").map(String::as_str),
            Some("greet")
        );
        let f = fields_of(methods::TOOLS_LIST, "", &RequestEnv::stdio());
        assert_eq!(f.get("otel.name").map(String::as_str), Some("tools/list"));
        assert!(!f.contains_key("gen_ai.operation.name"));
    }
}
