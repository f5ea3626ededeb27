//! Tasks (the Tasks extension) through the gateway, in front of ferry-everything's task
//! tools: the client gets a task id of the gateway's own, bound to its principal, and
//! follows, answers and cancels the task through the gateway. Another principal is told
//! the task does not exist; a client without the extension gets the full result, or the
//! upstream's -32021 for a tool that runs only as a task.

mod support;

use std::collections::BTreeMap;

use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_client::{Client, FnHandler, ServerNotification};
use ferry_gateway::UpstreamConfig;
use ferry_testkit::http::post_url;
use ferry_testkit::rpc;
use serde_json::{Value, json};
use support::*;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn task_caps() -> Value {
    json!({"elicitation": {"form": {}}, "extensions": { TASKS: {} }})
}

async fn send(url: &str, token: &str, id: u64, method: &str, params: Value, caps: Value) -> Value {
    post_url(
        url,
        Some(token),
        &rpc::request_with(id, method, params, caps),
    )
    .await
}

/// `method` (`tasks/get`, `tasks/cancel`) for `task_id`, as `token`'s principal.
async fn task_op(url: &str, token: &str, id: u64, method: &str, task_id: &str) -> Value {
    send(
        url,
        token,
        id,
        method,
        json!({"taskId": task_id}),
        task_caps(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ferry_client_follows_and_answers_a_task_through_the_gateway() {
    let upstream = everything_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![UpstreamConfig::http("ev", &upstream)], dir.path(), 8).await;
    let handler = FnHandler::new().on_form(|form| {
        let answer = match form.message.as_str() {
            "What is your name?" => ("name", ElicitValue::String("Ada".into())),
            _ => ("confirm", ElicitValue::Bool(true)),
        };
        async move { ElicitResult::accept(BTreeMap::from([(answer.0.to_owned(), answer.1)])) }
    });
    let client = Client::builder()
        .http(format!("{base}/mcp"))
        .bearer_token("alice-token")
        .tasks(true)
        .input_handler(handler)
        .build()
        .await
        .expect("the client connects to the gateway");

    let computed = client
        .call_tool("slow_compute", json!({"seconds": 0.3, "label": "sums"}))
        .await
        .expect("the task completes");
    assert_eq!(
        text(&serde_json::to_value(&computed).unwrap()),
        "Computed sums in 0.3 s"
    );

    // Both questions are pending inside the task; the client answers with tasks/update.
    let greeted = client
        .call_tool("multi_input", json!({}))
        .await
        .expect("the task completes");
    assert_eq!(
        text(&serde_json::to_value(&greeted).unwrap()),
        "Hello, Ada! Confirmed: true"
    );

    let outcomes: Vec<Value> = usage(dir.path())
        .iter()
        .map(|r| r["outcome"].clone())
        .collect();
    assert_eq!(outcomes, ["task", "task"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_ids_are_the_gateways_own_and_bound_to_their_principal() {
    let upstream = everything_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![UpstreamConfig::http("ev", &upstream)], dir.path(), 8).await;
    let url = format!("{base}/mcp");

    let discovered = send(
        &url,
        "alice-token",
        1,
        "server/discover",
        json!({}),
        task_caps(),
    )
    .await;
    assert!(
        discovered["result"]["capabilities"]["extensions"][TASKS].is_object(),
        "{discovered}"
    );

    let args = json!({"name": "slow_compute", "arguments": {"seconds": 30}});
    let created = send(
        &url,
        "alice-token",
        2,
        "tools/call",
        args.clone(),
        task_caps(),
    )
    .await;
    let created = &created["result"];
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    let id = created["taskId"].as_str().expect("a task id").to_owned();

    // The upstream does not know the gateway's id.
    let direct = task_op(&upstream, "x", 3, "tasks/get", &id).await;
    assert_eq!(direct["error"]["code"], -32602, "{direct}");

    let got = task_op(&url, "alice-token", 4, "tasks/get", &id).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");

    for method in ["tasks/get", "tasks/cancel"] {
        let bobs = task_op(&url, "bob-token", 5, method, &id).await;
        assert_eq!(bobs["error"]["code"], -32602, "{bobs}");
        assert_eq!(
            bobs["error"]["message"], "Failed to retrieve task: Task not found",
            "{bobs}"
        );
    }
    let made_up = task_op(&url, "alice-token", 6, "tasks/get", "t-1").await;
    assert_eq!(made_up["error"]["code"], -32602, "{made_up}");

    let cancelled = task_op(&url, "alice-token", 7, "tasks/cancel", &id).await;
    assert!(cancelled["result"].is_object(), "{cancelled}");
    let after = task_op(&url, "alice-token", 8, "tasks/get", &id).await;
    assert_eq!(after["result"]["status"], "cancelled", "{after}");

    // Without the extension: tasks/* is refused at the gateway, a tool that may be a task
    // answers in full, and one that must be a task is the upstream's -32021.
    let plain = rpc::form_caps();
    let refused = send(
        &url,
        "alice-token",
        9,
        "tasks/get",
        json!({"taskId": id}),
        plain.clone(),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    let quick = json!({"name": "slow_compute", "arguments": {"seconds": 0}});
    let full = send(&url, "alice-token", 10, "tools/call", quick, plain.clone()).await;
    assert_eq!(
        text(&full["result"]),
        "Computed computation in 0 s",
        "{full}"
    );
    let only_task = json!({"name": "failing_job", "arguments": {}});
    let needs = send(&url, "alice-token", 11, "tools/call", only_task, plain).await;
    assert_eq!(needs["error"]["code"], -32021, "{needs}");
}

/// A client of the gateway at `url` that declares the Tasks extension, as `token`'s
/// principal.
async fn task_client(url: &str, token: &str) -> Client {
    Client::builder()
        .http(url)
        .bearer_token(token)
        .tasks(true)
        .build()
        .await
        .expect("the client connects to the gateway")
}

/// Starts `slow_compute` for `seconds` as a task of alice's through the gateway at
/// `url`; returns the gateway's task id.
async fn start_slow_compute(url: &str, seconds: f64) -> String {
    let args = json!({"name": "slow_compute", "arguments": {"seconds": seconds, "label": "sums"}});
    let created = send(url, "alice-token", 1, "tools/call", args, task_caps()).await;
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned()
}

/// The next `notifications/tasks` on `subscription`, as its params.
async fn next_task_notification(subscription: &mut ferry_client::Subscription) -> Value {
    loop {
        let next = tokio::time::timeout(std::time::Duration::from_secs(10), subscription.recv())
            .await
            .expect("a task notification within 10 s")
            .expect("the stream stays open")
            .expect("the stream does not fail");
        if let ServerNotification::Other { method, params } = next
            && method == "notifications/tasks"
        {
            return params.expect("params");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_follows_the_gateways_task_ids_on_their_upstream() {
    let upstream = everything_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![UpstreamConfig::http("ev", &upstream)], dir.path(), 8).await;
    let url = format!("{base}/mcp");
    let id = start_slow_compute(&url, 1.0).await;

    let alice = task_client(&url, "alice-token").await;
    let mut followed = alice
        .listen(
            SubscriptionFilter::new()
                .with_task(id.clone())
                .with_task("not-a-gateway-task-id"),
        )
        .await
        .expect("the gateway acknowledges the stream");
    assert_eq!(followed.granted().task_ids, Some(vec![id.clone()]));

    // The task's state now, then each change until it ends, under the gateway's id.
    let mut statuses = Vec::new();
    let last = loop {
        let params = next_task_notification(&mut followed).await;
        assert_eq!(params["taskId"], id.as_str(), "{params}");
        assert!(
            !params["_meta"]["io.modelcontextprotocol/subscriptionId"].is_null(),
            "tagged with the stream's subscription id: {params}"
        );
        let status = params["status"].as_str().unwrap_or_default().to_owned();
        statuses.push(status.clone());
        if status != "working" {
            break params;
        }
    };
    assert_eq!(statuses.first().map(String::as_str), Some("working"));
    assert_eq!(last["status"], "completed", "{last}");
    assert_eq!(text(&last["result"]), "Computed sums in 1 s", "{last}");

    // Another principal follows nothing with the same id.
    let bob = task_client(&url, "bob-token").await;
    let refused = bob
        .listen(SubscriptionFilter::new().with_task(id.clone()))
        .await
        .expect("the gateway acknowledges bob's stream");
    assert!(
        refused
            .granted()
            .task_ids
            .as_ref()
            .is_none_or(Vec::is_empty),
        "{:?}",
        refused.granted()
    );
}

/// A TCP relay in front of `upstream` (`http://host:port/mcp`) whose open connections
/// can all be cut at once; returns its URL and the relay.
async fn relay(upstream: &str) -> (String, CutRelay) {
    let target: std::net::SocketAddr = upstream
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let open = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let tracked = open.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let relayed = tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
            tracked.lock().unwrap().push(relayed.abort_handle());
        }
    });
    (format!("http://{addr}/mcp"), CutRelay(open))
}

/// The connections a [`relay`] holds open.
struct CutRelay(std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>);

impl CutRelay {
    /// Closes every connection open through the relay (new ones still get through).
    fn cut(&self) {
        for connection in self.0.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_stream_that_breaks_upstream_is_listened_to_again() {
    let upstream = everything_upstream().await;
    let (through, relay) = relay(&upstream).await;
    let dir = tempfile::tempdir().unwrap();
    let base = gateway(vec![UpstreamConfig::http("ev", &through)], dir.path(), 8).await;
    let url = format!("{base}/mcp");
    let id = start_slow_compute(&url, 1.5).await;
    let alice = task_client(&url, "alice-token").await;
    let mut followed = alice
        .listen(SubscriptionFilter::new().with_task(id.clone()))
        .await
        .expect("the gateway acknowledges the stream");
    let first = next_task_notification(&mut followed).await;
    assert_eq!(first["status"], "working", "{first}");

    // The gateway's stream to the upstream breaks; the client's stays open and still
    // hears how the task ends.
    relay.cut();
    let last = loop {
        let params = next_task_notification(&mut followed).await;
        assert_eq!(params["taskId"], id.as_str(), "{params}");
        if params["status"] != "working" {
            break params;
        }
    };
    assert_eq!(last["status"], "completed", "{last}");
    assert_eq!(text(&last["result"]), "Computed sums in 1.5 s", "{last}");
}
