//! The in-memory task store and bus pass the parity suite every implementation passes.

use ferry_server::tasks::testing;
use ferry_server::{MemoryTaskBus, MemoryTaskStore};

#[tokio::test]
async fn memory_store_parity() {
    testing::parity(&MemoryTaskStore::new()).await;
}

#[tokio::test]
async fn memory_bus_parity() {
    let bus = MemoryTaskBus::new();
    testing::bus_parity(&bus).await;
    assert_eq!(
        bus.channels(),
        0,
        "dropped subscriptions free their channels"
    );
}

#[tokio::test]
async fn memory_store_capacity() {
    use ferry_server::{TaskRecord, TaskStore, TaskStoreError};
    let store = MemoryTaskStore::with_capacity(2);
    let now = 1_000_000;
    for i in 0..2 {
        let owner = Some(format!("user-{i}"));
        store
            .create(&TaskRecord::new(format!("t{i}"), owner, now, 10_000), 10)
            .await
            .unwrap();
    }
    let r = TaskRecord::new("t2", Some("user-2".into()), now, 10_000);
    assert!(matches!(
        store.create(&r, 10).await,
        Err(TaskStoreError::LimitReached { limit: 2 })
    ));
    let later = TaskRecord::new("t3", None, now + 10_000, 10_000);
    store
        .create(&later, 10)
        .await
        .expect("expired records make room");
    assert_eq!(store.len(), 1);
}
