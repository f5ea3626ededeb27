//! Sampling and roots requests in the terminal. Both are deprecated as of MCP 2026-07-28;
//! ferry still answers them, and says so.
//!
//! - Sampling: ferry has no model, so it shows the request and lets you type the reply
//!   yourself, or refuse.
//! - Roots: ferry offers the current directory as a `file://` root, with your consent;
//!   without it, the server gets an empty list.

use console::style;
use ferry_client::ferry_protocol::content::SamplingMessageContentBlock;
use ferry_client::ferry_protocol::roots::Root;
use ferry_client::ferry_protocol::sampling::{CreateMessageResult, SamplingMessage};
use ferry_client::{RootsRequest, SamplingRequest};

use crate::answers::typed_reply;
use crate::form::origin_line;
use crate::term::{Cancelled, Prompter, sanitize};

const DEPRECATED: &str = "deprecated since MCP 2026-07-28";

fn message_text(m: &SamplingMessage) -> String {
    let parts: Vec<String> = m
        .content
        .blocks()
        .iter()
        .map(|b| match b {
            SamplingMessageContentBlock::Text(t) => sanitize(&t.text, true),
            SamplingMessageContentBlock::Image(i) => {
                format!("[image, {}]", sanitize(&i.mime_type, false))
            }
            SamplingMessageContentBlock::Audio(a) => {
                format!("[audio, {}]", sanitize(&a.mime_type, false))
            }
            SamplingMessageContentBlock::ToolUse(t) => {
                format!("[tool use: {}]", sanitize(&t.name, false))
            }
            SamplingMessageContentBlock::ToolResult(_) => "[tool result]".to_owned(),
        })
        .collect();
    parts.join(" ")
}

