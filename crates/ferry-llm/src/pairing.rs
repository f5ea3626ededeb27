//! The spec's tool-use rules for a sampling conversation (sampling.mdx, "Message Content
//! Constraints"): a user message holding `tool_result` blocks holds nothing else; every
//! assistant message with `tool_use` blocks is followed, before any other message, by a user
//! message answering each of its ids exactly once; no `tool_result` answers an id that the
//! message before it did not ask.

use std::collections::BTreeSet;

use ferry_protocol::common::Role;
use ferry_protocol::content::SamplingMessageContentBlock as Block;
use ferry_protocol::sampling::SamplingMessage;

use crate::error::LlmError;

/// Checks `messages` against the tool-use rules; the error names the first message at fault.
pub fn check_tool_pairing(messages: &[SamplingMessage]) -> Result<(), LlmError> {
    let refuse =
        |i: usize, what: String| Err(LlmError::InvalidRequest(format!("message {i}: {what}")));
    let mut asked: Option<(usize, BTreeSet<&str>)> = None;
    for (i, message) in messages.iter().enumerate() {
        let blocks = message.content.blocks();
        let uses: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse(u) => Some(u.id.as_str()),
                _ => None,
            })
            .collect();
        let results: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult(r) => Some(r.tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        if let Some((at, ids)) = asked.take() {
            if message.role != Role::User || results.is_empty() {
                return refuse(
                    i,
                    format!(
                        "message {at} asked for tool uses; this message must be the user's tool_result blocks for them"
                    ),
                );
            }
            let answered: BTreeSet<&str> = results.iter().copied().collect();
            if answered.len() != results.len() {
                return refuse(i, "answers a tool_use id more than once".into());
            }
            if let Some(missing) = ids.difference(&answered).next() {
                return refuse(i, format!("no tool_result for tool_use id {missing:?}"));
            }
            if let Some(extra) = answered.difference(&ids).next() {
                return refuse(
                    i,
                    format!("tool_result for {extra:?}, which message {at} did not ask"),
                );
            }
        } else if !results.is_empty() {
            return refuse(
                i,
                "tool_result blocks must answer the tool_use blocks of the assistant message just before".into(),
            );
        }
        if !results.is_empty() && results.len() != blocks.len() {
            return refuse(
                i,
                "a user message with tool_result blocks must contain only tool_result blocks"
                    .into(),
            );
        }
        if uses.is_empty() {
            continue;
        }
        if message.role != Role::Assistant {
            return refuse(i, "tool_use blocks belong to assistant messages".into());
        }
        let ids: BTreeSet<&str> = uses.iter().copied().collect();
        if ids.len() != uses.len() {
            return refuse(i, "two tool_use blocks share an id".into());
        }
        if ids.iter().any(|id| id.is_empty()) {
            return refuse(i, "a tool_use block has an empty id".into());
        }
        asked = Some((i, ids));
    }
    if let Some((at, _)) = asked {
        return refuse(
            at,
            "the conversation ends on tool_use blocks with no tool_result after them".into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(messages: serde_json::Value) -> Result<(), String> {
        let messages: Vec<SamplingMessage> = serde_json::from_value(messages).unwrap();
        check_tool_pairing(&messages).map_err(|e| e.to_string())
    }

    fn uses(ids: &[&str]) -> serde_json::Value {
        json!({"role": "assistant", "content": ids.iter().map(|id| json!({"type": "tool_use", "id": id, "name": "w", "input": {}})).collect::<Vec<_>>()})
    }

    fn results(ids: &[&str]) -> serde_json::Value {
        json!({"role": "user", "content": ids.iter().map(|id| json!({"type": "tool_result", "toolUseId": id, "content": []})).collect::<Vec<_>>()})
    }

    fn user(text: &str) -> serde_json::Value {
        json!({"role": "user", "content": {"type": "text", "text": text}})
    }

    #[test]
    fn valid_sequences() {
        assert_eq!(check(json!([user("hi")])), Ok(()));
        assert_eq!(
            check(
                json!([user("w?"), uses(&["a", "b"]), results(&["b", "a"]), {"role": "assistant", "content": {"type": "text", "text": "done"}}])
            ),
            Ok(())
        );
        // A single tool_result block, written as an object.
        assert_eq!(
            check(
                json!([uses(&["a"]), {"role": "user", "content": {"type": "tool_result", "toolUseId": "a", "content": []}}])
            ),
            Ok(())
        );
    }

    #[test]
    fn violations() {
        let cases = [
            (
                json!([uses(&["a", "b"]), results(&["a"])]),
                "no tool_result for tool_use id \"b\"",
            ),
            (
                json!([uses(&["a"]), user("x")]),
                "must be the user's tool_result",
            ),
            (json!([uses(&["a"])]), "ends on tool_use"),
            (json!([results(&["a"])]), "must answer the tool_use blocks"),
            (
                json!([uses(&["a"]), results(&["a", "a"])]),
                "more than once",
            ),
            (json!([uses(&["a"]), results(&["a", "z"])]), "did not ask"),
            (json!([uses(&["a", "a"]), results(&["a"])]), "share an id"),
            (
                json!([uses(&["a"]), {"role": "user", "content": [
                    {"type": "tool_result", "toolUseId": "a", "content": []},
                    {"type": "text", "text": "and"}]}]),
                "only tool_result",
            ),
            (
                json!([{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "w", "input": {}}]}]),
                "belong to assistant",
            ),
            (json!([uses(&["a"]), uses(&["b"])]), "must be the user's"),
        ];
        for (messages, want) in cases {
            let got = check(messages.clone()).unwrap_err();
            assert!(got.contains(want), "{messages}: {got}");
        }
    }
}
