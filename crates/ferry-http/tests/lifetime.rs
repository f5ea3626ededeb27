//! How long connections live, as a hostile peer would test it: connections that never
//! send a byte, kept-alive connections left idle, and more connections than the cap.
//! Raw HTTP/1.1 over 127.0.0.1 (`support::wire`) against `ferry_http::serve`.

mod support;

use std::time::{Duration, Instant};

use ferry_http::HttpConfig;
use ferry_testkit::rpc::call;
use serde_json::json;
use support::wire::{Conn, Resp};
use support::{Running, server, start};

/// A small cap and a short idle timeout, so the tests see both at work.
fn tight(cap: usize, idle: Duration) -> HttpConfig {
    HttpConfig::builder()
        .max_connections(cap)
        .idle_timeout(idle)
        .build()
        .expect("a valid config")
}

async fn start_with(config: HttpConfig) -> Running {
    let (s, _) = server();
    start(s, config).await
}

/// Opens `n` connections that send nothing.
async fn silent(run: &Running, n: usize) -> Vec<Conn> {
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        conns.push(Conn::connect(run.client.addr()).await);
    }
    conns
}

/// A connection that never sends a byte is closed after the idle timeout (and not
/// before), and so is a kept-alive connection once it has waited that long for its next
/// request.
#[tokio::test]
async fn silent_and_idle_kept_alive_connections_are_closed_after_the_idle_timeout() {
    let idle = Duration::from_millis(400);
    let run = start_with(tight(64, idle)).await;

    let started = Instant::now();
    let mut quiet = Conn::connect(run.client.addr()).await;
    let mut kept = Conn::connect(run.client.addr()).await;
    kept.echo(1, "one request, then silence").await;
    quiet.expect_open_and_quiet(idle / 2).await;

    quiet.expect_closed().await;
    kept.expect_closed().await;
    let waited = started.elapsed();
    assert!(
        waited >= idle,
        "closed after {waited:?}, before the idle timeout"
    );
    // Closed between the timeout and a quarter more (plus scheduling slack).
    assert!(waited < idle * 3, "closed only after {waited:?}");

    // The server is none the worse.
    let mut fresh = Conn::connect(run.client.addr()).await;
    fresh.echo(2, "still serving").await;
    run.stop().await;
}

/// More silent connections than the cap: each new client is still served at once (a
/// silent connection is closed to make room for it, the one open longest first), and
/// every silent connection is closed by the server: those pushed out, and the rest after
/// the idle timeout.
#[tokio::test]
async fn silent_connections_past_the_cap_do_not_lock_clients_out() {
    let cap = 4;
    let idle = Duration::from_millis(1500);
    let run = start_with(tight(cap, idle)).await;

    let mut held = silent(&run, cap * 3).await;
    // Give the server time to take them all (the ones past the cap push earlier ones out).
    tokio::time::sleep(Duration::from_millis(100)).await;

    let started = Instant::now();
    for id in 0..3 {
        let mut fresh = Conn::connect(run.client.addr()).await;
        fresh.echo(id, "served despite the silent crowd").await;
    }
    let served_in = started.elapsed();
    assert!(
        served_in < idle / 2,
        "fresh clients waited {served_in:?}: they were not served before the idle timeout"
    );

    // Every silent connection ends, closed by the server, within the idle timeout and
    // a margin: none is left holding a slot.
    for (i, conn) in held.iter_mut().enumerate() {
        let closed = tokio::time::timeout(idle * 2, conn.expect_closed()).await;
        assert!(closed.is_ok(), "silent connection {i} still open");
    }
    assert!(started.elapsed() < idle * 3);
    run.stop().await;
}

/// A connection that has served a request and waits for its next one makes room too,
/// but only after the connections that never sent anything.
#[tokio::test]
async fn idle_kept_alive_connections_make_room_after_silent_ones() {
    let run = start_with(tight(2, Duration::from_secs(60))).await;
    let mut kept = Conn::connect(run.client.addr()).await;
    kept.echo(1, "kept alive").await;
    let mut quiet = silent(&run, 1).await.remove(0);
    tokio::time::sleep(Duration::from_millis(50)).await;

    // At the cap: the silent one goes first, the kept-alive one stays.
    let mut first = Conn::connect(run.client.addr()).await;
    first.echo(2, "in the silent one's place").await;
    quiet.expect_closed().await;
    kept.echo(3, "still kept alive").await;

    // `first` and `kept` now both wait for a request: `kept` is the one open longest.
    let mut second = Conn::connect(run.client.addr()).await;
    second.echo(4, "in the idle one's place").await;
    kept.expect_closed().await;
    run.stop().await;
}

/// When every connection is busy with a request, a connection past the cap is answered
/// 503 with `Retry-After` and a JSON-RPC error, and closed; the busy calls finish, and
/// a client is served again once there is room.
#[tokio::test]
async fn past_the_cap_with_every_connection_busy_a_new_one_gets_503() {
    let (s, probe) = server();
    let run = start(s, tight(2, Duration::from_secs(60))).await;
    let mut busy = Vec::new();
    for id in 0..2 {
        let mut c = Conn::connect(run.client.addr()).await;
        let req = c.post(&call(id, "gate", json!({}), json!({})), &[]);
        c.send(&req).await;
        busy.push(c);
    }
    ferry_testkit::eventually("the gate calls wait", || probe.waiting()).await;
    tokio::time::sleep(Duration::from_millis(50)).await;

    let mut refused = Conn::connect(run.client.addr()).await;
    let r: Resp = refused.read_response().await;
    r.assert_rpc_error(503, -32603);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.header("connection"), Some("close"));
    refused.expect_closed().await;

    probe.open_gate();
    for c in &mut busy {
        let done = c.read_response().await;
        assert_eq!(done.status_line, "HTTP/1.1 200 OK", "{done:?}");
    }
    // The two are now idle, so a new client takes one's place.
    let mut fresh = Conn::connect(run.client.addr()).await;
    fresh.echo(9, "room again").await;
    run.stop().await;
}
