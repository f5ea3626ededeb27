//! The official Python SDK (`mcp` 2.3.0) as a peer: whether it is installed, and its
//! server (`python/server.py` in this crate) over stdio or Streamable HTTP.
//!
//! Without `python3` or the package, [`sdk_available`] says why and tests skip, except
//! under `FERRY_CI` or `FERRY_REQUIRE_INTEROP`, where a missing SDK fails the test.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::process::announced_port;

/// The version of the `mcp` package the interop tests are written against.
pub const SDK_VERSION: &str = "2.3.0";

/// How long the Python server may take to start.
const START_LIMIT: Duration = Duration::from_secs(30);

/// Whether `python3` with `mcp` [`SDK_VERSION`] is installed. Without it, panics under
/// `FERRY_CI` or `FERRY_REQUIRE_INTEROP` and otherwise prints why the test is skipped
/// and returns `false`.
pub fn sdk_available() -> bool {
    let probe = std::process::Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output();
    let problem = match probe {
        Err(e) => format!("python3 is not available ({e})"),
        Ok(out) if !out.status.success() => "the Python package `mcp` is not installed".to_owned(),
        Ok(out) => {
            let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if version == SDK_VERSION {
                return true;
            }
            format!("mcp {version} is installed, the interop tests need {SDK_VERSION}")
        }
    };
    let required = ["FERRY_REQUIRE_INTEROP", "FERRY_CI"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    assert!(!required, "the Python SDK is required here, but {problem}");
    eprintln!("skipped: {problem} (python3 -m pip install mcp=={SDK_VERSION})");
    false
}

/// A script of this crate's `python/` folder.
pub fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("python")
        .join(name)
}

/// The Python SDK's server (`python/server.py`): a tool that deletes a file after the
/// user confirms (answering `Deleted PATH`, `Kept PATH` or `Cancelled`) and `echo`.
#[derive(Clone, Debug)]
pub struct PythonServer {
    name: String,
    delete_tool: String,
}

impl Default for PythonServer {
    fn default() -> Self {
        PythonServer {
            name: "python-interop".into(),
            delete_tool: "delete_file".into(),
        }
    }
}

impl PythonServer {
    /// The server named `python-interop`, its confirming tool `delete_file`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the server (its `serverInfo.name`).
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_owned();
        self
    }

    /// Names the tool that asks before deleting.
    pub fn delete_tool(mut self, tool: &str) -> Self {
        self.delete_tool = tool.to_owned();
        self
    }

    fn command(&self, transport: &str) -> Command {
        let mut cmd = Command::new("python3");
        cmd.arg(script("server.py"))
            .args(["--name", &self.name, "--delete-tool", &self.delete_tool])
            .arg(transport)
            .stderr(Stdio::null());
        cmd
    }

    /// The command serving stdio (stderr discarded), for a client to spawn.
    pub fn stdio(&self) -> Command {
        self.command("stdio")
    }

    /// Starts the server over Streamable HTTP on a free 127.0.0.1 port and waits until
    /// it listens; returns the process (killed when dropped) and the endpoint URL.
    pub async fn http(&self) -> (Child, String) {
        let mut child = self
            .command("http")
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start the Python server");
        let port = announced_port(&mut child, "the Python server", START_LIMIT).await;
        (child, format!("http://127.0.0.1:{port}/mcp"))
    }
}

/// Runs the Python SDK's client (`python/client.py`, at most 60 s) against `target`, an
/// endpoint URL or `stdio:PROGRAM` (started with `--stdio`): it calls `confirm_delete` in
/// `mode` (the SDK's `mode=`: `2026-07-28`, `auto` or `legacy`), answers the
/// confirmation with `action` (`accept`, `decline` or `cancel`) and prints what happened
/// as one JSON line.
pub async fn run_client(target: &str, mode: &str, action: &str) -> std::process::Output {
    let args = [target.to_owned(), mode.to_owned(), action.to_owned()];
    tokio::task::spawn_blocking(move || {
        std::process::Command::new("timeout")
            .args(["60", "python3"])
            .arg(script("client.py"))
            .args(args)
            .output()
            .expect("python3 runs")
    })
    .await
    .expect("joined")
}

/// The JSON line the Python client printed last.
pub fn client_report(out: &std::process::Output) -> serde_json::Value {
    let line = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(line.trim().lines().last().unwrap_or_default()).expect("one JSON line")
}
