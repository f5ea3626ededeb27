//! [`RedbTaskStore`]: tasks in one redb file, written by one background thread.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;

use ferry_server::{Revision, Stored, TaskRecord, TaskStore, TaskStoreError};
use futures::channel::oneshot;
use futures::future::BoxFuture;
use redb::{Database, ReadableDatabase as _, ReadableTableMetadata as _};

use crate::tables::{self, Tables};

/// Default capacity of a [`RedbTaskStore`]: 1,000,000 records.
pub const DEFAULT_REDB_TASK_CAPACITY: u64 = 1_000_000;

/// The `statusMessage` of a task found unfinished when the file is opened again.
pub const INTERRUPTED_MESSAGE: &str =
    "the server stopped while this task was running; its work was lost";

/// Most writes committed in one transaction.
const MAX_BATCH: usize = 256;
/// Most writes waiting for the writer before new ones are refused.
const MAX_QUEUED: usize = 8_192;

enum Op {
    Create {
        record: TaskRecord,
        per_owner: u64,
    },
    CompareAndSet {
        expected: Revision,
        record: TaskRecord,
    },
    Sweep {
        now_ms: u64,
    },
}

enum Answer {
    Created(Revision),
    Replaced(Option<Revision>),
    Swept(u64),
}

struct Job {
    op: Op,
    reply: oneshot::Sender<Result<Answer, TaskStoreError>>,
}

/// A [`TaskStore`] in a [redb](https://docs.rs/redb) database file.
///
/// Records survive restarts. Opening the file marks every task that was not finished
/// (`working` or `input_required`: its work ran in a process that is gone) as `failed`,
/// with [`INTERRUPTED_MESSAGE`] as its `statusMessage` and a -32603 error, so a client
/// polling it learns what happened instead of getting "unknown task". Completed tasks
/// keep their results until their TTL ends.
///
/// Writes go to one background thread that commits the writes waiting at that moment
/// together in one durable transaction (so concurrent tasks share an fsync); reads use
/// redb's snapshots directly. The file is locked to this process.
///
/// ```
/// use ferry_server::{TaskRecord, TaskStore};
/// use ferry_tasks::RedbTaskStore;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("tasks.redb");
/// let store = RedbTaskStore::open(&path)?;
/// futures::executor::block_on(store.create(&TaskRecord::new("t-1", None, 1_000, u64::MAX / 2), 10))?;
/// drop(store);
///
/// let store = RedbTaskStore::open(&path)?;
/// assert_eq!(store.interrupted_on_open(), 1);
/// let stored = futures::executor::block_on(store.get("t-1"))?.expect("kept");
/// assert!(stored.record.is_terminal());
/// # Ok(())
/// # }
/// ```
pub struct RedbTaskStore {
    db: Arc<Database>,
    jobs: Option<SyncSender<Job>>,
    writer: Option<JoinHandle<()>>,
    capacity: u64,
    interrupted: u64,
}

/// Options for a [`RedbTaskStore`].
#[derive(Debug, Clone)]
pub struct RedbTaskStoreBuilder {
    capacity: u64,
    interrupted_message: String,
}

impl Default for RedbTaskStoreBuilder {
    fn default() -> Self {
        RedbTaskStoreBuilder {
            capacity: DEFAULT_REDB_TASK_CAPACITY,
            interrupted_message: INTERRUPTED_MESSAGE.to_owned(),
        }
    }
}

impl RedbTaskStoreBuilder {
    /// The most records held in all (default [`DEFAULT_REDB_TASK_CAPACITY`]); creating
    /// more fails with [`TaskStoreError::LimitReached`] until some expire.
    pub fn capacity(mut self, capacity: u64) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// The `statusMessage` given to tasks found unfinished on open (default
    /// [`INTERRUPTED_MESSAGE`]).
    pub fn interrupted_message(mut self, message: impl Into<String>) -> Self {
        self.interrupted_message = message.into();
        self
    }

    /// Opens (creating if needed) the database file at `path`.
    pub fn open(self, path: impl AsRef<Path>) -> Result<RedbTaskStore, TaskStoreError> {
        let db = Database::create(path.as_ref()).map_err(TaskStoreError::storage)?;
        self.build(db)
    }

    /// Uses an already opened database; the store's tables (all named `ferry_tasks.*`)
    /// are created if missing and other tables are left alone. Unfinished tasks in it
    /// are marked failed, so the database must not be in use by another store.
    pub fn build(self, db: Database) -> Result<RedbTaskStore, TaskStoreError> {
        let txn = db.begin_write().map_err(TaskStoreError::storage)?;
        tables::init(&txn)?;
        let interrupted = {
            let mut t = Tables::open(&txn)?;
            t.interrupt_active(ferry_now_ms(), &self.interrupted_message)?
        };
        txn.commit().map_err(TaskStoreError::storage)?;
        if interrupted > 0 {
            tracing::warn!(
                tasks = interrupted,
                "tasks left unfinished by the previous run were marked failed"
            );
        }
        let db = Arc::new(db);
        let (jobs, queue) = mpsc::sync_channel(MAX_QUEUED);
        let writer_db = Arc::clone(&db);
        let capacity = self.capacity;
        let writer = std::thread::Builder::new()
            .name("ferry-tasks-redb".into())
            .spawn(move || run_writer(&writer_db, &queue, capacity))
            .map_err(TaskStoreError::storage)?;
        Ok(RedbTaskStore {
            db,
            jobs: Some(jobs),
            writer: Some(writer),
            capacity,
            interrupted,
        })
    }
}

