//! Health checks and draining, over real TCP on 127.0.0.1: `/healthz` answers while the
//! process serves, `/readyz` follows the readiness probe and turns `503` as soon as the
//! shutdown signal comes, new connections are accepted through the grace period, calls
//! in flight finish once the listener has closed, and `subscriptions/listen` streams end
//! with their completion result (subscriptions.mdx).

mod support;

use std::future::IntoFuture;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ferry_http::{HttpConfig, McpService, Serve};
use ferry_server::Server;
use ferry_testkit::http::Client;
use ferry_testkit::rpc::{self, SUBSCRIPTION_ID, call, request};
use ferry_testkit::{eventually, within};
use http::{Method, StatusCode};
use serde_json::json;
use support::{PATH, server};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A server serving on 127.0.0.1, stopped when `stop` is sent.
struct Served {
    addr: SocketAddr,
    client: Client,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<io::Result<()>>,
}

impl Served {
    /// Serves `server` with `config`, after `setup` adds to the builder.
    async fn start(
        server: Server,
        config: HttpConfig,
        setup: impl FnOnce(Serve<McpService>) -> Serve<McpService>,
    ) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let serve = setup(ferry_http::serve(listener, McpService::new(server, config)))
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            });
        Served {
            addr,
            client: Client::new(addr, PATH),
            stop: Some(stop),
            task: tokio::spawn(serve.into_future()),
        }
    }

    /// Sends the shutdown signal.
    fn signal(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// The status of `GET path`, on a new connection.
    async fn get(&self, path: &str) -> StatusCode {
        Client::new(self.addr, path)
            .call(Method::GET)
            .send()
            .await
            .status
    }

    /// Waits for the server's future to return, and checks it returned `Ok`.
    async fn finished(self) {
        within("the server to finish draining", self.task)
            .await
            .expect("the serving task")
            .expect("serving ends with Ok");
    }
}

/// The JSON body of a health check.
async fn status_of(res: ferry_testkit::http::Response) -> serde_json::Value {
    serde_json::from_slice(&res.bytes().await).expect("a JSON body")
}

fn config(grace: Duration) -> HttpConfig {
    HttpConfig::builder()
        .drain_grace(grace)
        .build()
        .expect("a valid config")
}

