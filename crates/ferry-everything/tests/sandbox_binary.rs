//! The real binary: it says where its sandbox is, a temporary sandbox is removed on exit,
//! a confirmed delete removes the file from the folder given with `--sandbox`, and logs
//! written to a pipe carry no colours.

use std::process::Stdio;

use ferry_testkit::lines::JsonLines;
use ferry_testkit::rpc::{self, accept, call, form_caps, retry};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// `ferry-everything --stdio ARGS`, logging at `info` to a pipe.
struct Running {
    child: Child,
    stderr: ChildStderr,
    lines: JsonLines<ChildStdout, ChildStdin>,
}

impl Running {
    fn start(args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferry-everything"))
            .arg("--stdio")
            .args(args)
            .env("RUST_LOG", "info")
            .env_remove("NO_COLOR")
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start ferry-everything --stdio");
        let stderr = child.stderr.take().unwrap();
        let lines = JsonLines::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
        Running {
            child,
            stderr,
            lines,
        }
    }

    /// Asks to delete `notes.txt` (request `id`), confirms it, and returns the answer to
    /// the retry (request `id + 1`).
    async fn delete_notes(&mut self, id: i64) -> Value {
        let first = call(
            id,
            "confirm_delete",
            json!({"path": "notes.txt"}),
            form_caps(),
        );
        let r = self.lines.ask(&first).await;
        assert_eq!(rpc::result_type(&r), "input_required", "{r}");
        let next = retry(
            &first,
            id + 1,
            Some(json!({"confirm": accept(json!({"confirm": true}))})),
            Some(rpc::state(&r)),
        );
        self.lines.ask(&next).await
    }

    /// Ends its input, checks it exits cleanly, and returns everything it wrote on stderr.
    async fn stop(mut self) -> String {
        self.lines.close_input().await;
        let status = ferry_testkit::within("the server to exit", self.child.wait())
            .await
            .unwrap();
        assert!(status.success(), "{status}");
        let mut log = String::new();
        self.stderr.read_to_string(&mut log).await.unwrap();
        log
    }
}

/// Deletes `notes.txt` in two rounds on a server started with `args`, and returns (the
/// final text, everything it wrote on stderr).
async fn delete_notes(args: &[&str], envs: &[(&str, &str)]) -> (String, String) {
    let mut server = Running::start(args, envs);
    let done = server.delete_notes(1).await;
    let log = server.stop().await;
    (rpc::text(&done).to_owned(), log)
}

#[tokio::test]
async fn deletes_in_the_given_folder_and_logs_without_colours_on_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let (text, log) = delete_notes(&["--sandbox", &root], &[]).await;
    assert!(
        text.starts_with("Deleted notes.txt (") && text.ends_with(&format!("from {root}")),
        "{text}"
    );
    assert!(!dir.path().join("notes.txt").exists());
    assert!(
        dir.path().join("draft.md").exists(),
        "the demo files were added"
    );
    assert!(log.contains(&root), "the sandbox is named at start: {log}");
    assert!(
        log.contains("Deleted notes.txt"),
        "the deletion is logged: {log}"
    );
    assert!(
        !log.contains('\u{1b}'),
        "no ANSI escapes on a pipe: {log:?}"
    );
    assert!(dir.path().exists(), "a given folder is kept");
}

#[tokio::test]
async fn a_temporary_sandbox_is_removed_on_exit() {
    let (text, log) = delete_notes(&[], &[("NO_COLOR", "1")]).await;
    let root = text
        .rsplit_once(" from ")
        .map(|(_, root)| root.to_owned())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(root.contains("ferry-everything-sandbox-"), "{root}");
    assert!(log.contains(&root), "{log}");
    assert!(!log.contains('\u{1b}'), "{log:?}");
    assert!(!std::path::Path::new(&root).exists(), "{root} is left over");
}

/// `--ledger-capacity` sizes the in-memory ledger: at 0 it holds nothing, so every retry
/// of the single-use `confirm_delete` is refused (fail closed), the file stays, and the
/// refusals are logged once, not once each.
#[tokio::test]
async fn a_full_ledger_refuses_retries_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let mut server = Running::start(&["--sandbox", &root, "--ledger-capacity", "0"], &[]);
    for n in 0..3 {
        let refused = server.delete_notes(10 * n).await;
        assert_eq!(rpc::error_code(&refused), -32603, "{refused}");
    }
    assert!(dir.path().join("notes.txt").exists(), "nothing was deleted");
    let log = server.stop().await;
    assert_eq!(
        log.matches("replay ledger unavailable").count(),
        1,
        "one line for three refusals: {log}"
    );
    assert!(log.contains("replay ledger is full"), "{log}");
}
