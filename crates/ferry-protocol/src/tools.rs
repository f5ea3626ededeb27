//! Tools: `tools/list` and `tools/call` (server/tools.mdx).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::common::{Icon, JsonObject};
use crate::content::ContentBlock;
use crate::meta::{Meta, RequestMeta};
use crate::mrtr::InputResponses;
use crate::result::{CacheScope, ResultType, impl_cacheable, impl_mcp_result};

/// A tool the client can call (schema.ts `Tool`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name, unique within the server. Should be 1 to 128 characters from
    /// `[A-Za-z0-9_.-]`.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema (2020-12 unless `$schema` says otherwise) of the arguments. Its root must
    /// have `"type": "object"`.
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`; any schema, e.g. with an array root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints. Untrusted unless the server is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: Value) -> Self {
        Tool {
            name: name.into(),
            input_schema,
            ..Default::default()
        }
    }

    /// A tool that takes no arguments, with the recommended schema
    /// `{"type":"object","additionalProperties":false}`.
    pub fn without_params(name: impl Into<String>) -> Self {
        Tool::new(name, Tool::empty_input_schema())
    }

    /// The recommended input schema of a tool without parameters.
    pub fn empty_input_schema() -> Value {
        json!({ "type": "object", "additionalProperties": false })
    }

    /// Sets the display name.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the output schema.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets the icons.
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The name to show: `title`, then `annotations.title`, then `name`.
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref()?.title.as_deref())
            .unwrap_or(&self.name)
    }
}

/// Hints about a tool's behaviour (schema.ts `ToolAnnotations`). Clients must not trust
/// them from untrusted servers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data; meaningful when not read-only (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub fn new() -> Self {
        ToolAnnotations::default()
    }

    /// Sets the display name.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets `readOnlyHint`.
    pub fn with_read_only(mut self, value: bool) -> Self {
        self.read_only_hint = Some(value);
        self
    }

    /// Sets `destructiveHint`.
    pub fn with_destructive(mut self, value: bool) -> Self {
        self.destructive_hint = Some(value);
        self
    }

    /// Sets `idempotentHint`.
    pub fn with_idempotent(mut self, value: bool) -> Self {
        self.idempotent_hint = Some(value);
        self
    }

    /// Sets `openWorldHint`.
    pub fn with_open_world(mut self, value: bool) -> Self {
        self.open_world_hint = Some(value);
        self
    }
}

/// The params of `tools/call` (schema.ts `CallToolRequestParams`). May carry MRTR input
/// responses on a retry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// Request metadata (version, capabilities, client info).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Answers to the server's earlier input requests, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The opaque state the server returned, echoed exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl CallToolRequestParams {
    /// Params calling tool `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallToolRequestParams {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Sets the request metadata.
    pub fn with_meta(mut self, meta: RequestMeta) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Sets the arguments.
    pub fn with_arguments(mut self, arguments: JsonObject) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// Sets one argument.
    pub fn with_argument(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.arguments
            .get_or_insert_with(JsonObject::new)
            .insert(name.into(), value.into());
        self
    }

    /// Sets the input responses of an MRTR retry.
    pub fn with_input_responses(mut self, responses: InputResponses) -> Self {
        self.input_responses = Some(responses);
        self
    }

    /// Sets the request state of an MRTR retry.
    pub fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }

    /// The arguments as a JSON value (`{}` when absent), for schema validation.
    pub fn arguments_value(&self) -> Value {
        Value::Object(self.arguments.clone().unwrap_or_default())
    }
}

/// The result of `tools/call` (schema.ts `CallToolResult`).
///
/// Failures of the tool itself (bad input, API errors) belong here with `isError: true`, so
/// the model can see them; protocol failures such as an unknown tool are JSON-RPC errors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `complete` (absent from legacy servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result: any JSON value (`null` included) matching the tool's
    /// output schema.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::any_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// Whether the call failed. Absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl CallToolResult {
    /// A successful result with these blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            result_type: Some(ResultType::Complete),
            content,
            ..Default::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult::new(vec![ContentBlock::text(text)])
    }

    /// A tool execution error (`isError: true`) with one text block describing it.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            is_error: Some(true),
            ..CallToolResult::text(message)
        }
    }

    /// A successful result with structured content, plus its JSON text in a text block
    /// (as the spec recommends for clients that only read `content`).
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        CallToolResult {
            structured_content: Some(value),
            ..CallToolResult::text(text)
        }
    }

    /// Sets the structured content, keeping the blocks.
    pub fn with_structured_content(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Adds a block.
    pub fn with_content(mut self, block: impl Into<ContentBlock>) -> Self {
        self.content.push(block.into());
        self
    }

    /// Sets `isError`.
    pub fn with_is_error(mut self, is_error: bool) -> Self {
        self.is_error = Some(is_error);
        self
    }

    /// Whether the call failed (`isError` is true).
    pub fn failed(&self) -> bool {
        self.is_error == Some(true)
    }
}

/// The result of `tools/list` (schema.ts `ListToolsResult`): paginated and cacheable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `complete` (absent from legacy servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The tools on this page.
    pub tools: Vec<Tool>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the client may cache this page, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may share the cached page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ListToolsResult {
    /// A complete page of tools.
    pub fn new(tools: Vec<Tool>) -> Self {
        ListToolsResult {
            result_type: Some(ResultType::Complete),
            tools,
            ..Default::default()
        }
    }

    /// Sets the next page's cursor.
    pub fn with_next_cursor(mut self, cursor: impl Into<String>) -> Self {
        self.next_cursor = Some(cursor.into());
        self
    }
}

impl_mcp_result!(CallToolResult, ListToolsResult);
impl_cacheable!(ListToolsResult);
