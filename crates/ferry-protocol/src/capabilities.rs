//! Client and server capabilities (versioning.mdx). Both are open sets: unknown members are
//! kept as sent.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::common::JsonObject;
use crate::serde_util::open_struct_deserialize;

open_struct_deserialize!(ClientCapabilities {
    "experimental" => experimental,
    "roots" => roots,
    "sampling" => sampling,
    "elicitation" => elicitation,
    "extensions" => extensions,
});
open_struct_deserialize!(RootsCapability { "listChanged" => list_changed });
open_struct_deserialize!(SamplingCapability { "context" => context, "tools" => tools });
open_struct_deserialize!(ElicitationCapability { "form" => form, "url" => url });

/// What a client can do, declared on every 2026-07-28 request (and once, in `initialize`,
/// on a 2025-11-25 session).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Roots (deprecated in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Sampling (deprecated in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Elicitation. `{}` means form mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Extensions, keyed by extension id (e.g. `io.modelcontextprotocol/tasks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Members this version of Ferry does not model (e.g. 2025-11-25's `tasks`).
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The roots capability. `listChanged` exists only in 2025-11-25.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// 2025-11-25 only: the client sends `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Other members.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The sampling capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// The client honours `includeContext` other than `"none"` (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// The client accepts `tools` and `toolChoice` in sampling requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Other members.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The elicitation capability: which modes the client supports.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Other members.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ClientCapabilities {
    /// Whether the client accepts form-mode elicitation. `elicitation: {}` counts as form.
    pub fn supports_elicitation_form(&self) -> bool {
        match &self.elicitation {
            None => false,
            Some(e) => e.form.is_some() || e.url.is_none(),
        }
    }

    /// Whether the client accepts URL-mode elicitation.
    pub fn supports_elicitation_url(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }

    /// Whether the client accepts sampling requests.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// Whether the client accepts `tools` and `toolChoice` in sampling requests.
    pub fn supports_sampling_tools(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.tools.is_some())
    }

    /// Whether the client accepts `includeContext` other than `"none"`.
    pub fn supports_sampling_context(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.context.is_some())
    }

    /// Whether the client answers `roots/list`.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// Whether the client declared the extension `id`.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }

    /// Declares form-mode elicitation.
    pub fn with_elicitation_form(mut self) -> Self {
        self.elicitation.get_or_insert_with(Default::default).form = Some(JsonObject::new());
        self
    }

    /// Declares URL-mode elicitation.
    pub fn with_elicitation_url(mut self) -> Self {
        self.elicitation.get_or_insert_with(Default::default).url = Some(JsonObject::new());
        self
    }

    /// Declares sampling (deprecated).
    pub fn with_sampling(mut self, tools: bool) -> Self {
        let s = self.sampling.get_or_insert_with(Default::default);
        if tools {
            s.tools = Some(JsonObject::new());
        }
        self
    }

    /// Declares roots (deprecated).
    pub fn with_roots(mut self) -> Self {
        self.roots.get_or_insert_with(Default::default);
        self
    }

    /// Declares an extension with empty settings.
    pub fn with_extension(mut self, id: impl Into<String>) -> Self {
        self.extensions
            .get_or_insert_with(Default::default)
            .insert(id.into(), json!({}));
        self
    }
}

/// What a server offers, returned by `server/discover` (and `initialize` on legacy).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// The server sends `notifications/message` (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// The server answers `completion/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Extensions, keyed by extension id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Members this version of Ferry does not model.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// `{ listChanged?: boolean }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// The server notifies when the list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// `{ subscribe?: boolean; listChanged?: boolean }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server honours resource subscriptions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server notifies when the list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// Builds a `requiredCapabilities` value naming one capability, for -32021 errors.
pub fn required(path: &[&str]) -> Value {
    let mut v = json!({});
    for key in path.iter().rev() {
        v = json!({ *key: v });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_elicitation_means_form() {
        let c: ClientCapabilities = serde_json::from_str(r#"{"elicitation":{}}"#).unwrap();
        assert!(c.supports_elicitation_form());
        assert!(!c.supports_elicitation_url());
        let c: ClientCapabilities = serde_json::from_str(r#"{"elicitation":{"url":{}}}"#).unwrap();
        assert!(!c.supports_elicitation_form());
        assert!(c.supports_elicitation_url());
    }

    #[test]
    fn unknown_members_survive() {
        let v = json!({"tasks": {"x": 1}, "roots": {"listChanged": true}});
        let c: ClientCapabilities = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&c).unwrap(), v);
    }

    #[test]
    fn required_builds_nested() {
        assert_eq!(
            required(&["elicitation", "url"]),
            json!({"elicitation": {"url": {}}})
        );
    }
}
