//! The JSON-RPC 2.0 envelope MCP uses (basic/index.mdx, schema.ts `JSONRPCMessage`).
//!
//! Two shapes live here: owned, typed messages ([`JsonRpcMessage`] and friends) for code
//! that builds or inspects messages, and a borrowed [`Envelope`] that a server reads first
//! on its hot path: it classifies a message and leaves `params` as raw JSON until the
//! method is known.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{ErrorCode, ErrorObject};

/// The only JSON-RPC version MCP speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a string or an integer, never `null` (schema.ts `RequestId`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl RequestId {
    /// Reads an id from a JSON value, refusing `null`, floats, booleans and containers.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
        }
    }
}

/// A JSON-RPC request: a method call that expects a response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub struct JsonRpcRequest<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request id the response will carry.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The parameters; MCP requests always carry at least `_meta`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcRequest<P> {
    /// Builds a request.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: P) -> Self {
        JsonRpcRequest {
            jsonrpc: JsonRpcVersion,
            id: id.into(),
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A JSON-RPC notification: no id, never answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub struct JsonRpcNotification<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The notification method, e.g. `notifications/progress`.
    pub method: String,
    /// The parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcNotification<P> {
    /// Builds a notification.
    pub fn new(method: impl Into<String>, params: P) -> Self {
        JsonRpcNotification {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A successful JSON-RPC response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResultResponse<R = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result object.
    pub result: R,
}

impl<R> JsonRpcResultResponse<R> {
    /// Builds a result response.
    pub fn new(id: RequestId, result: R) -> Self {
        JsonRpcResultResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }
    }
}

/// A JSON-RPC error response. `id` is absent only when the request's id was unreadable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers, if it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

impl JsonRpcErrorResponse {
    /// Builds an error response.
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        JsonRpcErrorResponse {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        }
    }
}

/// A response: a result or an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonRpcResponse<R = Value> {
    /// A result.
    Result(JsonRpcResultResponse<R>),
    /// An error.
    Error(JsonRpcErrorResponse),
}

/// Any JSON-RPC message.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JsonRpcMessage {
    /// A request.
    Request(JsonRpcRequest),
    /// A notification.
    Notification(JsonRpcNotification),
    /// A result response.
    Result(JsonRpcResultResponse),
    /// An error response.
    Error(JsonRpcErrorResponse),
}

impl JsonRpcMessage {
    /// Reads a message the way a client reads what a server sends: an error response
    /// whose `id` is `null` or unreadable (the server could not read the request's) has no
    /// id, and the `jsonrpc` member is not checked. `None` when the bytes are not a
    /// JSON-RPC message at all.
    ///
    /// ```
    /// use ferry_protocol::jsonrpc::JsonRpcMessage;
    ///
    /// let m = JsonRpcMessage::parse_lenient(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    /// assert!(matches!(m, Some(JsonRpcMessage::Error(e)) if e.id.is_none()));
    /// ```
    pub fn parse_lenient(bytes: &[u8]) -> Option<JsonRpcMessage> {
        let Value::Object(map) = serde_json::from_slice::<Value>(bytes).ok()? else {
            return None;
        };
        Self::from_map(map, false).ok()
    }

    /// Reads a message as [`parse_lenient`](Self::parse_lenient) does, but keeps the
    /// `result` of a result response as raw JSON text: a client that passes a result on
    /// (a gateway), or reads it into its own type, need not build a [`Value`] of it.
    ///
    /// ```
    /// use ferry_protocol::jsonrpc::{JsonRpcMessage, LenientMessage, RequestId};
    ///
    /// let m = JsonRpcMessage::parse_lenient_raw(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#);
    /// let Some(LenientMessage::Result { id, result }) = m else { panic!() };
    /// assert_eq!((id, result.get()), (RequestId::Number(7), r#"{"content":[]}"#));
    /// ```
    pub fn parse_lenient_raw(bytes: &[u8]) -> Option<LenientMessage> {
        if let Ok(envelope) = Envelope::parse(bytes)
            && envelope.method.is_none()
            && envelope.error.is_none()
            && let (Some(result), Some(raw_id)) = (envelope.result, envelope.id)
            && let Ok(id) = serde_json::from_str::<RequestId>(raw_id.get())
        {
            return Some(LenientMessage::Result {
                id,
                result: result.to_owned(),
            });
        }
        // Anything else (an error, a request, a notification, or a shape the envelope
        // refuses, such as a duplicated member) is read the general way.
        match Self::parse_lenient(bytes)? {
            JsonRpcMessage::Result(r) => Some(LenientMessage::Result {
                id: r.id,
                result: serde_json::value::to_raw_value(&r.result).ok()?,
            }),
            other => Some(LenientMessage::Other(other)),
        }
    }

