//! The official MCP TypeScript SDK client (`@modelcontextprotocol/client` 2.4.0, from
//! `tools/ts-client`) against the example server on stdio: every progress notification
//! of a call reaches the client, though its stdio transport drops one that arrives in
//! the same read as the call's result (Ferry writes progress out on its own).
//!
//! Needs Node.js and `npm ci --prefix tools/ts-client`; skipped without them, except
//! under `FERRY_CI`, where it fails.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_typescript_client_sees_every_progress_notification_on_stdio() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tools/ts-client");
    let installed = dir
        .join("node_modules/@modelcontextprotocol/client")
        .is_dir();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !(installed && node) {
        let why = format!(
            "the TypeScript SDK client needs Node.js and `npm ci --prefix {}`",
            dir.display()
        );
        if std::env::var_os("FERRY_CI").is_some() {
            panic!("{why}");
        }
        eprintln!("skipped: {why}");
        return;
    }
    let out = Command::new("node")
        .arg(dir.join("progress.mjs"))
        .arg("20")
        .arg(env!("CARGO_BIN_EXE_ferry"))
        .args(["demo", "--serve-stdio"])
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "the TypeScript client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("one JSON line from the client");
    assert_eq!(report["text"], "Progress test completed", "{report}");
    let seen: Vec<u64> = report["seen"]
        .as_array()
        .expect("seen")
        .iter()
        .map(|v| v.as_u64().expect("a count"))
        .collect();
    assert_eq!(seen.len(), 20);
    assert!(
        seen.iter().all(|n| *n == 3),
        "each call sends 3 progress notifications; the client saw {seen:?}"
    );
}
