//! URL-mode elicitation: show the full URL with its host highlighted, warn about
//! look-alike (punycode) hosts and unencrypted links, ask for consent, then open the URL
//! in the system browser, or print it when there is none. ferry never fetches the URL
//! itself. After opening, it waits until the user says they are done, so the retry
//! reaches the server after the page was finished.

use std::ops::Range;
use std::process::{Command, Stdio};

use console::style;
use ferry_client::UrlRequest;
use ferry_client::ferry_protocol::elicitation::ElicitResult;

use crate::form::origin_line;
use crate::term::{Cancelled, Prompter, Terminal, sanitize};

/// What ferry makes of a URL before asking to open it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlCheck {
    /// The URL as the server sent it.
    pub url: String,
    /// The host as browsers see it (punycode for international names).
    pub host: Option<String>,
    /// Where the host is in `url`, to highlight it.
    pub host_span: Option<Range<usize>>,
    /// What the user should know before agreeing.
    pub warnings: Vec<String>,
    /// Whether ferry may open it (http or https with a host).
    pub openable: bool,
}

fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.to_ascii_lowercase().ends_with(".localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Where the host is in the URL text: after `scheme://` and any `user@`, before the port
/// and path.
fn host_span(url: &str) -> Option<Range<usize>> {
    let start = url.find("://")? + 3;
    let rest = &url[start..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_start = authority.rfind('@').map(|i| i + 1).unwrap_or(0);
    let host_part = &authority[host_start..];
    let host_len = if host_part.starts_with('[') {
        host_part
            .find(']')
            .map(|i| i + 1)
            .unwrap_or(host_part.len())
    } else {
        match host_part.rfind(':') {
            Some(i) if host_part[i + 1..].chars().all(|c| c.is_ascii_digit()) => i,
            _ => host_part.len(),
        }
    };
    (host_len > 0).then(|| start + host_start..start + host_start + host_len)
}

/// Looks at a URL (without fetching it).
pub fn check(url: &str) -> UrlCheck {
    let mut warnings = Vec::new();
    let parsed = url::Url::parse(url);
    let span = host_span(url);
    let (host, openable) = match &parsed {
        Err(e) => {
            warnings.push(format!(
                "This is not a valid URL ({e}); ferry will not open it."
            ));
            (None, false)
        }
        Ok(u) => {
            let host = u.host_str().map(str::to_owned);
            let web = matches!(u.scheme(), "http" | "https");
            if !web {
                warnings.push(format!(
                    "This is a {}: link, not a web page; ferry only opens http and https links.",
                    u.scheme()
                ));
            }
            if let Some(h) = &host {
                let shown = span.clone().map(|r| &url[r]).unwrap_or(h.as_str());
                let puny = h
                    .split('.')
                    .any(|l| l.to_ascii_lowercase().starts_with("xn--"));
                if !shown.is_ascii() {
                    warnings.push(format!(
                        "The host has non-ASCII characters, which can imitate another domain; your browser will go to {h}."
                    ));
                } else if puny {
                    warnings.push(format!(
                        "The host {h} is punycode (xn--): an international name that may imitate another domain with look-alike letters."
                    ));
                }
                if u.scheme() == "http" && !is_loopback(h) {
                    warnings.push(
                        "This link is not encrypted (http, not https) and leaves this machine: only use it for local development."
                            .to_owned(),
                    );
                }
                if !u.username().is_empty() || u.password().is_some() {
                    warnings.push(format!(
                        "The URL has a user name before '@', which can disguise where it goes: the host is {h}."
                    ));
                }
            } else if web {
                warnings.push("The URL has no host; ferry will not open it.".to_owned());
            }
            let openable = web && host.is_some();
            (host, openable)
        }
    };
    UrlCheck {
        url: url.to_owned(),
        host,
        host_span: span,
        warnings,
        openable,
    }
}

/// The URL with its host in bold and underlined (for stderr).
pub fn highlighted(check: &UrlCheck) -> String {
    let url = &check.url;
    match &check.host_span {
        Some(r) if url.is_char_boundary(r.start) && url.is_char_boundary(r.end) => format!(
            "{}{}{}",
            sanitize(&url[..r.start], false),
            style(sanitize(&url[r.clone()], false))
                .for_stderr()
                .bold()
                .underlined()
                .yellow(),
            sanitize(&url[r.end..], false)
        ),
        _ => sanitize(url, false),
    }
}

/// The command that opens a URL in the user's browser, if this machine has one:
/// `$BROWSER`, `open` on macOS, the URL handler on Windows, and elsewhere `xdg-open` when
/// a graphical session is running (DISPLAY or WAYLAND_DISPLAY).
pub fn browser() -> Option<Vec<String>> {
    browser_from(
        std::env::var("BROWSER").ok().as_deref(),
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty())
            || std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty()),
        on_path,
    )
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

fn browser_from(
    browser_var: Option<&str>,
    graphical: bool,
    exists: impl Fn(&str) -> bool,
) -> Option<Vec<String>> {
    if let Some(b) = browser_var {
        // $BROWSER may list several commands separated by ':'; the first is used.
        if let Some(words) = b
            .split(':')
            .map(str::trim)
            .find(|c| !c.is_empty())
            .and_then(shlex::split)
            .filter(|w| !w.is_empty())
        {
            return Some(words);
        }
    }
    if cfg!(target_os = "macos") {
        return Some(vec!["open".into()]);
    }
    if cfg!(windows) {
        return Some(vec![
            "rundll32".into(),
            "url.dll,FileProtocolHandler".into(),
        ]);
    }
    (graphical && exists("xdg-open")).then(|| vec!["xdg-open".into()])
}

/// Starts the browser on `url` without waiting for it.
fn open_in(command: &[String], url: &str) -> std::io::Result<()> {
    let mut args: Vec<String> = command[1..].to_vec();
    if args.iter().any(|a| a.contains("%s")) {
        args = args.iter().map(|a| a.replace("%s", url)).collect();
    } else {
        args.push(url.to_owned());
    }
    let mut child = Command::new(&command[0])
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

/// Shows the request and what ferry thinks of the URL.
pub fn describe(p: &mut dyn Prompter, request: &UrlRequest, check: &UrlCheck) {
    let server = sanitize(request.context.server.display_name(), false);
    p.say("");
    p.say(&format!(
        "{} asks you to open a web page: {}",
        style(&server).for_stderr().bold().magenta(),
        style(sanitize(&request.message, true)).for_stderr().bold()
    ));
    if let Some(origin) = origin_line(&request.context) {
        p.say(
            &style(format!("  ({origin})"))
                .for_stderr()
                .dim()
                .to_string(),
        );
    }
    p.say("");
    p.say(&format!("  {}", highlighted(check)));
    if let Some(h) = &check.host {
        p.say(&format!(
            "  host: {}",
            style(sanitize(h, false)).for_stderr().bold().yellow()
        ));
    }
    for w in &check.warnings {
        p.warn(&format!("Warning: {w}"));
    }
    p.say("");
}

/// Asks in the terminal whether to open the URL, opens it, and waits until the user is
/// done. Returns the answer for the server (`accept` carries no content).
pub fn consent(request: &UrlRequest) -> ElicitResult {
    let mut t = Terminal::new();
    match consent_with(&mut t, request, browser(), open_in) {
        Ok(r) => r,
        Err(Cancelled) => ElicitResult::cancel(),
    }
}

fn consent_with(
    p: &mut dyn Prompter,
    request: &UrlRequest,
    browser: Option<Vec<String>>,
    open: impl Fn(&[String], &str) -> std::io::Result<()>,
) -> Result<ElicitResult, Cancelled> {
    let check = check(&request.url);
    describe(p, request, &check);
    let mut items = Vec::new();
    if check.openable {
        items.push(match &browser {
            Some(_) => "Open it in the browser".to_owned(),
            None => "I'll open it myself (no browser found here)".to_owned(),
        });
    }
    items.push("Decline".to_owned());
    items.push("Cancel".to_owned());
    let chosen = p.select("Open this page?", &items, 0)?;
    let offset = usize::from(!check.openable);
    match chosen + offset {
        0 => {}
        1 => return Ok(ElicitResult::decline()),
        _ => return Ok(ElicitResult::cancel()),
    }
    let opened = match &browser {
        Some(cmd) => match open(cmd, &request.url) {
            Ok(()) => {
                p.say(&format!(
                    "Opened in the browser ({}).",
                    sanitize(&cmd[0], false)
                ));
                true
            }
            Err(e) => {
                p.warn(&format!(
                    "Could not start {}: {e}",
                    sanitize(&cmd[0], false)
                ));
                false
            }
        },
        None => false,
    };
    if !opened {
        p.say("Open this URL in your browser:");
        p.say(&format!("  {}", sanitize(&request.url, false)));
    }
    p.say("");
    let after = vec![
        "Done, go on".to_owned(),
        "Decline".to_owned(),
        "Cancel".to_owned(),
    ];
    Ok(
        match p.select("Press Enter when you are done on the page", &after, 0)? {
            0 => ElicitResult::accept_without_content(),
            1 => ElicitResult::decline(),
            _ => ElicitResult::cancel(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::script::{Script, Step};
    use ferry_client::ferry_protocol::elicitation::ElicitAction;
    use ferry_client::{AskContext, AskingServer};
    use std::cell::RefCell;

    fn request(url: &str) -> UrlRequest {
        UrlRequest {
            context: AskContext {
                server: AskingServer {
                    name: "acct".into(),
                    title: None,
                    version: None,
                },
                origin: None,
                key: Some("connect-1".into()),
            },
            message: "Connect your account".into(),
            url: url.into(),
            elicitation_id: None,
        }
    }

    #[test]
    fn finds_the_host() {
        let u = "https://user@Example.com:8443/path?q=1#f";
        let c = check(u);
        assert_eq!(&u[c.host_span.clone().unwrap()], "Example.com");
        assert_eq!(c.host.as_deref(), Some("example.com"));
        assert!(c.openable);
        assert!(
            c.warnings.iter().any(|w| w.contains("user name")),
            "{:?}",
            c.warnings
        );
        let c = check("http://[::1]:3000/connect");
        assert_eq!(&c.url[c.host_span.clone().unwrap()], "[::1]");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn a_plain_https_url_has_no_warnings() {
        let c = check("https://mcp.example.com/connect?t=abc");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.host.as_deref(), Some("mcp.example.com"));
    }

    #[test]
    fn warns_on_punycode_and_non_ascii_hosts() {
        let c = check("https://xn--pple-43d.com/login");
        assert!(
            c.warnings.iter().any(|w| w.contains("punycode")),
            "{:?}",
            c.warnings
        );
        let c = check("https://аpple.com/login");
        assert!(
            c.warnings.iter().any(|w| w.contains("non-ASCII")),
            "{:?}",
            c.warnings
        );
        assert!(c.host.as_deref().unwrap().starts_with("xn--"));
    }

    #[test]
    fn warns_on_http_outside_localhost() {
        assert!(check("http://127.0.0.1:3000/connect").warnings.is_empty());
        assert!(check("http://localhost/x").warnings.is_empty());
        assert!(check("http://app.localhost/x").warnings.is_empty());
        let c = check("http://example.com/pay");
        assert!(
            c.warnings.iter().any(|w| w.contains("not encrypted")),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn refuses_to_open_other_schemes() {
        for u in ["javascript:alert(1)", "file:///etc/passwd", "not a url"] {
            let c = check(u);
            assert!(!c.openable, "{u}");
            assert!(!c.warnings.is_empty(), "{u}");
        }
    }

    #[test]
    fn highlight_keeps_the_full_url() {
        let c = check("https://mcp.example.com/connect?t=abc");
        let h = console::strip_ansi_codes(&highlighted(&c)).into_owned();
        assert_eq!(h, "https://mcp.example.com/connect?t=abc");
    }

    #[test]
    fn picks_a_browser() {
        let none = |_: &str| false;
        let all = |_: &str| true;
        assert_eq!(
            browser_from(Some("firefox --new-tab"), false, none),
            Some(vec!["firefox".to_owned(), "--new-tab".to_owned()])
        );
        assert_eq!(
            browser_from(Some(":w3m %s:lynx"), false, none),
            Some(vec!["w3m".to_owned(), "%s".to_owned()])
        );
        if cfg!(all(unix, not(target_os = "macos"))) {
            assert_eq!(browser_from(None, false, all), None);
            assert_eq!(browser_from(Some(""), false, all), None);
            assert_eq!(browser_from(None, true, none), None);
            assert_eq!(
                browser_from(None, true, all),
                Some(vec!["xdg-open".to_owned()])
            );
        }
    }

    #[test]
    fn consent_then_open_then_done() {
        let opened = RefCell::new(Vec::new());
        let mut s = Script::new([Step::Pick("Open it in the browser"), Step::Pick("Done")]);
        let r = consent_with(
            &mut s,
            &request("https://example.com/x"),
            Some(vec!["xdg-open".into()]),
            |cmd, url| {
                opened.borrow_mut().push((cmd[0].clone(), url.to_owned()));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(r.action, ElicitAction::Accept);
        assert!(r.content.is_none());
        assert_eq!(
            opened.into_inner(),
            [("xdg-open".to_owned(), "https://example.com/x".to_owned())]
        );
    }

    #[test]
    fn without_a_browser_the_url_is_printed() {
        let mut s = Script::new([Step::Pick("I'll open it myself"), Step::Pick("Decline")]);
        let r = consent_with(
            &mut s,
            &request("http://127.0.0.1:1/connect?t=x"),
            None,
            |_, _| panic!("no browser"),
        )
        .unwrap();
        assert_eq!(r.action, ElicitAction::Decline);
        assert!(
            s.shown
                .iter()
                .any(|l| l == "  http://127.0.0.1:1/connect?t=x"),
            "{:?}",
            s.shown
        );
    }

    #[test]
    fn decline_cancel_and_escape() {
        for (step, action) in [
            (Step::Pick("Decline"), ElicitAction::Decline),
            (Step::Pick("Cancel"), ElicitAction::Cancel),
        ] {
            let mut s = Script::new([step]);
            let r = consent_with(&mut s, &request("https://e.com"), None, |_, _| Ok(())).unwrap();
            assert_eq!(r.action, action);
        }
        let mut s = Script::new([Step::Esc]);
        assert!(consent_with(&mut s, &request("https://e.com"), None, |_, _| Ok(())).is_err());
        let mut s = Script::new([Step::Pick("Open"), Step::Esc]);
        let r = consent_with(
            &mut s,
            &request("https://e.com"),
            Some(vec!["b".into()]),
            |_, _| Ok(()),
        );
        assert!(r.is_err());
    }

    #[test]
    fn unsafe_urls_cannot_be_accepted() {
        let mut s = Script::new([Step::Pick("Decline")]);
        let r = consent_with(
            &mut s,
            &request("javascript:alert(1)"),
            None,
            |_, _| panic!(),
        )
        .unwrap();
        assert_eq!(r.action, ElicitAction::Decline);
        assert!(
            s.shown
                .iter()
                .any(|l| l.contains("[\"Decline\", \"Cancel\"]")),
            "{:?}",
            s.shown
        );
    }
}
