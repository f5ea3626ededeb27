//! Ferry's client follows calls that become tasks on the everything server: the result
//! arrives as from a plain call, questions go through the same input handler as MRTR,
//! and a call given up (timed out or dropped) cancels its task unless detached.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::ferry_protocol::tasks::TaskStatus;
use ferry_client::{CallOptions, Client, Error, FnHandler};
use ferry_everything::Options;
use ferry_http::HttpConfig;
use serde_json::json;
use support::start;

fn confirming(asked: Arc<Mutex<Vec<String>>>) -> FnHandler {
    FnHandler::new().on_form(move |req| {
        asked.lock().unwrap().push(req.message.clone());
        let mut content = BTreeMap::new();
        for field in req.fields() {
            match field.name {
                "confirm" => content.insert("confirm".to_owned(), ElicitValue::Bool(true)),
                "name" => content.insert("name".to_owned(), ElicitValue::String("Ada".into())),
                _ => None,
            };
        }
        std::future::ready(ElicitResult::accept(content))
    })
}

async fn client(addr: std::net::SocketAddr, asked: Arc<Mutex<Vec<String>>>) -> Client {
    Client::builder()
        .http(format!("http://{addr}/mcp"))
        .input_handler(confirming(asked))
        .build()
        .await
        .expect("connects")
}

/// Task states seen: id, status, status message.
type Seen = Arc<Mutex<Vec<(String, TaskStatus, Option<String>)>>>;

/// Records every task state a call polls.
fn recording(seen: &Seen) -> CallOptions {
    let seen = seen.clone();
    CallOptions::new().on_task_status(move |t| {
        seen.lock()
            .unwrap()
            .push((t.task_id.clone(), t.status, t.status_message.clone()))
    })
}

#[tokio::test]
async fn call_tool_follows_a_task_to_its_result() {
    let (run, _server) = start(Options::default(), HttpConfig::default()).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = client(run.client.addr(), asked.clone()).await;

    let seen = Arc::new(Mutex::new(Vec::new()));
    let progress = Arc::new(Mutex::new(Vec::new()));
    let p = progress.clone();
    let opts = recording(&seen).on_progress(move |r| p.lock().unwrap().push(r));
    let r = client
        .call_tool_with(
            "slow_compute",
            json!({"seconds": 2, "label": "adding"}),
            &opts,
        )
        .await
        .expect("the task's result");
    assert!(r.is_error != Some(true), "{r:?}");
    assert!(!r.content.is_empty());
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() >= 2, "the task was polled: {seen:?}");
    assert!(seen.iter().any(|s| s.1 == TaskStatus::Working));
    assert_eq!(seen.last().unwrap().1, TaskStatus::Completed);
    let progress = progress.lock().unwrap().clone();
    assert!(
        progress
            .iter()
            .any(|p| p.total == Some(2.0) && p.progress >= 1.0),
        "progress in the statusMessage reaches the progress callback: {progress:?}"
    );

    // Questions inside a task go through the same input handler.
    let r = client
        .call_tool("confirm_delete", json!({"filename": "notes.txt"}))
        .await
        .expect("confirmed");
    assert!(r.content[0].as_text().unwrap().contains("Deleted"), "{r:?}");
    let r = client
        .call_tool("multi_input", json!({}))
        .await
        .expect("answered");
    assert_eq!(r.content[0].as_text(), Some("Hello, Ada! Confirmed: true"));
    assert_eq!(asked.lock().unwrap().len(), 3, "each question asked once");

    // A failed task is the server's error.
    let err = client
        .call_tool("protocol_error_job", json!({}))
        .await
        .expect_err("the job fails");
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32603), "{err}");
    run.stop().await;
}

#[tokio::test]
async fn a_call_given_up_cancels_its_task_unless_detached() {
    let (run, _server) = start(Options::default(), HttpConfig::default()).await;
    let client = client(run.client.addr(), Arc::default()).await;

    let seen = Arc::new(Mutex::new(Vec::new()));
    let opts = recording(&seen).task_timeout(Duration::from_millis(700));
    let err = client
        .call_tool_with("slow_compute", json!({"seconds": 60}), &opts)
        .await
        .expect_err("times out");
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    let id = seen.lock().unwrap()[0].0.clone();
    let task = client.task(&id);
    let mut status = TaskStatus::Working;
    for _ in 0..100 {
        status = task.get().await.expect("tasks/get").status();
        if status == TaskStatus::Cancelled {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        status,
        TaskStatus::Cancelled,
        "the timed-out call cancelled its task"
    );

    // Dropping the call's future cancels too.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let opts = recording(&seen);
    let call = client.call_tool_with("slow_compute", json!({"seconds": 60}), &opts);
    assert!(
        tokio::time::timeout(Duration::from_millis(700), call)
            .await
            .is_err()
    );
    let id = seen.lock().unwrap()[0].0.clone();
    let task = client.task(&id);
    for _ in 0..100 {
        status = task.get().await.expect("tasks/get").status();
        if status == TaskStatus::Cancelled {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        status,
        TaskStatus::Cancelled,
        "the dropped call cancelled its task"
    );

    // Detached: the task runs on, and the handle follows and cancels it later.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let opts = recording(&seen)
        .task_timeout(Duration::from_millis(700))
        .detach();
    let err = client
        .call_tool_with("slow_compute", json!({"seconds": 60}), &opts)
        .await
        .expect_err("times out");
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    let id = seen.lock().unwrap()[0].0.clone();
    let task = client.task(&id);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(task.get().await.unwrap().status(), TaskStatus::Working);
    let follower = {
        let task = task.clone();
        tokio::spawn(async move { task.wait(&CallOptions::new().detach()).await })
    };
    task.cancel().await.expect("tasks/cancel");
    let ended = follower.await.unwrap().expect_err("cancelled");
    assert!(matches!(ended, Error::TaskCancelled { .. }), "{ended}");
    run.stop().await;
}
