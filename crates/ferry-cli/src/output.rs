//! Printing results: readable text by default, the raw result as JSON with `--json`.
//!
//! Readable output prints text plainly, summarises images, audio and blobs by MIME type
//! and size, names resources by URI and pretty-prints structured content. When stdout is
//! a terminal, control characters from the server are shown escaped.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};

use ferry_client::ServerNotification;
use ferry_client::ferry_protocol::common::Implementation;
use ferry_client::ferry_protocol::content::ContentBlock;
use ferry_client::ferry_protocol::discover::DiscoverResult;
use ferry_client::ferry_protocol::prompts::{GetPromptResult, Prompt};
use ferry_client::ferry_protocol::resources::{Resource, ResourceContents, ResourceTemplate};
use ferry_client::ferry_protocol::tasks::DetailedTask;
use ferry_client::ferry_protocol::tools::{CallToolResult, Tool};
use serde::Serialize;
use serde_json::Value;

use crate::term::sanitize;

/// Makes server text safe for the terminal (kept as is when stdout is not one).
pub fn clean(text: &str) -> String {
    if std::io::stdout().is_terminal() {
        sanitize(text, true)
    } else {
        text.to_owned()
    }
}

/// Writes to stdout; a closed pipe (`ferry tools | head`) is not an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// Prints `value` as pretty JSON on stdout.
pub fn json(value: &impl Serialize) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    print(&text)
}

/// The decoded size of base64 data.
pub fn base64_len(data: &str) -> usize {
    let clean = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = data
        .trim_end()
        .bytes()
        .rev()
        .take_while(|b| *b == b'=')
        .count()
        .min(2);
    (clean / 4 * 3
        + match clean % 4 {
            2 => 1,
            3 => 2,
            _ => 0,
        })
    .saturating_sub(padding)
}

/// A size for people: "812 bytes", "3.4 KiB".
pub fn human_size(bytes: usize) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut size = bytes as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit < UNITS.len() - 1 {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

fn resource_contents(out: &mut String, c: &ResourceContents) {
    match c {
        ResourceContents::Text(t) => {
            let mime = t
                .mime_type
                .as_deref()
                .map(|m| format!(", {m}"))
                .unwrap_or_default();
            let _ = writeln!(out, "[resource {}{}]", clean(&t.uri), clean(&mime));
            out.push_str(&clean(&t.text));
            if !t.text.ends_with('\n') {
                out.push('\n');
            }
        }
        ResourceContents::Blob(b) => {
            let mime = b.mime_type.as_deref().unwrap_or("application/octet-stream");
            let _ = writeln!(
                out,
                "[resource {}: {}, {}]",
                clean(&b.uri),
                clean(mime),
                human_size(base64_len(&b.blob))
            );
        }
    }
}

/// Content blocks as text.
pub fn content(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => {
                out.push_str(&clean(&t.text));
                if !t.text.ends_with('\n') {
                    out.push('\n');
                }
            }
            ContentBlock::Image(i) => {
                let _ = writeln!(
                    out,
                    "[image: {}, {}]",
                    clean(&i.mime_type),
                    human_size(base64_len(&i.data))
                );
            }
            ContentBlock::Audio(a) => {
                let _ = writeln!(
                    out,
                    "[audio: {}, {}]",
                    clean(&a.mime_type),
                    human_size(base64_len(&a.data))
                );
            }
            ContentBlock::ResourceLink(l) => {
                let r = &l.resource;
                let mut line = format!("[resource link: {}", clean(&r.uri));
                if let Some(m) = &r.mime_type {
                    let _ = write!(line, ", {}", clean(m));
                }
                let _ = write!(line, " ({})]", clean(r.title.as_deref().unwrap_or(&r.name)));
                out.push_str(&line);
                out.push('\n');
            }
            ContentBlock::EmbeddedResource(e) => resource_contents(&mut out, &e.resource),
        }
    }
    out
}

/// A tool result as text: the content, then the structured content pretty-printed. A
/// text block that only repeats the structured content is left out.
pub fn call_result(result: &CallToolResult) -> String {
    let structured = result.structured_content.as_ref();
    let blocks: Vec<ContentBlock> = result
        .content
        .iter()
        .filter(|b| match (b, structured) {
            (ContentBlock::Text(t), Some(s)) => {
                serde_json::from_str::<Value>(&t.text).ok().as_ref() != Some(s)
            }
            _ => true,
        })
        .cloned()
        .collect();
    let mut out = content(&blocks);
    if let Some(s) = structured {
        if !out.is_empty() {
            out.push_str("structured content:\n");
        }
        out.push_str(&clean(&serde_json::to_string_pretty(s).unwrap_or_default()));
        out.push('\n');
    }
    out
}

fn server_line(info: Option<&Implementation>) -> String {
    match info {
        Some(i) => {
            let mut s = clean(i.title.as_deref().unwrap_or(&i.name));
            if i.title.is_some() {
                let _ = write!(s, " ({})", clean(&i.name));
            }
            let _ = write!(s, " {}", clean(&i.version));
            s
        }
        None => "(the server did not say who it is)".into(),
    }
}

