//! The errors a newcomer meets first name the cause and the next step: nothing
//! listening, TLS spoken to a plain-HTTP server and the reverse, a wrong path, a server
//! that is not MCP (summarised, not dumped), a stdio command that cannot start, a
//! timeout, a tool name with a typo, and `--answers` that fit no form. Every peer is on
//! 127.0.0.1.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Output;
use std::time::Duration;

use ferry_testkit::process::ephemeral_port;
use support::{Everything, everything_stdio, ferry, run, stderr, stdout};

fn ferry_url(url: &str, args: &[&str]) -> Output {
    let mut cmd = ferry();
    cmd.arg("--url").arg(url).args(args);
    run(cmd)
}

/// A loopback listener that answers every connection with `reply` (or nothing, held
/// open, when `reply` is `None`), on a thread of its own.
fn peer(reply: Option<&'static [u8]>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            match reply {
                Some(bytes) => {
                    let _ = stream.write_all(bytes);
                }
                None => held.push(stream),
            }
        }
    });
    addr
}

fn hint(out: &Output) -> String {
    stderr(out)
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("hint: ").map(str::to_owned))
        .unwrap_or_else(|| panic!("no hint in: {}", stderr(out)))
}

#[test]
fn nothing_listening_asks_whether_the_server_runs() {
    let port = ephemeral_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = ferry_url(&url, &["tools"]);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        hint(&out),
        format!(
            "nothing is listening at 127.0.0.1:{port} (connection refused): is the server running at {url}?"
        )
    );
    assert!(stderr(&out).contains("-v shows every cause"));
    let mut cmd = ferry();
    // Not a terminal: no colours, even when the environment does not forbid them.
    cmd.env_remove("NO_COLOR")
        .args(["-v", "--url", &url, "tools"]);
    let verbose = run(cmd);
    assert!(
        stderr(&verbose).contains("Connection refused"),
        "-v shows the chain: {}",
        stderr(&verbose)
    );
    assert!(
        !stderr(&verbose).contains('\u{1b}'),
        "plain text off a terminal: {:?}",
        stderr(&verbose)
    );
    let mut cmd = ferry();
    cmd.env_remove("NO_COLOR")
        .args(["-v", "--stdio", &everything_stdio(), "tools"]);
    let logged = run(cmd);
    let log = stderr(&logged);
    assert!(log.contains("INFO") && log.contains("connected"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "logs off a terminal are plain: {log:?}"
    );
}

#[test]
fn tls_to_plain_http_and_the_reverse_say_which_scheme_to_use() {
    let server = Everything::start();
    let out = ferry_url(&format!("https://{}/mcp", server.addr), &["tools"]);
    assert_eq!(
        hint(&out),
        format!(
            "the server at {} answered in plain HTTP, not TLS: try http://{}/mcp",
            server.addr, server.addr
        )
    );
    // A TLS alert, as a TLS server answers plain HTTP.
    let tls = peer(Some(b"\x15\x03\x03\x00\x02\x02\x46"));
    let out = ferry_url(&format!("http://{tls}/mcp"), &["tools"]);
    assert_eq!(
        hint(&out),
        format!(
            "the server at {tls} did not answer in HTTP; if it expects TLS, try https://{tls}/mcp"
        )
    );
}

#[test]
fn a_wrong_path_and_a_server_that_is_not_mcp_are_named() {
    let server = Everything::start();
    let out = ferry_url(&format!("http://{}/api", server.addr), &["tools"]);
    assert_eq!(
        hint(&out),
        format!(
            "no MCP endpoint at http://{0}/api (HTTP 404); MCP servers usually serve /mcp: try http://{0}/mcp",
            server.addr
        )
    );
    let html: &[u8] = b"HTTP/1.1 501 Not Implemented\r\ncontent-type: text/html\r\nconnection: close\r\ncontent-length: 142\r\n\r\n<!DOCTYPE HTML>\n<html><head><title>Error response</title></head><body><h1>Error response</h1><p>Unsupported method ('POST').</p></body></html>\n";
    let web = peer(Some(html));
    let out = ferry_url(&format!("http://{web}/mcp"), &["tools"]);
    let err = stderr(&out);
    assert!(
        err.contains("HTTP 501: an HTML page titled \"Error response\""),
        "summarised, not dumped: {err}"
    );
    assert!(!err.contains("<html>"), "{err}");
    assert!(hint(&out).contains("probably not an MCP server"), "{err}");
}

#[test]
fn a_stdio_command_that_cannot_start_is_named() {
    let mut cmd = ferry();
    cmd.args(["--stdio", "ferry-no-such-server --stdio", "tools"]);
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        stderr(&out).contains("No such file or directory") || stderr(&out).contains("-v shows"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        hint(&out),
        "\"ferry-no-such-server\" was not found on the PATH; give its path, or check the spelling"
    );
}

#[test]
fn a_silent_server_times_out_naming_the_option() {
    let silent = peer(None);
    let out = ferry_url(
        &format!("http://{silent}/mcp"),
        &["--timeout", "1s", "tools"],
    );
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        hint(&out).contains("did not answer within 1s"),
        "{}",
        stderr(&out)
    );
    assert!(hint(&out).contains("--timeout"));
}

#[test]
fn a_tool_name_with_a_typo_suggests_the_closest() {
    let mut cmd = ferry();
    cmd.args(["--stdio", &everything_stdio(), "call", "ecoh", "text=hi"]);
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out)
            .contains("calling tool ecoh failed (no tool named \"ecoh\"; did you mean \"echo\"?)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn answers_that_fit_no_form_fail_naming_the_fields() {
    let stdio = everything_stdio();
    // A key that matches neither the question nor a field.
    let mut cmd = ferry();
    cmd.args([
        "--stdio",
        &stdio,
        "call",
        "confirm_delete",
        "path=notes.txt",
        "--answers",
        r#"{"confrm": true}"#,
    ]);
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "no result is printed");
    let err = stderr(&out);
    assert!(
        err.contains("its key is \"confirm\" and its fields are confirm (boolean)"),
        "{err}"
    );
    assert!(err.contains("did you mean \"confirm\"?"), "{err}");
    // A field the form does not have, under the right key.
    let mut cmd = ferry();
    cmd.args([
        "--stdio",
        &stdio,
        "call",
        "confirm_delete",
        "path=notes.txt",
        "--answers",
        r#"{"confirm": {"confrim": true}}"#,
    ]);
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("names a field \"confrim\" the form does not have (confirm (boolean)); did you mean \"confirm\"?"),
        "{}",
        stderr(&out)
    );
    // A value of the wrong type names the field and the type expected.
    let mut cmd = ferry();
    cmd.args([
        "--stdio",
        &stdio,
        "call",
        "confirm_delete",
        "path=notes.txt",
        "--answers",
        r#"{"confirm": "yes please"}"#,
    ]);
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("confirm") && err.contains("boolean"), "{err}");
}