    fn from_map(
        mut map: serde_json::Map<String, Value>,
        strict: bool,
    ) -> Result<JsonRpcMessage, &'static str> {
        if strict {
            match map.get("jsonrpc") {
                Some(Value::String(v)) if v == JSONRPC_VERSION => {}
                _ => return Err("\"jsonrpc\" must be \"2.0\""),
            }
        }
        let raw_id = map.remove("id");
        let id = raw_id.as_ref().and_then(RequestId::from_value);
        let params = map.remove("params");
        if let Some(Value::String(method)) = map.remove("method") {
            return match (raw_id, id) {
                (None, _) => Ok(JsonRpcMessage::Notification(JsonRpcNotification {
                    jsonrpc: JsonRpcVersion,
                    method,
                    params,
                })),
                (Some(_), Some(id)) => Ok(JsonRpcMessage::Request(JsonRpcRequest {
                    jsonrpc: JsonRpcVersion,
                    id,
                    method,
                    params,
                })),
                (Some(_), None) => Err("id must be a string or an integer"),
            };
        }
        if let Some(result) = map.remove("result") {
            if raw_id.is_some() && id.is_none() {
                return Err("id must be a string or an integer");
            }
            let id = id.ok_or("a result response needs an id")?;
            return Ok(JsonRpcMessage::Result(JsonRpcResultResponse::new(
                id, result,
            )));
        }
        if let Some(error) = map.remove("error") {
            if strict && raw_id.as_ref().is_some_and(|v| !v.is_null()) && id.is_none() {
                return Err("id must be a string or an integer");
            }
            let error = if strict {
                serde_json::from_value(error)
                    .map_err(|_| "an error must have a code and a message")?
            } else {
                lenient_error(&error).ok_or("an error must have a code")?
            };
            return Ok(JsonRpcMessage::Error(JsonRpcErrorResponse::new(id, error)));
        }
        Err("not a JSON-RPC request, notification or response")
    }
}

/// An error object with a code, whatever else it lacks.
fn lenient_error(error: &Value) -> Option<ErrorObject> {
    Some(ErrorObject {
        code: crate::ErrorCode(error.get("code").and_then(Value::as_i64)?),
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        data: error.get("data").cloned(),
    })
}

impl<'de> Deserialize<'de> for JsonRpcMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Value::Object(map) = value else {
            return Err(de::Error::custom("a JSON-RPC message must be an object"));
        };
        JsonRpcMessage::from_map(map, true).map_err(de::Error::custom)
    }
}

/// A message as a client reads it ([`JsonRpcMessage::parse_lenient_raw`]): a result
/// response with its result as raw JSON text, or any other message.
#[derive(Debug)]
pub enum LenientMessage {
    /// A result response.
    Result {
        /// The id of the request it answers.
        id: RequestId,
        /// The result, as the peer wrote it.
        result: Box<RawValue>,
    },
    /// Any other message, parsed (never a [`JsonRpcMessage::Result`]).
    Other(JsonRpcMessage),
}

/// The `"jsonrpc": "2.0"` member. Serializes as `"2.0"` and refuses anything else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(JSONRPC_VERSION)
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = crate::borrowed::CowStr::deserialize(d)?;
        if v.0 == JSONRPC_VERSION {
            Ok(JsonRpcVersion)
        } else {
            Err(de::Error::custom("\"jsonrpc\" must be \"2.0\""))
        }
    }
}

