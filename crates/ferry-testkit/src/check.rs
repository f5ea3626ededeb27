//! Checks on every message a server sends: the specification's `schema.json`, plus the
//! rules of the acceptance checklist that a schema cannot express.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, OnceLock};

use ferry_protocol::testing::{validate_message, validate_response};
use serde_json::Value;

/// Messages already checked against the schema, by method and content without the id: a
/// flood of identical answers is checked once, not once per id.
fn seen(method: Option<&str>, message: &Value) -> bool {
    static SEEN: OnceLock<Mutex<HashSet<u64>>> = OnceLock::new();
    let mut without_id = message.clone();
    if let Some(m) = without_id.as_object_mut()
        && let Some(id) = m.remove("id")
    {
        assert!(
            id.is_string() || id.is_i64() || id.is_u64(),
            "an id is a string or an integer: {message}"
        );
    }
    let mut h = DefaultHasher::new();
    method.hash(&mut h);
    serde_json::to_string(&without_id)
        .unwrap_or_default()
        .hash(&mut h);
    !SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(h.finish())
}

/// Checks one message received from a server. `method` is the method of the request
/// it answers, when it is a response to a known request.
///
/// Fails the test when the message:
/// - does not validate against `schema.json` (as a response to `method`, or as a
///   notification or error response);
/// - is a JSON-RPC request (servers never send requests; basic/index.mdx);
/// - uses an error code reserved for MCP that the spec does not define, or a retired one
///   (-32002, -32042);
/// - is an `InputRequiredResult` with caching hints (mrtr.mdx, caching.mdx).
pub fn received(message: &Value, method: Option<&str>) {
    let fail =
        |why: String| -> ! { panic!("server sent an invalid message: {why}\nmessage: {message}") };
    if message.get("method").is_some() && message.get("id").is_some() {
        fail("servers never send JSON-RPC requests".into());
    }
    let method = if message.get("method").is_some() {
        None
    } else {
        method
    };
    if !seen(method, message) {
        let checked = match method {
            Some(m) => validate_response(m, message),
            None => validate_message(message),
        };
        if let Err(e) = checked {
            fail(e.to_string());
        }
    }
    if let Some(code) = message.pointer("/error/code").and_then(Value::as_i64) {
        let reserved = (-32099..=-32000).contains(&code);
        if reserved && !matches!(code, -32022..=-32020) {
            fail(format!(
                "error code {code} is reserved and not defined for 2026-07-28"
            ));
        }
    }
    if let Some(result) = message.get("result")
        && result.get("resultType").and_then(Value::as_str) == Some("input_required")
        && (result.get("ttlMs").is_some() || result.get("cacheScope").is_some())
    {
        fail("an InputRequiredResult carries no ttlMs or cacheScope".into());
    }
}

/// Parses one line (or one SSE `data:` payload) as a single JSON-RPC message, failing the
/// test when it is not exactly one JSON object on one line.
pub fn parse_line(line: &[u8]) -> Value {
    let text = std::str::from_utf8(line).unwrap_or_else(|e| panic!("message is not UTF-8: {e}"));
    assert!(
        !text.contains('\n'),
        "a message spans several lines: {text:?}"
    );
    let v: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not a JSON message ({e}): {text:?}"));
    assert!(v.is_object(), "a message must be a JSON object: {text}");
    assert_eq!(v["jsonrpc"], "2.0", "not JSON-RPC 2.0: {text}");
    v
}
