//! Streamable HTTP request metadata headers (transports/streamable-http.mdx): names, the
//! `=?base64?…?=` value encoding, and `x-mcp-header` annotations on tool input schemas.

use std::borrow::Cow;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// `MCP-Protocol-Version`: must equal the body's `_meta` protocol version.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`: must equal the JSON-RPC `method`.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name`: `params.name` or `params.uri` (or `params.taskId` for tasks).
pub const NAME: &str = "mcp-name";
/// Prefix of the headers mirrored from `x-mcp-header` tool arguments.
pub const PARAM_PREFIX: &str = "mcp-param-";
/// `Mcp-Session-Id` (2025-11-25 sessions only).
pub const SESSION_ID: &str = "mcp-session-id";
/// `Last-Event-ID` (2025-11-25 SSE resumption only).
pub const LAST_EVENT_ID: &str = "last-event-id";
/// The schema keyword that marks a tool argument to mirror into a header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Whether `value` may travel as-is: visible ASCII, space and tab only, no leading or
/// trailing whitespace, and not itself looking like a sentinel.
pub fn is_plain_safe(value: &str) -> bool {
    let b = value.as_bytes();
    if let (Some(f), Some(l)) = (b.first(), b.last())
        && (matches!(f, b' ' | b'\t') || matches!(l, b' ' | b'\t'))
    {
        return false;
    }
    b.iter()
        .all(|c| (0x21..=0x7e).contains(c) || matches!(c, b' ' | b'\t'))
        && !looks_like_sentinel(value)
}

fn looks_like_sentinel(value: &str) -> bool {
    value.starts_with(SENTINEL_START)
        && value.ends_with(SENTINEL_END)
        && value.len() >= SENTINEL_START.len() + SENTINEL_END.len()
}

/// Encodes a header value, using the Base64 sentinel when it is not plain-safe (§3.3.7).
pub fn encode_value(value: &str) -> Cow<'_, str> {
    if is_plain_safe(value) {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(format!(
            "{SENTINEL_START}{}{SENTINEL_END}",
            STANDARD.encode(value.as_bytes())
        ))
    }
}

/// Why a header value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderValueError {
    /// Bytes outside visible ASCII, space and tab.
    #[error("header value has invalid characters")]
    InvalidCharacters,
    /// The Base64 inside a sentinel did not decode to UTF-8.
    #[error("header value has invalid Base64 encoding")]
    InvalidBase64,
}

/// Decodes a header value: sentinel values are Base64-decoded, plain ones checked.
pub fn decode_value(raw: &[u8]) -> Result<Cow<'_, str>, HeaderValueError> {
    if !raw
        .iter()
        .all(|c| (0x21..=0x7e).contains(c) || matches!(c, b' ' | b'\t'))
    {
        return Err(HeaderValueError::InvalidCharacters);
    }
    // Only ASCII remains, so this cannot fail.
    let text = std::str::from_utf8(raw).map_err(|_| HeaderValueError::InvalidCharacters)?;
    if looks_like_sentinel(text) {
        let inner = &text[SENTINEL_START.len()..text.len() - SENTINEL_END.len()];
        let bytes = STANDARD
            .decode(inner)
            .map_err(|_| HeaderValueError::InvalidBase64)?;
        let s = String::from_utf8(bytes).map_err(|_| HeaderValueError::InvalidBase64)?;
        Ok(Cow::Owned(s))
    } else {
        Ok(Cow::Borrowed(text))
    }
}

/// The string form of a primitive argument for a header: strings as-is, integers in
/// decimal, booleans as `true`/`false`. `None` for `null` and anything else.
pub fn primitive_to_header_string(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(s) => Some(Cow::Borrowed(s.as_str())),
        Value::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(Cow::Owned(i.to_string()))
            } else if let Some(u) = n.as_u64() {
                Some(Cow::Owned(u.to_string()))
            } else {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0)
                    .map(|f| Cow::Owned(format!("{}", f as i64)))
            }
        }
        _ => None,
    }
}

/// The JSON type an `x-mcp-header` property declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"`.
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

/// One `x-mcp-header` annotation found in a tool's input schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    /// The header name suffix: the header is `Mcp-Param-{name}`.
    pub name: String,
    /// The lower-cased full header name, `mcp-param-{name}`.
    pub header: String,
    /// Property names from the schema root to the annotated property.
    pub path: Vec<String>,
    /// The property's declared type.
    pub kind: ParamKind,
}

impl ParamHeader {
    /// Reads this parameter's value from tool arguments. `None` when absent or `null`.
    pub fn extract<'v>(&self, arguments: &'v Value) -> Option<&'v Value> {
        let mut v = arguments;
        for key in &self.path {
            v = v.get(key)?;
        }
        (!v.is_null()).then_some(v)
    }

    /// Compares a decoded header value with the body's value (integers numerically).
    pub fn matches(&self, header: &str, body: &Value) -> bool {
        match (self.kind, body) {
            (ParamKind::Integer, Value::Number(n)) => {
                let parsed: Option<f64> = header.trim().parse().ok();
                match (parsed, n.as_f64()) {
                    (Some(h), Some(b)) => h == b,
                    _ => false,
                }
            }
            _ => primitive_to_header_string(body).is_some_and(|s| s == header),
        }
    }
}