/// Liveness is always 200; readiness follows the probe (503 when it says no); other
/// methods get 405; the bodies are small JSON statuses.
#[tokio::test]
async fn healthz_is_200_and_readyz_follows_the_probe() {
    let (s, _) = server();
    let up = Arc::new(AtomicBool::new(true));
    let probe_up = up.clone();
    let mut run = Served::start(s, config(Duration::ZERO), move |b| {
        b.readiness(move || {
            let up = probe_up.clone();
            async move { up.load(Ordering::SeqCst) }
        })
    })
    .await;

    let live = Client::new(run.addr, "/healthz")
        .call(Method::GET)
        .send()
        .await;
    assert_eq!(live.status, StatusCode::OK);
    assert_eq!(live.header("cache-control"), Some("no-store"));
    assert_eq!(status_of(live).await, json!({"status": "alive"}));
    assert_eq!(run.get("/readyz").await, StatusCode::OK);

    up.store(false, Ordering::SeqCst);
    let not_ready = Client::new(run.addr, "/readyz")
        .call(Method::GET)
        .send()
        .await;
    assert_eq!(not_ready.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(status_of(not_ready).await, json!({"status": "not ready"}));
    assert_eq!(
        run.get("/healthz").await,
        StatusCode::OK,
        "liveness does not depend on readiness"
    );
    up.store(true, Ordering::SeqCst);
    assert_eq!(run.get("/readyz").await, StatusCode::OK);

    let post = Client::new(run.addr, "/readyz")
        .call(Method::POST)
        .send()
        .await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(post.header("allow"), Some("GET, HEAD"));

    // The endpoint is still the endpoint.
    let echo = run
        .client
        .post(&call(1, "echo", json!({"text": "hi"}), json!({})))
        .send()
        .await;
    assert_eq!(rpc::text(&echo.json().await), "hi");
    run.signal();
    run.finished().await;
}

/// A probe that never answers counts as not ready, after the readiness timeout.
#[tokio::test]
async fn a_probe_that_hangs_is_not_ready() {
    let (s, _) = server();
    let mut run = Served::start(s, config(Duration::ZERO), |b| {
        b.readiness(std::future::pending::<bool>)
    })
    .await;
    let started = Instant::now();
    assert_eq!(run.get("/readyz").await, StatusCode::SERVICE_UNAVAILABLE);
    assert!(started.elapsed() >= ferry_http::READINESS_TIMEOUT);
    run.signal();
    run.finished().await;
}

/// The health paths can be moved, or turned off (they are then the app's, here 404);
/// paths that do not start with `/` or collide with the endpoint's fail at once.
#[tokio::test]
async fn health_paths_move_turn_off_and_are_checked() {
    let (s, _) = server();
    let mut moved = Served::start(s.clone(), config(Duration::ZERO), |b| {
        b.health_paths("/live", "/ready")
    })
    .await;
    assert_eq!(moved.get("/live").await, StatusCode::OK);
    assert_eq!(moved.get("/ready").await, StatusCode::OK);
    assert_eq!(moved.get("/healthz").await, StatusCode::NOT_FOUND);
    moved.signal();
    moved.finished().await;

    let mut off = Served::start(s.clone(), config(Duration::ZERO), |b| {
        b.without_health_checks()
    })
    .await;
    assert_eq!(off.get("/healthz").await, StatusCode::NOT_FOUND);
    assert_eq!(off.get("/readyz").await, StatusCode::NOT_FOUND);
    off.signal();
    off.finished().await;

    for (live, ready) in [("healthz", "/readyz"), ("/healthz", "/mcp"), ("/h", "/h")] {
        let run = Served::start(s.clone(), config(Duration::ZERO), |b| {
            b.health_paths(live, ready)
        })
        .await;
        let err = within("the server to refuse its paths", run.task)
            .await
            .expect("the serving task")
            .expect_err("invalid health paths");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{live} {ready}");
    }
}

/// When the shutdown signal comes, `/readyz` answers 503 while the listener still
/// accepts new connections (liveness stays 200); after the grace period the listener is
/// closed and the server's future returns.
#[tokio::test]
async fn readyz_turns_503_on_shutdown_before_the_listener_closes() {
    let (s, _) = server();
    let grace = Duration::from_millis(800);
    let mut run = Served::start(s, config(grace), |b| b).await;
    assert_eq!(run.get("/readyz").await, StatusCode::OK);

    let signalled = Instant::now();
    run.signal();
    let mut saw_draining = false;
    while signalled.elapsed() < grace / 2 {
        match run.get("/readyz").await {
            StatusCode::SERVICE_UNAVAILABLE => {
                saw_draining = true;
                break;
            }
            status => assert_eq!(status, StatusCode::OK, "before the signal is seen"),
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        saw_draining,
        "readiness turned false during the grace period"
    );
    // Still accepting, and still serving: liveness and the endpoint answer on new
    // connections.
    assert_eq!(run.get("/healthz").await, StatusCode::OK);
    let echo = run
        .client
        .post(&call(1, "echo", json!({"text": "draining"}), json!({})))
        .send()
        .await;
    assert_eq!(rpc::text(&echo.json().await), "draining");
    assert!(
        signalled.elapsed() < grace,
        "all of this happened within the grace period"
    );
    assert!(!run.task.is_finished());

    let addr = run.addr;
    run.finished().await;
    assert!(signalled.elapsed() >= grace, "the grace period was kept");
    tokio::net::TcpStream::connect(addr)
        .await
        .expect_err("the listener is closed after the drain");
}

/// A call in flight when the listener closes finishes: its response arrives, then the
/// server's future returns.
#[tokio::test]
async fn an_in_flight_slow_call_completes_during_the_drain() {
    let (s, probe) = server();
    let mut run = Served::start(s, config(Duration::ZERO), |b| b).await;
    let client = run.client.clone();
    let slow = tokio::spawn(async move {
        client
            .post(&call(7, "gate", json!({}), json!({})))
            .send()
            .await
    });
    eventually("the slow call to start", || probe.waiting()).await;

    run.signal();
    let addr = run.addr;
    // The listener closes (no grace period) while the call still waits.
    let closed = async {
        while tokio::net::TcpStream::connect(addr).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    within("the listener to close", closed).await;
    assert!(!slow.is_finished(), "the call is still in flight");
    assert!(!run.task.is_finished(), "the server waits for it");

    probe.open_gate();
    let res = within("the slow call's response", slow)
        .await
        .expect("the call task");
    assert_eq!(res.status, StatusCode::OK);
    let body = res.json().await;
    assert_eq!(body["id"], 7);
    assert_eq!(rpc::text(&body), "passed");
    run.finished().await;
}

/// A call that outlives the drain timeout is dropped, and the server's future returns.
#[tokio::test]
async fn the_drain_timeout_bounds_the_wait_for_calls() {
    let (s, probe) = server();
    let config = HttpConfig::builder()
        .drain_grace(Duration::ZERO)
        .drain_timeout(Duration::from_millis(300))
        .build()
        .expect("a valid config");
    let mut run = Served::start(s, config, |b| b).await;
    let client = run.client.clone();
    let _hung = tokio::spawn(async move {
        client
            .post(&call(1, "hang", json!({}), json!({})))
            .send()
            .await
    });
    eventually("the call to start", || probe.started()).await;
    let signalled = Instant::now();
    run.signal();
    run.finished().await;
    assert!(signalled.elapsed() >= Duration::from_millis(300));
    eventually("the hung call to be dropped", || probe.dropped()).await;
}

/// An open `subscriptions/listen` stream stays open through the grace period (readiness
/// already false) and then ends with the graceful completion result, tagged with its
/// subscription id.
#[tokio::test]
async fn a_listen_stream_receives_its_completion_on_drain() {
    let (s, _) = server();
    let grace = Duration::from_millis(400);
    let mut run = Served::start(s.clone(), config(grace), |b| b).await;
    let mut stream = run
        .client
        .post(&request(
            json!("sub-drain"),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ))
        .send()
        .await
        .sse();
    let ack = stream.next_message().await.expect("acknowledgement");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], "sub-drain");
    eventually("the listener to be registered", || s.listener_count() >= 1).await;

    let signalled = Instant::now();
    run.signal();
    eventually_status(&run, "/readyz", StatusCode::SERVICE_UNAVAILABLE).await;
    let done = within("the completion result", stream.next_message())
        .await
        .expect("a completion before the stream ends");
    assert!(
        signalled.elapsed() >= grace,
        "the stream stayed open through the grace period"
    );
    assert_eq!(done["id"], "sub-drain");
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["_meta"][SUBSCRIPTION_ID], "sub-drain");
    assert!(
        within("the stream to end", stream.next_message())
            .await
            .is_none(),
        "nothing follows the completion"
    );
    run.finished().await;
}

/// Polls `GET path` until it answers `want`.
async fn eventually_status(run: &Served, path: &str, want: StatusCode) {
    let poll = async {
        while run.get(path).await != want {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    within("the expected health status", poll).await;
}
