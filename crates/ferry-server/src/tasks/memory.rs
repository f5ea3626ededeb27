//! The in-process task store and bus: the defaults for a server on one machine that
//! need not keep tasks across restarts.

use std::collections::{BTreeSet, HashMap};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use tokio::sync::broadcast;

use super::record::TaskRecord;
use super::store::{Revision, Stored, TaskBus, TaskSignal, TaskSignals, TaskStore, TaskStoreError};

/// Default capacity of a [`MemoryTaskStore`]: 1,000,000 records.
pub const DEFAULT_MEMORY_TASK_CAPACITY: u64 = 1_000_000;

/// Most expired records a `create` drops on its way.
const PURGE_PER_CREATE: usize = 64;

/// Signals one task's channel holds for a slow subscriber before it skips ahead.
const CHANNEL_CAPACITY: usize = 64;

/// Tasks in memory: bounded, swept by expiry, gone when the process ends.
///
/// ```
/// use ferry_server::{MemoryTaskStore, TaskRecord, TaskStore};
///
/// futures::executor::block_on(async {
///     let store = MemoryTaskStore::new();
///     let record = TaskRecord::new("t-1", None, 1_000, 60_000);
///     let revision = store.create(&record, 10).await.unwrap();
///     let stored = store.get("t-1").await.unwrap().unwrap();
///     assert_eq!(stored.revision, revision);
///     assert_eq!(store.sweep(61_000).await.unwrap(), 1);
///     assert!(store.get("t-1").await.unwrap().is_none());
/// });
/// ```
pub struct MemoryTaskStore {
    state: Mutex<State>,
    capacity: u64,
}

#[derive(Default)]
struct State {
    tasks: HashMap<Arc<str>, (Revision, TaskRecord)>,
    by_expiry: BTreeSet<(u64, Arc<str>)>,
    per_owner: HashMap<Option<String>, u64>,
    next_revision: Revision,
}

impl State {
    fn revision(&mut self) -> Revision {
        self.next_revision += 1;
        self.next_revision
    }

    /// Drops up to `limit` records expired at `now_ms`.
    fn purge(&mut self, now_ms: u64, limit: usize) -> u64 {
        let mut purged = 0;
        while purged < limit as u64 {
            let Some((expires, _)) = self.by_expiry.first() else {
                break;
            };
            if *expires > now_ms {
                break;
            }
            let Some((_, id)) = self.by_expiry.pop_first() else {
                break;
            };
            if let Some((_, record)) = self.tasks.remove(&id) {
                if let Some(n) = self.per_owner.get_mut(&record.owner) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.per_owner.remove(&record.owner);
                    }
                }
                purged += 1;
            }
        }
        purged
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        MemoryTaskStore::new()
    }
}

impl MemoryTaskStore {
    /// An empty store holding at most [`DEFAULT_MEMORY_TASK_CAPACITY`] records.
    pub fn new() -> Self {
        MemoryTaskStore::with_capacity(DEFAULT_MEMORY_TASK_CAPACITY)
    }

    /// An empty store holding at most `capacity` records in all.
    pub fn with_capacity(capacity: u64) -> Self {
        MemoryTaskStore {
            state: Mutex::new(State::default()),
            capacity: capacity.max(1),
        }
    }

