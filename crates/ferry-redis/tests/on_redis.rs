//! Every backend against a real `redis-server` of the test's own (on a free loopback
//! port): the ledger shared by two handles, the task store and bus parity suites, the
//! change bus between two instances, the rate limiter shared by two handles, and what
//! happens while Redis is down.
//!
//! Skipped when redis-server is missing, except under `FERRY_CI`, where that fails.

use std::sync::Arc;
use std::time::Duration;

use std::num::NonZeroU32;

use ferry_redis::{Admission, Redis, RedisConfig};
use ferry_server::tasks::testing;
use ferry_server::{ChangeBus, ChangeEvent};
use ferry_state::{LedgerError, Redemption, ReplayLedger};
use ferry_testkit::services::{RedisServer, available};
use futures::StreamExt;

fn far_future() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        + 600_000
}

async fn connect(server: &RedisServer, prefix: &str) -> Redis {
    Redis::connect(
        RedisConfig::new(server.url())
            .key_prefix(prefix)
            .op_timeout(Duration::from_millis(500)),
    )
    .await
    .expect("connects")
}

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_redeemed_on_one_instance_is_refused_on_another() {
    if !available("redis-server") {
        return;
    }
    let server = RedisServer::start();
    let a = connect(&server, "t1:").await.ledger();
    let b = connect(&server, "t1:").await.ledger();
    let exp = far_future();
    assert_eq!(a.redeem("jti-1", exp).await.unwrap(), Redemption::First);
    assert_eq!(b.redeem("jti-1", exp).await.unwrap(), Redemption::Replayed);
    assert_eq!(a.redeem("jti-1", exp).await.unwrap(), Redemption::Replayed);
    // Another deployment (prefix) has a ledger of its own.
    let other = connect(&server, "t2:").await.ledger();
    assert_eq!(other.redeem("jti-1", exp).await.unwrap(), Redemption::First);

    // Of 32 concurrent redemptions of one id across both handles, exactly one wins.
    let results = futures::future::join_all((0..32).map(|i| {
        let l = if i % 2 == 0 { a.clone() } else { b.clone() };
        async move { l.redeem("jti-race", exp).await.unwrap() }
    }))
    .await;
    assert_eq!(results.iter().filter(|r| r.is_first()).count(), 1);

    assert!(matches!(
        a.redeem("", exp).await,
        Err(LedgerError::InvalidId)
    ));
    assert!(matches!(
        a.redeem(&"x".repeat(200), exp).await,
        Err(LedgerError::InvalidId)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_fails_closed_while_redis_is_down_and_recovers() {
    if !available("redis-server") {
        return;
    }
    let mut server = RedisServer::start();
    let redis = connect(&server, "down:").await;
    let ledger = redis.ledger();
    let exp = far_future();
    assert!(redis.is_ready().await);
    assert_eq!(
        ledger.redeem("before", exp).await.unwrap(),
        Redemption::First
    );

    server.stop();
    let started = std::time::Instant::now();
    assert!(
        matches!(
            ledger.redeem("during", exp).await,
            Err(LedgerError::Storage(_))
        ),
        "an unreachable Redis is an error, never a first redemption"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the time limit bounds a failing redemption"
    );
    assert!(!redis.is_ready().await, "not ready while Redis is down");
    let probe = redis.readiness_probe();
    assert!(!probe().await);

    server.restart();
    eventually("the ledger to work again", async || {
        ledger.redeem("after", exp).await.is_ok()
    })
    .await;
    eventually("readiness", async || redis.is_ready().await).await;
    assert!(probe().await);
    // The restarted Redis kept nothing (no persistence), and the handle still works.
    assert_eq!(
        ledger.redeem("after", exp).await.unwrap(),
        Redemption::Replayed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_store_and_bus_pass_the_parity_suites() {
    if !available("redis-server") {
        return;
    }
    let server = RedisServer::start();
    let redis = connect(&server, "tasks:").await;
    testing::parity(&redis.task_store()).await;
    testing::bus_parity(&redis.task_bus()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_signals_cross_instances() {
    if !available("redis-server") {
        return;
    }
    use ferry_server::{TaskBus, TaskRecord, TaskSignal, TaskStore};
    let server = RedisServer::start();
    let a = connect(&server, "x:").await;
    let b = connect(&server, "x:").await;
    let record = TaskRecord::new("task-1", Some("alice".into()), far_future(), 3_600_000);
    a.task_store().create(&record, 5).await.unwrap();
    let stored = b
        .task_store()
        .get("task-1")
        .await
        .unwrap()
        .expect("seen from b");
    assert_eq!(stored.record.owner.as_deref(), Some("alice"));
    let mut on_a = a.task_bus().subscribe("task-1").await.unwrap();
    b.task_bus()
        .publish("task-1", TaskSignal::CancelRequested)
        .await
        .unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), on_a.next())
        .await
        .expect("delivered");
    assert!(matches!(got, Some(TaskSignal::CancelRequested)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_events_reach_other_instances_once_in_order_and_after_an_outage() {
    if !available("redis-server") {
        return;
    }
    let mut server = RedisServer::start();
    let a_redis = connect(&server, "bus:").await;
    let b_redis = connect(&server, "bus:").await;
    let a = Arc::new(a_redis.change_bus().await);
    let b = Arc::new(b_redis.change_bus().await);
    let mut heard_by_a = a.subscribe();
    let mut heard_by_b = b.subscribe();

    let uris: Vec<String> = (0..50).map(|i| format!("note://n{i}")).collect();
    a.publish(&ChangeEvent::ToolsChanged);
    for u in &uris {
        a.publish(&ChangeEvent::ResourceUpdated(Arc::from(u.as_str())));
    }
    let next = async |s: &mut futures::stream::BoxStream<'static, ChangeEvent>| {
        tokio::time::timeout(Duration::from_secs(5), s.next())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
    };
    assert_eq!(next(&mut heard_by_b).await, ChangeEvent::ToolsChanged);
    for u in &uris {
        assert_eq!(
            next(&mut heard_by_b).await,
            ChangeEvent::ResourceUpdated(Arc::from(u.as_str())),
            "in the order raised"
        );
    }
    // A publisher never hears itself back (its local streams had the events already).
    assert!(
        tokio::time::timeout(Duration::from_millis(300), heard_by_a.next())
            .await
            .is_err()
    );

    // Redis goes away: events raised meanwhile wait in the bounded buffer.
    server.stop();
    eventually("b to notice", async || !b_redis.is_ready().await).await;
    a.publish(&ChangeEvent::PromptsChanged);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(a.pending(), 1, "held while Redis is down");

    server.restart();
    eventually("both instances to reconnect", async || {
        a_redis.is_ready().await && b_redis.is_ready().await
    })
    .await;
    eventually("the buffer to drain", async || a.pending() == 0).await;
    // The bus resumed: new events flow again, both ways.
    b.publish(&ChangeEvent::ResourcesChanged);
    assert_eq!(next(&mut heard_by_a).await, ChangeEvent::ResourcesChanged);
    // b hears the event held during the outage (if it resubscribed before a flushed
    // it), then the new one.
    a.publish(&ChangeEvent::ResourceUpdated(Arc::from("note://after")));
    loop {
        match next(&mut heard_by_b).await {
            ChangeEvent::PromptsChanged => continue,
            e => {
                assert_eq!(e, ChangeEvent::ResourceUpdated(Arc::from("note://after")));
                break;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_buffer_of_unpublished_events_is_bounded() {
    if !available("redis-server") {
        return;
    }
    let mut server = RedisServer::start();
    let redis = Redis::connect(
        RedisConfig::new(server.url())
            .key_prefix("bounded:")
            .buffer(8)
            .op_timeout(Duration::from_millis(300)),
    )
    .await
    .unwrap();
    let bus = redis.change_bus().await;
    server.stop();
    tokio::time::sleep(Duration::from_millis(200)).await;
    for i in 0..100 {
        bus.publish(&ChangeEvent::ResourceUpdated(Arc::from(format!(
            "note://{i}"
        ))));
    }
    assert!(bus.pending() <= 8, "at most the buffer is held");
    assert!(
        bus.dropped() >= 91,
        "the oldest are dropped: {}",
        bus.dropped()
    );
}

fn per_second(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).unwrap()
}

/// The wait of a limited check; fails when it was admitted.
fn wait_of(admission: Admission) -> Duration {
    match admission {
        Admission::Limited { retry_after } => retry_after,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_rate_limit_is_shared_by_two_handles_per_key_and_recovers() {
    if !available("redis-server") {
        return;
    }
    let server = RedisServer::start();
    let a = connect(&server, "rl1:").await;
    let b = connect(&server, "rl1:").await;
    let on_a = a.rate_limiter("requests", per_second(3));
    let on_b = b.rate_limiter("requests", per_second(3));

    // A burst of three, alternating between the handles, then a refusal on either.
    for limit in [&on_a, &on_b, &on_a] {
        assert!(limit.check("alice").await.unwrap().is_admitted());
    }
    let wait = wait_of(on_b.check("alice").await.unwrap());
    assert!(
        wait > Duration::ZERO && wait <= Duration::from_millis(334),
        "one emission interval at most: {wait:?}"
    );
    assert!(!on_a.check("alice").await.unwrap().is_admitted());

    // The key is Redis's own, and expires by itself within one interval times the burst.
    let ttl: i64 = a
        .query(redis::cmd("PTTL").arg("rl1:rl:requests:alice"))
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= 1_000, "PTTL {ttl}");

    // Other keys, other limits and other prefixes count on their own.
    assert!(on_b.check("bob").await.unwrap().is_admitted());
    let tools = a.rate_limiter("tool", per_second(3));
    assert!(tools.check("alice").await.unwrap().is_admitted());
    let elsewhere = connect(&server, "rl2:")
        .await
        .rate_limiter("requests", per_second(3));
    assert!(elsewhere.check("alice").await.unwrap().is_admitted());

    // After the wait one more is admitted, and only one.
    tokio::time::sleep(wait + Duration::from_millis(20)).await;
    assert!(on_b.check("alice").await.unwrap().is_admitted());
    assert!(!on_a.check("alice").await.unwrap().is_admitted());

    // A Redis that forgot the script (restart, failover) is sent it again.
    let _: String = a.query(redis::cmd("SCRIPT").arg("FLUSH")).await.unwrap();
    assert!(on_a.check("carol").await.unwrap().is_admitted());

    // Of 20 concurrent checks of one key across both handles, exactly the burst passes.
    let results = futures::future::join_all((0..20).map(|i| {
        let l = if i % 2 == 0 {
            on_a.clone()
        } else {
            on_b.clone()
        };
        async move { l.check("race").await.unwrap() }
    }))
    .await;
    assert_eq!(results.iter().filter(|r| r.is_admitted()).count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limiter_fails_while_redis_is_down_and_recovers() {
    if !available("redis-server") {
        return;
    }
    let mut server = RedisServer::start();
    let redis = connect(&server, "rldown:").await;
    let limit = redis.rate_limiter("requests", per_second(5));
    assert!(limit.check("alice").await.unwrap().is_admitted());

    server.stop();
    let started = std::time::Instant::now();
    assert!(
        limit.check("alice").await.is_err(),
        "an unreachable Redis is an error, never an admission"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the time limit bounds a failing check"
    );

    server.restart();
    eventually("the limiter to work again", async || {
        limit.check("alice").await.is_ok()
    })
    .await;
}
