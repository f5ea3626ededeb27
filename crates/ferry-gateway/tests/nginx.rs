//! Three gateway instances sharing one real `redis-server` and one set of state keys,
//! behind a real nginx configured with `deploy/nginx.conf.template` (round robin, no
//! stickiness for 2026-07-28 requests), everything on loopback. ferry-everything, in this
//! process, is the upstream. Each instance writes its own usage log.
//!
//! - the two rounds of one call land on different instances and complete; the retry,
//!   replayed through nginx and on each instance directly, is refused; the usage logs hold
//!   exactly two rounds of the call, one on each instance, linked by one call id;
//! - the instance that served round one shuts down gracefully; round two still completes
//!   through nginx on another;
//! - the official Python SDK's client (mcp 2.3.0), on a 2025-11-25 session and on
//!   2026-07-28, completes an eliciting `confirm_delete` through nginx (sessions are routed
//!   by the template's consistent hash of their id).
//!
//! Skipped when redis-server or nginx is missing, except under `FERRY_CI`, where that fails.

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use ferry_gateway::{Gateway, GatewayConfig, UpstreamConfig};
use ferry_state::KeyRing;
use ferry_testkit::http::Client;
use ferry_testkit::python;
use ferry_testkit::rpc::{self, accept, call, form_caps, retry};
use ferry_testkit::services::{Nginx, RedisServer, available};
use serde_json::{Value, json};
use support::everything_upstream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

/// One gateway instance in this process, until [`Instance::shut_down`].
struct Instance {
    addr: SocketAddr,
    usage_log: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    serving: Option<JoinHandle<std::io::Result<()>>>,
}

impl Instance {
    async fn start(upstream: &str, redis: &str, dir: &Path, n: usize) -> Instance {
        let usage_log = dir.join(format!("usage-{n}.jsonl"));
        let mut config = GatewayConfig::default();
        config.upstreams = vec![UpstreamConfig::http("ev", upstream)];
        config.redis = Some(redis.to_owned());
        config.usage_log = Some(usage_log.clone());
        let gateway = Gateway::builder(config)
            .state_keys(KeyRing::parse(KEYS).unwrap())
            .build()
            .await
            .expect("the gateway starts on Redis");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(gateway.serve(listener, async move {
            let _ = stopped.await;
        }));
        Instance {
            addr,
            usage_log,
            stop: Some(stop),
            serving: Some(serving),
        }
    }

    fn client(&self) -> Client {
        Client::new(self.addr, "/mcp")
    }

    /// Signals a graceful shutdown and waits until the instance has stopped serving.
    async fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            serving
                .await
                .expect("the serving task")
                .expect("a clean shutdown");
        }
    }

    fn usage(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.usage_log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }
}

struct Cluster {
    instances: Vec<Instance>,
    nginx: Nginx,
    _redis: RedisServer,
    _dir: tempfile::TempDir,
}

impl Cluster {
    async fn start() -> Option<Cluster> {
        if !available("redis-server") || !available("nginx") {
            return None;
        }
        let redis = RedisServer::start();
        let dir = tempfile::tempdir().unwrap();
        let upstream = everything_upstream().await;
        let mut instances = Vec::new();
        for n in 0..3 {
            instances.push(Instance::start(&upstream, &redis.url(), dir.path(), n).await);
        }
        let template = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/nginx.conf.template"),
        )
        .expect("deploy/nginx.conf.template");
        let servers: String = instances
            .iter()
            .map(|i| format!("    server {} max_fails=1 fail_timeout=5s;\n", i.addr))
            .collect();
        let nginx = Nginx::start(&template.replace("{servers}", servers.trim_end()));
        Some(Cluster {
            instances,
            nginx,
            _redis: redis,
            _dir: dir,
        })
    }

    fn front(&self) -> Client {
        Client::new(
            SocketAddr::from(([127, 0, 0, 1], self.nginx.port())),
            "/mcp",
        )
    }

    /// The instance nginx names in `X-Upstream` (the last it tried, when it tried several).
    fn index_of(&self, upstream: &str) -> usize {
        let last = upstream.rsplit(", ").next().unwrap_or_default();
        self.instances
            .iter()
            .position(|i| last == i.addr.to_string())
            .unwrap_or_else(|| panic!("upstream {upstream} is none of the instances"))
    }
}

/// Posts `msg` and returns the final message and the instance nginx sent it to.
async fn post(client: &Client, msg: &Value) -> (Value, String) {
    let res = client.post(msg).send().await;
    let upstream = res.header("x-upstream").unwrap_or_default().to_owned();
    (res.message().await.0, upstream)
}

