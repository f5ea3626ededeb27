//! `ferry audit` as a person or a script runs it: against ferry-everything in-process,
//! the plan before anything is sent, the report as text or JSON, and the exit codes.

mod support;

use serde_json::Value;
use support::{Everything, ferry, run, stderr, stdout};

#[test]
fn a_passing_audit_as_json_exits_0() {
    let server = Everything::start();
    let mut cmd = ferry();
    cmd.args([
        "audit",
        &server.url,
        "--tool",
        "confirm_delete",
        "--args",
        r#"{"path": "x.txt"}"#,
        "--format",
        "json",
    ]);
    let o = run(cmd);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).expect("only JSON on stdout");
    assert_eq!(report["format"], "ferry-audit/1");
    assert_eq!(report["tool"], "confirm_delete");
    assert_eq!(report["summary"]["fail"], 0);
    let ids: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"state.replay") && ids.contains(&"http.origin"));
    // The plan goes to stderr, before anything is sent.
    let err = stderr(&o);
    assert!(err.contains("tools/call of confirm_delete only"), "{err}");
}

#[test]
fn text_shows_each_check_with_its_spec_section_and_failures_exit_1() {
    let server = Everything::start();
    let mut cmd = ferry();
    cmd.args(["--url", &server.url, "audit", "--tool", "no_such_tool"]);
    let o = run(cmd);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("ferry audit of"), "{out}");
    assert!(out.contains("FAIL  mrtr.roundtrip"), "{out}");
    assert!(
        out.contains("spec: basic/patterns/mrtr.mdx, Basic Workflow"),
        "{out}"
    );
    assert!(out.contains("1 failed"), "{out}");
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["audit", "--tool", "t"],
        vec!["audit", "ftp://127.0.0.1/mcp", "--tool", "t"],
        vec![
            "audit",
            "http://127.0.0.1:1/mcp",
            "--tool",
            "t",
            "--args",
            "[1]",
        ],
        vec![
            "audit",
            "http://127.0.0.1:1/mcp",
            "--tool",
            "t",
            "--token-b",
            "b",
        ],
        vec![
            "audit",
            "http://127.0.0.1:1/mcp",
            "--tool",
            "t",
            "--ttl",
            "2h",
        ],
        vec!["audit", "http://127.0.0.1:1/mcp"],
    ] {
        let mut cmd = ferry();
        cmd.args(&args);
        let o = run(cmd);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn nothing_listening_exits_4() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let mut cmd = ferry();
    cmd.args(["audit", &url, "--tool", "t", "--timeout", "5s"]);
    let o = run(cmd);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("could not be reached"),
        "{}",
        stderr(&o)
    );
}
