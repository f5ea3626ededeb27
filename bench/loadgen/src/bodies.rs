//! The JSON-RPC messages the load generator sends, as 2026-07-28 requests.

/// `_meta` for a client without capabilities.
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// `_meta` for a client that can answer elicitations (the MRTR calls).
const META_ELICIT: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;

/// The protocol revision, for the `MCP-Protocol-Version` header.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The text every echo call sends.
pub const ECHO_TEXT: &str = "hello";

/// The most text `--text-bytes` asks echo to send.
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// The text echo calls send: [`ECHO_TEXT`] for 0, else `bytes` bytes of prose-like ASCII
/// (words, spaces, punctuation and a quote and backslash every line, which JSON escapes).
pub fn echo_text(bytes: usize) -> Result<String, crate::Error> {
    if bytes == 0 {
        return Ok(ECHO_TEXT.to_owned());
    }
    if bytes > MAX_TEXT_BYTES {
        return Err(format!("--text-bytes: at most {MAX_TEXT_BYTES}").into());
    }
    const LINE: &str = "The quick brown fox jumps over the lazy dog, \"twice\" \\ 0123456789.\n";
    Ok(LINE.chars().cycle().take(bytes).collect())
}

/// A JSON string literal for `s`.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// `tools/call echo {text}`.
pub fn echo(id: u64, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{}}},{META}}}}}"#,
        quoted(text)
    )
}

/// The first round of `tools/call confirm_delete {path}`.
pub fn confirm(id: u64, path: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"confirm_delete","arguments":{{"path":{}}},{META_ELICIT}}}}}"#,
        quoted(path)
    )
}

/// The retry of `confirm_delete`: every input request the server made is accepted with
/// `{"confirm": true}`, and `requestState` is echoed.
pub fn confirm_retry<'a>(
    id: u64,
    path: &str,
    keys: impl Iterator<Item = &'a str>,
    state: &str,
) -> String {
    let answers: Vec<String> = keys
        .map(|key| {
            format!(
                r#"{}:{{"action":"accept","content":{{"confirm":true}}}}"#,
                quoted(key)
            )
        })
        .collect();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"confirm_delete","arguments":{{"path":{}}},"inputResponses":{{{}}},"requestState":{},{META_ELICIT}}}}}"#,
        quoted(path),
        answers.join(","),
        quoted(state)
    )
}

/// `subscriptions/listen` for tool-list changes.
pub fn listen(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{META}}}}}"#
    )
}
