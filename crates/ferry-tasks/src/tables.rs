//! The store's tables and the operations on them inside one write transaction.

use ferry_server::{Revision, Stored, TaskRecord, TaskStoreError};
use redb::{
    ReadableTable as _, ReadableTableMetadata as _, Table, TableDefinition, WriteTransaction,
};

/// Task id to its revision and the record as JSON.
pub(crate) const TASKS: TableDefinition<&str, (u64, &[u8])> =
    TableDefinition::new("ferry_tasks.tasks");
/// The same ids keyed by expiry, for ordered sweeping.
pub(crate) const BY_EXPIRY: TableDefinition<(u64, &str), ()> =
    TableDefinition::new("ferry_tasks.by_expiry");
/// Owner key ([`owner_key`]) to how many records it holds.
pub(crate) const OWNERS: TableDefinition<&str, u64> = TableDefinition::new("ferry_tasks.owners");
/// Ids of records not yet terminal: the ones to mark failed after a crash.
pub(crate) const ACTIVE: TableDefinition<&str, ()> = TableDefinition::new("ferry_tasks.active");
/// Counters: the last revision handed out.
pub(crate) const META: TableDefinition<&str, u64> = TableDefinition::new("ferry_tasks.meta");

const LAST_REVISION: &str = "last_revision";

/// Most expired records a `create` drops on its way.
const PURGE_PER_CREATE: u64 = 64;

/// The owners table key: anonymous is the empty string, a principal is prefixed, so no
/// principal id collides with it.
fn owner_key(owner: Option<&str>) -> String {
    match owner {
        None => String::new(),
        Some(id) => format!("p:{id}"),
    }
}

fn storage(err: impl Into<redb::Error>) -> TaskStoreError {
    TaskStoreError::storage(err.into())
}

fn encode(record: &TaskRecord) -> Result<Vec<u8>, TaskStoreError> {
    serde_json::to_vec(record).map_err(TaskStoreError::storage)
}

pub(crate) fn decode(bytes: &[u8]) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_slice(bytes).map_err(TaskStoreError::storage)
}

/// Creates every table if missing.
pub(crate) fn init(txn: &WriteTransaction) -> Result<(), TaskStoreError> {
    txn.open_table(TASKS).map_err(storage)?;
    txn.open_table(BY_EXPIRY).map_err(storage)?;
    txn.open_table(OWNERS).map_err(storage)?;
    txn.open_table(ACTIVE).map_err(storage)?;
    txn.open_table(META).map_err(storage)?;
    Ok(())
}

/// The tables, open in one write transaction.
pub(crate) struct Tables<'txn> {
    tasks: Table<'txn, &'static str, (u64, &'static [u8])>,
    by_expiry: Table<'txn, (u64, &'static str), ()>,
    owners: Table<'txn, &'static str, u64>,
    active: Table<'txn, &'static str, ()>,
    meta: Table<'txn, &'static str, u64>,
}

impl<'txn> Tables<'txn> {
    pub(crate) fn open(txn: &'txn WriteTransaction) -> Result<Self, TaskStoreError> {
        Ok(Tables {
            tasks: txn.open_table(TASKS).map_err(storage)?,
            by_expiry: txn.open_table(BY_EXPIRY).map_err(storage)?,
            owners: txn.open_table(OWNERS).map_err(storage)?,
            active: txn.open_table(ACTIVE).map_err(storage)?,
            meta: txn.open_table(META).map_err(storage)?,
        })
    }

    fn next_revision(&mut self) -> Result<Revision, TaskStoreError> {
        let last = self
            .meta
            .get(LAST_REVISION)
            .map_err(storage)?
            .map(|v| v.value())
            .unwrap_or(0);
        let next = last + 1;
        self.meta.insert(LAST_REVISION, next).map_err(storage)?;
        Ok(next)
    }

    fn owned(&self, key: &str) -> Result<u64, TaskStoreError> {
        Ok(self
            .owners
            .get(key)
            .map_err(storage)?
            .map(|v| v.value())
            .unwrap_or(0))
    }

    fn read(&self, id: &str) -> Result<Option<Stored>, TaskStoreError> {
        let Some(guard) = self.tasks.get(id).map_err(storage)? else {
            return Ok(None);
        };
        let (revision, bytes) = guard.value();
        Ok(Some(Stored {
            revision,
            record: decode(bytes)?,
        }))
    }

    fn write(&mut self, revision: Revision, record: &TaskRecord) -> Result<(), TaskStoreError> {
        let bytes = encode(record)?;
        self.tasks
            .insert(record.id.as_str(), (revision, bytes.as_slice()))
            .map_err(storage)?;
        if record.is_terminal() {
            self.active.remove(record.id.as_str()).map_err(storage)?;
        } else {
            self.active
                .insert(record.id.as_str(), ())
                .map_err(storage)?;
        }
        Ok(())
    }

