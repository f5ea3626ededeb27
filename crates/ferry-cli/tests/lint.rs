//! `ferry lint` through the real binary: exit codes (0 clean, 1 findings, 0 with --warn,
//! 2 for a missing path or a bad command line), the default path, the three formats,
//! rule filters and `.gitignore`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn ferry(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferry"))
        .current_dir(dir)
        .args(args)
        .env_remove("FERRY_LOG")
        .env("NO_COLOR", "1")
        .output()
        .expect("ferry runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/server.py"),
        "from mcp.server.fastmcp import Context\n\nasync def t(ctx: Context):\n    await ctx.info(\"x\")\n    await ctx.session.send_ping()\n",
    )
    .unwrap();
    std::fs::write(root.join("src/clean.ts"), "export const x = 1;\n").unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(
        root.join("build/out.js"),
        "send({ method: \"sampling/createMessage\" });\n",
    )
    .unwrap();
    dir
}

#[test]
fn findings_exit_1_and_print_like_a_compiler() {
    let dir = project();
    let o = ferry(dir.path(), &["lint"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("warning[mcp-logging]: `ctx.info(…)`"), "{out}");
    assert!(out.contains(" --> src/server.py:4:15"), "{out}");
    assert!(out.contains("error[mcp-ping]"), "{out}");
    assert!(out.contains("= help: migration: Log to `stderr`"), "{out}");
    // .gitignore'd build output is not read.
    assert!(!out.contains("build/out.js"), "{out}");
    assert!(
        out.ends_with("2 findings (mcp-logging: 1, mcp-ping: 1) in 2 files (6 lines)\n"),
        "{out}"
    );
}

#[test]
fn warn_exits_0_with_findings() {
    let dir = project();
    let o = ferry(dir.path(), &["lint", "--warn", "src"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("mcp-ping"));
}

#[test]
fn a_clean_tree_exits_0() {
    let dir = project();
    let o = ferry(dir.path(), &["lint", "src/clean.ts"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("no deprecated MCP features found"));
    // Excluding the rules that fire leaves nothing to report.
    let o = ferry(
        dir.path(),
        &["lint", "--exclude-rule", "mcp-ping,mcp-logging"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn errors_exit_2() {
    let dir = project();
    let o = ferry(dir.path(), &["lint", "no/such/dir"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no/such/dir"), "{}", stderr(&o));
    let o = ferry(dir.path(), &["lint", "--rule", "mcp-nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown rule"), "{}", stderr(&o));
    let o = ferry(dir.path(), &["lint", "--format", "xml"]);
    assert_eq!(o.status.code(), Some(2));
    let o = ferry(dir.path(), &["--url", "http://127.0.0.1:1/mcp", "lint"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn json_and_sarif_on_stdout() {
    let dir = project();
    let o = ferry(dir.path(), &["lint", "--format", "json", "--rule", "ping"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).expect("only JSON on stdout");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["ruleId"], "mcp-ping");
    assert_eq!(findings[0]["path"], "src/server.py");
    assert_eq!(
        (&findings[0]["line"], &findings[0]["column"]),
        (&5.into(), &23.into())
    );

    // The global --json means --format json.
    let o = ferry(dir.path(), &["lint", "--json"]);
    let report: Value = serde_json::from_slice(&o.stdout).expect("only JSON on stdout");
    assert_eq!(report["summary"]["findings"], 2);

    let o = ferry(dir.path(), &["lint", "--format", "sarif", "--warn"]);
    assert_eq!(o.status.code(), Some(0));
    let log: Value = serde_json::from_slice(&o.stdout).expect("only SARIF on stdout");
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 2);
}

#[test]
fn rules_are_listed() {
    let dir = project();
    let o = ferry(dir.path(), &["lint", "--list-rules"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for id in [
        "mcp-sampling",
        "mcp-include-context",
        "mcp-roots",
        "mcp-logging",
        "mcp-ping",
        "mcp-elicitation-id",
        "mcp-session-id",
        "mcp-dcr",
        "mcp-http-sse-transport",
        "mcp-server-request-outside-mrtr",
    ] {
        assert!(out.contains(id), "{id} missing from {out}");
    }
    assert!(out.contains("2027-07-28"));
}
