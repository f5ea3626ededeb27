//! The chat-completions wire shapes this crate sends and reads.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A request body, without its model (set per attempt).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ChatTool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Provider-specific members from the request's `metadata` (when passed through).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(crate) enum ChatMessage {
    System {
        content: String,
    },
    User {
        content: UserContent,
    },
    Assistant {
        /// `null` when the message only calls tools.
        content: Option<AssistantContent>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_calls: Option<Vec<ToolCall>>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum UserContent {
    Text(String),
    Parts(Vec<UserPart>),
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum UserPart {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
    InputAudio { input_audio: InputAudio },
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ImageUrl {
    pub url: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct InputAudio {
    pub data: String,
    pub format: &'static str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum AssistantContent {
    Text(String),
    Parts(Vec<TextPart>),
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename = "text")]
pub(crate) struct TextPart {
    pub text: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct FunctionCall {
    pub name: String,
    /// The arguments as a JSON text, as the API wants them.
    pub arguments: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ChatTool {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionDef,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct FunctionDef {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub parameters: Value,
}

/// A non-streaming answer (`chat.completion`).
#[derive(Debug, Deserialize)]
pub(crate) struct ChatCompletion {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    /// Set by servers that answer an error with status 200.
    #[serde(default)]
    pub error: Option<ErrorDetail>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub message: Option<ResponseMessage>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// vLLM: the stop string (or token id) that ended generation.
    #[serde(default)]
    pub stop_reason: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResponseMessage {
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(default)]
    pub refusal: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ResponseToolCall>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ResponseToolCall {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<ResponseFunction>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResponseFunction {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
}

/// One streamed chunk (`chat.completion.chunk`).
#[derive(Debug, Deserialize)]
pub(crate) struct ChatChunk {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    /// An error reported inside the stream.
    #[serde(default)]
    pub error: Option<ErrorDetail>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ChunkChoice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    #[serde(default)]
    pub stop_reason: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<DeltaToolCall>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct DeltaToolCall {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<ResponseFunction>,
}

/// An error body: `{"error": {"message", "type", "code"}}`; some servers put a bare string.
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ErrorDetail {
    Object {
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        code: Option<Value>,
    },
    Text(String),
}

impl ErrorDetail {
    /// The message and the code.
    pub fn parts(self) -> (String, Option<String>) {
        match self {
            ErrorDetail::Object { message, code } => {
                let code = match code {
                    Some(Value::String(s)) => Some(s),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => None,
                };
                (message.unwrap_or_default(), code)
            }
            ErrorDetail::Text(t) => (t, None),
        }
    }
}