/// Why a tool's `x-mcp-header` annotations make its definition invalid (§3.3.6).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidParamHeader {
    /// The annotation is not a non-empty string.
    #[error("x-mcp-header at {path} must be a non-empty string")]
    Empty {
        /// Where it was found.
        path: String,
    },
    /// The name is not an HTTP token.
    #[error("x-mcp-header {name:?} at {path} is not an HTTP token")]
    NotToken {
        /// The bad name.
        name: String,
        /// Where it was found.
        path: String,
    },
    /// Two annotations share a name, ignoring case.
    #[error("x-mcp-header {name:?} is used more than once (case-insensitively)")]
    Duplicate {
        /// The repeated name.
        name: String,
    },
    /// The annotated property is not a string, integer or boolean.
    #[error(
        "x-mcp-header {name:?} at {path} is on a property that is not string, integer or boolean"
    )]
    NotPrimitive {
        /// The name.
        name: String,
        /// Where it was found.
        path: String,
    },
    /// The annotation is reachable only through something other than `properties`.
    #[error("x-mcp-header at {path} is not reachable through `properties` alone")]
    Unreachable {
        /// Where it was found.
        path: String,
    },
}

/// Finds and checks every `x-mcp-header` annotation in a tool input schema.
///
/// Annotations must sit on `string`, `integer` or `boolean` properties reached from the
/// root through `properties` only; anything else makes the tool definition invalid.
pub fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, InvalidParamHeader> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, "#", &mut found)?;
    let mut seen = std::collections::HashSet::new();
    for h in &found {
        if !seen.insert(h.header.clone()) {
            return Err(InvalidParamHeader::Duplicate {
                name: h.name.clone(),
            });
        }
    }
    Ok(found)
}

fn walk(
    node: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    pointer: &str,
    out: &mut Vec<ParamHeader>,
) -> Result<(), InvalidParamHeader> {
    let Value::Object(map) = node else {
        if let Value::Array(items) = node {
            for (i, item) in items.iter().enumerate() {
                walk(item, path, false, &format!("{pointer}/{i}"), out)?;
            }
        }
        return Ok(());
    };
    if let Some(annotation) = map.get(X_MCP_HEADER) {
        let name = match annotation {
            Value::String(s) if !s.is_empty() => s.clone(),
            _ => {
                return Err(InvalidParamHeader::Empty {
                    path: pointer.to_owned(),
                });
            }
        };
        if !name.bytes().all(is_tchar) {
            return Err(InvalidParamHeader::NotToken {
                name,
                path: pointer.to_owned(),
            });
        }
        if !reachable || path.is_empty() {
            return Err(InvalidParamHeader::Unreachable {
                path: pointer.to_owned(),
            });
        }
        let kind = match map.get("type").and_then(Value::as_str) {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("boolean") => ParamKind::Boolean,
            _ => {
                return Err(InvalidParamHeader::NotPrimitive {
                    name,
                    path: pointer.to_owned(),
                });
            }
        };
        out.push(ParamHeader {
            header: format!("{PARAM_PREFIX}{}", name.to_ascii_lowercase()),
            name,
            path: path.clone(),
            kind,
        });
    }
    for (key, child) in map {
        if key == "properties" {
            if let Value::Object(props) = child {
                for (prop, schema) in props {
                    path.push(prop.clone());
                    let r = walk(
                        schema,
                        path,
                        reachable,
                        &format!("{pointer}/properties/{prop}"),
                        out,
                    );
                    path.pop();
                    r?;
                }
            }
        } else if key != "enum" && key != "const" && key != "default" && key != "examples" {
            walk(child, path, false, &format!("{pointer}/{key}"), out)?;
        }
    }
    Ok(())
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_encoding_table() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(
            encode_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        for v in [
            "Hello, 世界",
            " padded ",
            "line1\nline2",
            "=?base64?literal?=",
            "plain",
        ] {
            assert_eq!(decode_value(encode_value(v).as_bytes()).unwrap(), v);
        }
        assert_eq!(
            decode_value(b"=?base64?!!!?=").unwrap_err(),
            HeaderValueError::InvalidBase64
        );
        assert_eq!(
            decode_value(b"a\x01b").unwrap_err(),
            HeaderValueError::InvalidCharacters
        );
    }

    #[test]
    fn finds_valid_annotations() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}
        }});
        let found = param_headers(&schema).unwrap();
        assert_eq!(found.len(), 2);
        let n = found.iter().find(|h| h.name == "N").unwrap();
        assert_eq!(n.path, vec!["opts", "n"]);
        assert_eq!(n.extract(&json!({"opts":{"n":42}})), Some(&json!(42)));
        assert!(n.matches("42", &json!(42.0)));
        assert_eq!(n.extract(&json!({"opts":{"n":null}})), None);
    }

    #[test]
    fn refuses_invalid_annotations() {
        let cases = [
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a b"}}}),
            json!({"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
            json!({"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}),
            json!({"type":"object","properties":{
                "a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}),
            json!({"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
            json!({"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}),
        ];
        for c in cases {
            assert!(param_headers(&c).is_err(), "{c}");
        }
    }
}
