//! The JSON-RPC side of the ceiling: parsing a request, the header checks, and the
//! answers to `echo`, `confirm_delete` and `subscriptions/listen`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The only protocol revision the ceiling speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The MCP headers of an HTTP request (absent on stdio).
pub struct HeaderView<'a> {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<&'a str>,
    /// `Mcp-Method`.
    pub method: Option<&'a str>,
    /// `Mcp-Name`.
    pub name: Option<&'a str>,
}

/// What to send back for one message.
pub enum Outcome {
    /// A JSON document with this HTTP status (the status is ignored on stdio).
    Reply(u16, Vec<u8>),
    /// A notification: nothing to answer (HTTP 202).
    Accepted,
    /// Open a `subscriptions/listen` stream that starts with this SSE event (the
    /// `notifications/subscriptions/acknowledged` notification).
    Listen(Vec<u8>),
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Arguments<'a>>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<Meta<'a>>,
    #[serde(rename = "requestState", borrow, default)]
    request_state: Option<Cow<'a, str>>,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<InputResponses>,
}

#[derive(Deserialize)]
struct Arguments<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    path: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
    protocol_version: Cow<'a, str>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow)]
    client_capabilities: &'a RawValue,
}

#[derive(Deserialize)]
struct InputResponses {
    confirm: Option<ElicitResult>,
}

#[derive(Deserialize)]
struct ElicitResult {
    action: String,
    #[serde(default)]
    content: Option<ConfirmContent>,
}

#[derive(Deserialize)]
struct ConfirmContent {
    confirm: bool,
}

#[derive(Serialize)]
struct Success<'a, R> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: R,
}

#[derive(Serialize)]
struct TextResult<'a> {
    #[serde(rename = "resultType")]
    result_type: &'static str,
    content: [TextBlock<'a>; 1],
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RawValue>,
    error: ErrorObject<'a>,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i32,
    message: &'a str,
}

/// Handles one JSON-RPC message; `headers` is `None` on stdio.
pub fn dispatch(body: &[u8], headers: Option<&HeaderView<'_>>) -> Outcome {
    let message: Message<'_> = match serde_json::from_slice(body) {
        Ok(message) => message,
        Err(_) => return error(400, None, -32700, "parse error"),
    };
    if message.jsonrpc != "2.0" {
        return error(400, message.id, -32600, "jsonrpc must be \"2.0\"");
    }
    let Some(id) = message.id else {
        return Outcome::Accepted;
    };
    let Some(params) = message.params else {
        return error(400, Some(id), -32602, "params are required");
    };
    let Some(meta) = &params.meta else {
        return error(
            400,
            Some(id),
            -32602,
            "_meta with the protocol version is required",
        );
    };
    if meta.protocol_version != PROTOCOL_VERSION || !meta.client_capabilities.get().starts_with('{')
    {
        return error(
            400,
            Some(id),
            -32602,
            "unsupported protocol version or capabilities",
        );
    }
    if let Some(headers) = headers {
        if headers.protocol_version != Some(PROTOCOL_VERSION) {
            return error(
                400,
                Some(id),
                -32001,
                "MCP-Protocol-Version does not match the body",
            );
        }
        if headers.method != Some(message.method.as_ref()) {
            return error(400, Some(id), -32001, "Mcp-Method does not match the body");
        }
        if message.method == "tools/call" && headers.name != params.name.as_deref() {
            return error(400, Some(id), -32001, "Mcp-Name does not match the body");
        }
    }
    match message.method.as_ref() {
        "tools/call" => call_tool(id, params),
        "subscriptions/listen" if headers.is_some() => listen(id),
        _ => error(200, Some(id), -32601, "method not found"),
    }
}

