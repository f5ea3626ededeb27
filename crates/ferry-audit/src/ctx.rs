//! What every check shares: the configuration, the prober, the tools as listed, and the
//! running counts.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use ferry_protocol::headers::{
    ParamHeader, encode_value, param_headers, primitive_to_header_string,
};
use serde_json::{Map, Value};

use crate::answers::AnswerBook;
use crate::config::AuditConfig;
use crate::http::Prober;
use crate::rpc::{Answer, Reply, Request};

/// A tool as `tools/list` describes it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolInfo {
    pub(crate) name: String,
    /// Whether `tools/list` listed it.
    pub(crate) listed: bool,
    pub(crate) schema: Option<Value>,
    pub(crate) annotations: Option<Value>,
    /// Its `x-mcp-header` parameters.
    pub(crate) params: Vec<ParamHeader>,
}

impl ToolInfo {
    pub(crate) fn unlisted(name: &str) -> Self {
        ToolInfo {
            name: name.to_owned(),
            ..ToolInfo::default()
        }
    }

    pub(crate) fn from_listing(name: &str, tool: &Value) -> Self {
        let schema = tool.get("inputSchema").cloned();
        let params = schema
            .as_ref()
            .and_then(|s| param_headers(s).ok())
            .unwrap_or_default();
        ToolInfo {
            name: name.to_owned(),
            listed: true,
            schema,
            annotations: tool.get("annotations").cloned(),
            params,
        }
    }

    /// Whether the tool says a second run changes nothing (read-only or idempotent).
    pub(crate) fn declared_repeatable(&self) -> Option<&'static str> {
        let a = self.annotations.as_ref()?;
        if a.get("readOnlyHint").and_then(Value::as_bool) == Some(true) {
            return Some("readOnlyHint");
        }
        if a.get("idempotentHint").and_then(Value::as_bool) == Some(true) {
            return Some("idempotentHint");
        }
        None
    }

    /// The `Mcp-Param-*` headers for `args`.
    pub(crate) fn param_headers(&self, args: &Map<String, Value>) -> Vec<(String, String)> {
        let args = Value::Object(args.clone());
        self.params
            .iter()
            .filter_map(|p| {
                let v = p.extract(&args)?;
                let s = primitive_to_header_string(v)?;
                Some((p.header.clone(), encode_value(&s).into_owned()))
            })
            .collect()
    }
}

/// The shared state of one audit.
pub(crate) struct Ctx {
    pub(crate) config: AuditConfig,
    pub(crate) prober: Prober,
    pub(crate) book: AnswerBook,
    pub(crate) tool: ToolInfo,
    pub(crate) other: Option<ToolInfo>,
    next_id: AtomicU64,
    completions: AtomicU32,
}

impl Ctx {
    pub(crate) fn new(config: AuditConfig, prober: Prober) -> Self {
        let tool = ToolInfo::unlisted(&config.tool);
        let other = config.other_tool.as_deref().map(ToolInfo::unlisted);
        Ctx {
            book: AnswerBook::new(config.answers.clone()),
            config,
            prober,
            tool,
            other,
            next_id: AtomicU64::new(1),
            completions: AtomicU32::new(0),
        }
    }

    /// How many tool calls ran to completion.
    pub(crate) fn completions(&self) -> u32 {
        self.completions.load(Ordering::Relaxed)
    }

    /// Sends a request with a fresh JSON-RPC id.
    pub(crate) async fn send(&self, req: &Request) -> Reply {
        let id = format!(
            "ferry-audit-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let reply = Reply::new(self.prober.send(req.to_outgoing(&id)).await);
        if req.method == "tools/call" && matches!(reply.answer, Answer::Complete { .. }) {
            self.completions.fetch_add(1, Ordering::Relaxed);
        }
        tracing::debug!(method = %req.method, %id, reply = %reply.describe(), "exchange");
        reply
    }

    /// A `tools/call` of `tool`, with the standard and `Mcp-Param-*` headers right.
    pub(crate) fn tool_call(
        &self,
        tool: &ToolInfo,
        args: &Map<String, Value>,
        state: Option<Value>,
        responses: Option<&Map<String, Value>>,
    ) -> Request {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(tool.name.clone()));
        params.insert("arguments".into(), Value::Object(args.clone()));
        if let Some(s) = state {
            params.insert("requestState".into(), s);
        }
        if let Some(r) = responses {
            params.insert("inputResponses".into(), Value::Object(r.clone()));
        }
        let mut req = Request::modern("tools/call", params);
        req.param_headers = tool.param_headers(args);
        req
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn param_headers_follow_the_schema() {
        let tool = ToolInfo::from_listing(
            "q",
            &json!({"name": "q", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "text": {"type": "string"}
            }}, "annotations": {"idempotentHint": true}}),
        );
        let args = json!({"region": "Zürich", "n": 3, "text": "x"});
        let h = tool.param_headers(args.as_object().unwrap());
        assert!(h.contains(&("mcp-param-region".into(), "=?base64?WsO8cmljaA==?=".into())));
        assert!(h.contains(&("mcp-param-n".into(), "3".into())));
        assert_eq!(h.len(), 2);
        assert_eq!(tool.declared_repeatable(), Some("idempotentHint"));
        assert_eq!(ToolInfo::unlisted("x").declared_repeatable(), None);
    }
}
