//! JSON-RPC requests as the audit builds them (per-request `_meta`, the standard headers,
//! each of which a check can leave out or change) and answers sorted by what they mean.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::http::{Exchange, Outgoing, SendError, Who};

/// The modern revision the audit speaks.
pub(crate) const MODERN: &str = "2026-07-28";
/// The legacy revision it probes with `initialize`.
pub(crate) const LEGACY: &str = "2025-11-25";

/// Every client capability under which a server may ask for input.
pub(crate) fn all_capabilities() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

/// The per-request `_meta` (basic/index.mdx, `_meta`).
pub(crate) fn meta(version: &str, capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "ferry-audit", "version": env!("CARGO_PKG_VERSION")},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// How one standard header is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Header {
    /// The value the body calls for.
    Auto,
    /// Left out.
    Omit,
    /// This value.
    Set(String),
}

/// One request, with everything a check may change about it.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: String,
    /// The params, without `_meta`.
    pub(crate) params: Map<String, Value>,
    /// The `_meta` to add (`None`: no `_meta` at all).
    pub(crate) meta: Option<Value>,
    pub(crate) version_header: Header,
    pub(crate) method_header: Header,
    pub(crate) name_header: Header,
    /// `Mcp-Param-*` headers, already encoded.
    pub(crate) param_headers: Vec<(String, String)>,
    /// Anything else (e.g. `Origin`).
    pub(crate) extra_headers: Vec<(String, String)>,
    pub(crate) who: Who,
    pub(crate) timeout: Option<Duration>,
}

impl Request {
    /// A 2026-07-28 request declaring every capability, with every header right.
    pub(crate) fn modern(method: &str, params: Map<String, Value>) -> Self {
        Request {
            method: method.to_owned(),
            params,
            meta: Some(meta(MODERN, all_capabilities())),
            version_header: Header::Auto,
            method_header: Header::Auto,
            name_header: Header::Auto,
            param_headers: Vec::new(),
            extra_headers: Vec::new(),
            who: Who::A,
            timeout: None,
        }
    }

    /// The `initialize` of a 2025-11-25 client (no per-request headers).
    pub(crate) fn initialize() -> Self {
        let mut params = Map::new();
        params.insert("protocolVersion".into(), json!(LEGACY));
        params.insert("capabilities".into(), json!({}));
        params.insert(
            "clientInfo".into(),
            json!({"name": "ferry-audit", "version": env!("CARGO_PKG_VERSION")}),
        );
        Request {
            meta: None,
            version_header: Header::Omit,
            method_header: Header::Omit,
            name_header: Header::Omit,
            ..Request::modern("initialize", params)
        }
    }

    /// The HTTP request, with JSON-RPC id `id`.
    pub(crate) fn to_outgoing(&self, id: &str) -> Outgoing {
        let mut params = self.params.clone();
        if let Some(meta) = &self.meta {
            params.insert("_meta".into(), meta.clone());
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": self.method, "params": params});
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        let version = self
            .meta
            .as_ref()
            .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
            .and_then(Value::as_str)
            .unwrap_or(MODERN)
            .to_owned();
        let name = self
            .params
            .get("name")
            .or_else(|| self.params.get("uri"))
            .and_then(Value::as_str)
            .map(|n| ferry_protocol::headers::encode_value(n).into_owned());
        let standard = [
            ("mcp-protocol-version", &self.version_header, Some(version)),
            ("mcp-method", &self.method_header, Some(self.method.clone())),
            ("mcp-name", &self.name_header, name),
        ];
        for (header, how, auto) in standard {
            match how {
                Header::Auto => {
                    if let Some(v) = auto {
                        headers.push((header.to_owned(), v));
                    }
                }
                Header::Omit => {}
                Header::Set(v) => headers.push((header.to_owned(), v.clone())),
            }
        }
        headers.extend(self.param_headers.iter().cloned());
        headers.extend(self.extra_headers.iter().cloned());
        let mut out = Outgoing::post(
            serde_json::to_vec(&body).unwrap_or_default(),
            Some(json!(id)),
            headers,
        );
        out.who = self.who;
        out.timeout = self.timeout;
        out
    }
}

/// What an answer means.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// A final result.
    Complete { result: Value, is_error: bool },
    /// An `InputRequiredResult`.
    InputRequired { result: Value },
    /// A JSON-RPC error.
    Error {
        code: i64,
        message: String,
        data: Option<Value>,
    },
    /// An HTTP answer without a JSON-RPC message.
    NoMessage { problem: String },
    /// No answer.
    Failed(SendError),
}

/// An answer with its HTTP status and timing.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) answer: Answer,
    pub(crate) status: Option<u16>,
    pub(crate) elapsed: Option<Duration>,
    pub(crate) session_id: Option<String>,
}

