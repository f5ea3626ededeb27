//! Three real `ferry-everything --redis` processes sharing a real `redis-server` and one
//! set of state keys, behind a real nginx configured with `deploy/nginx.conf.template`
//! (everything on loopback, on free ports below 32768, in temporary directories):
//!
//! - a two-round `confirm_delete` whose rounds land on different instances completes, and
//!   its retry replayed against every instance directly is refused;
//! - killing the instance that served round one does not stop round two;
//! - a listen stream on one instance hears `set_note` raised on another, and a third
//!   reads the note;
//! - the official Python SDK (mcp 2.3.0, legacy sessions and 2026-07-28) completes
//!   `confirm_delete` through nginx;
//! - with Redis stopped, `confirm_delete` fails closed with a clear error while `echo`
//!   answers, and both work once Redis is back, without restarting anything.
//!
//! Skipped when redis-server or nginx is missing, except under `FERRY_CI`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use ferry_testkit::http::Client;
use ferry_testkit::python;
use ferry_testkit::rpc::{self, accept, call, form_caps, request, retry};
use ferry_testkit::services::{Nginx, RedisServer, available, free_port, wait_for_port};
use serde_json::{Value, json};

struct Instance {
    port: u16,
    child: Option<Child>,
}

impl Instance {
    fn start(redis: &RedisServer, keys: &str, sandbox: &std::path::Path) -> Instance {
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_ferry-everything"))
            .args(["--http", &format!("127.0.0.1:{port}")])
            .args(["--redis", &redis.url()])
            .arg("--sandbox")
            .arg(sandbox)
            .env("FERRY_STATE_KEYS", keys)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ferry-everything");
        assert!(
            wait_for_port(port, Duration::from_secs(20)),
            "ferry-everything did not start on {port}"
        );
        Instance {
            port,
            child: Some(child),
        }
    }

    fn client(&self) -> Client {
        Client::new(SocketAddr::from(([127, 0, 0, 1], self.port)), "/mcp")
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

struct Cluster {
    instances: Vec<Instance>,
    nginx: Nginx,
    redis: RedisServer,
    /// The sandbox folder every instance's confirm_delete works in.
    sandbox: tempfile::TempDir,
}

impl Cluster {
    fn start() -> Option<Cluster> {
        if !available("redis-server") || !available("nginx") {
            return None;
        }
        let redis = RedisServer::start();
        let key = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
        let keys = format!("k1:{key}");
        let sandbox = tempfile::tempdir().expect("a sandbox folder");
        let instances: Vec<Instance> = (0..3)
            .map(|_| Instance::start(&redis, &keys, sandbox.path()))
            .collect();
        let template = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/nginx.conf.template"),
        )
        .expect("deploy/nginx.conf.template");
        let servers: String = instances
            .iter()
            .map(|i| {
                format!(
                    "    server 127.0.0.1:{} max_fails=1 fail_timeout=5s;\n",
                    i.port
                )
            })
            .collect();
        let nginx = Nginx::start(&template.replace("{servers}", servers.trim_end()));
        Some(Cluster {
            instances,
            nginx,
            redis,
            sandbox,
        })
    }

    /// Writes a file in the shared sandbox; returns its path there.
    fn file(&self, name: &str) -> PathBuf {
        let path = self.sandbox.path().join(name);
        std::fs::write(&path, "to be deleted").expect("write a sandbox file");
        path
    }

    fn front(&self) -> Client {
        Client::new(
            SocketAddr::from(([127, 0, 0, 1], self.nginx.port())),
            "/mcp",
        )
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.nginx.port())
    }

    fn index_of(&self, upstream: &str) -> usize {
        self.instances
            .iter()
            .position(|i| upstream.ends_with(&format!(":{}", i.port)))
            .unwrap_or_else(|| panic!("upstream {upstream} is none of the instances"))
    }
}

/// Posts `msg` and returns the final message and the instance (`host:port`) that served it.
async fn post(client: &Client, msg: &Value) -> (Value, String) {
    let res = client.post(msg).send().await;
    let upstream = res.header("x-upstream").unwrap_or_default().to_owned();
    (res.message().await.0, upstream)
}

fn delete_call(path: &str) -> Value {
    call(
        "first",
        "confirm_delete",
        json!({"path": path}),
        form_caps(),
    )
}

