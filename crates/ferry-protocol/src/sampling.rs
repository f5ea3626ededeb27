//! Sampling: asking the client's model for a completion (client/sampling.mdx). Deprecated in
//! 2026-07-28, where `sampling/createMessage` travels inside an
//! [`InputRequiredResult`](crate::mrtr::InputRequiredResult).

use serde::{Deserialize, Serialize};

use crate::common::{JsonObject, Role};
pub use crate::content::{SamplingMessageContentBlock, ToolResultContent, ToolUseContent};
use crate::meta::Meta;
use crate::tools::Tool;

/// Standard `stopReason` values. The member is an open string.
pub mod stop_reason {
    /// The model ended its turn.
    pub const END_TURN: &str = "endTurn";
    /// A stop sequence was hit.
    pub const STOP_SEQUENCE: &str = "stopSequence";
    /// `maxTokens` was reached.
    pub const MAX_TOKENS: &str = "maxTokens";
    /// The model wants to call tools.
    pub const TOOL_USE: &str = "toolUse";
}

/// The content of a sampling message: one block or several.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingMessageContent {
    /// A single block (written as an object).
    One(SamplingMessageContentBlock),
    /// Several blocks (written as an array).
    Many(Vec<SamplingMessageContentBlock>),
}

impl SamplingMessageContent {
    /// The blocks, whichever form was used.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            SamplingMessageContent::One(b) => std::slice::from_ref(b),
            SamplingMessageContent::Many(v) => v,
        }
    }

    /// The blocks, owned.
    pub fn into_blocks(self) -> Vec<SamplingMessageContentBlock> {
        match self {
            SamplingMessageContent::One(b) => vec![b],
            SamplingMessageContent::Many(v) => v,
        }
    }

    /// The text of all text blocks, joined with newlines.
    pub fn text(&self) -> String {
        self.blocks()
            .iter()
            .filter_map(SamplingMessageContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl From<SamplingMessageContentBlock> for SamplingMessageContent {
    fn from(b: SamplingMessageContentBlock) -> Self {
        SamplingMessageContent::One(b)
    }
}

impl From<Vec<SamplingMessageContentBlock>> for SamplingMessageContent {
    fn from(v: Vec<SamplingMessageContentBlock>) -> Self {
        SamplingMessageContent::Many(v)
    }
}

/// A message to or from the model (schema.ts `SamplingMessage`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingMessageContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A message.
    pub fn new(role: Role, content: impl Into<SamplingMessageContent>) -> Self {
        SamplingMessage {
            role,
            content: content.into(),
            meta: None,
        }
    }

    /// A user message with text.
    pub fn user_text(text: impl Into<String>) -> Self {
        SamplingMessage::new(Role::User, SamplingMessageContentBlock::text(text))
    }

    /// An assistant message with text.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text(text))
    }
}

/// Whether to add context from MCP servers to the prompt. Values other than `none` are
/// deprecated, and need the client's `sampling.context` capability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context (the default).
    #[default]
    None,
    /// Context from the requesting server (deprecated).
    ThisServer,
    /// Context from all servers (deprecated).
    AllServers,
}

/// How the model may use tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must use at least one tool.
    Required,
    /// The model must not use tools.
    None,
}

/// Tool selection for sampling (schema.ts `ToolChoice`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// The mode; absent means `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

impl ToolChoice {
    /// A choice with this mode.
    pub fn new(mode: ToolChoiceMode) -> Self {
        ToolChoice { mode: Some(mode) }
    }
}

/// A model-name hint (schema.ts `ModelHint`): a substring of a model name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelHint {
    /// The hint, e.g. `sonnet`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ModelHint {
    /// A name hint.
    pub fn new(name: impl Into<String>) -> Self {
        ModelHint {
            name: Some(name.into()),
        }
    }
}