impl Reply {
    pub(crate) fn new(sent: Result<Exchange, SendError>) -> Self {
        let ex = match sent {
            Ok(ex) => ex,
            Err(e) => {
                return Reply {
                    answer: Answer::Failed(e),
                    status: None,
                    elapsed: None,
                    session_id: None,
                };
            }
        };
        let answer = match &ex.message {
            Some(m) => classify(m),
            None => Answer::NoMessage {
                problem: ex.problem.clone().unwrap_or_else(|| "no body".into()),
            },
        };
        Reply {
            answer,
            status: Some(ex.status),
            elapsed: Some(ex.elapsed),
            session_id: ex.session_id,
        }
    }

    /// A successful final result: the request was honoured.
    pub(crate) fn succeeded(&self) -> bool {
        matches!(
            self.answer,
            Answer::Complete {
                is_error: false,
                ..
            }
        )
    }

    /// The JSON-RPC error code, if it is an error.
    pub(crate) fn error_code(&self) -> Option<i64> {
        match &self.answer {
            Answer::Error { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether nothing came back in time.
    pub(crate) fn timed_out(&self) -> bool {
        matches!(self.answer, Answer::Failed(SendError::Timeout(_)))
    }

    /// Whether this is an HTTP 400 carrying JSON-RPC error `code`.
    pub(crate) fn is_400_with(&self, code: i64) -> bool {
        self.status == Some(400) && self.error_code() == Some(code)
    }

    /// Whether the request was turned away (an HTTP error status, or a JSON-RPC error).
    pub(crate) fn refused(&self) -> bool {
        match &self.answer {
            Answer::Error { .. } => true,
            Answer::NoMessage { .. } => self.status.is_some_and(|s| s >= 400),
            _ => false,
        }
    }

    /// One line saying what came back.
    pub(crate) fn describe(&self) -> String {
        let status = self
            .status
            .map(|s| format!("HTTP {s}, "))
            .unwrap_or_default();
        let what = match &self.answer {
            Answer::Complete { is_error, .. } => {
                if *is_error {
                    "a result with isError: true".to_owned()
                } else {
                    "a successful result".to_owned()
                }
            }
            Answer::InputRequired { result } => {
                let keys: Vec<&str> = result
                    .get("inputRequests")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                if keys.is_empty() {
                    "an InputRequiredResult".to_owned()
                } else {
                    format!("an InputRequiredResult asking for {}", keys.join(", "))
                }
            }
            Answer::Error { code, message, .. } => {
                format!("JSON-RPC error {code} ({})", short(message))
            }
            Answer::NoMessage { problem } => problem.clone(),
            Answer::Failed(e) => return e.to_string(),
        };
        format!("{status}{what}")
    }
}

/// At most 160 characters of server text, safe to print.
pub(crate) fn short(text: &str) -> String {
    let mut s: String = text.chars().take(160).collect();
    if text.chars().count() > 160 {
        s.push('…');
    }
    crate::report::clean(&s)
}

fn classify(message: &Value) -> Answer {
    if let Some(err) = message.get("error") {
        return Answer::Error {
            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            data: err.get("data").cloned(),
        };
    }
    let Some(result) = message.get("result") else {
        return Answer::NoMessage {
            problem: "a JSON-RPC message with neither result nor error".into(),
        };
    };
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        return Answer::InputRequired {
            result: result.clone(),
        };
    }
    Answer::Complete {
        is_error: result.get("isError").and_then(Value::as_bool) == Some(true),
        result: result.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header<'a>(out: &'a Outgoing, name: &str) -> Option<&'a str> {
        out.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_modern_call_carries_meta_and_headers() {
        let mut params = Map::new();
        params.insert("name".into(), json!("héllo"));
        let out = Request::modern("tools/call", params).to_outgoing("a-1");
        let body: Value = serde_json::from_slice(&out.body).unwrap();
        assert_eq!(
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
        assert_eq!(header(&out, "mcp-protocol-version"), Some(MODERN));
        assert_eq!(header(&out, "mcp-method"), Some("tools/call"));
        assert_eq!(header(&out, "mcp-name"), Some("=?base64?aMOpbGxv?="));
        let mut r = Request::modern("server/discover", Map::new());
        r.method_header = Header::Set("tools/list".into());
        r.version_header = Header::Omit;
        let out = r.to_outgoing("a-2");
        assert_eq!(header(&out, "mcp-method"), Some("tools/list"));
        assert_eq!(header(&out, "mcp-protocol-version"), None);
        assert_eq!(header(&out, "mcp-name"), None);
    }

    #[test]
    fn answers_are_sorted() {
        let ir =
            classify(&json!({"result": {"resultType": "input_required", "requestState": "x"}}));
        assert!(matches!(ir, Answer::InputRequired { .. }));
        let done = classify(&json!({"result": {"content": [], "isError": true}}));
        assert!(matches!(done, Answer::Complete { is_error: true, .. }));
        let err = classify(&json!({"error": {"code": -32602, "message": "no"}}));
        assert!(matches!(err, Answer::Error { code: -32602, .. }));
    }
}
