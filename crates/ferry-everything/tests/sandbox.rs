//! `confirm_delete` acts only inside the sandbox folder the server owns: escapes are
//! refused before anything is asked, a confirmed delete really removes the file and says
//! so, and a missing file or a "no" deletes nothing.

mod support;

use std::sync::Arc;

use ferry_everything::Options;
use ferry_everything::sandbox::{DEMO_FILES, Sandbox};
use ferry_http::HttpConfig;
use ferry_testkit::http::Client;
use ferry_testkit::rpc::{self, accept, call, form_caps, retry};
use serde_json::{Value, json};
use support::start;

const DELETE: &str = "confirm_delete";

/// A server whose sandbox is a fresh folder with the demo files; returns its root.
async fn serve() -> (ferry_testkit::serve::Running, Client, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(dir.path()).unwrap();
    sandbox.seed_demo_files().unwrap();
    let options = Options {
        sandbox: Some(Arc::new(sandbox)),
        ..Options::default()
    };
    let (running, _) = start(options, HttpConfig::default()).await;
    let client = running.client.clone();
    (running, client, dir)
}

fn root(dir: &tempfile::TempDir) -> String {
    dir.path().canonicalize().unwrap().display().to_string()
}

/// Both rounds of `confirm_delete path`, answering `answer`; returns the final response.
async fn two_rounds(client: &Client, path: &str, answer: Value) -> Value {
    let first = call("r1", DELETE, json!({"path": path}), form_caps());
    let r = client.post(&first).send().await.json().await;
    assert_eq!(rpc::result_type(&r), "input_required", "{r}");
    let question = r["result"]["inputRequests"]["confirm"]["params"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(question.starts_with("Delete "), "{question}");
    let next = retry(
        &first,
        "r2",
        Some(json!({"confirm": answer})),
        Some(rpc::state(&r)),
    );
    client.post(&next).send().await.json().await
}

fn is_error(r: &Value) -> bool {
    r["result"]["isError"] == json!(true)
}

#[tokio::test]
async fn a_confirmed_delete_really_removes_the_file() {
    let (running, client, dir) = serve().await;
    let done = two_rounds(&client, "notes.txt", accept(json!({"confirm": true}))).await;
    let bytes = DEMO_FILES[0].1.len();
    assert_eq!(
        rpc::text(&done),
        format!("Deleted notes.txt ({bytes} bytes) from {}", root(&dir))
    );
    assert!(!is_error(&done), "{done}");
    assert!(!dir.path().join("notes.txt").exists());
    let nested = two_rounds(&client, "old/report.csv", accept(json!({"confirm": true}))).await;
    assert!(
        rpc::text(&nested).starts_with("Deleted old/report.csv ("),
        "{nested}"
    );
    assert!(!dir.path().join("old/report.csv").exists());
    assert!(dir.path().join("old").is_dir(), "folders are kept");
    running.stop().await;
}

#[tokio::test]
async fn a_missing_file_or_a_no_deletes_nothing() {
    let (running, client, dir) = serve().await;
    let missing = two_rounds(&client, "nope.txt", accept(json!({"confirm": true}))).await;
    assert_eq!(
        rpc::text(&missing),
        format!("Nothing deleted: nope.txt does not exist in {}", root(&dir))
    );
    assert!(!is_error(&missing), "{missing}");
    let declined = two_rounds(&client, "draft.md", json!({"action": "decline"})).await;
    assert_eq!(rpc::text(&declined), "Kept draft.md: nothing deleted");
    let no = two_rounds(&client, "draft.md", accept(json!({"confirm": false}))).await;
    assert_eq!(rpc::text(&no), "Kept draft.md: nothing deleted");
    let cancelled = two_rounds(&client, "draft.md", json!({"action": "cancel"})).await;
    assert_eq!(rpc::text(&cancelled), "Cancelled: nothing deleted");
    assert!(dir.path().join("draft.md").exists());
    running.stop().await;
}

/// Refused in the first round, as a tool error that says why, with nothing asked.
async fn refused(client: &Client, path: &str) -> String {
    let r = client
        .post(&call("r1", DELETE, json!({"path": path}), form_caps()))
        .send()
        .await
        .json()
        .await;
    assert_eq!(rpc::result_type(&r), "complete", "{path}: {r}");
    assert!(is_error(&r), "{path}: {r}");
    rpc::text(&r).to_owned()
}

#[tokio::test]
async fn escapes_are_refused_before_anything_is_asked() {
    let (running, client, dir) = serve().await;
    let outside = tempfile::tempdir().unwrap();
    let precious = outside.path().join("precious.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let absolute = precious.display().to_string();
    assert!(refused(&client, &absolute).await.contains("absolute path"));
    assert!(refused(&client, "../x").await.contains("`..`"));
    assert!(refused(&client, "old/../../x").await.contains("`..`"));
    assert!(refused(&client, "old").await.contains("is a directory"));
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&precious, dir.path().join("link.txt")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        for path in ["link.txt", "out/precious.txt"] {
            let why = refused(&client, path).await;
            assert!(why.contains("leads outside the sandbox"), "{why}");
        }
    }
    assert!(precious.exists());
    running.stop().await;
}

/// A file that goes away between the rounds is reported as missing, not as an error.
#[tokio::test]
async fn the_last_round_looks_again() {
    let (running, client, dir) = serve().await;
    let first = call("r1", DELETE, json!({"path": "notes.txt"}), form_caps());
    let r = client.post(&first).send().await.json().await;
    assert_eq!(rpc::result_type(&r), "input_required", "{r}");
    std::fs::remove_file(dir.path().join("notes.txt")).unwrap();
    let next = retry(
        &first,
        "r2",
        Some(json!({"confirm": accept(json!({"confirm": true}))})),
        Some(rpc::state(&r)),
    );
    let done = client.post(&next).send().await.json().await;
    assert!(
        rpc::text(&done).starts_with("Nothing deleted: notes.txt does not exist in "),
        "{done}"
    );
    running.stop().await;
}
