//! One client span per request, after the OpenTelemetry semantic conventions for MCP
//! (span `{mcp.method.name} {target}`, kind client), its context sent in `_meta`
//! (`traceparent`, `tracestate`) so the server's span joins the same trace. Every request
//! goes through here: first calls, multi round-trip retries and task polls alike.
//!
//! The span's fields are filled in only when a subscriber records it; parenting and
//! context need the hooks of [`ferry_protocol::trace`] (installed by ferry-otel).

use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::methods;
use ferry_protocol::result::ResultHead;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;

use crate::client::Session;
use crate::error::{Error, Result};

/// The `tracing` target of client request spans.
pub const REQUEST_TARGET: &str = "ferry_client::request";

pub(crate) fn request_span(
    method: &str,
    params: &Map<String, Value>,
    id: &RequestId,
    session: &Session,
    http: bool,
) -> Span {
    let span = tracing::info_span!(
        target: REQUEST_TARGET,
        "mcp.client.request",
        otel.name = Empty,
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        mcp.protocol.version = Empty,
        jsonrpc.request.id = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        gen_ai.operation.name = Empty,
        mcp.resource.uri = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
        network.transport = Empty,
        network.protocol.name = Empty,
        ferry.mcp.retry = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    span.record("jsonrpc.request.id", tracing::field::display(id));
    span.record("mcp.protocol.version", session.version.as_str());
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    match method {
        methods::TOOLS_CALL if !name.is_empty() => {
            span.record("otel.name", format!("{method} {name}"));
            span.record("gen_ai.tool.name", name);
            span.record("gen_ai.operation.name", "execute_tool");
        }
        methods::PROMPTS_GET if !name.is_empty() => {
            span.record("otel.name", format!("{method} {name}"));
            span.record("gen_ai.prompt.name", name);
        }
        _ => {
            span.record("otel.name", method);
        }
    }
    if method == methods::RESOURCES_READ
        && let Some(uri) = params.get("uri").and_then(Value::as_str)
    {
        span.record("mcp.resource.uri", uri);
    }
    if params.contains_key("requestState") || params.contains_key("inputResponses") {
        span.record("ferry.mcp.retry", true);
    }
    if http {
        span.record("network.transport", "tcp");
        span.record("network.protocol.name", "http");
    } else {
        span.record("network.transport", "pipe");
    }
    span
}

/// Records how the request ended: a JSON-RPC error's code, a tool's `isError`, or a
/// failure of the client's own (timeout, transport).
pub(crate) fn finish(span: &Span, result: &Result<Box<RawValue>>) {
    let (kind, message) = match result {
        Ok(raw) if ResultHead::read(raw).is_ok_and(|h| h.is_error()) => (
            "tool_error".to_owned(),
            "the tool reported an error (isError)".to_owned(),
        ),
        Ok(_) => return,
        Err(e) => match e.rpc() {
            Some(rpc) => {
                span.record("rpc.response.status_code", rpc.code.0.to_string());
                (rpc.code.0.to_string(), rpc.message.clone())
            }
            None if matches!(e, Error::Timeout { .. }) => ("timeout".to_owned(), e.to_string()),
            None => ("_OTHER".to_owned(), e.to_string()),
        },
    };
    span.record("error.type", kind.as_str());
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", message.as_str());
}