    /// How many records it holds, expired ones not yet swept included.
    pub fn len(&self) -> usize {
        self.state.lock().tasks.len()
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("len", &self.len())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(
        &'a self,
        record: &'a TaskRecord,
        per_owner: u64,
    ) -> BoxFuture<'a, Result<Revision, TaskStoreError>> {
        Box::pin(async move {
            let mut s = self.state.lock();
            s.purge(record.created_at_ms, PURGE_PER_CREATE);
            if s.tasks.contains_key(record.id.as_str()) {
                return Err(TaskStoreError::Exists);
            }
            if s.tasks.len() as u64 >= self.capacity {
                s.purge(record.created_at_ms, usize::MAX);
                if s.tasks.len() as u64 >= self.capacity {
                    return Err(TaskStoreError::LimitReached {
                        limit: self.capacity,
                    });
                }
            }
            let held = s.per_owner.get(&record.owner).copied().unwrap_or(0);
            if held >= per_owner {
                // Expired tasks do not count: drop them all before refusing.
                s.purge(record.created_at_ms, usize::MAX);
                let held = s.per_owner.get(&record.owner).copied().unwrap_or(0);
                if held >= per_owner {
                    return Err(TaskStoreError::LimitReached { limit: per_owner });
                }
            }
            let id: Arc<str> = Arc::from(record.id.as_str());
            let revision = s.revision();
            s.by_expiry.insert((record.expires_at_ms(), id.clone()));
            s.tasks.insert(id, (revision, record.clone()));
            *s.per_owner.entry(record.owner.clone()).or_insert(0) += 1;
            Ok(revision)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Stored>, TaskStoreError>> {
        Box::pin(async move {
            let s = self.state.lock();
            Ok(s.tasks.get(id).map(|(revision, record)| Stored {
                revision: *revision,
                record: record.clone(),
            }))
        })
    }

    fn compare_and_set<'a>(
        &'a self,
        expected: Revision,
        record: &'a TaskRecord,
    ) -> BoxFuture<'a, Result<Option<Revision>, TaskStoreError>> {
        Box::pin(async move {
            let mut s = self.state.lock();
            if !matches!(s.tasks.get(record.id.as_str()), Some((rev, _)) if *rev == expected) {
                return Ok(None);
            }
            let revision = s.revision();
            if let Some(entry) = s.tasks.get_mut(record.id.as_str()) {
                // The owner, creation time and TTL of a record never change.
                let mut next = record.clone();
                next.owner = entry.1.owner.take();
                next.created_at_ms = entry.1.created_at_ms;
                next.ttl_ms = entry.1.ttl_ms;
                *entry = (revision, next);
            }
            Ok(Some(revision))
        })
    }

    fn sweep(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, TaskStoreError>> {
        Box::pin(async move { Ok(self.state.lock().purge(now_ms, usize::MAX)) })
    }
}

/// Signals between the parts of one process: a broadcast channel per task id with
/// subscribers, dropped with its last subscriber.
///
/// ```
/// use ferry_server::{MemoryTaskBus, TaskBus, TaskSignal};
/// use futures::StreamExt;
///
/// futures::executor::block_on(async {
///     let bus = MemoryTaskBus::new();
///     let mut signals = bus.subscribe("t-1").await.unwrap();
///     bus.publish("t-1", TaskSignal::CancelRequested).await.unwrap();
///     assert!(matches!(signals.next().await, Some(TaskSignal::CancelRequested)));
/// });
/// ```
#[derive(Clone, Default)]
pub struct MemoryTaskBus {
    channels: Arc<Mutex<HashMap<String, broadcast::Sender<TaskSignal>>>>,
}

impl MemoryTaskBus {
    /// A bus with no subscribers.
    pub fn new() -> Self {
        MemoryTaskBus::default()
    }

    /// How many task ids have subscribers.
    pub fn channels(&self) -> usize {
        self.channels.lock().len()
    }
}

impl std::fmt::Debug for MemoryTaskBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskBus")
            .field("channels", &self.channels())
            .finish()
    }
}

impl TaskBus for MemoryTaskBus {
    fn publish<'a>(
        &'a self,
        task_id: &'a str,
        signal: TaskSignal,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            if let Some(tx) = self.channels.lock().get(task_id) {
                // No subscriber left is not an error.
                let _ = tx.send(signal);
            }
            Ok(())
        })
    }

    fn subscribe<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<TaskSignals, TaskStoreError>> {
        Box::pin(async move {
            let rx = self
                .channels
                .lock()
                .entry(task_id.to_owned())
                .or_insert_with(|| broadcast::channel(CHANNEL_CAPACITY).0)
                .subscribe();
            let stream = futures::stream::unfold(rx, |mut rx| async move {
                loop {
                    match rx.recv().await {
                        Ok(signal) => return Some((signal, rx)),
                        Err(broadcast::error::RecvError::Lagged(n)) => {
                            tracing::debug!(
                                skipped = n,
                                "task signals skipped by a slow subscriber"
                            );
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            });
            Ok(Box::pin(Subscription {
                stream: Box::pin(stream),
                _guard: Unsubscribe {
                    channels: self.channels.clone(),
                    id: task_id.to_owned(),
                },
            }) as TaskSignals)
        })
    }
}

/// A subscription's stream; dropping it drops the channel once nobody else listens.
struct Subscription {
    stream: Pin<Box<dyn Stream<Item = TaskSignal> + Send>>,
    _guard: Unsubscribe,
}

impl Stream for Subscription {
    type Item = TaskSignal;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<TaskSignal>> {
        self.stream.as_mut().poll_next(cx)
    }
}

struct Unsubscribe {
    channels: Arc<Mutex<HashMap<String, broadcast::Sender<TaskSignal>>>>,
    id: String,
}

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        let mut channels = self.channels.lock();
        // The subscription's receiver was dropped just before (field order).
        if channels
            .get(&self.id)
            .is_some_and(|tx| tx.receiver_count() == 0)
        {
            channels.remove(&self.id);
        }
    }
}
