//! `server/discover`: versions, capabilities and instructions (versioning.mdx).
//!
//! The request's params are a bare [`RequestParams`](crate::pagination::RequestParams).

use serde::{Deserialize, Serialize};

use crate::capabilities::ServerCapabilities;
use crate::meta::Meta;
use crate::result::{CacheScope, ResultType, impl_cacheable, impl_mcp_result};

/// The result of `server/discover` (schema.ts `DiscoverResult`): cacheable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Result metadata; servers should put their `serverInfo` here.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The protocol versions the server supports.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model on using the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the client may cache this result, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may share the cached result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl DiscoverResult {
    /// A complete result.
    pub fn new<I, S>(supported_versions: I, capabilities: ServerCapabilities) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        DiscoverResult {
            result_type: Some(ResultType::Complete),
            supported_versions: supported_versions.into_iter().map(Into::into).collect(),
            capabilities,
            ..Default::default()
        }
    }

    /// Sets the instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Whether the server supports `version`.
    pub fn supports(&self, version: &str) -> bool {
        self.supported_versions.iter().any(|v| v == version)
    }
}

impl_mcp_result!(DiscoverResult);
impl_cacheable!(DiscoverResult);
