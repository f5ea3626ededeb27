//! `_meta`: reserved keys, the key naming rules, and the per-request metadata every
//! 2026-07-28 request carries (basic/index.mdx).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::capabilities::ClientCapabilities;
use crate::common::{Implementation, ProgressToken};
use crate::serde_util::open_struct_deserialize;

open_struct_deserialize!(RequestMeta {
    "io.modelcontextprotocol/protocolVersion" => protocol_version,
    "io.modelcontextprotocol/clientCapabilities" => client_capabilities,
    "io.modelcontextprotocol/clientInfo" => client_info,
    "io.modelcontextprotocol/logLevel" => log_level,
    "progressToken" => progress_token,
});

/// Reads an optional request `_meta` straight into its box: [`RequestMeta`] is large, and
/// reading it on the stack and then boxing it copies it on every request. Use with
/// `#[serde(default)]`.
pub(crate) fn deserialize_boxed<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Box<RequestMeta>>, D::Error> {
    struct Optional;
    impl<'de> serde::de::Visitor<'de> for Optional {
        type Value = Option<Box<RequestMeta>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a RequestMeta object or null")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            let mut meta = Box::<RequestMeta>::default();
            RequestMeta::deserialize_into(d, &mut meta)?;
            Ok(Some(meta))
        }
    }
    d.deserialize_option(Optional)
}

/// A `_meta` object.
pub type Meta = Map<String, Value>;

/// `_meta` key: the protocol version of this request. Required on every request.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request. Required on every request.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's self-description.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the lowest log level the client wants for this request (deprecated).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key: the server's self-description.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Notification `_meta` key: the `subscriptions/listen` request a notification belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key: opts a request in to progress notifications.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// Result `_meta` key a task-augmented result may carry (Tasks extension).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The metadata of one request, read from `params._meta`.
///
/// `protocol_version` and `client_capabilities` are required in 2026-07-28; they are
/// `Option` here so a server can answer their absence with the spec's error (-32602, HTTP
/// 400) rather than a generic parse failure.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// `io.modelcontextprotocol/clientInfo`.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel` (deprecated), kept raw so an unknown level can be
    /// refused with -32602.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<String>,
    /// `progressToken`.
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// Every other key, kept as sent.
    #[serde(flatten)]
    pub other: Meta,
}

impl RequestMeta {
    /// Metadata for a modern request: a version and capabilities.
    pub fn modern(version: impl Into<String>, capabilities: ClientCapabilities) -> Self {
        RequestMeta {
            protocol_version: Some(version.into()),
            client_capabilities: Some(capabilities),
            ..Default::default()
        }
    }
}

/// Whether `key` follows the `_meta` key rules: an optional prefix of dot-separated labels
/// ending in `/`, then a name (basic/index.mdx).
pub fn is_valid_key(key: &str) -> bool {
    let (prefix, name) = match key.rfind('/') {
        Some(i) => (Some(&key[..i]), &key[i + 1..]),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && (prefix.is_empty() || !prefix.split('.').all(is_valid_label))
    {
        return false;
    }
    is_valid_name(name)
}

/// Whether `key`'s prefix is reserved for MCP: its second label is `modelcontextprotocol`
/// or `mcp` (e.g. `io.modelcontextprotocol/`, `dev.mcp/`).
pub fn is_reserved(key: &str) -> bool {
    let Some(i) = key.rfind('/') else {
        return matches!(
            key,
            "traceparent" | "tracestate" | "baggage" | "progressToken"
        );
    };
    let mut labels = key[..i].split('.');
    labels.next();
    matches!(labels.next(), Some("modelcontextprotocol" | "mcp"))
}

/// Whether `id` is a valid extension id: a `_meta` key whose prefix is mandatory.
pub fn is_valid_extension_id(id: &str) -> bool {
    id.contains('/') && is_valid_key(id)
}

fn is_valid_label(label: &str) -> bool {
    let b = label.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphabetic()
                && l.is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        }
        _ => false,
    }
}

fn is_valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    match (b.first(), b.last()) {
        (None, _) => true,
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_rules() {
        for ok in [
            PROTOCOL_VERSION,
            CLIENT_CAPABILITIES,
            "progressToken",
            "com.example/x",
            "dev.mcp/",
            "a.b-c.d9/name.with_dots-1",
            "traceparent",
        ] {
            assert!(is_valid_key(ok), "{ok}");
        }
        for bad in ["/x", "1abc/x", "a-/x", "a..b/x", "a/-x", "a/x-", "a b/x"] {
            assert!(!is_valid_key(bad), "{bad}");
        }
    }

    #[test]
    fn reserved_prefixes() {
        assert!(is_reserved("io.modelcontextprotocol/x"));
        assert!(is_reserved("dev.mcp/x"));
        assert!(is_reserved("org.modelcontextprotocol.api/x"));
        assert!(is_reserved("com.mcp.tools/x"));
        assert!(!is_reserved("com.example.mcp/x"));
        assert!(is_valid_extension_id("io.modelcontextprotocol/tasks"));
        assert!(!is_valid_extension_id("tasks"));
    }

    #[test]
    fn request_meta_reads_reserved_keys() {
        let meta: RequestMeta = serde_json::from_value(serde_json::json!({
            PROTOCOL_VERSION: "2026-07-28",
            CLIENT_CAPABILITIES: {"elicitation": {}},
            "progressToken": 5,
            "com.example/x": 1
        }))
        .unwrap();
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(
            meta.client_capabilities
                .unwrap()
                .supports_elicitation_form()
        );
        assert_eq!(meta.other.len(), 1);
    }
}
