//! The real binary: it says where its sandbox is, a temporary sandbox is removed on exit,
//! a confirmed delete removes the file from the folder given with `--sandbox`, and logs
//! written to a pipe carry no colours.

use std::process::Stdio;

use ferry_testkit::lines::JsonLines;
use ferry_testkit::rpc::{self, accept, call, form_caps, retry};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

/// Runs `ferry-everything --stdio ARGS` with stderr on a pipe, deletes `notes.txt` in two
/// rounds, ends its input and returns (the final text, everything it wrote on stderr).
async fn delete_notes(args: &[&str], envs: &[(&str, &str)]) -> (String, String) {
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
    let mut stderr = child.stderr.take().unwrap();
    let mut lines = JsonLines::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let first = call(
        1,
        "confirm_delete",
        json!({"path": "notes.txt"}),
        form_caps(),
    );
    let r = lines.ask(&first).await;
    assert_eq!(rpc::result_type(&r), "input_required", "{r}");
    let next = retry(
        &first,
        2,
        Some(json!({"confirm": accept(json!({"confirm": true}))})),
        Some(rpc::state(&r)),
    );
    let done = lines.ask(&next).await;
    lines.close_input().await;
    let status = ferry_testkit::within("the server to exit", child.wait())
        .await
        .unwrap();
    assert!(status.success(), "{status}");
    let mut log = String::new();
    stderr.read_to_string(&mut log).await.unwrap();
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
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry-everything"))
        .args(["--stdio", "--sandbox", &root, "--ledger-capacity", "0"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start ferry-everything --stdio");
    let mut stderr = child.stderr.take().unwrap();
    let mut lines = JsonLines::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    for n in 0..3 {
        let first = call(
            10 * n,
            "confirm_delete",
            json!({"path": "notes.txt"}),
            form_caps(),
        );
        let r = lines.ask(&first).await;
        assert_eq!(rpc::result_type(&r), "input_required", "{r}");
        let next = retry(
            &first,
            10 * n + 1,
            Some(json!({"confirm": accept(json!({"confirm": true}))})),
            Some(rpc::state(&r)),
        );
        let refused = lines.ask(&next).await;
        assert_eq!(rpc::error_code(&refused), -32603, "{refused}");
    }
    assert!(dir.path().join("notes.txt").exists(), "nothing was deleted");
    lines.close_input().await;
    let status = ferry_testkit::within("the server to exit", child.wait())
        .await
        .unwrap();
    assert!(status.success(), "{status}");
    let mut log = String::new();
    stderr.read_to_string(&mut log).await.unwrap();
    assert_eq!(
        log.matches("replay ledger unavailable").count(),
        1,
        "one line for three refusals: {log}"
    );
    assert!(log.contains("replay ledger is full"), "{log}");
}