/// Advisory model preferences (schema.ts `ModelPreferences`). Priorities range 0 to 1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Hints, evaluated in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters.
    #[serde(
        default,
        serialize_with = "crate::serde_util::compact_f64_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub cost_priority: Option<f64>,
    /// How much speed matters.
    #[serde(
        default,
        serialize_with = "crate::serde_util::compact_f64_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub speed_priority: Option<f64>,
    /// How much capability matters.
    #[serde(
        default,
        serialize_with = "crate::serde_util::compact_f64_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub intelligence_priority: Option<f64>,
}

impl ModelPreferences {
    /// No preferences.
    pub fn new() -> Self {
        ModelPreferences::default()
    }

    /// Adds a name hint.
    pub fn with_hint(mut self, name: impl Into<String>) -> Self {
        self.hints
            .get_or_insert_with(Vec::new)
            .push(ModelHint::new(name));
        self
    }

    /// Sets the cost priority.
    pub fn with_cost_priority(mut self, p: f64) -> Self {
        self.cost_priority = Some(p);
        self
    }

    /// Sets the speed priority.
    pub fn with_speed_priority(mut self, p: f64) -> Self {
        self.speed_priority = Some(p);
        self
    }

    /// Sets the intelligence priority.
    pub fn with_intelligence_priority(mut self, p: f64) -> Self {
        self.intelligence_priority = Some(p);
        self
    }
}

/// The params of `sampling/createMessage` (schema.ts `CreateMessageRequestParams`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// Request metadata; only 2025-11-25 server requests carry it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may change or drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include (non-`none` values deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(
        default,
        serialize_with = "crate::serde_util::compact_f64_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub temperature: Option<f64>,
    /// The most tokens to sample; the client must respect it.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use; needs the client's `sampling.tools` capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use tools; needs `sampling.tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

impl CreateMessageRequestParams {
    /// Params with a conversation and a token limit.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageRequestParams {
            messages,
            max_tokens,
            ..Default::default()
        }
    }

    /// Sets the system prompt.
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the model preferences.
    pub fn with_model_preferences(mut self, preferences: ModelPreferences) -> Self {
        self.model_preferences = Some(preferences);
        self
    }

    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the stop sequences.
    pub fn with_stop_sequences(mut self, stop: Vec<String>) -> Self {
        self.stop_sequences = Some(stop);
        self
    }

    /// Sets the tools (needs `sampling.tools`).
    pub fn with_tools(mut self, tools: Vec<Tool>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Sets the tool choice (needs `sampling.tools`).
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets `includeContext`.
    pub fn with_include_context(mut self, include: IncludeContext) -> Self {
        self.include_context = Some(include);
        self
    }

    /// Whether the request uses tools, so needs the client's `sampling.tools`.
    pub fn uses_tools(&self) -> bool {
        self.tools.is_some() || self.tool_choice.is_some()
    }

    /// Whether the request asks for context other than `none`, so needs
    /// `sampling.context`.
    pub fn uses_context(&self) -> bool {
        matches!(
            self.include_context,
            Some(IncludeContext::ThisServer | IncludeContext::AllServers)
        )
    }
}

/// The model's answer (schema.ts `CreateMessageResult`). In 2026-07-28 it is an input
/// response, not a JSON-RPC result, so it has no `resultType`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Who says it (normally the assistant).
    pub role: Role,
    /// What is said.
    pub content: SamplingMessageContent,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped; see [`stop_reason`] for standard values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// An assistant text answer that ended its turn.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        CreateMessageResult {
            meta: None,
            role: Role::Assistant,
            content: SamplingMessageContentBlock::text(text).into(),
            model: model.into(),
            stop_reason: Some(stop_reason::END_TURN.to_owned()),
        }
    }

    /// An assistant answer with these blocks.
    pub fn new(
        model: impl Into<String>,
        content: impl Into<SamplingMessageContent>,
        stop_reason: Option<String>,
    ) -> Self {
        CreateMessageResult {
            meta: None,
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason,
        }
    }
}
