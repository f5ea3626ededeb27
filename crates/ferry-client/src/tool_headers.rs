//! `x-mcp-header`: tool arguments the server wants mirrored into `Mcp-Param-*` headers
//! on Streamable HTTP (transports/streamable-http.mdx). Annotations are read from each `tools/list`
//! result; tools with invalid annotations are dropped from what the client exposes.

use std::collections::HashMap;

use ferry_protocol::headers::{self, ParamHeader};
use ferry_protocol::tools::Tool;
use parking_lot::RwLock;
use serde_json::Value;

/// What the last `tools/list` said about one tool's headers.
#[derive(Clone, Debug)]
pub(crate) enum ToolEntry {
    /// Valid; mirror these arguments.
    Valid(Vec<ParamHeader>),
    /// Invalid definition; the reason.
    Invalid(String),
}

/// The `x-mcp-header` annotations of the tools seen in `tools/list`.
#[derive(Debug, Default)]
pub(crate) struct ToolHeaders {
    tools: RwLock<HashMap<String, ToolEntry>>,
}

impl ToolHeaders {
    /// Records a page of tools and removes those whose annotations are invalid, with a
    /// warning naming the tool and the reason.
    pub(crate) fn record(&self, tools: &mut Vec<Tool>) {
        let mut map = self.tools.write();
        tools.retain(|tool| match headers::param_headers(&tool.input_schema) {
            Ok(found) => {
                map.insert(tool.name.clone(), ToolEntry::Valid(found));
                true
            }
            Err(why) => {
                tracing::warn!(
                    tool = %tool.name,
                    reason = %why,
                    "dropping tool with an invalid x-mcp-header annotation"
                );
                map.insert(tool.name.clone(), ToolEntry::Invalid(why.to_string()));
                false
            }
        });
    }

    /// What is known about `tool`.
    pub(crate) fn get(&self, tool: &str) -> Option<ToolEntry> {
        self.tools.read().get(tool).cloned()
    }
}

/// The `Mcp-Param-*` headers for a call with `arguments`: each annotated argument that is
/// present and not null, as a string (integers in decimal, booleans lowercase), with the
/// Base64 sentinel encoding when it is not plain ASCII.
pub(crate) fn param_values(
    annotations: &[ParamHeader],
    arguments: &Value,
) -> Vec<(String, String)> {
    annotations
        .iter()
        .filter_map(|h| {
            let value = h.extract(arguments)?;
            let text = headers::primitive_to_header_string(value)?;
            Some((h.header.clone(), headers::encode_value(&text).into_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_like_the_spec_table() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "priority":{"type":"integer","x-mcp-header":"Priority"},
            "verbose":{"type":"boolean","x-mcp-header":"Verbose"},
            "greeting":{"type":"string","x-mcp-header":"Greeting"},
            "empty":{"type":"string","x-mcp-header":"Empty"},
            "text":{"type":"string","x-mcp-header":"Text"},
            "float_val":{"type":"number"},
            "query":{"type":"string"}
        }});
        let found = headers::param_headers(&schema).unwrap();
        let args = json!({"region":"us-west1","priority":42,"verbose":null,"greeting":"Hello, 世界",
            "empty":"","text":"line1\r\nline2","float_val":3.5,"query":"SELECT 1"});
        let mut got = param_values(&found, &args);
        got.sort();
        assert_eq!(
            got,
            vec![
                ("mcp-param-empty".to_owned(), String::new()),
                (
                    "mcp-param-greeting".to_owned(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()
                ),
                ("mcp-param-priority".to_owned(), "42".to_owned()),
                ("mcp-param-region".to_owned(), "us-west1".to_owned()),
                (
                    "mcp-param-text".to_owned(),
                    "=?base64?bGluZTENCmxpbmUy?=".to_owned()
                ),
            ]
        );
        let got = param_values(&found, &json!({"verbose": false, "priority": 7.0}));
        assert!(got.contains(&("mcp-param-verbose".to_owned(), "false".to_owned())));
        assert!(got.contains(&("mcp-param-priority".to_owned(), "7".to_owned())));
    }

    #[test]
    fn drops_invalid_tools() {
        let reg = ToolHeaders::default();
        let mut tools = vec![
            Tool::new(
                "ok",
                json!({"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}),
            ),
            Tool::new(
                "bad",
                json!({"type":"object","properties":{"r":{"type":"number","x-mcp-header":"R"}}}),
            ),
        ];
        reg.record(&mut tools);
        assert_eq!(tools.len(), 1);
        assert!(matches!(reg.get("ok"), Some(ToolEntry::Valid(v)) if v.len() == 1));
        assert!(matches!(reg.get("bad"), Some(ToolEntry::Invalid(_))));
        assert!(reg.get("unknown").is_none());
    }
}
