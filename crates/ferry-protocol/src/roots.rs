//! Roots: the directories and files the client lets a server work on (client/roots.mdx).
//! Deprecated in 2026-07-28, where `roots/list` travels inside an
//! [`InputRequiredResult`](crate::mrtr::InputRequiredResult).

use serde::{Deserialize, Serialize};

use crate::meta::Meta;

/// The optional params of `roots/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsRequestParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A root (schema.ts `Root`). Its URI must start with `file://`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// The root's `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Root {
    /// A root.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            ..Default::default()
        }
    }

    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Whether the URI is a `file://` URI, as the spec requires.
    pub fn is_file_uri(&self) -> bool {
        self.uri.starts_with("file://")
    }
}

/// The client's roots (schema.ts `ListRootsResult`). In 2026-07-28 it is an input
/// response, not a JSON-RPC result, so it has no `resultType`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// Metadata (2025-11-25 results only).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The roots.
    pub roots: Vec<Root>,
}

impl ListRootsResult {
    /// A result with these roots.
    pub fn new(roots: Vec<Root>) -> Self {
        ListRootsResult { meta: None, roots }
    }
}
