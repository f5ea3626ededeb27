//! Durable replay ledger stored in a redb database file.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::BoxFuture;
use redb::{Database, ReadableDatabase as _, ReadableTable as _, ReadableTableMetadata as _};
use redb::{Table, TableDefinition};

use super::{DEFAULT_RETENTION_MARGIN, LedgerError, Redemption, ReplayLedger, check_jti};
use crate::clock::{Clock, SystemClock, duration_millis};

/// Default capacity of a [`RedbLedger`]: 10,000,000 unexpired entries.
pub const DEFAULT_REDB_CAPACITY: u64 = 10_000_000;

/// Token id to the time its record may be purged.
const ENTRIES: TableDefinition<&str, u64> = TableDefinition::new("ferry_state.jti");
/// The same records, keyed by purge time for ordered purging.
const BY_PURGE_TIME: TableDefinition<(u64, &str), ()> =
    TableDefinition::new("ferry_state.jti_by_purge_time");

/// Most redemptions written in one transaction.
const MAX_BATCH: usize = 256;
/// Most expired records dropped by one redemption transaction.
const PURGE_PER_BATCH: usize = 1024;
/// Most redemptions waiting for the writer before new ones are refused.
const MAX_QUEUED: usize = 8_192;

type Reply<T> = oneshot::Sender<Result<T, LedgerError>>;

enum Job {
    Redeem {
        jti: String,
        expires_at_ms: u64,
        reply: Reply<Redemption>,
    },
    Purge {
        reply: Reply<u64>,
    },
}

struct Config {
    clock: Arc<dyn Clock>,
    margin_ms: u64,
    capacity: u64,
}

/// A [`ReplayLedger`] stored in a [redb](https://docs.rs/redb) database file.
///
/// Records survive restarts, so tokens stay single-use across them. Each
/// record is kept until its token's expiry plus a retention margin and then
/// purged; the number of unexpired records is capped (failing closed with
/// [`LedgerError::Full`]).
///
/// Writes are made by one background thread, which commits waiting
/// redemptions together in a single durable transaction; callers' futures
/// never block on disk I/O. The ledger can be shared between threads and
/// tasks (for example in an `Arc`). Dropping it waits for the writer to
/// finish its current transaction and closes the file.
///
/// By default the file is locked for this process. To share one file between
/// several processes, open the [`Database`] yourself with the multi-writer
/// concurrency mode and pass it to [`RedbLedger::from_database`] or
/// [`RedbLedgerBuilder::build`].
///
/// ```
/// use ferry_state::{RedbLedger, Redemption, ReplayLedger};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let ledger = RedbLedger::open(dir.path().join("replay.redb"))?;
/// futures::executor::block_on(async {
///     assert_eq!(ledger.redeem("id-1", u64::MAX).await?, Redemption::First);
///     assert_eq!(ledger.redeem("id-1", u64::MAX).await?, Redemption::Replayed);
///     Ok::<_, ferry_state::LedgerError>(())
/// })?;
/// # Ok(())
/// # }
/// ```
pub struct RedbLedger {
    db: Arc<Database>,
    jobs: Option<SyncSender<Job>>,
    worker: Option<JoinHandle<()>>,
    capacity: u64,
}

/// Options for a [`RedbLedger`].
pub struct RedbLedgerBuilder {
    config: Config,
}

impl Default for RedbLedgerBuilder {
    fn default() -> Self {
        Self {
            config: Config {
                clock: Arc::new(SystemClock),
                margin_ms: duration_millis(DEFAULT_RETENTION_MARGIN),
                capacity: DEFAULT_REDB_CAPACITY,
            },
        }
    }
}

