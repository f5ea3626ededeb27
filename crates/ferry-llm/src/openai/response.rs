//! Chat-completions answer → `CreateMessageResult`.
//!
//! The content is the answer's text (one `text` block, or the refusal when there is no
//! text) followed by one `tool_use` block per tool call, with the call's id (`call_N` when
//! the server gave none), name and parsed arguments. `finish_reason` becomes `stopReason`:
//! `stop` → `endTurn` (`stopSequence` when the server names the stop string that matched,
//! as vLLM does), `length` → `maxTokens`, `tool_calls` → `toolUse`; other values, such as
//! `content_filter`, are kept as they are. An answer with tool calls whose reason is `stop`
//! or absent (some servers say so) is reported as `toolUse`, so the caller's tool loop runs.

use ferry_protocol::content::{SamplingMessageContentBlock, ToolUseContent};
use ferry_protocol::sampling::{CreateMessageResult, SamplingMessageContent, stop_reason};
use serde_json::Value;

use super::wire::{ChatCompletion, WireUsage};
use crate::error::LlmError;
use crate::usage::TokenCounts;

/// One tool call as read from the answer.
#[derive(Debug, Default)]
pub(crate) struct RawToolCall {
    pub id: Option<String>,
    pub name: Option<String>,
    pub arguments: String,
}

/// An answer in parts, from either a whole response or a stream.
#[derive(Debug, Default)]
pub(crate) struct RawAnswer {
    pub model: Option<String>,
    pub text: String,
    pub refusal: String,
    pub tool_calls: Vec<RawToolCall>,
    pub finish_reason: Option<String>,
    pub matched_stop: Option<Value>,
    pub usage: Option<WireUsage>,
}

/// A mapped answer with its usage.
#[derive(Debug)]
pub(crate) struct Answer {
    pub result: CreateMessageResult,
    pub usage: Option<TokenCounts>,
}

impl RawAnswer {
    /// The parts of a non-streaming answer.
    pub(crate) fn from_completion(completion: ChatCompletion) -> Result<Self, LlmError> {
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err(LlmError::InvalidResponse(
                "the answer has no choices".into(),
            ));
        };
        let message = choice.message.unwrap_or_default();
        let text = match message.content {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s,
            Some(Value::Array(parts)) => parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
            Some(other) => {
                return Err(LlmError::InvalidResponse(format!(
                    "message content is neither text nor parts: {}",
                    json_kind(&other)
                )));
            }
        };
        let tool_calls = message
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                let f = c.function.unwrap_or_default();
                RawToolCall {
                    id: c.id,
                    name: f.name,
                    arguments: f.arguments.unwrap_or_default(),
                }
            })
            .collect();
        Ok(RawAnswer {
            model: completion.model,
            text,
            refusal: message.refusal.unwrap_or_default(),
            tool_calls,
            finish_reason: choice.finish_reason,
            matched_stop: choice.stop_reason,
            usage: completion.usage,
        })
    }

    /// The protocol result; `requested` names the model when the answer does not.
    pub(crate) fn into_answer(
        self,
        requested: &str,
        stop_sequences: &[String],
    ) -> Result<Answer, LlmError> {
        let mut blocks = Vec::with_capacity(1 + self.tool_calls.len());
        if !self.text.is_empty() {
            blocks.push(SamplingMessageContentBlock::text(self.text));
        } else if !self.refusal.is_empty() {
            blocks.push(SamplingMessageContentBlock::text(self.refusal));
        }
        let has_calls = !self.tool_calls.is_empty();
        for (n, call) in self.tool_calls.into_iter().enumerate() {
            let name = call
                .name
                .filter(|n| !n.is_empty())
                .ok_or_else(|| LlmError::InvalidResponse(format!("tool call {n} has no name")))?;
            let input = parse_arguments(&name, &call.arguments)?;
            let id = call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("call_{n}"));
            blocks.push(ToolUseContent::new(id, name, input).into());
        }
        let content = match blocks.len() {
            0 => SamplingMessageContent::One(SamplingMessageContentBlock::text("")),
            1 => SamplingMessageContent::One(blocks.remove(0)),
            _ => SamplingMessageContent::Many(blocks),
        };
        let stop = stop_reason_of(
            self.finish_reason.as_deref(),
            self.matched_stop.as_ref(),
            stop_sequences,
            has_calls,
        );
        let model = self
            .model
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| requested.to_owned());
        Ok(Answer {
            result: CreateMessageResult::new(model, content, stop),
            usage: self.usage.map(|u| TokenCounts {
                prompt: u.prompt_tokens,
                completion: u.completion_tokens,
            }),
        })
    }
}

fn parse_arguments(
    name: &str,
    arguments: &str,
) -> Result<serde_json::Map<String, Value>, LlmError> {
    if arguments.trim().is_empty() {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(LlmError::InvalidResponse(format!(
            "tool call {name:?}: arguments are {}, not a JSON object",
            json_kind(&other)
        ))),
        Err(e) => Err(LlmError::InvalidResponse(format!(
            "tool call {name:?}: arguments are not valid JSON ({e})"
        ))),
    }
}

/// The MCP `stopReason` for a `finish_reason`.
pub(crate) fn stop_reason_of(
    finish: Option<&str>,
    matched_stop: Option<&Value>,
    stop_sequences: &[String],
    has_tool_calls: bool,
) -> Option<String> {
    let reason = match finish {
        None if has_tool_calls => stop_reason::TOOL_USE,
        None => return None,
        Some("stop") if has_tool_calls => stop_reason::TOOL_USE,
        Some("stop") => match matched_stop.and_then(Value::as_str) {
            Some(s) if stop_sequences.iter().any(|q| q == s) => stop_reason::STOP_SEQUENCE,
            _ => stop_reason::END_TURN,
        },
        Some("length") => stop_reason::MAX_TOKENS,
        Some("tool_calls" | "function_call") => stop_reason::TOOL_USE,
        Some(other) => return Some(other.to_owned()),
    };
    Some(reason.to_owned())
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stop_reasons() {
        let stops = vec!["END".to_owned()];
        let f = |r: Option<&str>, m: Option<Value>, calls: bool| {
            stop_reason_of(r, m.as_ref(), &stops, calls)
        };
        assert_eq!(f(Some("stop"), None, false).as_deref(), Some("endTurn"));
        assert_eq!(
            f(Some("stop"), Some(json!("END")), false).as_deref(),
            Some("stopSequence")
        );
        assert_eq!(
            f(Some("stop"), Some(json!(128001)), false).as_deref(),
            Some("endTurn")
        );
        assert_eq!(f(Some("length"), None, false).as_deref(), Some("maxTokens"));
        assert_eq!(
            f(Some("tool_calls"), None, true).as_deref(),
            Some("toolUse")
        );
        assert_eq!(f(Some("stop"), None, true).as_deref(), Some("toolUse"));
        assert_eq!(
            f(Some("content_filter"), None, false).as_deref(),
            Some("content_filter")
        );
        assert_eq!(f(None, None, false), None);
    }

    #[test]
    fn arguments() {
        assert!(parse_arguments("t", "").unwrap().is_empty());
        assert_eq!(parse_arguments("t", r#"{"a":1}"#).unwrap()["a"], 1);
        assert!(parse_arguments("t", "[1]").is_err());
        assert!(parse_arguments("t", "{oops").is_err());
    }
}