/// `server/discover` as text.
pub fn discover(d: &DiscoverResult, info: Option<&Implementation>, protocol: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "server: {}", server_line(info));
    let _ = writeln!(
        out,
        "protocol: {protocol} (supported: {})",
        d.supported_versions.join(", ")
    );
    let caps = serde_json::to_value(&d.capabilities).unwrap_or(Value::Null);
    let names: Vec<String> = caps
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let flags: Vec<&str> = v
                        .as_object()
                        .map(|o| {
                            o.iter()
                                .filter(|(_, f)| **f == Value::Bool(true))
                                .map(|(f, _)| f.as_str())
                                .collect()
                        })
                        .unwrap_or_default();
                    if flags.is_empty() {
                        k.clone()
                    } else {
                        format!("{k} ({})", flags.join(", "))
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "capabilities: {}",
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    );
    if let Some(i) = &d.instructions {
        let _ = writeln!(out, "instructions: {}", clean(i));
    }
    out
}

/// One line per argument of a tool's input schema.
pub fn schema_arguments(schema: &Value) -> Vec<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, p)| {
            let ty = match p.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(ts)) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("|"),
                _ => "any".into(),
            };
            let mut line = format!("{}: {ty}", clean(name));
            if required.contains(&name.as_str()) {
                line.push_str(" (required)");
            }
            if let Some(d) = p.get("description").and_then(Value::as_str) {
                let _ = write!(line, " — {}", clean(d));
            }
            line
        })
        .collect()
}

/// `tools/list` as text.
pub fn tools(tools: &[Tool]) -> String {
    let mut out = String::new();
    if tools.is_empty() {
        out.push_str("(no tools)\n");
    }
    for t in tools {
        let mut head = clean(&t.name);
        if t.display_name() != t.name {
            let _ = write!(head, " ({})", clean(t.display_name()));
        }
        if let Some(d) = &t.description {
            let _ = write!(head, " — {}", clean(d));
        }
        out.push_str(&head);
        out.push('\n');
        for a in schema_arguments(&t.input_schema) {
            let _ = writeln!(out, "    {a}");
        }
    }
    out
}

