//! The parity suite every [`TaskStore`] and [`TaskBus`] passes (feature
//! `task-store-testing`): run it against a new implementation from its tests.
//!
//! ```
//! use ferry_server::{MemoryTaskBus, MemoryTaskStore};
//! use ferry_server::tasks::testing;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! testing::parity(&MemoryTaskStore::new()).await;
//! testing::bus_parity(&MemoryTaskBus::new()).await;
//! # }
//! ```
//!
//! The checks use ids and owners unique to each run, so a store shared with other data
//! (a Redis database) can run them. They need a Tokio runtime and panic on the first
//! difference, naming it.

use std::time::Duration;

use ferry_protocol::ErrorObject;
use ferry_protocol::tasks::TaskStatus;
use futures::StreamExt as _;
use serde_json::json;

use super::id::new_task_id;
use super::now_ms;
use super::record::TaskRecord;
use super::store::{TaskBus, TaskSignal, TaskStore, TaskStoreError};

fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{}",
        new_task_id().expect("randomness for test ids")
    )
}

fn same(a: &TaskRecord, b: &TaskRecord) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

/// Runs every store check against `store`.
pub async fn parity(store: &dyn TaskStore) {
    create_and_get(store).await;
    compare_and_set(store).await;
    concurrent_writers(store).await;
    owner_bound(store).await;
    expiry_and_sweep(store).await;
    large_records(store).await;
}

/// A created record reads back as written, with its revision; an id is taken once.
pub async fn create_and_get(store: &dyn TaskStore) {
    let now = now_ms();
    let mut record = TaskRecord::new(unique("get"), Some(unique("owner")), now, 3_600_000);
    record.poll_interval_ms = Some(250);
    record.status_message = Some("starting".into());
    let revision = store
        .create(&record, 10)
        .await
        .expect("create stores a new task");
    let stored = store
        .get(&record.id)
        .await
        .expect("get answers")
        .expect("a created task is found");
    assert_eq!(
        stored.revision, revision,
        "get returns the created revision"
    );
    assert!(
        same(&stored.record, &record),
        "the record reads back as written"
    );
    assert!(
        matches!(store.create(&record, 10).await, Err(TaskStoreError::Exists)),
        "creating the same id twice fails with Exists"
    );
    assert!(
        store
            .get(&unique("missing"))
            .await
            .expect("get answers")
            .is_none(),
        "an unknown id is not found"
    );
}

/// Replacement happens only at the revision read; owner, creation time and TTL stay.
pub async fn compare_and_set(store: &dyn TaskStore) {
    let now = now_ms();
    let record = TaskRecord::new(unique("cas"), Some(unique("owner")), now, 3_600_000);
    let first = store.create(&record, 10).await.expect("create");

    let mut next = record.clone();
    next.status = TaskStatus::InputRequired;
    next.input_requests.insert(
        "confirm".into(),
        serde_json::value::to_raw_value(&json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "Sure?", "requestedSchema": {"type": "object", "properties": {
                "z": {"type": "boolean"}, "a": {"type": "string"}}}}}))
        .expect("raw"),
    );
    next.updated_at_ms = now + 5;
    let second = store
        .compare_and_set(first, &next)
        .await
        .expect("cas answers")
        .expect("cas at the current revision succeeds");
    assert_ne!(second, first, "a write gives a new revision");
    let stored = store.get(&record.id).await.expect("get").expect("found");
    assert_eq!(stored.revision, second);
    assert!(
        same(&stored.record, &next),
        "the replacement reads back as written, in order"
    );

    let mut stale = next.clone();
    stale.status = TaskStatus::Completed;
    assert!(
        store
            .compare_and_set(first, &stale)
            .await
            .expect("cas answers")
            .is_none(),
        "cas at an old revision fails"
    );
    let stored = store.get(&record.id).await.expect("get").expect("found");
    assert_eq!(
        stored.record.status,
        TaskStatus::InputRequired,
        "a failed cas changes nothing"
    );

    let mut hijack = next.clone();
    hijack.owner = Some(unique("thief"));
    hijack.created_at_ms = 1;
    hijack.ttl_ms = u64::MAX / 4;
    store
        .compare_and_set(second, &hijack)
        .await
        .expect("cas answers")
        .expect("cas at the current revision succeeds");
    let stored = store.get(&record.id).await.expect("get").expect("found");
    assert_eq!(
        stored.record.owner, record.owner,
        "a write never changes the owner"
    );
    assert_eq!(
        stored.record.created_at_ms, record.created_at_ms,
        "nor the creation time"
    );
    assert_eq!(stored.record.ttl_ms, record.ttl_ms, "nor the TTL");

    let missing = TaskRecord::new(unique("missing"), None, now, 1000);
    assert!(
        store
            .compare_and_set(1, &missing)
            .await
            .expect("cas answers")
            .is_none(),
        "cas on an unknown id fails"
    );
}

