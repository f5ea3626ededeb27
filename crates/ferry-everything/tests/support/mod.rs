//! The everything server for tests: in-process behind its real HTTP app (with dev tokens
//! for alice and bob), or the real binary on stdio.

#![allow(dead_code)]

use std::process::Stdio;

use ferry_everything::app::{StaticTokens, app};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use ferry_server::Server;
use ferry_state::{Key, KeyId, KeyRing};
use ferry_testkit::lines::JsonLines;
use ferry_testkit::serve::Running;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Alice's dev token.
pub const ALICE: &str = "alice-token";
/// Bob's dev token.
pub const BOB: &str = "bob-token";

/// A state key with this id and fill byte.
pub fn key(id: &str, fill: u8) -> Key {
    Key::from_bytes(KeyId::new(id).expect("key id"), [fill; 32])
}

/// Options with these keys (and the defaults otherwise).
pub fn with_keys(ring: KeyRing) -> Options {
    Options {
        state_keys: Some(ring),
        ..Options::default()
    }
}

/// Serves the everything app (MCP at `/mcp`, with optional dev-token authentication for
/// alice and bob) on 127.0.0.1; stopping it shuts the server down.
pub async fn start(options: Options, config: HttpConfig) -> (Running, Server) {
    let everything = build(options).expect("the everything server builds");
    let server = everything.server.clone();
    let tokens = StaticTokens::new().with("alice", ALICE).with("bob", BOB);
    let app = app(everything, config, tokens, false).expect("the application builds");
    let s = server.clone();
    (
        Running::router(app, "/mcp", move || s.shutdown()).await,
        server,
    )
}

/// The real binary serving stdio, and a client on its pipes (stderr is discarded).
pub fn spawn_stdio() -> (Child, JsonLines<ChildStdout, ChildStdin>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry-everything"))
        .arg("--stdio")
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start ferry-everything --stdio");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    (child, JsonLines::new(stdout, stdin))
}

/// The resident set size of process `pid`, in KiB (`VmRSS` in `/proc/<pid>/status`).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc status")
}
