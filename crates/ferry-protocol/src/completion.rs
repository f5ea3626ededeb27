//! Argument completion: `completion/complete` (server/utilities/completion.mdx).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::meta::{Meta, RequestMeta};
use crate::result::{ResultType, impl_mcp_result};

/// The most values one completion result may carry.
pub const MAX_VALUES: usize = 100;

/// Names a prompt whose argument is being completed (`"type": "ref/prompt"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "ref/prompt")]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// Its display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Names a resource template whose variable is being completed (`"type": "ref/resource"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "ref/resource")]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
}

/// What is being completed, told apart by `"type"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum CompletionReference {
    /// `"ref/prompt"`.
    Prompt(PromptReference),
    /// `"ref/resource"`.
    ResourceTemplate(ResourceTemplateReference),
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum ReferenceRepr {
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    #[serde(rename = "ref/resource")]
    ResourceTemplate(ResourceTemplateReference),
}

impl<'de> Deserialize<'de> for CompletionReference {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match ReferenceRepr::deserialize(d)? {
            ReferenceRepr::Prompt(r) => CompletionReference::Prompt(r),
            ReferenceRepr::ResourceTemplate(r) => CompletionReference::ResourceTemplate(r),
        })
    }
}

impl CompletionReference {
    /// A reference to prompt `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        CompletionReference::Prompt(PromptReference {
            name: name.into(),
            title: None,
        })
    }

    /// A reference to the resource template `uri`.
    pub fn resource_template(uri: impl Into<String>) -> Self {
        CompletionReference::ResourceTemplate(ResourceTemplateReference { uri: uri.into() })
    }
}

/// The argument being completed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// What the user typed so far.
    pub value: String,
}

/// Extra context for a completion.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The params of `completion/complete` (schema.ts `CompleteRequestParams`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// Request metadata (version, capabilities, client info).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The prompt or resource template.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
}

impl CompleteRequestParams {
    /// Params completing `argument` (with partial `value`) of `reference`.
    pub fn new(
        reference: CompletionReference,
        argument: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        CompleteRequestParams {
            meta: None,
            reference,
            argument: CompletionArgument {
                name: argument.into(),
                value: value.into(),
            },
            context: None,
        }
    }

    /// Sets the request metadata.
    pub fn with_meta(mut self, meta: RequestMeta) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Adds an already resolved argument to the context.
    pub fn with_context_argument(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.context
            .get_or_insert_with(Default::default)
            .arguments
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), value.into());
        self
    }

    /// A resolved context argument, if given.
    pub fn context_argument(&self, name: &str) -> Option<&str> {
        self.context
            .as_ref()?
            .arguments
            .as_ref()?
            .get(name)
            .map(String::as_str)
    }
}

/// The suggestions of a completion.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most [`MAX_VALUES`] suggestions.
    pub values: Vec<String>,
    /// How many suggestions exist in all; may exceed `values.len()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more suggestions exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// The result of `completion/complete` (schema.ts `CompleteResult`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `complete` (absent from legacy servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The suggestions.
    pub completion: Completion,
}

impl CompleteResult {
    /// A complete result with these suggestions. More than [`MAX_VALUES`] are cut to the
    /// first hundred, with `total` set to the full count and `hasMore` to true.
    pub fn new(mut values: Vec<String>) -> Self {
        let mut completion = Completion::default();
        if values.len() > MAX_VALUES {
            completion.total = Some(values.len() as u64);
            completion.has_more = Some(true);
            values.truncate(MAX_VALUES);
        }
        completion.values = values;
        CompleteResult {
            result_type: Some(ResultType::Complete),
            completion,
            ..Default::default()
        }
    }

    /// A complete result with no suggestions.
    pub fn empty() -> Self {
        CompleteResult::new(Vec::new())
    }

    /// Sets `total`.
    pub fn with_total(mut self, total: u64) -> Self {
        self.completion.total = Some(total);
        self
    }

    /// Sets `hasMore`.
    pub fn with_has_more(mut self, has_more: bool) -> Self {
        self.completion.has_more = Some(has_more);
        self
    }
}

impl_mcp_result!(CompleteResult);