/// Of several writers at the same revision, exactly one wins.
pub async fn concurrent_writers(store: &dyn TaskStore) {
    let now = now_ms();
    let record = TaskRecord::new(unique("race"), None, now, 3_600_000);
    let revision = store.create(&record, 1_000_000).await.expect("create");
    let attempts: Vec<TaskRecord> = (0..16)
        .map(|i| {
            let mut r = record.clone();
            r.status_message = Some(format!("writer {i}"));
            r
        })
        .collect();
    let results =
        futures::future::join_all(attempts.iter().map(|r| store.compare_and_set(revision, r)))
            .await;
    let wins = results.iter().filter(|r| matches!(r, Ok(Some(_)))).count();
    assert!(
        results.iter().all(Result::is_ok),
        "concurrent cas calls all answer"
    );
    assert_eq!(wins, 1, "exactly one of 16 concurrent writers wins");
}

/// An owner holds at most the bound of unexpired tasks; others are not affected; the
/// anonymous caller is an owner of its own.
pub async fn owner_bound(store: &dyn TaskStore) {
    let now = now_ms();
    let alice = Some(unique("alice"));
    let bob = Some(unique("bob"));
    for _ in 0..3 {
        let r = TaskRecord::new(unique("bound"), alice.clone(), now, 3_600_000);
        store.create(&r, 3).await.expect("under the bound");
    }
    let over = TaskRecord::new(unique("bound"), alice.clone(), now, 3_600_000);
    assert!(
        matches!(
            store.create(&over, 3).await,
            Err(TaskStoreError::LimitReached { limit: 3 })
        ),
        "the owner's fourth task is refused with LimitReached"
    );
    let other = TaskRecord::new(unique("bound"), bob, now, 3_600_000);
    store
        .create(&other, 3)
        .await
        .expect("another owner is not affected");
    let r = TaskRecord::new(unique("bound"), alice, now, 3_600_000);
    store
        .create(&r, 4)
        .await
        .expect("a higher bound admits one more");
}

/// Expired tasks do not count against the bound and are swept; unexpired ones stay.
/// Uses the real clock (a second's wait), so that stores that expire records on their
/// own (Redis) pass it too.
pub async fn expiry_and_sweep(store: &dyn TaskStore) {
    let owner = Some(unique("expiring"));
    let short = TaskRecord::new(unique("short"), owner.clone(), now_ms(), 1_000);
    let long = TaskRecord::new(unique("long"), owner.clone(), now_ms(), 3_600_000);
    store.create(&short, 2).await.expect("create");
    store.create(&long, 2).await.expect("create");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let later = TaskRecord::new(unique("later"), owner.clone(), now_ms(), 3_600_000);
    store
        .create(&later, 2)
        .await
        .expect("an expired task does not count against the bound");
    store.sweep(now_ms()).await.expect("sweep answers");
    assert!(
        store.get(&short.id).await.expect("get").is_none(),
        "an expired task is gone after a sweep"
    );
    assert!(
        store.get(&long.id).await.expect("get").is_some(),
        "an unexpired task survives a sweep"
    );
    let over = TaskRecord::new(unique("over"), owner, now_ms(), 3_600_000);
    assert!(
        matches!(
            store.create(&over, 2).await,
            Err(TaskStoreError::LimitReached { .. })
        ),
        "unexpired tasks still count"
    );
}

