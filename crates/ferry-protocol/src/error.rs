//! JSON-RPC error objects and the codes MCP assigns (basic/index.mdx).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// An error code. Plain `i64` newtype so unknown codes from peers survive a round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// Not a valid JSON-RPC request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// Unknown method, or one gated by a capability the server did not advertise.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Bad params: also missing `_meta` fields, unknown tool or prompt, missing resource.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// HTTP headers missing, malformed, or not matching the body (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// The request needs a client capability it did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The requested protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// Resource not found, 2025-11-25 and earlier only. Clients still accept it.
    pub const LEGACY_RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// URL elicitation required, 2025-11-25 only.
    pub const LEGACY_URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

    /// The code as an integer.
    pub fn get(self) -> i64 {
        self.0
    }

    /// Whether this code marks a modern (2026-07-28) server when a client probes (§2.7).
    pub fn is_modern_signal(self) -> bool {
        matches!(self.0, -32022..=-32020)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// One concise sentence.
    pub message: String,
    /// Extra machine-readable detail. An explicit `"data": null` is kept as
    /// `Some(Value::Null)`, so an error reads back as it was sent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub data: Option<Value>,
}

/// A member that is present, whatever its value (`null` included); `default` covers the
/// absent one.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl ErrorObject {
    /// Builds an error with no `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32601` for a method this server does not serve.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", crate::quote::quote(method)),
        )
    }

    /// `-32602` with a message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603` with a message.
    pub fn internal(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// `-32022`: `data` lists the versions supported and echoes the one requested.
    pub fn unsupported_version(supported: &[&str], requested: &str) -> Self {
        ErrorObject::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({ "supported": supported, "requested": crate::quote::quote(requested).to_string() }))
    }

    /// `-32021`: `data.requiredCapabilities` lists what the request left out.
    pub fn missing_capability(message: impl Into<String>, required: Value) -> Self {
        ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(json!({ "requiredCapabilities": required }))
    }

    /// `-32020`: a header is missing, malformed or does not match the body.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::HEADER_MISMATCH, message)
    }

    /// `-32602` "Resource not found" with the uri in `data` (2026-07-28 §resources).
    pub fn resource_not_found(uri: &str) -> Self {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, "Resource not found")
            .with_data(json!({ "uri": crate::quote::quote(uri).to_string() }))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the round-trip property test: `"data": null` used to read back as no data.
    #[test]
    fn an_explicit_null_data_reads_back_as_sent() {
        let e: ErrorObject =
            serde_json::from_str(r#"{"code":1,"message":"m","data":null}"#).unwrap();
        assert_eq!(e.data, Some(Value::Null));
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"code":1,"message":"m","data":null}"#
        );
        let e: ErrorObject = serde_json::from_str(r#"{"code":1,"message":"m"}"#).unwrap();
        assert_eq!(e.data, None);
    }
}
