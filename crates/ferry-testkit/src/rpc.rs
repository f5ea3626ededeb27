//! Building 2026-07-28 JSON-RPC messages.

use serde_json::{Map, Value, json};

/// The protocol revision the tests speak.
pub const VERSION: &str = "2026-07-28";
/// `_meta` key of the protocol version.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's self-description.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the server's self-description in results.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key tagging notifications of a `subscriptions/listen` stream.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The `_meta` every modern request carries, declaring `caps`.
pub fn meta(caps: Value) -> Value {
    json!({
        PROTOCOL_VERSION: VERSION,
        CLIENT_CAPABILITIES: caps,
        CLIENT_INFO: {"name": "ferry-tests", "version": "0.0.0"},
    })
}

/// Capabilities for every kind of input request (form and URL elicitation, sampling,
/// roots).
pub fn all_caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

/// Capabilities for form elicitation only.
pub fn form_caps() -> Value {
    json!({"elicitation": {"form": {}}})
}

/// A request with no optional client capabilities (`{}`), unless `params` already has a
/// `_meta`.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    request_with(id, method, params, json!({}))
}

/// A request declaring `caps`, unless `params` already has a `_meta`.
pub fn request_with(id: impl Into<Value>, method: &str, params: Value, caps: Value) -> Value {
    let mut params = match params {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => panic!("request params must be an object, got {other}"),
    };
    params.entry("_meta").or_insert_with(|| meta(caps));
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A `tools/call` request declaring `caps`.
pub fn call(id: impl Into<Value>, tool: &str, arguments: Value, caps: Value) -> Value {
    request_with(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        caps,
    )
}

/// A `tools/call` of `tool` without arguments that asks for progress, with the token
/// `tok-{id}`.
pub fn progress_call(id: i64, tool: &str) -> Value {
    let mut msg = call(id, tool, json!({}), json!({}));
    msg["params"]["_meta"]["progressToken"] = json!(format!("tok-{id}"));
    msg
}

/// A notification.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// `notifications/cancelled` for request `id`.
pub fn cancel(id: impl Into<Value>) -> Value {
    notification(
        "notifications/cancelled",
        json!({"requestId": id.into(), "reason": "test"}),
    )
}

/// The retry of `original` (a request built by this module): a new `id`, the same
/// params, plus `inputResponses` and `requestState` when given.
pub fn retry(
    original: &Value,
    id: impl Into<Value>,
    responses: Option<Value>,
    state: Option<&str>,
) -> Value {
    let mut next = original.clone();
    next["id"] = id.into();
    let params = next["params"].as_object_mut().expect("request params");
    params.remove("inputResponses");
    params.remove("requestState");
    if let Some(r) = responses {
        params.insert("inputResponses".into(), r);
    }
    if let Some(s) = state {
        params.insert("requestState".into(), json!(s));
    }
    next
}

/// An elicitation answer accepting `content`.
pub fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The text of the first content block of a `tools/call` response.
pub fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {response}"))
}

/// The error code of an error response.
pub fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {response}"))
}

/// The `resultType` of a result response.
pub fn result_type(response: &Value) -> &str {
    response["result"]["resultType"]
        .as_str()
        .unwrap_or_else(|| panic!("not a result response: {response}"))
}

/// The `requestState` of an `InputRequiredResult` response.
pub fn state(response: &Value) -> &str {
    response["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {response}"))
}