/// Large results, and errors, read back exactly.
pub async fn large_records(store: &dyn TaskStore) {
    let now = now_ms();
    let mut record = TaskRecord::new(unique("large"), None, now, 3_600_000);
    let revision = store.create(&record, 1_000_000).await.expect("create");
    record.status = TaskStatus::Completed;
    let text = "x".repeat(256 * 1024);
    record.result = Some(
        serde_json::value::to_raw_value(&json!({"content": [{"type": "text", "text": text}]}))
            .expect("raw"),
    );
    store
        .compare_and_set(revision, &record)
        .await
        .expect("cas answers")
        .expect("cas succeeds");
    let stored = store.get(&record.id).await.expect("get").expect("found");
    assert!(
        same(&stored.record, &record),
        "a 256 KiB result reads back exactly"
    );

    let mut failed = TaskRecord::new(unique("failed"), None, now, 3_600_000);
    let revision = store.create(&failed, 1_000_000).await.expect("create");
    failed.status = TaskStatus::Failed;
    failed.error = Some(ErrorObject::internal("boom").with_data(json!({"why": [1, 2]})));
    store
        .compare_and_set(revision, &failed)
        .await
        .expect("cas answers")
        .expect("cas succeeds");
    let stored = store.get(&failed.id).await.expect("get").expect("found");
    assert!(same(&stored.record, &failed), "an error reads back exactly");
}

async fn next_within(
    signals: &mut super::store::TaskSignals,
    wait: Duration,
) -> Option<TaskSignal> {
    tokio::time::timeout(wait, signals.next())
        .await
        .ok()
        .flatten()
}

/// Runs every bus check against `bus`.
pub async fn bus_parity(bus: &dyn TaskBus) {
    let a = unique("task");
    let b = unique("task");
    let mut first = bus.subscribe(&a).await.expect("subscribe");
    let mut second = bus.subscribe(&a).await.expect("subscribe");
    let mut other = bus.subscribe(&b).await.expect("subscribe");

    let record = TaskRecord::new(a.clone(), Some("owner".into()), now_ms(), 1000);
    bus.publish(&a, TaskSignal::Changed(Box::new(record.clone())))
        .await
        .expect("publish");
    bus.publish(&a, TaskSignal::CancelRequested)
        .await
        .expect("publish");
    for signals in [&mut first, &mut second] {
        match next_within(signals, Duration::from_secs(5)).await {
            Some(TaskSignal::Changed(r)) => {
                assert!(same(&r, &record), "a Changed signal carries the record")
            }
            other => panic!("every subscriber gets the first signal, in order; got {other:?}"),
        }
        assert!(
            matches!(
                next_within(signals, Duration::from_secs(5)).await,
                Some(TaskSignal::CancelRequested)
            ),
            "every subscriber gets the second signal"
        );
    }
    assert!(
        next_within(&mut other, Duration::from_millis(200))
            .await
            .is_none(),
        "a signal reaches only the subscribers of its task"
    );

    drop(first);
    drop(second);
    bus.publish(&a, TaskSignal::InputDelivered)
        .await
        .expect("publishing with no subscriber is fine");
    bus.publish(&b, TaskSignal::InputDelivered)
        .await
        .expect("publish");
    assert!(
        matches!(
            next_within(&mut other, Duration::from_secs(5)).await,
            Some(TaskSignal::InputDelivered)
        ),
        "the remaining subscription still works"
    );
}