/// `prompts/list` as text.
pub fn prompts(prompts: &[Prompt]) -> String {
    let mut out = String::new();
    if prompts.is_empty() {
        out.push_str("(no prompts)\n");
    }
    for p in prompts {
        let mut head = clean(&p.name);
        if let Some(d) = &p.description {
            let _ = write!(head, " — {}", clean(d));
        }
        out.push_str(&head);
        out.push('\n');
        for a in p.arguments.iter().flatten() {
            let mut line = format!("    {}", clean(&a.name));
            if a.required == Some(true) {
                line.push_str(" (required)");
            }
            if let Some(d) = &a.description {
                let _ = write!(line, " — {}", clean(d));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// `prompts/get` as text.
pub fn prompt_result(r: &GetPromptResult) -> String {
    let mut out = String::new();
    if let Some(d) = &r.description {
        let _ = writeln!(out, "{}\n", clean(d));
    }
    for m in &r.messages {
        let role = serde_json::to_value(m.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = write!(out, "[{role}] ");
        out.push_str(&content(std::slice::from_ref(&m.content)));
    }
    out
}

/// `resources/list` and `resources/templates/list` as text.
pub fn resources(resources: &[Resource], templates: &[ResourceTemplate]) -> String {
    let mut out = String::new();
    if resources.is_empty() && templates.is_empty() {
        out.push_str("(no resources)\n");
    }
    for r in resources {
        let mut line = format!(
            "{} ({})",
            clean(&r.uri),
            clean(r.title.as_deref().unwrap_or(&r.name))
        );
        if let Some(m) = &r.mime_type {
            let _ = write!(line, " {}", clean(m));
        }
        if let Some(d) = &r.description {
            let _ = write!(line, " — {}", clean(d));
        }
        out.push_str(&line);
        out.push('\n');
    }
    if !templates.is_empty() {
        out.push_str("templates:\n");
    }
    for t in templates {
        let mut line = format!(
            "  {} ({})",
            clean(&t.uri_template),
            clean(t.title.as_deref().unwrap_or(&t.name))
        );
        if let Some(d) = &t.description {
            let _ = write!(line, " — {}", clean(d));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `resources/read` as text.
pub fn read_result(contents: &[ResourceContents]) -> String {
    let mut out = String::new();
    for c in contents {
        resource_contents(&mut out, c);
    }
    out
}

/// A change notification as one line.
pub fn notification(n: &ServerNotification) -> String {
    match n {
        ServerNotification::ToolsListChanged => "tools/list changed".into(),
        ServerNotification::PromptsListChanged => "prompts/list changed".into(),
        ServerNotification::ResourcesListChanged => "resources/list changed".into(),
        ServerNotification::ResourceUpdated { uri } => format!("resource updated: {}", clean(uri)),
        ServerNotification::Other { method, params } => match params {
            Some(p) => format!("{}: {}", clean(method), clean(&p.to_string())),
            None => clean(method),
        },
        other => format!("{other:?}"),
    }
}

/// A change notification as JSON (for `--json`, one per line).
pub fn notification_json(n: &ServerNotification) -> Value {
    use ferry_client::ferry_protocol::notifications as names;
    match n {
        ServerNotification::ToolsListChanged => {
            serde_json::json!({"method": names::TOOLS_LIST_CHANGED})
        }
        ServerNotification::PromptsListChanged => {
            serde_json::json!({"method": names::PROMPTS_LIST_CHANGED})
        }
        ServerNotification::ResourcesListChanged => {
            serde_json::json!({"method": names::RESOURCES_LIST_CHANGED})
        }
        ServerNotification::ResourceUpdated { uri } => {
            serde_json::json!({"method": names::RESOURCES_UPDATED, "params": {"uri": uri}})
        }
        ServerNotification::Other { method, params } => {
            serde_json::json!({"method": method, "params": params})
        }
        other => serde_json::json!({"method": format!("{other:?}")}),
    }
}

/// A task as `ferry task get` shows it: id, status and message, then its questions,
/// result or error.
pub fn task(task: &DetailedTask) -> String {
    let t = &task.task;
    let mut out = format!(
        "task {}\nstatus: {}\n",
        sanitize(&t.task_id, false),
        t.status.as_str()
    );
    if let Some(m) = &t.status_message {
        let _ = writeln!(out, "message: {}", sanitize(m, false));
    }
    let _ = writeln!(
        out,
        "created: {}  updated: {}",
        t.created_at, t.last_updated_at
    );
    if let Some(asks) = &task.input_requests {
        for (key, request) in asks {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("?");
            let _ = writeln!(out, "waiting for: {} ({method})", sanitize(key, false));
        }
    }
    if let Some(result) = &task.result {
        match serde_json::from_value::<CallToolResult>(result.clone()) {
            Ok(r) => out.push_str(&call_result(&r)),
            Err(_) => {
                let _ = writeln!(out, "{result}");
            }
        }
    }
    if let Some(e) = &task.error {
        let _ = writeln!(
            out,
            "error: {} (code {})",
            sanitize(&e.message, false),
            e.code
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_sizes() {
        assert_eq!(base64_len(""), 0);
        assert_eq!(base64_len("TQ=="), 1);
        assert_eq!(base64_len("TWE="), 2);
        assert_eq!(base64_len("TWFu"), 3);
        assert_eq!(base64_len("TWFuTQ"), 4);
        assert_eq!(base64_len("TWFu\nTWFu"), 6);
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_size(812), "812 bytes");
        assert_eq!(human_size(3 * 1024 + 400), "3.4 KiB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MiB");
    }

    #[test]
    fn content_is_summarised() {
        let r: CallToolResult = serde_json::from_value(json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "test://x", "text": "inside", "mimeType": "text/plain"}},
            {"type": "resource", "resource": {"uri": "test://b", "blob": "AAAA"}}
        ]}))
        .unwrap();
        assert_eq!(
            call_result(&r),
            "hello\n[image: image/png, 8 bytes]\n[audio: audio/wav, 4 bytes]\n\
             [resource link: file:///a.txt, text/plain (a)]\n[resource test://x, text/plain]\ninside\n\
             [resource test://b: application/octet-stream, 3 bytes]\n"
        );
    }

    #[test]
    fn structured_content_is_pretty_and_not_repeated() {
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\"a\":1}"}],
            "structuredContent": {"a": 1}
        }))
        .unwrap();
        assert_eq!(call_result(&r), "{\n  \"a\": 1\n}\n");
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "Sum: 3"}],
            "structuredContent": {"sum": 3}
        }))
        .unwrap();
        assert_eq!(
            call_result(&r),
            "Sum: 3\nstructured content:\n{\n  \"sum\": 3\n}\n"
        );
    }

    #[test]
    fn tools_show_their_arguments() {
        let t: Tool = serde_json::from_value(json!({
            "name": "confirm_delete",
            "description": "Deletes a path",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string", "description": "The path"}, "n": {"type": ["integer", "null"]}}, "required": ["path"]}
        }))
        .unwrap();
        assert_eq!(
            tools(&[t]),
            "confirm_delete — Deletes a path\n    path: string (required) — The path\n    n: integer|null\n"
        );
    }

    #[test]
    fn notifications() {
        assert_eq!(
            notification(&ServerNotification::ToolsListChanged),
            "tools/list changed"
        );
        assert_eq!(
            notification_json(&ServerNotification::ResourceUpdated {
                uri: "test://x".into()
            }),
            json!({"method": "notifications/resources/updated", "params": {"uri": "test://x"}})
        );
    }
}