/// Serializes a notification: `{"jsonrpc":"2.0","method":…,"params":…}`, one line.
///
/// ```
/// use ferry_protocol::jsonrpc::encode_notification;
/// use serde_json::json;
///
/// let bytes = encode_notification("notifications/tools/list_changed", &json!({}));
/// assert_eq!(
///     std::str::from_utf8(&bytes).unwrap(),
///     r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}"#
/// );
/// ```
pub fn encode_notification<P: Serialize + ?Sized>(method: &str, params: &P) -> Vec<u8> {
    #[derive(Serialize)]
    struct Notification<'a, P: ?Sized> {
        jsonrpc: JsonRpcVersion,
        method: &'a str,
        params: &'a P,
    }
    // Serializing plain data into memory cannot fail.
    serde_json::to_vec(&Notification {
        jsonrpc: JsonRpcVersion,
        method,
        params,
    })
    .unwrap_or_default()
}

/// Serializes a request: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`, one line.
pub fn encode_request<P: Serialize + ?Sized>(id: &RequestId, method: &str, params: &P) -> Vec<u8> {
    #[derive(Serialize)]
    struct Request<'a, P: ?Sized> {
        jsonrpc: JsonRpcVersion,
        id: &'a RequestId,
        method: &'a str,
        params: &'a P,
    }
    serde_json::to_vec(&Request {
        jsonrpc: JsonRpcVersion,
        id,
        method,
        params,
    })
    .unwrap_or_default()
}

/// A message read without copying: the first thing a server parses.
///
/// Members are kept raw until the method is known, so a server pays for parsing only what
/// the method needs. Use [`Envelope::classify`] to turn it into an [`Incoming`].
#[derive(Debug, Deserialize)]
pub struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "crate::borrowed::option_cow_str")]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "crate::borrowed::option_cow_str")]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// Says where a body stops being UTF-8.
pub(crate) fn not_utf8(e: std::str::Utf8Error) -> String {
    format!("the body is not UTF-8 (from byte {})", e.valid_up_to())
}

/// Keeps an explicit `null` as `Some(null)` so `"id": null` is told apart from no id.
fn present<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue>::deserialize(d).map(Some)
}

/// What an [`Envelope`] turned out to be.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A request (has `method` and a valid `id`).
    Request {
        /// The request id.
        id: RequestId,
        /// The method name.
        method: Cow<'a, str>,
        /// The raw `params`, if any.
        params: Option<&'a RawValue>,
    },
    /// A notification (has `method`, no `id`).
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// The raw `params`, if any.
        params: Option<&'a RawValue>,
    },
    /// A response (has `result` or `error`). Only legacy-era servers receive these.
    Response {
        /// The id it answers, if readable.
        id: Option<RequestId>,
        /// The raw `result`, when it is a result.
        result: Option<&'a RawValue>,
        /// The raw `error`, when it is an error.
        error: Option<&'a RawValue>,
    },
}

/// Why a message could not be classified, with the id when it was readable.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidMessage {
    /// The request id, if it could be read.
    pub id: Option<RequestId>,
    /// The error to answer with (`-32600`), boxed to keep the success path small.
    pub error: Box<ErrorObject>,
}

