//! `CreateMessageRequestParams` → chat-completions request body.
//!
//! | MCP | chat completions |
//! | --- | --- |
//! | `systemPrompt` | a first `system` message |
//! | user `text` / `image` / `audio` | `content`: a string for one text block, else parts `text`, `image_url` (a `data:` URL), `input_audio` (`wav` or `mp3` from `mimeType`) |
//! | assistant `text` + `tool_use` | `content` and `tool_calls` (`function`, arguments as JSON text) |
//! | user `tool_result` blocks | one `tool` message each, with `tool_call_id` |
//! | `maxTokens` | `max_tokens`, or `max_completion_tokens` |
//! | `temperature`, `stopSequences` | `temperature`, `stop` |
//! | `tools`, `toolChoice` | `tools` (`inputSchema` → `parameters`), `tool_choice` |
//! | `metadata` | top-level members, when passed through |
//!
//! `includeContext` is ignored (the spec lets a client do so, sampling.mdx "Context
//! Inclusion"): a provider has no MCP servers to take context from.

use ferry_protocol::common::Role;
use ferry_protocol::content::{ContentBlock, SamplingMessageContentBlock as Block};
use ferry_protocol::resources::ResourceContents;
use ferry_protocol::sampling::{
    CreateMessageRequestParams, IncludeContext, SamplingMessage, ToolChoiceMode,
};
use serde_json::{Map, Value};

use super::wire::{
    AssistantContent, ChatMessage, ChatRequest, ChatTool, FunctionCall, FunctionDef, ImageUrl,
    InputAudio, StreamOptions, TextPart, ToolCall, UserContent, UserPart,
};
use crate::error::LlmError;
use crate::pairing::check_tool_pairing;

/// Which request member carries `maxTokens`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_tokens`: every compatible server reads it.
    #[default]
    MaxTokens,
    /// `max_completion_tokens`: OpenAI's newer name, required by its reasoning models.
    MaxCompletionTokens,
}

/// The request members this crate sets itself; `metadata` cannot override them.
const OWNED: &[&str] = &[
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "stop",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "stream",
    "stream_options",
    "n",
];

/// How params become a request.
#[derive(Clone, Debug, Default)]
pub(crate) struct Mapping {
    pub max_tokens_field: MaxTokensField,
    pub parallel_tool_calls: Option<bool>,
    pub pass_metadata: bool,
    pub stream: bool,
    pub stream_usage: bool,
}

/// The request for `params`, with an empty model; refuses what the API cannot carry.
pub(crate) fn build(
    params: &CreateMessageRequestParams,
    mapping: &Mapping,
) -> Result<ChatRequest, LlmError> {
    if params.messages.is_empty() {
        return Err(invalid("the request has no messages"));
    }
    if params.max_tokens == 0 {
        return Err(invalid("maxTokens must be at least 1"));
    }
    check_tool_pairing(&params.messages)?;
    if matches!(
        params.include_context,
        Some(IncludeContext::ThisServer | IncludeContext::AllServers)
    ) {
        tracing::debug!("includeContext ignored: a provider has no MCP context to include");
    }
    let mut messages = Vec::with_capacity(params.messages.len() + 1);
    if let Some(system) = &params.system_prompt {
        messages.push(ChatMessage::System {
            content: system.clone(),
        });
    }
    for (i, message) in params.messages.iter().enumerate() {
        push_message(&mut messages, i, message)?;
    }
    let tools: Vec<ChatTool> = params
        .tools
        .iter()
        .flatten()
        .map(|t| ChatTool {
            kind: "function",
            function: FunctionDef {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.input_schema.clone(),
            },
        })
        .collect();
    let mode = params
        .tool_choice
        .as_ref()
        .map(|c| c.mode.unwrap_or_default());
    let tool_choice = match (mode, tools.is_empty()) {
        (Some(ToolChoiceMode::Required), true) => {
            return Err(invalid(
                "toolChoice is \"required\" but the request has no tools",
            ));
        }
        (_, true) | (None, false) => None,
        (Some(ToolChoiceMode::Auto), false) => Some("auto"),
        (Some(ToolChoiceMode::Required), false) => Some("required"),
        (Some(ToolChoiceMode::None), false) => Some("none"),
    };
    let (max_tokens, max_completion_tokens) = match mapping.max_tokens_field {
        MaxTokensField::MaxTokens => (Some(params.max_tokens), None),
        MaxTokensField::MaxCompletionTokens => (None, Some(params.max_tokens)),
    };
    Ok(ChatRequest {
        model: String::new(),
        messages,
        max_tokens,
        max_completion_tokens,
        temperature: params.temperature,
        stop: params.stop_sequences.clone().filter(|s| !s.is_empty()),
        parallel_tool_calls: mapping.parallel_tool_calls.filter(|_| !tools.is_empty()),
        tools: (!tools.is_empty()).then_some(tools),
        tool_choice,
        stream: mapping.stream.then_some(true),
        stream_options: (mapping.stream && mapping.stream_usage).then_some(StreamOptions {
            include_usage: true,
        }),
        extra: if mapping.pass_metadata {
            passthrough(params.metadata.as_ref())
        } else {
            Map::new()
        },
    })
}

fn invalid(what: impl Into<String>) -> LlmError {
    LlmError::InvalidRequest(what.into())
}

