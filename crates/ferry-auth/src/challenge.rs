//! Refusals as HTTP responses: status, `WWW-Authenticate` challenges (RFC 6750 §3,
//! RFC 9449 §7.1, RFC 9728 §5.1) and a JSON-RPC error body.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, Response, StatusCode};

use crate::error::InvalidToken;

/// JSON-RPC error codes of the bodies the layer sends. They sit in the range JSON-RPC
/// leaves to implementations (`-32000` to `-32019` in MCP's partition), except the
/// standard `-32600` for a malformed request and `-32603` for an internal error.
pub mod codes {
    /// `400`: the request's credentials are malformed (JSON-RPC "Invalid Request").
    pub const MALFORMED: i64 = -32600;
    /// `401`: no valid access token.
    pub const UNAUTHORIZED: i64 = -32001;
    /// `403`: the token lacks a scope the operation needs.
    pub const FORBIDDEN: i64 = -32003;
    /// `503`: the token could not be validated now (JSON-RPC "Internal error").
    pub const UNAVAILABLE: i64 = -32603;
}

/// Why the layer refuses a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `400 invalid_request`.
    Malformed(&'static str),
    /// `401` without an error code: no token was presented.
    NoToken,
    /// `401 invalid_token`.
    Invalid(InvalidToken),
    /// `401 invalid_dpop_proof` (RFC 9449 §7.1).
    InvalidProof(String),
    /// `401 use_dpop_nonce`, with a fresh nonce (RFC 9449 §9).
    UseNonce(HeaderValue),
    /// `403 insufficient_scope`, naming every scope the operation needs.
    InsufficientScope(Vec<String>),
    /// `503`: validation is unavailable (fail closed).
    Unavailable(String),
}

/// One `WWW-Authenticate` challenge.
pub(crate) struct Challenge {
    scheme: &'static str,
    params: Vec<(&'static str, String)>,
}

impl Challenge {
    pub(crate) fn new(scheme: &'static str) -> Self {
        Challenge {
            scheme,
            params: Vec::new(),
        }
    }

    pub(crate) fn param(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.params.push((name, value.into()));
        self
    }

    pub(crate) fn param_if(self, name: &'static str, value: Option<String>) -> Self {
        match value {
            Some(v) => self.param(name, v),
            None => self,
        }
    }

    /// The header value; parameters are quoted strings with `"` and `\` escaped, and
    /// characters a header cannot carry replaced.
    pub(crate) fn to_header(&self) -> HeaderValue {
        let mut s = String::from(self.scheme);
        for (i, (name, value)) in self.params.iter().enumerate() {
            s.push_str(if i == 0 { " " } else { ", " });
            s.push_str(name);
            s.push_str("=\"");
            for c in value.chars() {
                match c {
                    '"' | '\\' => {
                        s.push('\\');
                        s.push(c);
                    }
                    ' '..='~' => s.push(c),
                    _ => s.push('?'),
                }
            }
            s.push('"');
        }
        HeaderValue::from_str(&s).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }
}

/// A JSON-RPC error body (no `id`: the request body was not read).
pub(crate) fn error_body(code: i64, message: &str) -> Bytes {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "error": {"code": code, "message": message},
    });
    Bytes::from(serde_json::to_vec(&body).unwrap_or_default())
}

/// A response with `status`, a JSON-RPC error body and these challenges.
pub(crate) fn response<B: From<Bytes>>(
    status: StatusCode,
    code: i64,
    message: &str,
    challenges: impl IntoIterator<Item = HeaderValue>,
) -> Response<B> {
    let mut res = Response::new(B::from(error_body(code, message)));
    *res.status_mut() = status;
    let h = res.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for c in challenges {
        h.append(WWW_AUTHENTICATE, c);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let c = Challenge::new("Bearer")
            .param(
                "resource_metadata",
                "https://x/.well-known/oauth-protected-resource",
            )
            .param("scope", "a b")
            .param("error_description", "say \"hi\" \\ é");
        assert_eq!(
            c.to_header(),
            r#"Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b", error_description="say \"hi\" \\ ?""#
        );
        assert_eq!(Challenge::new("DPoP").to_header(), "DPoP");
    }

    #[test]
    fn bodies() {
        let b = error_body(codes::UNAUTHORIZED, "Unauthorized");
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["error"]["code"], -32001);
        assert!(v.get("id").is_none());
    }
}