impl RedbLedgerBuilder {
    /// Replaces the clock used to purge expired records, for tests.
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.config.clock = Arc::new(clock);
        self
    }

    /// Sets how long a record is kept after its token's expiry
    /// (default [`DEFAULT_RETENTION_MARGIN`]).
    pub fn retention_margin(mut self, margin: Duration) -> Self {
        self.config.margin_ms = duration_millis(margin);
        self
    }

    /// Sets the maximum number of records (default [`DEFAULT_REDB_CAPACITY`]).
    pub fn capacity(mut self, capacity: u64) -> Self {
        self.config.capacity = capacity;
        self
    }

    /// Opens (creating if needed) the database file at `path`.
    pub fn open(self, path: impl AsRef<Path>) -> Result<RedbLedger, LedgerError> {
        let db = Database::create(path.as_ref()).map_err(LedgerError::storage)?;
        self.build(db)
    }

    /// Uses an already opened database. The ledger's tables are created if
    /// missing; other tables are left alone.
    pub fn build(self, db: Database) -> Result<RedbLedger, LedgerError> {
        init_tables(&db).map_err(LedgerError::storage)?;
        let db = Arc::new(db);
        let (jobs, queue) = mpsc::sync_channel(MAX_QUEUED);
        let capacity = self.config.capacity;
        let worker_db = Arc::clone(&db);
        let config = self.config;
        let worker = std::thread::Builder::new()
            .name("ferry-state-redb".into())
            .spawn(move || run_writer(&worker_db, &queue, &config))
            .map_err(LedgerError::storage)?;
        Ok(RedbLedger {
            db,
            jobs: Some(jobs),
            worker: Some(worker),
            capacity,
        })
    }
}

impl fmt::Debug for RedbLedgerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedbLedgerBuilder")
            .field("margin_ms", &self.config.margin_ms)
            .field("capacity", &self.config.capacity)
            .finish_non_exhaustive()
    }
}

impl RedbLedger {
    /// Opens (creating if needed) a ledger at `path` with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LedgerError> {
        Self::builder().open(path)
    }

    /// A ledger with default options in an already opened database. The
    /// ledger's tables are created if missing; other tables are left alone.
    pub fn from_database(db: Database) -> Result<Self, LedgerError> {
        Self::builder().build(db)
    }

    /// Options for opening a ledger.
    pub fn builder() -> RedbLedgerBuilder {
        RedbLedgerBuilder::default()
    }

    /// The maximum number of records.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Number of records currently held, including expired ones not yet purged.
    pub fn len(&self) -> Result<u64, LedgerError> {
        let read = || -> Result<u64, redb::Error> {
            let txn = self.db.begin_read()?;
            let table = txn.open_table(ENTRIES)?;
            Ok(table.len()?)
        };
        read().map_err(LedgerError::storage)
    }

    /// `true` if no record is held.
    pub fn is_empty(&self) -> Result<bool, LedgerError> {
        Ok(self.len()? == 0)
    }

    /// Drops every record whose retention has ended, returning how many.
    /// Redemptions purge a bounded number of records on their own; calling
    /// this is never required.
    pub fn purge_expired(&self) -> BoxFuture<'_, Result<u64, LedgerError>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            self.submit(Job::Purge { reply })?;
            answer.await.map_err(|_| LedgerError::Closed)?
        })
    }

    fn submit(&self, job: Job) -> Result<(), LedgerError> {
        let jobs = self.jobs.as_ref().ok_or(LedgerError::Closed)?;
        jobs.try_send(job).map_err(|err| match err {
            TrySendError::Full(_) => LedgerError::Overloaded,
            TrySendError::Disconnected(_) => LedgerError::Closed,
        })
    }
}

impl ReplayLedger for RedbLedger {
    fn redeem<'a>(
        &'a self,
        jti: &'a str,
        expires_at_ms: u64,
    ) -> BoxFuture<'a, Result<Redemption, LedgerError>> {
        Box::pin(async move {
            check_jti(jti)?;
            let (reply, answer) = oneshot::channel();
            self.submit(Job::Redeem {
                jti: jti.to_owned(),
                expires_at_ms,
                reply,
            })?;
            answer.await.map_err(|_| LedgerError::Closed)?
        })
    }
}

impl Drop for RedbLedger {
    fn drop(&mut self) {
        // Closing the queue stops the writer once it has drained it.
        drop(self.jobs.take());
        if let Some(worker) = self.worker.take()
            && worker.join().is_err()
        {
            tracing::error!("replay ledger writer thread panicked");
        }
    }
}

impl fmt::Debug for RedbLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedbLedger")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

fn init_tables(db: &Database) -> Result<(), redb::Error> {
    let txn = db.begin_write()?;
    txn.open_table(ENTRIES)?;
    txn.open_table(BY_PURGE_TIME)?;
    txn.commit()?;
    Ok(())
}

