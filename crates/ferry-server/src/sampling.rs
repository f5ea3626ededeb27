//! Checks on sampling asks before they reach the client (deprecated feature, still
//! served): the tool_use / tool_result pairing rules and `includeContext` (client/sampling.mdx).

#![allow(deprecated)]

use std::collections::BTreeSet;

use ferry_protocol::common::Role;
use ferry_protocol::content::SamplingMessageContentBlock;
use ferry_protocol::sampling::{CreateMessageRequestParams, IncludeContext};
use ferry_protocol::{ClientCapabilities, ErrorObject};

use crate::deprecation::{self, Feature};

/// Checks the message sequence: a user message holding `tool_result` blocks holds only
/// those, and every assistant message with `tool_use` blocks is followed by a user message
/// answering each `id` exactly once.
pub(crate) fn check_messages(params: &CreateMessageRequestParams) -> Result<(), ErrorObject> {
    let bad = |m: String| {
        Err(ErrorObject::internal(format!(
            "Internal error: invalid sampling request: {m}"
        )))
    };
    let messages = &params.messages;
    for (i, msg) in messages.iter().enumerate() {
        let blocks = msg.content.blocks();
        let results = blocks
            .iter()
            .filter(|b| matches!(b, SamplingMessageContentBlock::ToolResult(_)))
            .count();
        if results > 0 && (msg.role != Role::User || results != blocks.len()) {
            return bad(format!(
                "message {i}: tool_result blocks must fill a user message on their own"
            ));
        }
        let uses: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                SamplingMessageContentBlock::ToolUse(u) => Some(u.id.as_str()),
                _ => None,
            })
            .collect();
        if uses.is_empty() {
            continue;
        }
        if msg.role != Role::Assistant {
            return bad(format!(
                "message {i}: tool_use blocks belong to assistant messages"
            ));
        }
        let Some(next) = messages.get(i + 1) else {
            // The conversation may end on the model's tool use only if the client is to
            // answer it; a request cannot.
            return bad(format!(
                "message {i}: tool_use without the user's tool_result after it"
            ));
        };
        let answered: Vec<&str> = next
            .content
            .blocks()
            .iter()
            .filter_map(|b| match b {
                SamplingMessageContentBlock::ToolResult(r) => Some(r.tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        let want: BTreeSet<&str> = uses.iter().copied().collect();
        let got: BTreeSet<&str> = answered.iter().copied().collect();
        if next.role != Role::User || want != got || answered.len() != uses.len() {
            return bad(format!(
                "message {}: must answer every tool_use id of message {i} exactly once",
                i + 1
            ));
        }
    }
    Ok(())
}

/// Applies `includeContext` rules: a value other than `none` is deprecated and is dropped
/// unless the client declared `sampling.context`.
pub(crate) fn adjust_context(params: &mut CreateMessageRequestParams, caps: &ClientCapabilities) {
    if matches!(
        params.include_context,
        Some(IncludeContext::ThisServer | IncludeContext::AllServers)
    ) {
        deprecation::warn_once(Feature::IncludeContext);
        if !caps.supports_sampling_context() {
            params.include_context = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_protocol::sampling::SamplingMessage;
    use serde_json::json;

    fn params(messages: serde_json::Value) -> CreateMessageRequestParams {
        serde_json::from_value(json!({"messages": messages, "maxTokens": 10})).unwrap()
    }

    #[test]
    fn pairing_rules() {
        let ok = params(json!([
            {"role": "user", "content": {"type": "text", "text": "weather?"}},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "w", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "a", "content": []}]}
        ]));
        assert!(check_messages(&ok).is_ok());
        let unanswered = params(json!([
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "w", "input": {}}]},
            {"role": "user", "content": {"type": "text", "text": "hm"}}
        ]));
        assert!(check_messages(&unanswered).is_err());
        let mixed = params(json!([
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "a", "content": []}, {"type": "text", "text": "x"}]}
        ]));
        assert!(check_messages(&mixed).is_err());
        let twice = params(json!([
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "w", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "a", "content": []},
                {"type": "tool_result", "toolUseId": "a", "content": []}]}
        ]));
        assert!(check_messages(&twice).is_err());
        assert!(
            check_messages(&CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text("hi")],
                5
            ))
            .is_ok()
        );
    }
}
