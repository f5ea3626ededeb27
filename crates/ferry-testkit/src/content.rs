//! What typed tool results say, for tests that use a client library rather than raw
//! JSON-RPC.

use ferry_protocol::content::ContentBlock;
use ferry_protocol::tools::CallToolResult;

/// The text of a tool result's first text block (empty when it has none).
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}