fn ferry_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl RedbTaskStore {
    /// Opens (creating if needed) a store at `path` with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TaskStoreError> {
        RedbTaskStore::builder().open(path)
    }

    /// Options for opening a store.
    pub fn builder() -> RedbTaskStoreBuilder {
        RedbTaskStoreBuilder::default()
    }

    /// The most records held in all.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// How many unfinished tasks opening the file marked failed.
    pub fn interrupted_on_open(&self) -> u64 {
        self.interrupted
    }

    /// How many records it holds, expired ones not yet swept included.
    pub fn len(&self) -> Result<u64, TaskStoreError> {
        let txn = self.db.begin_read().map_err(TaskStoreError::storage)?;
        let table = txn
            .open_table(tables::TASKS)
            .map_err(TaskStoreError::storage)?;
        table.len().map_err(TaskStoreError::storage)
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> Result<bool, TaskStoreError> {
        Ok(self.len()? == 0)
    }

    fn submit(&self, op: Op) -> BoxFuture<'_, Result<Answer, TaskStoreError>> {
        let (reply, answer) = oneshot::channel();
        let sent = match self.jobs.as_ref() {
            None => Err(TaskStoreError::Closed),
            Some(jobs) => jobs.try_send(Job { op, reply }).map_err(|err| match err {
                TrySendError::Full(_) => TaskStoreError::Overloaded,
                TrySendError::Disconnected(_) => TaskStoreError::Closed,
            }),
        };
        Box::pin(async move {
            sent?;
            answer.await.map_err(|_| TaskStoreError::Closed)?
        })
    }
}

impl fmt::Debug for RedbTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedbTaskStore")
            .field("capacity", &self.capacity)
            .field("interrupted_on_open", &self.interrupted)
            .finish_non_exhaustive()
    }
}

impl Drop for RedbTaskStore {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

fn unexpected() -> TaskStoreError {
    TaskStoreError::storage("the task store's writer gave an unexpected answer")
}

impl TaskStore for RedbTaskStore {
    fn create<'a>(
        &'a self,
        record: &'a TaskRecord,
        per_owner: u64,
    ) -> BoxFuture<'a, Result<Revision, TaskStoreError>> {
        let answer = self.submit(Op::Create {
            record: record.clone(),
            per_owner,
        });
        Box::pin(async move {
            match answer.await? {
                Answer::Created(revision) => Ok(revision),
                _ => Err(unexpected()),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Stored>, TaskStoreError>> {
        // A snapshot read of one key: no waiting on the writer.
        let read = || -> Result<Option<Stored>, TaskStoreError> {
            let txn = self.db.begin_read().map_err(TaskStoreError::storage)?;
            let table = txn
                .open_table(tables::TASKS)
                .map_err(TaskStoreError::storage)?;
            let Some(guard) =
                redb::ReadableTable::get(&table, id).map_err(TaskStoreError::storage)?
            else {
                return Ok(None);
            };
            let (revision, bytes) = guard.value();
            Ok(Some(Stored {
                revision,
                record: tables::decode(bytes)?,
            }))
        };
        let result = read();
        Box::pin(async move { result })
    }

    fn compare_and_set<'a>(
        &'a self,
        expected: Revision,
        record: &'a TaskRecord,
    ) -> BoxFuture<'a, Result<Option<Revision>, TaskStoreError>> {
        let answer = self.submit(Op::CompareAndSet {
            expected,
            record: record.clone(),
        });
        Box::pin(async move {
            match answer.await? {
                Answer::Replaced(revision) => Ok(revision),
                _ => Err(unexpected()),
            }
        })
    }

    fn sweep(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, TaskStoreError>> {
        let answer = self.submit(Op::Sweep { now_ms });
        Box::pin(async move {
            match answer.await? {
                Answer::Swept(n) => Ok(n),
                _ => Err(unexpected()),
            }
        })
    }
}

/// Takes the writes waiting, runs them in order in one transaction and answers each
/// once it is committed; a storage failure fails the whole batch, none of it written.
fn run_writer(db: &Database, queue: &Receiver<Job>, capacity: u64) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let (ops, replies): (Vec<Op>, Vec<_>) =
            batch.into_iter().map(|job| (job.op, job.reply)).unzip();
        match write_batch(db, &ops, capacity) {
            Ok(answers) => {
                for (reply, answer) in replies.into_iter().zip(answers) {
                    let _ = reply.send(answer);
                }
            }
            Err(err) => {
                tracing::error!(error = %err, "writing tasks failed");
                for reply in replies {
                    let _ = reply.send(Err(err.clone()));
                }
            }
        }
    }
}

fn write_batch(
    db: &Database,
    ops: &[Op],
    capacity: u64,
) -> Result<Vec<Result<Answer, TaskStoreError>>, TaskStoreError> {
    let txn = db.begin_write().map_err(TaskStoreError::storage)?;
    let mut answers = Vec::with_capacity(ops.len());
    {
        let mut t = Tables::open(&txn)?;
        for op in ops {
            let answer = match op {
                Op::Create { record, per_owner } => {
                    t.create(record, *per_owner, capacity).map(Answer::Created)
                }
                Op::CompareAndSet { expected, record } => {
                    t.compare_and_set(*expected, record).map(Answer::Replaced)
                }
                Op::Sweep { now_ms } => t.purge(*now_ms, u64::MAX).map(Answer::Swept),
            };
            if let Err(err @ TaskStoreError::Storage(_)) = answer {
                // The transaction is dropped unwritten.
                return Err(err);
            }
            answers.push(answer);
        }
    }
    txn.commit().map_err(TaskStoreError::storage)?;
    Ok(answers)
}
