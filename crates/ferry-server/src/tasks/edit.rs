//! Changing a stored task safely: read, change, compare-and-set, and tell the bus.

use ferry_protocol::ErrorObject;

use super::now_ms;
use super::record::TaskRecord;
use super::service::Tasks;
use super::store::{TaskSignal, TaskStoreError};

/// How many times an edit rereads a record that changed under it before giving up.
const ATTEMPTS: usize = 32;

/// Why an edit did not happen.
#[derive(Debug)]
pub(crate) enum EditError {
    /// The store failed, or the record kept changing.
    Store(TaskStoreError),
    /// The change itself refused (the request that asked for it is invalid).
    Refused(ErrorObject),
}

impl From<TaskStoreError> for EditError {
    fn from(e: TaskStoreError) -> Self {
        EditError::Store(e)
    }
}

/// Applies `change` to the task `id` atomically: `change` sees the current record and
/// returns whether it changed it (it may run more than once, on a fresh copy each time,
/// if another writer got in first). A written record gets a new `lastUpdatedAt` and is
/// published as [`TaskSignal::Changed`].
///
/// Returns the record as it now stands (changed or not); `None` when the store does not
/// hold the task.
pub(crate) async fn edit<F>(
    tasks: &Tasks,
    id: &str,
    mut change: F,
) -> Result<Option<TaskRecord>, EditError>
where
    F: FnMut(&mut TaskRecord) -> Result<bool, ErrorObject>,
{
    for _ in 0..ATTEMPTS {
        let Some(stored) = tasks.store.get(id).await? else {
            return Ok(None);
        };
        let mut record = stored.record;
        if !change(&mut record).map_err(EditError::Refused)? {
            return Ok(Some(record));
        }
        record.updated_at_ms = now_ms().max(record.updated_at_ms);
        if tasks
            .store
            .compare_and_set(stored.revision, &record)
            .await?
            .is_some()
        {
            if let Err(e) = tasks
                .bus
                .publish(id, TaskSignal::Changed(Box::new(record.clone())))
                .await
            {
                tracing::warn!(error = %e, "could not publish a task's change");
            }
            return Ok(Some(record));
        }
        tokio::task::yield_now().await;
    }
    Err(EditError::Store(TaskStoreError::Contended))
}