impl<'a> Envelope<'a> {
    /// Parses the envelope of one message. A syntax error, or a body that is not UTF-8
    /// (even in a member the envelope skips), is a `-32700` parse error.
    pub fn parse(bytes: &'a [u8]) -> Result<Envelope<'a>, ErrorObject> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            ErrorObject::new(
                ErrorCode::PARSE_ERROR,
                format!("Parse error: {}", not_utf8(e)),
            )
        })?;
        serde_json::from_str(text).map_err(|e| {
            if e.is_data() {
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Invalid request: a JSON-RPC message must be an object",
                )
            } else {
                ErrorObject::new(ErrorCode::PARSE_ERROR, format!("Parse error: {e}"))
            }
        })
    }

    /// Classifies the message, checking the rules of JSON-RPC 2.0 as MCP uses it.
    pub fn classify(self) -> Result<Incoming<'a>, InvalidMessage> {
        let id = match self.id {
            None => None,
            Some(raw) => {
                let parsed = serde_json::from_str::<RequestId>(raw.get()).ok();
                match parsed {
                    Some(id) => Some(id),
                    None => {
                        return Err(InvalidMessage {
                            id: None,
                            error: Box::new(ErrorObject::new(
                                ErrorCode::INVALID_REQUEST,
                                "Invalid request: id must be a string or an integer",
                            )),
                        });
                    }
                }
            }
        };
        if self.jsonrpc.as_deref() != Some(JSONRPC_VERSION) {
            return Err(InvalidMessage {
                id,
                error: Box::new(ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Invalid request: \"jsonrpc\" must be \"2.0\"",
                )),
            });
        }
        if let Some(method) = self.method {
            if let Some(p) = self.params
                && !p.get().trim_start().starts_with('{')
            {
                return Err(InvalidMessage {
                    id,
                    error: Box::new(ErrorObject::new(
                        ErrorCode::INVALID_REQUEST,
                        "Invalid request: params must be an object",
                    )),
                });
            }
            return Ok(match id {
                Some(id) => Incoming::Request {
                    id,
                    method,
                    params: self.params,
                },
                None => Incoming::Notification {
                    method,
                    params: self.params,
                },
            });
        }
        if self.result.is_some() || self.error.is_some() {
            return Ok(Incoming::Response {
                id,
                result: self.result,
                error: self.error,
            });
        }
        Err(InvalidMessage {
            id,
            error: Box::new(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Invalid request: no method, result or error",
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_strings_or_integers() {
        assert_eq!(
            serde_json::from_str::<RequestId>("7").unwrap(),
            RequestId::Number(7)
        );
        assert_eq!(
            serde_json::from_str::<RequestId>("\"a\"").unwrap(),
            RequestId::String("a".into())
        );
        assert!(serde_json::from_str::<RequestId>("null").is_err());
        assert!(serde_json::from_str::<RequestId>("1.5").is_err());
    }

    #[test]
    fn envelope_classifies() {
        let e = Envelope::parse(br#"{"jsonrpc":"2.0","id":"x","method":"m","params":{}}"#)
            .unwrap()
            .classify()
            .unwrap();
        assert!(matches!(e, Incoming::Request { ref method, .. } if method == "m"));
        let n = Envelope::parse(br#"{"jsonrpc":"2.0","method":"n"}"#)
            .unwrap()
            .classify()
            .unwrap();
        assert!(matches!(n, Incoming::Notification { .. }));
        let bad = Envelope::parse(br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#)
            .unwrap()
            .classify()
            .unwrap_err();
        assert_eq!(bad.error.code, ErrorCode::INVALID_REQUEST);
        let version = Envelope::parse(br#"{"jsonrpc":"1.0","id":3,"method":"m"}"#)
            .unwrap()
            .classify()
            .unwrap_err();
        assert_eq!(version.id, Some(RequestId::Number(3)));
        assert_eq!(
            Envelope::parse(b"{nope").unwrap_err().code,
            ErrorCode::PARSE_ERROR
        );
        assert_eq!(
            Envelope::parse(b"[1,2]").unwrap_err().code,
            ErrorCode::INVALID_REQUEST
        );
    }

    #[test]
    fn envelope_reads_only_its_members() {
        // Valid JSON a `Value` cannot hold, in a member the envelope skips: the envelope
        // reads the message; the strict reader, which reads every member, refuses it.
        let skipped = br#"{"jsonrpc":"2.0","other":900e0709551614,"method":"ping"}"#;
        let n = Envelope::parse(skipped).unwrap().classify().unwrap();
        assert!(matches!(n, Incoming::Notification { ref method, .. } if method == "ping"));
        assert!(serde_json::from_slice::<JsonRpcMessage>(skipped).is_err());
        // Inside params it stays raw until the method's typed params read it, and refuse it.
        let in_params = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"n":1e999}}"#;
        let Incoming::Request { params, .. } =
            Envelope::parse(in_params).unwrap().classify().unwrap()
        else {
            panic!("a request");
        };
        let raw = params.expect("raw params");
        assert!(serde_json::from_str::<serde_json::Value>(raw.get()).is_err());
    }

    #[test]
    fn message_round_trip() {
        let text = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}"#;
        let msg: JsonRpcMessage = serde_json::from_str(text).unwrap();
        assert!(matches!(msg, JsonRpcMessage::Result(_)));
        assert_eq!(serde_json::to_string(&msg).unwrap(), text);
    }
}
