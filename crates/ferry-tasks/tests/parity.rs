//! The redb store passes the parity suite every task store passes, and keeps its
//! records, bounds and revisions across reopening the file.

use ferry_protocol::tasks::TaskStatus;
use ferry_server::tasks::testing;
use ferry_server::{TaskRecord, TaskStore, TaskStoreError};
use ferry_tasks::{INTERRUPTED_MESSAGE, RedbTaskStore};

#[tokio::test]
async fn redb_store_parity() {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbTaskStore::open(dir.path().join("tasks.redb")).unwrap();
    testing::parity(&store).await;
}

#[tokio::test]
async fn records_survive_reopening_and_unfinished_ones_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.redb");
    let now = 1_000_000;
    let ttl = u64::MAX / 4;
    let (done_rev, working_rev) = {
        let store = RedbTaskStore::open(&path).unwrap();
        let mut done = TaskRecord::new("done", Some("alice".into()), now, ttl);
        let rev = store.create(&done, 2).await.unwrap();
        done.status = TaskStatus::Completed;
        done.result = Some(
            serde_json::value::to_raw_value(
                &serde_json::json!({"content": [{"type": "text", "text": "42"}]}),
            )
            .unwrap(),
        );
        let done_rev = store.compare_and_set(rev, &done).await.unwrap().unwrap();
        let mut asking = TaskRecord::new("asking", Some("alice".into()), now, ttl);
        let rev = store.create(&asking, 2).await.unwrap();
        asking.status = TaskStatus::InputRequired;
        store.compare_and_set(rev, &asking).await.unwrap().unwrap();
        let working = TaskRecord::new("working", Some("bob".into()), now, ttl);
        let working_rev = store.create(&working, 2).await.unwrap();
        (done_rev, working_rev)
    };

    let store = RedbTaskStore::open(&path).unwrap();
    assert_eq!(store.interrupted_on_open(), 2);
    assert_eq!(store.len().unwrap(), 3);
    let done = store.get("done").await.unwrap().unwrap();
    assert_eq!(done.revision, done_rev, "a finished task is left alone");
    assert_eq!(done.record.status, TaskStatus::Completed);
    assert_eq!(
        serde_json::to_value(done.record.to_detailed()).unwrap()["result"]["content"][0]["text"],
        "42"
    );
    for id in ["asking", "working"] {
        let stored = store.get(id).await.unwrap().unwrap();
        assert_eq!(stored.record.status, TaskStatus::Failed, "{id}");
        assert_eq!(
            stored.record.status_message.as_deref(),
            Some(INTERRUPTED_MESSAGE)
        );
        assert!(stored.record.input_requests.is_empty());
        let detailed = serde_json::to_value(stored.record.to_detailed()).unwrap();
        assert_eq!(detailed["error"]["code"], -32603);
    }
    let working = store.get("working").await.unwrap().unwrap();
    assert!(working.revision > working_rev, "marking failed is a write");
    assert!(
        working.revision > done_rev,
        "revisions keep growing across reopening"
    );

    // The bound per owner is kept across reopening too.
    let third = TaskRecord::new("third", Some("alice".into()), now, ttl);
    assert!(matches!(
        store.create(&third, 2).await,
        Err(TaskStoreError::LimitReached { limit: 2 })
    ));
    drop(store);
    let store = RedbTaskStore::open(&path).unwrap();
    assert_eq!(
        store.interrupted_on_open(),
        0,
        "failed tasks are not marked twice"
    );
}

#[tokio::test]
async fn capacity_bounds_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbTaskStore::builder()
        .capacity(2)
        .open(dir.path().join("tasks.redb"))
        .unwrap();
    let now = 1_000_000;
    for i in 0..2 {
        store
            .create(
                &TaskRecord::new(format!("t{i}"), Some(format!("u{i}")), now, 10_000),
                10,
            )
            .await
            .unwrap();
    }
    let r = TaskRecord::new("t2", Some("u2".into()), now, 10_000);
    assert!(matches!(
        store.create(&r, 10).await,
        Err(TaskStoreError::LimitReached { limit: 2 })
    ));
    let later = TaskRecord::new("t3", None, now + 10_000, 10_000);
    store
        .create(&later, 10)
        .await
        .expect("expired records make room");
    assert_eq!(store.len().unwrap(), 1);
}
