//! Where tasks live ([`TaskStore`]) and how news about them travels between server
//! instances ([`TaskBus`]).

use std::error::Error as StdError;
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::record::TaskRecord;

/// A record's version in a store: every successful write gives it a new one, so a writer
/// can replace a record only if nobody changed it since it read it
/// ([`TaskStore::compare_and_set`]).
pub type Revision = u64;

/// A record with its revision, as read from a store.
#[derive(Clone, Debug)]
pub struct Stored {
    /// The revision to pass to [`TaskStore::compare_and_set`].
    pub revision: Revision,
    /// The record.
    pub record: TaskRecord,
}

/// A store or bus could not do what was asked. The server fails closed: the request
/// is answered with an error, never as if the write had happened.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// A task with this id exists already.
    #[error("a task with this id exists already")]
    Exists,
    /// The owner holds as many unexpired tasks as allowed.
    #[error("too many tasks: the owner already holds {limit}")]
    LimitReached {
        /// The bound.
        limit: u64,
    },
    /// Too many writes are waiting.
    #[error("the task store is overloaded")]
    Overloaded,
    /// The record changed under every attempt to update it.
    #[error("the task is being changed too often to update")]
    Contended,
    /// The store was shut down.
    #[error("the task store is closed")]
    Closed,
    /// The underlying storage or connection failed.
    #[error("the task store failed: {0}")]
    Storage(#[source] Arc<dyn StdError + Send + Sync>),
}

impl TaskStoreError {
    /// Wraps an error of the underlying storage (for store implementations).
    pub fn storage(err: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        TaskStoreError::Storage(Arc::from(err.into()))
    }
}

/// Where tasks are kept.
///
/// Every method is atomic with respect to the others, for every process sharing the
/// store: [`create`](TaskStore::create) checks the id is new and counts the owner's
/// tasks in one step, and [`compare_and_set`](TaskStore::compare_and_set) replaces a
/// record only at the revision the writer read. A store keeps a record at least until
/// its [`expires_at_ms`](TaskRecord::expires_at_ms) and may drop it any time after.
///
/// The trait is object safe and returns boxed futures, so network stores fit. A Redis
/// store maps each method onto one command or script: `create` onto `SET id value NX
/// PXAT expiry` plus a sorted set of ids per owner scored by expiry (`ZREMRANGEBYSCORE`
/// then `ZCARD` for the bound), `get` onto `GET`, `compare_and_set` onto a script that
/// compares the stored revision before `SET ... PXAT`, and `sweep` onto nothing (keys
/// expire on their own).
///
/// Implementations: [`MemoryTaskStore`](super::MemoryTaskStore) (one process), the
/// redb store of `ferry-tasks` (a durable file). Check a new one with
/// [`testing::parity`](super::testing::parity) (feature `task-store-testing`).
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new record and returns its revision. Fails with
    /// [`TaskStoreError::Exists`] when the id is taken and with [`TaskStoreError::LimitReached`]
    /// when the record's owner already holds `per_owner` unexpired tasks (expired ones,
    /// judged at the record's `created_at_ms`, do not count).
    fn create<'a>(
        &'a self,
        record: &'a TaskRecord,
        per_owner: u64,
    ) -> BoxFuture<'a, Result<Revision, TaskStoreError>>;

    /// The record with this id, if the store holds it (expired records may still be
    /// returned until swept; callers check [`TaskRecord::is_expired`]).
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Stored>, TaskStoreError>>;

    /// Replaces the record with `record.id` by `record` if its revision is still
    /// `expected`, and returns the new revision; `None` when the record changed since,
    /// or no longer exists. The owner, creation time and TTL of a record never change.
    fn compare_and_set<'a>(
        &'a self,
        expected: Revision,
        record: &'a TaskRecord,
    ) -> BoxFuture<'a, Result<Option<Revision>, TaskStoreError>>;

    /// Removes every record expired at `now_ms`, returning how many.
    fn sweep(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, TaskStoreError>>;
}

impl<T: TaskStore + ?Sized> TaskStore for Arc<T> {
    fn create<'a>(
        &'a self,
        record: &'a TaskRecord,
        per_owner: u64,
    ) -> BoxFuture<'a, Result<Revision, TaskStoreError>> {
        (**self).create(record, per_owner)
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Stored>, TaskStoreError>> {
        (**self).get(id)
    }

    fn compare_and_set<'a>(
        &'a self,
        expected: Revision,
        record: &'a TaskRecord,
    ) -> BoxFuture<'a, Result<Option<Revision>, TaskStoreError>> {
        (**self).compare_and_set(expected, record)
    }

    fn sweep(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, TaskStoreError>> {
        (**self).sweep(now_ms)
    }
}

/// News about one task.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TaskSignal {
    /// The stored record changed; this is its new state (for `notifications/tasks`).
    Changed(Box<TaskRecord>),
    /// `tasks/update` stored answers in the record for the work to take.
    InputDelivered,
    /// `tasks/cancel` marked the task cancelled: the work should stop.
    CancelRequested,
}

/// The signals of one task, from the moment of subscription on.
pub type TaskSignals = Pin<Box<dyn Stream<Item = TaskSignal> + Send>>;

/// Carries [`TaskSignal`]s, keyed by task id, between whoever changes a task and the
/// instance running its work and the `subscriptions/listen` streams following it.
///
/// Delivery may be best effort: running work also re-reads its record now and then
/// ([`TaskConfig::recheck_interval`](super::TaskConfig::recheck_interval)), so a lost
/// signal delays a cancellation or an answer, never loses it. A Redis bus maps onto
/// `PUBLISH` and `SUBSCRIBE` of one channel per task id.
pub trait TaskBus: Send + Sync + 'static {
    /// Publishes `signal` to the current subscribers of `task_id`.
    fn publish<'a>(
        &'a self,
        task_id: &'a str,
        signal: TaskSignal,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// Subscribes to the signals of `task_id`; the future completes once the subscription
    /// is in place, so nothing published afterwards is missed. Dropping the stream
    /// unsubscribes.
    fn subscribe<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<TaskSignals, TaskStoreError>>;
}

impl<T: TaskBus + ?Sized> TaskBus for Arc<T> {
    fn publish<'a>(
        &'a self,
        task_id: &'a str,
        signal: TaskSignal,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        (**self).publish(task_id, signal)
    }

    fn subscribe<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<TaskSignals, TaskStoreError>> {
        (**self).subscribe(task_id)
    }
}