/// `tools/call` for the two tools.
fn call_tool(id: &RawValue, params: Params<'_>) -> Outcome {
    let arguments = params.arguments;
    match params.name.as_deref() {
        Some("echo") => match arguments.and_then(|a| a.text) {
            Some(text) => text_result(id, &text),
            None => error(200, Some(id), -32602, "echo needs a string `text`"),
        },
        Some("confirm_delete") => {
            let Some(path) = arguments.and_then(|a| a.path) else {
                return error(
                    200,
                    Some(id),
                    -32602,
                    "confirm_delete needs a string `path`",
                );
            };
            // Every round looks at the path first, as ferry-everything's handler does: the
            // first to refuse a path leading out before asking, the last to act on what is
            // there now.
            let found = match look(&path) {
                Ok(found) => found,
                Err(refusal) => return error(200, Some(id), -32602, refusal),
            };
            let expected_state = format!("confirm:{path}");
            match (
                params.request_state,
                params.input_responses.and_then(|r| r.confirm),
            ) {
                (Some(state), Some(answer)) if state == expected_state => {
                    let confirmed =
                        answer.action == "accept" && answer.content.is_some_and(|c| c.confirm);
                    let text = if confirmed {
                        final_answer(&path, found)
                    } else {
                        format!("Kept {path}: nothing deleted")
                    };
                    text_result(id, &text)
                }
                (Some(_), _) => error(
                    200,
                    Some(id),
                    -32602,
                    "requestState does not match this request",
                ),
                (None, _) => input_required(id, &path, &expected_state),
            }
        }
        _ => error(200, Some(id), -32602, "unknown tool"),
    }
}

/// The folder the ceiling pretends to delete in: it looks there, as ferry-everything does
/// in its sandbox (one `symlink_metadata` a round), but never deletes anything. Like
/// ferry-everything's, the folder is made fresh for the process, so that a lookup costs
/// the kernel the same: a name not seen before in an existing folder (a directory search
/// and a new negative cache entry), neither a missing folder (one cached entry) nor names
/// an earlier run already looked up.
pub fn sandbox() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ferry-bench-ceiling-{}", std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("ceiling: cannot make {}: {e}", dir.display());
        }
        dir
    })
}

/// Removes the sandbox folder (empty: nothing is written there).
pub fn remove_sandbox() {
    let _ = std::fs::remove_dir(sandbox());
}

/// Whether `path` names something in the sandbox, after the checks ferry-everything makes
/// before it looks: relative, and no `..`.
fn look(path: &str) -> Result<bool, &'static str> {
    use std::path::Component;
    let relative = std::path::Path::new(path);
    for component in relative.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => return Err("absolute paths are refused"),
            Component::ParentDir => return Err("paths with `..` are refused"),
            Component::CurDir | Component::Normal(_) => {}
        }
    }
    Ok(std::fs::symlink_metadata(sandbox().join(relative)).is_ok())
}

/// The confirmed answer, in ferry-everything's shape.
fn final_answer(path: &str, found: bool) -> String {
    if found {
        format!("Nothing deleted: {path} is kept (this benchmark server deletes nothing)")
    } else {
        format!(
            "Nothing deleted: {path} does not exist in {}",
            sandbox().display()
        )
    }
}

/// A complete result with one text block.
fn text_result(id: &RawValue, text: &str) -> Outcome {
    let result = TextResult {
        result_type: "complete",
        content: [TextBlock { kind: "text", text }],
    };
    json(
        200,
        &Success {
            jsonrpc: "2.0",
            id,
            result,
        },
    )
}

/// The first round of `confirm_delete`: ask for the boolean `confirm`.
fn input_required(id: &RawValue, path: &str, state: &str) -> Outcome {
    let result = serde_json::json!({
        "resultType": "input_required",
        "inputRequests": {
            "confirm": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": format!("Delete {path} from {}?", sandbox().display()),
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "confirm": { "type": "boolean", "title": "Confirm" } },
                        "required": ["confirm"]
                    }
                }
            }
        },
        "requestState": state,
    });
    json(
        200,
        &Success {
            jsonrpc: "2.0",
            id,
            result,
        },
    )
}

/// The acknowledgment that opens a `subscriptions/listen` stream, as an SSE event. The
/// benchmark's listeners only ask for `toolsListChanged`, which is acknowledged as asked.
fn listen(id: &RawValue) -> Outcome {
    let notification = serde_json::json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "notifications": { "toolsListChanged": true },
            "_meta": { "io.modelcontextprotocol/subscriptionId": id },
        },
    });
    let mut event = b"data: ".to_vec();
    serde_json::to_writer(&mut event, &notification).expect("notifications serialize");
    event.extend_from_slice(b"\n\n");
    Outcome::Listen(event)
}

/// A JSON-RPC error response.
fn error(status: u16, id: Option<&RawValue>, code: i32, message: &str) -> Outcome {
    json(
        status,
        &Failure {
            jsonrpc: "2.0",
            id,
            error: ErrorObject { code, message },
        },
    )
}

fn json<T: Serialize>(status: u16, value: &T) -> Outcome {
    Outcome::Reply(
        status,
        serde_json::to_vec(value).expect("responses serialize"),
    )
}
