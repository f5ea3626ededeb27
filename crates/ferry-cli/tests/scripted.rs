//! The `ferry` binary without a terminal: `--answers`, `--json`, declining when nobody
//! can answer, every listing command, stdio, `ferry demo`, and errors with their exit
//! codes.

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use ferry_testkit::process::ephemeral_port;
use serde_json::Value;
use support::{Everything, WAIT, everything_stdio, ferry, run, stderr, stdout};

fn ferry_at(server: &Everything, args: &[&str]) -> std::process::Output {
    let mut cmd = ferry();
    cmd.arg("--url").arg(&server.url).args(args);
    run(cmd)
}

#[test]
fn answers_with_json_output() {
    let server = Everything::start();
    let o = ferry_at(
        &server,
        &[
            "call",
            "confirm_delete",
            "path=notes.txt",
            "--json",
            "--answers",
            r#"{"confirm": {"confirm": true}}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let result: Value = serde_json::from_slice(&o.stdout).expect("only JSON on stdout");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Deleted notes.txt ("), "{result}");
    assert_eq!(result["resultType"], "complete");
    assert!(
        stderr(&o).contains("from --answers: accept"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn answers_by_field_name_and_as_elicit_results() {
    let server = Everything::start();
    let o = ferry_at(
        &server,
        &[
            "call",
            "generate_image",
            "prompt=cat",
            "--answers",
            r#"{"aspect_ratio": "9:16", "go_ahead": true}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("[image: image/png,"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("Generated a 9:16 image for \"cat\""),
        "{}",
        stdout(&o)
    );

    let o = ferry_at(
        &server,
        &[
            "call",
            "confirm_delete",
            "path=draft.md",
            "--answers",
            r#"{"confirm": {"action": "decline"}}"#,
        ],
    );
    assert_eq!(stdout(&o), "Kept draft.md: nothing deleted\n");

    let dir = std::env::temp_dir().join(format!("ferry-answers-{}.json", std::process::id()));
    std::fs::write(&dir, r#"{"confirm": {"action": "cancel"}}"#).expect("write answers");
    let o = ferry_at(
        &server,
        &[
            "call",
            "confirm_delete",
            "path=old/report.csv",
            "--answers",
            &format!("@{}", dir.display()),
        ],
    );
    std::fs::remove_file(&dir).ok();
    assert_eq!(stdout(&o), "Cancelled: nothing deleted\n");
}

#[test]
fn without_a_terminal_or_answers_ferry_declines() {
    let server = Everything::start();
    let o = ferry_at(&server, &["call", "confirm_delete", "path=notes.txt"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "Kept notes.txt: nothing deleted\n");
    let err = stderr(&o);
    assert!(err.contains("asks: Delete notes.txt from "), "{err}");
    assert!(err.contains("so ferry declines"), "{err}");
    assert!(
        err.contains(r#"--answers '{"confirm":{"confirm":true}}'"#),
        "{err}"
    );

    let o = ferry_at(&server, &["call", "connect_account", "service=github"]);
    assert_eq!(stdout(&o), "Did not connect github\n");
    assert!(stderr(&o).contains("/connect?t="), "{}", stderr(&o));
}

#[test]
fn unfit_answers_fail_the_command_with_the_reason() {
    let server = Everything::start();
    let o = ferry_at(
        &server,
        &[
            "call",
            "generate_image",
            "prompt=cat",
            "--answers",
            r#"{"aspect_ratio": "4:3", "go_ahead": true}"#,
        ],
    );
    // 4:3 is not among the form's ratios: the command fails (exit 2) and says why,
    // instead of declining in silence and printing the tool's answer to the decline.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("does not fit"), "{}", stderr(&o));
}

#[test]
fn deprecated_sampling_and_roots_from_answers() {
    let server = Everything::start();
    let o = ferry_at(
        &server,
        &[
            "call",
            "test_input_required_result_multiple_inputs",
            "--answers",
            r#"{"user_name": {"name": "Ann"}, "greeting": "Hello!", "client_roots": ["file:///work"]}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "name=Ann; greeting=Hello!; roots=1\n");
    assert!(
        stderr(&o).contains("sampling is deprecated"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn listings_and_reads() {
    let server = Everything::start();
    let o = ferry_at(&server, &["discover"]);
    assert!(
        stdout(&o).contains("server: Ferry everything server (ferry-everything)"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("protocol: 2026-07-28"),
        "{}",
        stdout(&o)
    );

    let o = ferry_at(&server, &["tools"]);
    assert!(
        stdout(&o).contains("confirm_delete — Deletes a file in this server's sandbox folder"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("    service: string (required)"),
        "{}",
        stdout(&o)
    );

    let o = ferry_at(&server, &["tools", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert!(
        v["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "echo"))
    );

    let o = ferry_at(&server, &["prompts"]);
    assert!(
        stdout(&o).contains("test_prompt_with_arguments — A prompt with two required arguments")
    );
    let o = ferry_at(
        &server,
        &["prompt", "test_prompt_with_arguments", "arg1=a b", "arg2=c"],
    );
    assert_eq!(
        stdout(&o),
        "[user] Prompt with arguments: arg1='a b', arg2='c'\n"
    );

    let o = ferry_at(&server, &["resources"]);
    assert!(stdout(&o).contains("test://static-text"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("test://template/{id}/data"),
        "{}",
        stdout(&o)
    );
    let o = ferry_at(&server, &["read", "test://static-binary"]);
    assert!(
        stdout(&o).starts_with("[resource test://static-binary: "),
        "{}",
        stdout(&o)
    );
    let o = ferry_at(&server, &["read", "test://static-text", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["contents"][0]["uri"], "test://static-text");
}

#[test]
fn arguments_are_typed_by_the_input_schema() {
    let server = Everything::start();
    let o = ferry_at(
        &server,
        &["call", "test_x_mcp_header", "region=eu-west", "priority=2"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "Ran in eu-west\n");
    let o = ferry_at(
        &server,
        &[
            "call",
            "json_schema_2020_12_tool",
            "name=Ann",
            r#"address:={"street": "Main St", "city": "Oslo"}"#,
            "contactMethod=email",
            "email=ann@example.com",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(r#""address":{"street":"Main St","city":"Oslo"}"#),
        "{}",
        stdout(&o)
    );
    let o = ferry_at(
        &server,
        &["call", "echo", "--args", r#"{"text": "from --args"}"#],
    );
    assert_eq!(stdout(&o), "from --args\n");
}

#[test]
fn errors_and_exit_codes() {
    let server = Everything::start();
    let o = ferry_at(&server, &["call", "test_error_handling"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).contains("intentionally returns an error"),
        "{}",
        stderr(&o)
    );

    let o = ferry_at(&server, &["call", "no_such_tool"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("JSON-RPC error -32602: Unknown tool: no_such_tool"),
        "{}",
        stderr(&o)
    );

    let o = ferry_at(&server, &["call", "echo", "no-equals-sign"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not KEY=VALUE"), "{}", stderr(&o));

    let o = ferry_at(
        &server,
        &["call", "test_x_mcp_header", "region=eu", "priority=high"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("argument priority"), "{}", stderr(&o));

    let o = ferry_at(&server, &["call", "echo", "text=x", "--answers", "[1]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--answers must be a JSON object"),
        "{}",
        stderr(&o)
    );

    let o = run({
        let mut c = ferry();
        c.arg("tools");
        c
    });
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--url URL"), "{}", stderr(&o));

    let o = run({
        let mut c = ferry();
        c.args(["--stdio", "\"unclosed", "tools"]);
        c
    });
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unbalanced quotes"), "{}", stderr(&o));

    // A port nobody listens on.
    let port = ephemeral_port();
    let o = run({
        let mut c = ferry();
        c.args([
            "--url",
            &format!("http://127.0.0.1:{port}/mcp"),
            "--timeout",
            "5s",
            "tools",
        ]);
        c
    });
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("could not connect"), "{}", stderr(&o));
}

#[test]
fn the_token_is_sent_but_never_printed() {
    let server = Everything::start();
    let mut c = ferry();
    c.args(["--url", &server.url, "-vv", "tools"])
        .env("FERRY_TOKEN", "tok-s3cr3t-value");
    let o = run(c);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("tok-s3cr3t-value"));
    assert!(!stdout(&o).contains("tok-s3cr3t-value"));
    let mut c = ferry();
    c.args(["--help"]).env("FERRY_TOKEN", "tok-s3cr3t-value");
    let o = run(c);
    assert!(stdout(&o).contains("--token"));
    assert!(!stdout(&o).contains("tok-s3cr3t-value"));
}

#[test]
fn stdio_servers() {
    let command = everything_stdio();
    let mut c = ferry();
    c.args(["--stdio", &command, "call", "echo", "text=over stdio"]);
    let o = run(c);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "over stdio\n");

    let mut c = ferry();
    c.args([
        "--stdio",
        &command,
        "call",
        "confirm_delete",
        "path=notes.txt",
        "--json",
        "--answers",
        r#"{"confirm": true}"#,
    ]);
    let o = run(c);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let text = v["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Deleted notes.txt ("), "{v}");

    let mut c = ferry();
    c.args(["--stdio", "/nonexistent/ferry-server --stdio", "tools"]);
    let o = run(c);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("could not connect to /nonexistent/ferry-server"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn listen_prints_change_notifications() {
    let server = Everything::start();
    let mut listen = ferry();
    listen
        .args(["--url", &server.url, "listen", "--tools", "--count", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = listen.spawn().expect("start ferry listen");
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().expect("stderr");
    let out = child.stdout.take().expect("stdout");
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(("err", line));
        }
    });
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx2.send(("out", line));
        }
    });
    let (_, ready) = rx.recv_timeout(WAIT).expect("ferry listen says it listens");
    assert_eq!(ready, "Listening for tool list changes (Ctrl-C stops).");
    let o = ferry_at(&server, &["call", "test_trigger_tool_change"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (stream, line) = rx.recv_timeout(WAIT).expect("a notification");
    assert_eq!((stream, line.as_str()), ("out", "tools/list changed"));
    let deadline = std::time::Instant::now() + WAIT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("poll") {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "ferry listen --count 1 did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
}

#[test]
fn demo_walks_through_the_rounds_and_exits_0() {
    let started = std::time::Instant::now();
    let o = run({
        let mut c = ferry();
        c.arg("demo");
        c
    });
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the demo took {:?}",
        started.elapsed()
    );
    let out = stdout(&o);
    for part in [
        "1. server/discover",
        "\"method\": \"server/discover\"",
        "2. tools/list",
        "3. tools/call confirm_delete, round 1",
        "InputRequiredResult (resultType \"input_required\")",
        "\"inputRequests\": {",
        "\"requestState\": \"",
        "characters, sealed by the server)",
        "the demo answers for you: accept {\"confirm\":true}",
        "4. tools/call confirm_delete, round 2: the retry",
        "\"inputResponses\": {",
        "requestState echoed byte for byte: yes",
        "CallToolResult (resultType \"complete\")",
        "Deleted notes.txt (",
        "5. tools/call generate_image, round 1",
        "\"aspect_ratio\": {",
        "\"go_ahead\": {",
        "6. tools/call generate_image, round 2: the retry",
        "[image: image/png,",
    ] {
        assert!(
            out.contains(part),
            "the demo did not print {part:?}:\n{out}"
        );
    }
    let round1 = out.find("3. tools/call").expect("round 1");
    let round2 = out.find("4. tools/call").expect("round 2");
    assert!(round1 < round2);
    assert!(out.contains("MCP lets an AI application"), "{out}");
    assert!(
        out.contains("only in its own sandbox folder"),
        "the demo says where the files are: {out}"
    );

    // The closing hints work as typed.
    let hint = out
        .lines()
        .map(str::trim)
        .find(|l| l.contains("call confirm_delete path=notes.txt"))
        .unwrap_or_else(|| panic!("no call hint in:\n{out}"));
    let mut words = shlex::split(hint).expect("a command line");
    words.extend(["--answers".to_owned(), r#"{"confirm": true}"#.to_owned()]);
    let o = run({
        let mut c = std::process::Command::new(&words[0]);
        c.args(&words[1..]);
        c
    });
    assert_eq!(o.status.code(), Some(0), "{hint}: {}", stderr(&o));
    assert!(
        stdout(&o).starts_with("Deleted notes.txt ("),
        "{hint}: {}",
        stdout(&o)
    );
}

#[test]
fn demo_refuses_a_server_and_interactive_without_terminal() {
    let o = run({
        let mut c = ferry();
        c.args(["demo", "--url", "http://127.0.0.1:1/mcp"]);
        c
    });
    assert_eq!(o.status.code(), Some(2));
    let o = run({
        let mut c = ferry();
        c.args(["demo", "--interactive"]);
        c
    });
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--interactive needs a terminal"),
        "{}",
        stderr(&o)
    );
    let o = run({
        let mut c = ferry();
        c.args(["demo", "--json"]);
        c
    });
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("guided tour"), "{}", stderr(&o));
}

#[test]
fn a_url_question_asked_again_says_the_page_was_not_finished() {
    let mut cmd = ferry();
    cmd.args([
        "--stdio",
        &support::everything_stdio(),
        "call",
        "connect_account",
        "service=github",
        "--answers",
        r#"{"connect-1": "accept", "connect-2": "decline"}"#,
    ]);
    let o = run(cmd);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let again = "(question \"connect-2\") asks again: the page was not finished yet";
    assert!(err.contains(again), "{err}");
    assert!(
        !err.contains("(question \"connect-1\") asks again"),
        "the first ask is not a re-ask: {err}"
    );
}