fn elicit() -> Value {
    call(
        "first",
        "test_elicitation",
        json!({"message": "Who are you?"}),
        form_caps(),
    )
}

/// The retry of `first`, answering its one input request.
fn answer(first: &Value, reply: &Value) -> Value {
    let key = reply["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");
    let responses = json!({ key: accept(json!({"username": "ada", "email": "ada@example.com"})) });
    retry(first, "second", Some(responses), Some(rpc::state(reply)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_on_different_instances_complete_once_and_are_metered_as_one_call() {
    let Some(cluster) = Cluster::start().await else {
        return;
    };
    let front = cluster.front();
    let first = elicit();
    let (r1, up1) = post(&front, &first).await;
    assert_eq!(rpc::result_type(&r1), "input_required", "{r1}");
    let again = answer(&first, &r1);
    let (r2, up2) = post(&front, &again).await;
    let (one, two) = (cluster.index_of(&up1), cluster.index_of(&up2));
    assert_ne!(one, two, "round robin sends the retry to another instance");
    assert!(rpc::text(&r2).contains("action=accept"), "{r2}");

    // Replayed through nginx and on every instance directly: refused by the gateway's
    // ledger in Redis each time.
    let (r, _) = post(&front, &again).await;
    assert_eq!(
        r["error"]["message"], "Invalid or expired requestState",
        "{r}"
    );
    for instance in &cluster.instances {
        let (r, _) = post(&instance.client(), &again).await;
        assert_eq!(
            r["error"]["message"], "Invalid or expired requestState",
            "{r}"
        );
    }

    // Each instance metered the round it served; the two rounds share one call id.
    let (first_log, second_log) = (
        cluster.instances[one].usage(),
        cluster.instances[two].usage(),
    );
    let round = |log: &[Value], n: u64| -> Value {
        log.iter()
            .find(|r| r["round"] == n && r["outcome"] != "error")
            .cloned()
            .unwrap_or_else(|| panic!("no round {n} in {log:#?}"))
    };
    let (a, b) = (round(&first_log, 1), round(&second_log, 2));
    assert_eq!(a["outcome"], "input_required", "{a}");
    assert_eq!(b["outcome"], "complete", "{b}");
    assert_eq!(a["call_id"], b["call_id"]);
    assert!(a["call_id"].as_str().is_some_and(|c| c.len() >= 16), "{a}");
    let completed: usize = cluster
        .instances
        .iter()
        .map(|i| {
            i.usage()
                .iter()
                .filter(|r| r["outcome"] == "complete")
                .count()
        })
        .sum();
    assert_eq!(completed, 1, "one completed round across the instances");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_two_completes_after_the_first_instance_shuts_down() {
    let Some(mut cluster) = Cluster::start().await else {
        return;
    };
    let front = cluster.front();
    let first = elicit();
    let (r1, up1) = post(&front, &first).await;
    assert_eq!(rpc::result_type(&r1), "input_required", "{r1}");
    let gone = cluster.index_of(&up1);
    cluster.instances[gone].shut_down().await;
    // nginx may try the stopped instance first (connection refused) and moves on.
    let (r2, up2) = post(&front, &answer(&first, &r1)).await;
    assert!(rpc::text(&r2).contains("action=accept"), "{r2}");
    assert_ne!(cluster.index_of(&up2), gone, "{up2}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_instances_pass_on_path_is_not_reachable_through_nginx() {
    let Some(cluster) = Cluster::start().await else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/.ferry/held", cluster.nginx.port());
    let res = reqwest::Client::new()
        .post(url)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_completes_an_eliciting_call_in_both_eras() {
    if !python::sdk_available() {
        return;
    }
    let Some(cluster) = Cluster::start().await else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/mcp", cluster.nginx.port());
    for (mode, protocol) in [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")] {
        let out = python::run_client(&url, mode, "accept").await;
        assert!(
            out.status.success(),
            "python client ({mode}): {}\nnginx: {}",
            String::from_utf8_lossy(&out.stderr),
            cluster.nginx.error_log()
        );
        let report = python::client_report(&out);
        assert_eq!(report["protocol"], protocol, "{report}");
        assert!(
            report["asked"][0]
                .as_str()
                .is_some_and(|q| q.starts_with("Delete report.txt from ")),
            "{report}"
        );
        assert!(
            report["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("Nothing deleted: report.txt does not exist")),
            "{report}"
        );
    }
}