/// The writer thread: takes waiting jobs in batches and applies each batch in
/// one transaction, then answers them.
fn run_writer(db: &Database, queue: &Receiver<Job>, config: &Config) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let now_ms = config.clock.now_ms();
        match apply_batch(db, config, &batch, now_ms) {
            Ok(outcomes) => {
                for (job, outcome) in batch.into_iter().zip(outcomes) {
                    answer(job, outcome);
                }
            }
            Err(err) => {
                tracing::error!(error = %err, "replay ledger write failed");
                let err = LedgerError::storage(err);
                for job in batch {
                    fail(job, err.clone());
                }
            }
        }
    }
}

/// Result of one job within a committed transaction.
enum Outcome {
    Redeemed(Result<Redemption, LedgerError>),
    Purged(u64),
}

fn answer(job: Job, outcome: Outcome) {
    // A caller that stopped waiting has dropped its receiver; nothing to do then.
    match (job, outcome) {
        (Job::Redeem { reply, .. }, Outcome::Redeemed(result)) => {
            let _ = reply.send(result);
        }
        (Job::Purge { reply }, Outcome::Purged(n)) => {
            let _ = reply.send(Ok(n));
        }
        // `apply_batch` answers each job with its own kind of outcome.
        (job, _) => fail(job, LedgerError::Closed),
    }
}

fn fail(job: Job, err: LedgerError) {
    match job {
        Job::Redeem { reply, .. } => {
            let _ = reply.send(Err(err));
        }
        Job::Purge { reply } => {
            let _ = reply.send(Err(err));
        }
    }
}

fn apply_batch(
    db: &Database,
    config: &Config,
    batch: &[Job],
    now_ms: u64,
) -> Result<Vec<Outcome>, redb::Error> {
    let txn = db.begin_write()?;
    let mut outcomes = Vec::with_capacity(batch.len());
    {
        let mut entries = txn.open_table(ENTRIES)?;
        let mut by_purge_time = txn.open_table(BY_PURGE_TIME)?;
        // An explicit purge request empties everything due, and is credited
        // with the count; otherwise a bounded number of records is dropped.
        let explicit = batch.iter().any(|job| matches!(job, Job::Purge { .. }));
        let limit = if explicit {
            usize::MAX
        } else {
            PURGE_PER_BATCH
        };
        let mut purged = Some(purge(&mut entries, &mut by_purge_time, now_ms, limit)?);
        for job in batch {
            let outcome = match job {
                Job::Redeem {
                    jti, expires_at_ms, ..
                } => {
                    if entries.get(jti.as_str())?.is_some() {
                        Outcome::Redeemed(Ok(Redemption::Replayed))
                    } else if entries.len()? >= config.capacity {
                        tracing::warn!(
                            capacity = config.capacity,
                            "replay ledger full; refusing requestState"
                        );
                        Outcome::Redeemed(Err(LedgerError::Full {
                            capacity: config.capacity,
                        }))
                    } else {
                        let purge_at = expires_at_ms.saturating_add(config.margin_ms);
                        entries.insert(jti.as_str(), purge_at)?;
                        by_purge_time.insert((purge_at, jti.as_str()), ())?;
                        Outcome::Redeemed(Ok(Redemption::First))
                    }
                }
                Job::Purge { .. } => Outcome::Purged(purged.take().unwrap_or(0)),
            };
            outcomes.push(outcome);
        }
    }
    txn.commit()?;
    Ok(outcomes)
}

/// Removes up to `limit` records whose purge time is at or before `now_ms`.
fn purge(
    entries: &mut Table<'_, &'static str, u64>,
    by_purge_time: &mut Table<'_, (u64, &'static str), ()>,
    now_ms: u64,
    limit: usize,
) -> Result<u64, redb::Error> {
    let due: Vec<(u64, String)> = {
        let range = match now_ms.checked_add(1) {
            Some(end) => by_purge_time.range(..(end, ""))?,
            None => by_purge_time.range::<(u64, &str)>(..)?,
        };
        let mut due = Vec::new();
        for item in range.take(limit) {
            let (key, _) = item?;
            let (purge_at, jti) = key.value();
            due.push((purge_at, jti.to_owned()));
        }
        due
    };
    let mut purged = 0;
    for (purge_at, jti) in &due {
        by_purge_time.remove((*purge_at, jti.as_str()))?;
        entries.remove(jti.as_str())?;
        purged += 1;
    }
    Ok(purged)
}