fn yes() -> Value {
    json!({"confirm": accept(json!({"confirm": true}))})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mrtr_rounds_on_different_instances_complete_once() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let front = cluster.front();
    let file = cluster.file("a.txt");
    let first = delete_call("a.txt");
    let (r1, up1) = post(&front, &first).await;
    assert_eq!(rpc::result_type(&r1), "input_required", "{r1}");
    let again = retry(&first, "second", Some(yes()), Some(rpc::state(&r1)));
    let (r2, up2) = post(&front, &again).await;
    assert_ne!(up1, up2, "round robin sends the retry to another instance");
    assert!(
        rpc::text(&r2).starts_with("Deleted a.txt (13 bytes) from "),
        "{r2}"
    );
    assert!(!file.exists(), "the instance that answered deleted it");

    // The same retry, replayed on each instance directly, is refused: the redemption is
    // recorded in Redis, not in the instance that made it.
    for instance in &cluster.instances {
        let (r, _) = post(&instance.client(), &again).await;
        assert!(r.get("error").is_some(), "a replay is refused: {r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_two_completes_after_the_first_instance_dies() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let front = cluster.front();
    let file = cluster.file("b.txt");
    let first = delete_call("b.txt");
    let (r1, up1) = post(&front, &first).await;
    assert_eq!(rpc::result_type(&r1), "input_required", "{r1}");
    let dead = cluster.index_of(&up1);
    cluster.instances[dead].kill();
    let again = retry(&first, "second", Some(yes()), Some(rpc::state(&r1)));
    // nginx may try the dead instance first (connection refused) and moves on.
    let (r2, up2) = post(&front, &again).await;
    assert!(rpc::text(&r2).starts_with("Deleted b.txt ("), "{r2}");
    assert!(!file.exists());
    assert_ne!(cluster.index_of(up2.rsplit(", ").next().unwrap()), dead);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_set_on_one_instance_reaches_listeners_on_another() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let [a, b, c] = [0, 1, 2].map(|i| cluster.instances[i].client());
    let mut sse = a
        .post(&request(
            "watch",
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": ["note://shared"]}}),
        ))
        .send()
        .await
        .sse();
    let ack = sse.next_message().await.expect("acknowledged");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    let (r, _) = post(
        &b,
        &call(
            "set",
            "set_note",
            json!({"name": "shared", "text": "hello from b"}),
            json!({}),
        ),
    )
    .await;
    assert_eq!(rpc::text(&r), "Saved note://shared", "{r}");
    let note = tokio::time::timeout(Duration::from_secs(10), sse.next_message())
        .await
        .expect("the update reaches instance a")
        .expect("the stream goes on");
    assert_eq!(note["method"], "notifications/resources/updated", "{note}");
    assert_eq!(note["params"]["uri"], "note://shared");

    let (read, _) = post(
        &c,
        &request("read", "resources/read", json!({"uri": "note://shared"})),
    )
    .await;
    assert_eq!(
        read["result"]["contents"][0]["text"], "hello from b",
        "{read}"
    );
    // Exactly once: nothing else arrives for it.
    assert!(
        tokio::time::timeout(Duration::from_millis(500), sse.next_message())
            .await
            .is_err(),
        "no duplicate"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_completes_confirm_delete_through_nginx() {
    if !python::sdk_available() {
        return;
    }
    let Some(cluster) = Cluster::start() else {
        return;
    };
    for (mode, protocol) in [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")] {
        let out = python::run_client(&cluster.url(), mode, "accept").await;
        assert!(
            out.status.success(),
            "python client failed ({mode}): {}\nnginx: {}",
            String::from_utf8_lossy(&out.stderr),
            cluster.nginx.error_log()
        );
        let v = python::client_report(&out);
        assert_eq!(v["protocol"], protocol, "{v}");
        let text = v["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("Nothing deleted: report.txt does not exist in "),
            "{v}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_single_use_fails_closed_and_recovers() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let front = cluster.front();
    let echo = call("e", "echo", json!({"text": "still here"}), json!({}));
    cluster.redis.stop();

    let first = delete_call("c.txt");
    let (r1, _) = post(&front, &first).await;
    assert_eq!(rpc::result_type(&r1), "input_required", "{r1}");
    let again = retry(&first, "second", Some(yes()), Some(rpc::state(&r1)));
    let (r2, _) = post(&front, &again).await;
    assert_eq!(rpc::error_code(&r2), -32603, "fails closed: {r2}");
    assert!(
        r2["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("could not be checked for replay"),
        "a clear error: {r2}"
    );
    for _ in 0..3 {
        let (e, _) = post(&front, &echo).await;
        assert_eq!(rpc::text(&e), "still here", "echo keeps answering: {e}");
    }

    cluster.redis.restart();
    let mut done = None;
    for attempt in 0..100 {
        let first = delete_call("d.txt");
        let (r1, _) = post(&front, &first).await;
        let again = retry(
            &first,
            format!("retry-{attempt}"),
            Some(yes()),
            Some(rpc::state(&r1)),
        );
        let (r2, _) = post(&front, &again).await;
        if r2.get("result").is_some() {
            done = Some(r2);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let r2 = done.expect("confirm_delete works again once Redis is back");
    assert!(
        rpc::text(&r2).starts_with("Nothing deleted: d.txt does not exist in "),
        "{r2}"
    );
    let (e, _) = post(&front, &echo).await;
    assert_eq!(rpc::text(&e), "still here");
}
