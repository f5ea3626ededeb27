//! What to do next when a server cannot be reached or does not speak MCP: a one-line
//! hint drawn from the error's chain of causes (`-v` prints the whole chain).

use ferry_client::Error as ClientError;
use url::Url;

use crate::cli::ServerArgs;

/// A hint for `err`, when its causes say something the user can act on.
pub fn hint(err: &anyhow::Error, server: &ServerArgs) -> Option<String> {
    let causes: Vec<String> = err.chain().map(|c| c.to_string().to_lowercase()).collect();
    let any = |needle: &str| causes.iter().any(|c| c.contains(needle));
    let io_kind = err
        .chain()
        .find_map(|c| c.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    if let Some(line) = &server.stdio {
        let program = crate::connect::split_command(line)
            .ok()
            .and_then(|w| w.into_iter().next())
            .unwrap_or_default();
        return match io_kind {
            Some(std::io::ErrorKind::NotFound) if any("could not start") => Some(format!(
                "{program:?} was not found{}; give its path, or check the spelling",
                if program.contains('/') {
                    String::new()
                } else {
                    " on the PATH".to_owned()
                }
            )),
            Some(std::io::ErrorKind::PermissionDenied) if any("could not start") => {
                Some(format!("{program:?} cannot be run: is it executable?"))
            }
            _ => None,
        };
    }
    let url = server.url.as_deref().and_then(|u| Url::parse(u).ok())?;
    let place = match (url.host_str(), url.port_or_known_default()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        _ => url.to_string(),
    };
    let with_scheme = |scheme: &str| {
        let mut other = url.clone();
        let _ = other.set_scheme(scheme);
        other.to_string()
    };
    if let Some(status) = err
        .chain()
        .find_map(|c| match c.downcast_ref::<ClientError>() {
            Some(ClientError::HttpStatus { status, .. }) => Some(*status),
            _ => None,
        })
    {
        return Some(match status {
            404 if url.path() != "/mcp" => format!(
                "no MCP endpoint at {url} (HTTP 404); MCP servers usually serve /mcp: try {}",
                url.join("/mcp").map(|u| u.to_string()).unwrap_or_default()
            ),
            404 => format!("no MCP endpoint at {url} (HTTP 404): check the path"),
            405 | 501 => format!(
                "the server at {place} does not take POST requests there (HTTP {status}): it is \
                 probably not an MCP server, or MCP is at another path"
            ),
            _ => return None,
        });
    }
    if io_kind == Some(std::io::ErrorKind::ConnectionRefused) || any("connection refused") {
        return Some(format!(
            "nothing is listening at {place} (connection refused): is the server running at {url}?"
        ));
    }
    if any("dns error") || any("failed to lookup address") {
        return Some(format!(
            "the host {:?} could not be found (DNS): check the URL",
            url.host_str().unwrap_or_default()
        ));
    }
    if url.scheme() == "https"
        && (any("invalidcontenttype") || any("corrupt message") || any("wrong version number"))
    {
        return Some(format!(
            "the server at {place} answered in plain HTTP, not TLS: try {}",
            with_scheme("http")
        ));
    }
    if url.scheme() == "http" && any("invalid http version") {
        return Some(format!(
            "the server at {place} did not answer in HTTP; if it expects TLS, try {}",
            with_scheme("https")
        ));
    }
    if any("certificate") {
        return Some(format!(
            "the TLS certificate of {place} was not accepted: check the host name, or the \
             system's certificate authorities"
        ));
    }
    if let Some(ClientError::Timeout { after, .. }) =
        err.chain().find_map(|c| c.downcast_ref::<ClientError>())
    {
        return Some(format!(
            "the server at {place} accepted the connection but did not answer within {after:?}: \
             is it overloaded, or not an MCP server? (--timeout sets the limit)"
        ));
    }
    None
}

/// A short account of a non-MCP answer's body: an HTML page's title (or its first
/// words), or the first line of anything else, cut to a sentence.
pub fn summarize_body(body: &str) -> String {
    let trimmed = body.trim_start();
    let looks_html = trimmed.starts_with('<');
    let text = if looks_html {
        let lower = trimmed.to_ascii_lowercase();
        let title = lower.find("<title>").and_then(|start| {
            let from = start + "<title>".len();
            lower[from..]
                .find("</title>")
                .map(|end| trimmed[from..from + end].to_owned())
        });
        match title {
            Some(t) if !t.trim().is_empty() => format!("an HTML page titled {:?}", t.trim()),
            _ => format!("an HTML page: {:?}", strip_tags(trimmed)),
        }
    } else {
        trimmed.lines().next().unwrap_or_default().to_owned()
    };
    cut(&text, 160)
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_html_page_is_summarized_by_its_title() {
        let page = "<!DOCTYPE HTML>\n<html><head><title>Error response</title></head>\
                    <body><h1>Error response</h1><p>Error code: 501</p></body></html>";
        assert_eq!(
            summarize_body(page),
            "an HTML page titled \"Error response\""
        );
        assert_eq!(
            summarize_body("<html><body><p>Not  here</p></body></html>"),
            "an HTML page: \"Not here\""
        );
        assert_eq!(summarize_body("plain text\nmore"), "plain text");
        assert_eq!(summarize_body(&"x".repeat(500)).chars().count(), 161);
    }

    fn with_url(url: &str) -> ServerArgs {
        ServerArgs {
            url: Some(url.to_owned()),
            ..ServerArgs::default()
        }
    }

    #[test]
    fn http_statuses_name_the_next_step() {
        let err = anyhow::Error::new(ClientError::HttpStatus {
            status: 404,
            body: String::new(),
        });
        let h = hint(&err, &with_url("http://127.0.0.1:3000/")).unwrap();
        assert!(
            h.contains("usually serve /mcp: try http://127.0.0.1:3000/mcp"),
            "{h}"
        );
        let err = anyhow::Error::new(ClientError::HttpStatus {
            status: 501,
            body: String::new(),
        });
        let h = hint(&err, &with_url("http://127.0.0.1:3000/mcp")).unwrap();
        assert!(h.contains("not an MCP server"), "{h}");
    }

    #[test]
    fn a_timeout_names_the_option() {
        let err = anyhow::Error::new(ClientError::Timeout {
            method: "initialize".into(),
            after: std::time::Duration::from_secs(1),
        });
        let h = hint(&err, &with_url("http://127.0.0.1:3000/mcp")).unwrap();
        assert!(h.contains("--timeout"), "{h}");
    }
}