/// Shows a sampling request and asks for a typed reply. `None` refuses.
pub fn sampling(p: &mut dyn Prompter, request: &SamplingRequest) -> Option<CreateMessageResult> {
    let server = sanitize(request.context.server.display_name(), false);
    let params = &request.params;
    p.say("");
    p.say(&format!(
        "{} asks your model to write a reply {}",
        style(&server).for_stderr().bold().magenta(),
        style(format!("(sampling, {DEPRECATED})"))
            .for_stderr()
            .dim()
    ));
    if let Some(origin) = origin_line(&request.context) {
        p.say(
            &style(format!("  ({origin})"))
                .for_stderr()
                .dim()
                .to_string(),
        );
    }
    p.say("ferry has no model: you can type the reply yourself, or refuse.");
    if let Some(system) = &params.system_prompt {
        p.say(&format!("  [system] {}", sanitize(system, true)));
    }
    for m in &params.messages {
        let role = serde_json::to_value(m.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        p.say(&format!("  [{role}] {}", message_text(m)));
    }
    let mut facts = vec![format!("at most {} tokens", params.max_tokens)];
    if let Some(hints) = params
        .model_preferences
        .as_ref()
        .and_then(|m| m.hints.as_ref())
    {
        let names: Vec<String> = hints
            .iter()
            .filter_map(|h| h.name.as_deref())
            .map(|n| sanitize(n, false))
            .collect();
        if !names.is_empty() {
            facts.push(format!("model hints: {}", names.join(", ")));
        }
    }
    if let Some(tools) = &params.tools {
        facts.push(format!("{} tools offered", tools.len()));
    }
    p.say(
        &style(format!("  ({})", facts.join("; ")))
            .for_stderr()
            .dim()
            .to_string(),
    );
    let ask = |p: &mut dyn Prompter| -> Result<Option<CreateMessageResult>, Cancelled> {
        let items = vec!["Type a reply".to_owned(), "Refuse".to_owned()];
        if p.select("Answer it?", &items, 0)? != 0 {
            return Ok(None);
        }
        let text = p.text("Your reply", "")?;
        Ok(Some(typed_reply(&text)))
    };
    let answer = ask(p).unwrap_or(None);
    if answer.is_none() {
        p.say(&style("Refused.").for_stderr().dim().to_string());
    }
    answer
}

/// The current directory as a `file://` URI, with the path percent-encoded.
pub fn file_uri(path: &std::path::Path) -> Option<String> {
    let url = if cfg!(windows) {
        url::Url::from_directory_path(path).ok()?
    } else {
        url::Url::from_file_path(path).ok()?
    };
    Some(url.to_string())
}

/// Offers the current directory as a root. `None`: the user shares nothing.
pub fn roots(p: &mut dyn Prompter, request: &RootsRequest) -> Option<Vec<Root>> {
    let server = sanitize(request.context.server.display_name(), false);
    p.say("");
    p.say(&format!(
        "{} asks for your roots, the folders it may work in {}",
        style(&server).for_stderr().bold().magenta(),
        style(format!("(roots, {DEPRECATED})")).for_stderr().dim()
    ));
    if let Some(origin) = origin_line(&request.context) {
        p.say(
            &style(format!("  ({origin})"))
                .for_stderr()
                .dim()
                .to_string(),
        );
    }
    let cwd = std::env::current_dir().ok();
    let Some((dir, uri)) = cwd.and_then(|d| file_uri(&d).map(|u| (d, u))) else {
        p.warn("The current directory cannot be shared as a file:// URI; refusing.");
        return None;
    };
    p.say(&format!(
        "  {}  (the current directory)",
        sanitize(&uri, false)
    ));
    match p.confirm("Share it?", Some(false)) {
        Ok(true) => {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| uri.clone());
            Some(vec![Root::new(uri).with_name(name)])
        }
        _ => {
            p.say(
                &style("Not shared: the server gets an empty list of roots.")
                    .for_stderr()
                    .dim()
                    .to_string(),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::script::{Script, Step};
    use ferry_client::ferry_protocol::sampling::CreateMessageRequestParams;
    use ferry_client::{AskContext, AskingServer};

    fn context() -> AskContext {
        AskContext {
            server: AskingServer {
                name: "s".into(),
                title: Some("Server".into()),
                version: None,
            },
            origin: None,
            key: Some("q".into()),
        }
    }

    #[test]
    fn sampling_shows_the_request_and_takes_a_reply() {
        let req = SamplingRequest {
            context: context(),
            params: CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text("What is the capital of France?")],
                100,
            )
            .with_system_prompt("Be brief"),
        };
        let mut s = Script::new([Step::Pick("Type a reply"), Step::Text("Paris")]);
        let r = sampling(&mut s, &req).unwrap();
        assert_eq!(r.content.text(), "Paris");
        let shown = console::strip_ansi_codes(&s.shown.join("\n")).into_owned();
        assert!(shown.contains("deprecated"), "{shown}");
        assert!(
            shown.contains("[user] What is the capital of France?"),
            "{shown}"
        );
        assert!(shown.contains("[system] Be brief"), "{shown}");
        assert!(shown.contains("at most 100 tokens"), "{shown}");
        let mut s = Script::new([Step::Pick("Refuse")]);
        assert!(sampling(&mut s, &req).is_none());
        let mut s = Script::new([Step::Esc]);
        assert!(sampling(&mut s, &req).is_none());
    }

    #[test]
    fn roots_offer_the_current_directory() {
        let req = RootsRequest { context: context() };
        let mut s = Script::new([Step::Yes(true)]);
        let roots = roots(&mut s, &req).unwrap();
        assert_eq!(roots.len(), 1);
        assert!(roots[0].uri.starts_with("file:///"), "{}", roots[0].uri);
        assert!(s.shown.iter().any(|l| l.contains("deprecated")));
        let mut s = Script::new([Step::Yes(false)]);
        assert!(super::roots(&mut s, &req).is_none());
    }

    #[test]
    fn file_uris_are_encoded() {
        if cfg!(unix) {
            assert_eq!(
                file_uri(std::path::Path::new("/home/me/my project")).as_deref(),
                Some("file:///home/me/my%20project")
            );
        }
    }
}