fn push_message(
    out: &mut Vec<ChatMessage>,
    i: usize,
    message: &SamplingMessage,
) -> Result<(), LlmError> {
    let blocks = message.content.blocks();
    if blocks.is_empty() {
        return Err(invalid(format!("message {i} has no content")));
    }
    match message.role {
        Role::User if matches!(blocks[0], Block::ToolResult(_)) => {
            // The pairing check made sure every block is a tool_result.
            for block in blocks {
                if let Block::ToolResult(r) = block {
                    out.push(ChatMessage::Tool {
                        tool_call_id: r.tool_use_id.clone(),
                        content: tool_result_text(i, r)?,
                    });
                }
            }
        }
        Role::User => {
            let mut parts = Vec::with_capacity(blocks.len());
            for block in blocks {
                parts.push(user_part(i, block)?);
            }
            let content = match parts.as_slice() {
                [UserPart::Text { text }] => UserContent::Text(text.clone()),
                _ => UserContent::Parts(parts),
            };
            out.push(ChatMessage::User { content });
        }
        Role::Assistant => {
            let mut texts = Vec::new();
            let mut calls = Vec::new();
            for block in blocks {
                match block {
                    Block::Text(t) => texts.push(t.text.clone()),
                    Block::ToolUse(u) => calls.push(ToolCall {
                        id: u.id.clone(),
                        kind: "function",
                        function: FunctionCall {
                            name: u.name.clone(),
                            arguments: Value::Object(u.input.clone()).to_string(),
                        },
                    }),
                    other => {
                        return Err(invalid(format!(
                            "message {i}: an assistant message cannot carry {} content in the chat-completions API",
                            other.type_name()
                        )));
                    }
                }
            }
            let content = match texts.len() {
                0 => None,
                1 => texts.pop().map(AssistantContent::Text),
                _ => Some(AssistantContent::Parts(
                    texts.into_iter().map(|text| TextPart { text }).collect(),
                )),
            };
            out.push(ChatMessage::Assistant {
                content,
                tool_calls: (!calls.is_empty()).then_some(calls),
            });
        }
    }
    Ok(())
}

fn user_part(i: usize, block: &Block) -> Result<UserPart, LlmError> {
    Ok(match block {
        Block::Text(t) => UserPart::Text {
            text: t.text.clone(),
        },
        Block::Image(img) => {
            let mime = img.mime_type.trim();
            if !mime.starts_with("image/") || mime.contains([',', ';', ' ']) {
                return Err(invalid(format!(
                    "message {i}: image mimeType {:?} is not an image type",
                    img.mime_type
                )));
            }
            UserPart::ImageUrl {
                image_url: ImageUrl {
                    url: format!("data:{mime};base64,{}", img.data),
                },
            }
        }
        Block::Audio(audio) => UserPart::InputAudio {
            input_audio: InputAudio {
                data: audio.data.clone(),
                format: audio_format(&audio.mime_type).ok_or_else(|| {
                    invalid(format!(
                        "message {i}: audio mimeType {:?} is not supported (input_audio takes wav or mp3)",
                        audio.mime_type
                    ))
                })?,
            },
        },
        other => {
            return Err(invalid(format!(
                "message {i}: a user message cannot mix {} with other content",
                other.type_name()
            )));
        }
    })
}

/// The `input_audio.format` for a MIME type.
pub(crate) fn audio_format(mime: &str) -> Option<&'static str> {
    let base = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match base.as_str() {
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" | "audio/mpeg3" | "audio/x-mpeg-3" => Some("mp3"),
        _ => None,
    }
}

/// A `tool` message's text: the text blocks (and embedded text resources, and resource links
/// as `uri`) joined by newlines; `structuredContent` as JSON when there is no other content.
/// An error result is prefixed with `Error: ` (the API has no flag for it).
fn tool_result_text(
    i: usize,
    result: &ferry_protocol::content::ToolResultContent,
) -> Result<String, LlmError> {
    let mut lines = Vec::with_capacity(result.content.len());
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => lines.push(t.text.clone()),
            ContentBlock::EmbeddedResource(r) => match &r.resource {
                ResourceContents::Text(t) => lines.push(t.text.clone()),
                ResourceContents::Blob(_) => {
                    return Err(invalid(format!(
                        "message {i}: tool_result for {:?} holds a binary resource, which a tool message cannot carry",
                        result.tool_use_id
                    )));
                }
            },
            ContentBlock::ResourceLink(link) => lines.push(link.resource.uri.clone()),
            other => {
                return Err(invalid(format!(
                    "message {i}: tool_result for {:?} holds {} content, which a tool message cannot carry",
                    result.tool_use_id,
                    other.type_name()
                )));
            }
        }
    }
    let mut text = if lines.is_empty() {
        result
            .structured_content
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    } else {
        lines.join("\n")
    };
    if result.is_error == Some(true) {
        text.insert_str(0, "Error: ");
    }
    Ok(text)
}

fn passthrough(metadata: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut extra = Map::new();
    for (k, v) in metadata.into_iter().flatten() {
        if OWNED.contains(&k.as_str()) {
            tracing::debug!(member = %k, "metadata member not passed: the bridge sets it");
        } else {
            extra.insert(k.clone(), v.clone());
        }
    }
    extra
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_formats() {
        assert_eq!(audio_format("audio/wav"), Some("wav"));
        assert_eq!(audio_format("Audio/X-WAV; codecs=1"), Some("wav"));
        assert_eq!(audio_format("audio/mpeg"), Some("mp3"));
        assert_eq!(audio_format("audio/ogg"), None);
    }
}
