//! Request params that carry only `_meta`, and the paginated list params
//! (server/utilities/pagination.mdx).
//!
//! Cursors are opaque: an empty string is a valid cursor, and only a missing `nextCursor`
//! ends a list.

use serde::{Deserialize, Serialize};

use crate::meta::RequestMeta;

/// The params of a request with nothing but `_meta` (schema.ts `RequestParams`), e.g.
/// `server/discover`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestParams {
    /// Request metadata (version, capabilities, client info).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl RequestParams {
    /// Params with this metadata.
    pub fn new(meta: RequestMeta) -> Self {
        RequestParams { meta: Some(meta) }
    }
}

/// The params of a paginated list request (schema.ts `PaginatedRequestParams`):
/// `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// Request metadata (version, capabilities, client info).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// Where to continue; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl PaginatedRequestParams {
    /// Params for the first page.
    pub fn new(meta: RequestMeta) -> Self {
        PaginatedRequestParams {
            meta: Some(meta),
            cursor: None,
        }
    }

    /// Sets the cursor.
    pub fn with_cursor(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }
}
