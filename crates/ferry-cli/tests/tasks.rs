//! `ferry call` on a tool that runs as a task, and `ferry task get` / `ferry task cancel`
//! on a task left running.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry_client::{CallOptions, Client};
use serde_json::{Value, json};
use support::{Everything, ferry, run, stderr, stdout};

fn ferry_at(server: &Everything, args: &[&str]) -> std::process::Output {
    let mut cmd = ferry();
    cmd.arg("--url").arg(&server.url).args(args);
    run(cmd)
}

/// Starts `slow_compute` as a task and leaves it running; returns its id.
fn detached_task(server: &Everything) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = Client::builder()
            .http(&server.url)
            .build()
            .await
            .expect("connects");
        let seen = Arc::new(Mutex::new(None));
        let s = seen.clone();
        let opts = CallOptions::new()
            .detach()
            .task_timeout(Duration::from_millis(300))
            .on_task_status(move |t| *s.lock().unwrap() = Some(t.task_id.clone()));
        let _ = client
            .call_tool_with("slow_compute", json!({"seconds": 60}), &opts)
            .await;
        let id = seen.lock().unwrap().clone();
        id.expect("the call became a task")
    })
}

#[test]
fn call_follows_a_task_and_task_get_and_cancel_work_by_id() {
    let server = Everything::start();
    let o = ferry_at(&server, &["call", "slow_compute", "seconds=1", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let result: Value = serde_json::from_slice(&o.stdout).expect("only JSON on stdout");
    assert!(result["content"][0]["text"].is_string(), "{result}");

    let id = detached_task(&server);
    let o = ferry_at(&server, &["task", "get", &id, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let task: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(task["taskId"], id.as_str());
    assert_eq!(task["status"], "working");

    let o = ferry_at(&server, &["task", "cancel", &id]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = ferry_at(&server, &["task", "get", &id]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("status: cancelled"), "{}", stdout(&o));

    let o = ferry_at(&server, &["task", "get", "AAAAAAAAAAAAAAAAAAAAAAAA"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("Task not found"), "{}", stderr(&o));
}