    /// How many records the store holds.
    pub(crate) fn len(&self) -> Result<u64, TaskStoreError> {
        self.tasks.len().map_err(storage)
    }

    /// Stores a new record (see [`ferry_server::TaskStore::create`]); `capacity` bounds
    /// the records held in all.
    pub(crate) fn create(
        &mut self,
        record: &TaskRecord,
        per_owner: u64,
        capacity: u64,
    ) -> Result<Revision, TaskStoreError> {
        let now = record.created_at_ms;
        self.purge(now, PURGE_PER_CREATE)?;
        if self
            .tasks
            .get(record.id.as_str())
            .map_err(storage)?
            .is_some()
        {
            return Err(TaskStoreError::Exists);
        }
        if self.len()? >= capacity {
            self.purge(now, u64::MAX)?;
            if self.len()? >= capacity {
                return Err(TaskStoreError::LimitReached { limit: capacity });
            }
        }
        let key = owner_key(record.owner());
        if self.owned(&key)? >= per_owner {
            // Expired tasks do not count: drop them all before refusing.
            self.purge(now, u64::MAX)?;
            if self.owned(&key)? >= per_owner {
                return Err(TaskStoreError::LimitReached { limit: per_owner });
            }
        }
        let revision = self.next_revision()?;
        self.write(revision, record)?;
        self.by_expiry
            .insert((record.expires_at_ms(), record.id.as_str()), ())
            .map_err(storage)?;
        let held = self.owned(&key)?;
        self.owners
            .insert(key.as_str(), held + 1)
            .map_err(storage)?;
        Ok(revision)
    }

    /// Replaces a record at its revision (see [`ferry_server::TaskStore::compare_and_set`]).
    pub(crate) fn compare_and_set(
        &mut self,
        expected: Revision,
        record: &TaskRecord,
    ) -> Result<Option<Revision>, TaskStoreError> {
        let Some(current) = self.read(&record.id)? else {
            return Ok(None);
        };
        if current.revision != expected {
            return Ok(None);
        }
        // The owner, creation time and TTL of a record never change.
        let mut next = record.clone();
        next.owner = current.record.owner;
        next.created_at_ms = current.record.created_at_ms;
        next.ttl_ms = current.record.ttl_ms;
        let revision = self.next_revision()?;
        self.write(revision, &next)?;
        Ok(Some(revision))
    }

    /// Drops up to `limit` records expired at `now_ms`, returning how many.
    pub(crate) fn purge(&mut self, now_ms: u64, limit: u64) -> Result<u64, TaskStoreError> {
        let mut purged = 0;
        while purged < limit {
            let id = {
                let Some((key, _)) = self.by_expiry.first().map_err(storage)? else {
                    break;
                };
                let (expires, id) = key.value();
                if expires > now_ms {
                    break;
                }
                (expires, id.to_owned())
            };
            self.by_expiry
                .remove((id.0, id.1.as_str()))
                .map_err(storage)?;
            let removed = self
                .tasks
                .remove(id.1.as_str())
                .map_err(storage)?
                .map(|guard| decode(guard.value().1));
            self.active.remove(id.1.as_str()).map_err(storage)?;
            if let Some(record) = removed {
                let key = owner_key(record?.owner());
                let held = self.owned(&key)?;
                if held <= 1 {
                    self.owners.remove(key.as_str()).map_err(storage)?;
                } else {
                    self.owners
                        .insert(key.as_str(), held - 1)
                        .map_err(storage)?;
                }
                purged += 1;
            }
        }
        Ok(purged)
    }

    /// Marks every record that is not terminal as failed (its work belonged to a process
    /// that no longer runs), returning how many.
    pub(crate) fn interrupt_active(
        &mut self,
        now_ms: u64,
        why: &str,
    ) -> Result<u64, TaskStoreError> {
        let mut ids = Vec::new();
        for entry in self.active.iter().map_err(storage)? {
            let (id, _) = entry.map_err(storage)?;
            ids.push(id.value().to_owned());
        }
        let mut marked = 0;
        for id in ids {
            match self.read(&id)? {
                Some(mut stored) if !stored.record.is_terminal() => {
                    stored.record.interrupt(now_ms, why);
                    let revision = self.next_revision()?;
                    self.write(revision, &stored.record)?;
                    marked += 1;
                }
                _ => {
                    self.active.remove(id.as_str()).map_err(storage)?;
                }
            }
        }
        Ok(marked)
    }
}
