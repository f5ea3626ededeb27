//! Tasks on the everything server: a task store file outlives a SIGKILL (unfinished tasks
//! come back `failed`, finished ones with their results), and one principal's tasks are
//! invisible to every other caller (ext-tasks/tasks.md, "Security Considerations").

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ferry_everything::Options;
use ferry_http::HttpConfig;
use ferry_server::TaskStore;
use ferry_tasks::{INTERRUPTED_MESSAGE, RedbTaskStore};
use ferry_testkit::http::Client;
use ferry_testkit::rpc::{self, call, request_with};
use serde_json::{Value, json};
use support::{ALICE, BOB, start};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

fn caps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}})
}

async fn send(client: &Client, message: &Value) -> Value {
    client.post(message).send().await.json().await
}

/// Starts a tool call that becomes a task and returns the task id.
async fn start_task(client: &Client, tool: &str, arguments: Value) -> String {
    let r = send(client, &call(1, tool, arguments, caps())).await;
    assert_eq!(rpc::result_type(&r), "task", "{r}");
    r["result"]["taskId"].as_str().expect("taskId").to_owned()
}

async fn tasks_call(client: &Client, method: &str, params: Value) -> Value {
    send(client, &request_with(2, method, params, caps())).await
}

async fn get(client: &Client, id: &str) -> Value {
    tasks_call(client, "tasks/get", json!({"taskId": id})).await
}

/// Polls until the task has `status`, for up to ten seconds.
async fn wait_for(client: &Client, id: &str, status: &str) -> Value {
    for _ in 0..200 {
        let r = get(client, id).await;
        if r["result"]["status"] == status {
            return r["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never became {status}: {}", get(client, id).await);
}

/// The real binary on 127.0.0.1 (an OS-chosen port) with its tasks in `store` and its
/// sandbox folder beside it (a killed server cannot remove a temporary one of its own).
async fn spawn_http(store: &Path) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferry-everything"))
        .args(["--http", "127.0.0.1:0", "--task-store"])
        .arg(store)
        .arg("--sandbox")
        .arg(store.with_file_name("sandbox"))
        .args(["--dev-token", &format!("alice={ALICE}")])
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start ferry-everything --http");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("read stderr") {
            if let Some(rest) = line.split("serving MCP at http://").nth(1) {
                let addr = rest.trim_end_matches("/mcp").trim();
                return addr.parse::<SocketAddr>().expect("the address it serves");
            }
        }
        panic!("ferry-everything ended before serving");
    })
    .await
    .expect("ferry-everything serves within 30 s");
    // Keep draining its log so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, addr)
}

#[tokio::test]
async fn a_task_store_file_outlives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.redb");

    let (mut child, addr) = spawn_http(&path).await;
    let alice = Client::new(addr, "/mcp").with_token(ALICE);
    let running = start_task(
        &alice,
        "slow_compute",
        json!({"seconds": 60, "label": "long"}),
    )
    .await;
    let finished = start_task(
        &alice,
        "slow_compute",
        json!({"seconds": 0, "label": "quick"}),
    )
    .await;
    let done = wait_for(&alice, &finished, "completed").await;
    let result = done["result"].clone();
    assert_eq!(
        wait_for(&alice, &running, "working").await["taskId"],
        running
    );

    child.start_kill().expect("SIGKILL");
    child.wait().await.expect("reaped");

    let (_child, addr) = spawn_http(&path).await;
    let alice = Client::new(addr, "/mcp").with_token(ALICE);
    let r = get(&alice, &running).await;
    assert_eq!(r["result"]["status"], "failed", "{r}");
    assert_eq!(r["result"]["statusMessage"], INTERRUPTED_MESSAGE);
    assert_eq!(r["result"]["error"]["code"], -32603);
    let r = get(&alice, &finished).await;
    assert_eq!(r["result"]["status"], "completed", "{r}");
    assert_eq!(
        r["result"]["result"], result,
        "the result is kept as it was"
    );
    assert!(
        r["result"]["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        "{r}"
    );
}

/// Bob (and an anonymous caller) get for Alice's task exactly what they get for an id
/// that never existed, and can change nothing about it.
async fn foreign_tasks_are_unknown(options: Options) {
    let (run, _server) = start(options, HttpConfig::default()).await;
    let alice = run.client.with_token(ALICE);
    let bob = run.client.with_token(BOB);
    let anonymous = run.client.clone();
    let task = start_task(&alice, "slow_compute", json!({"seconds": 30})).await;
    let asking = start_task(&alice, "confirm_delete", json!({"filename": "a.txt"})).await;
    let asked = wait_for(&alice, &asking, "input_required").await;
    let key = asked["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");

    let unknown = "AAAAAAAAAAAAAAAAAAAAAAAA";
    for (name, id) in [
        ("a foreign", task.as_str()),
        ("a foreign asking", asking.as_str()),
    ] {
        for caller in [&bob, &anonymous] {
            let calls = [
                (
                    "tasks/get",
                    json!({"taskId": id}),
                    json!({"taskId": unknown}),
                ),
                (
                    "tasks/update",
                    json!({"taskId": id, "inputResponses": {key.as_str(): {"action": "accept", "content": {"confirm": true}}}}),
                    json!({"taskId": unknown, "inputResponses": {key.as_str(): {"action": "accept", "content": {"confirm": true}}}}),
                ),
                (
                    "tasks/cancel",
                    json!({"taskId": id}),
                    json!({"taskId": unknown}),
                ),
            ];
            for (method, theirs, never) in calls {
                let r = tasks_call(caller, method, theirs).await;
                let u = tasks_call(caller, method, never).await;
                assert_eq!(rpc::error_code(&r), -32602, "{method} on {name} task: {r}");
                assert_eq!(
                    r["error"], u["error"],
                    "{method}: {name} task answers like an unknown one"
                );
            }
        }
    }

    // Nothing changed for Alice: the work goes on, the question is still open.
    assert_eq!(get(&alice, &task).await["result"]["status"], "working");
    let r = get(&alice, &asking).await;
    assert_eq!(r["result"]["status"], "input_required");
    assert!(r["result"]["inputRequests"].get(&key).is_some());
    let r = tasks_call(&alice, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(rpc::result_type(&r), "complete", "{r}");
    assert_eq!(wait_for(&alice, &task, "cancelled").await["taskId"], task);
    run.stop().await;
}

#[tokio::test]
async fn another_principal_cannot_touch_a_task_in_memory() {
    foreign_tasks_are_unknown(Options::default()).await;
}

#[tokio::test]
async fn another_principal_cannot_touch_a_task_in_redb() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn TaskStore> =
        Arc::new(RedbTaskStore::open(dir.path().join("tasks.redb")).unwrap());
    foreign_tasks_are_unknown(Options {
        task_store: Some(store),
        ..Options::default()
    })
    .await;
}
