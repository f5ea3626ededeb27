//! The server's side of `tasks/get`, `tasks/update` and `tasks/cancel`
//! (ext-tasks/tasks.md), each checked against the caller: a task that is not the
//! caller's is answered exactly like one that does not exist.

use std::sync::{Arc, OnceLock, Weak};

use ferry_protocol::ErrorObject;
use ferry_protocol::result::EmptyResult;
use ferry_protocol::tasks::{GetTaskResult, TaskStatus};
use serde_json::{Map, Value};

use super::config::TaskConfig;
use super::edit::{EditError, edit};
use super::id;
use super::now_ms;
use super::record::TaskRecord;
use super::store::{Stored, TaskBus, TaskSignal, TaskStore, TaskStoreError};
use crate::principal::Principal;
use crate::reply::Reply;
use crate::run::Base;

/// The tasks of one server: configuration, store, bus.
pub(crate) struct Tasks {
    pub(crate) config: TaskConfig,
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) bus: Arc<dyn TaskBus>,
    /// This instance, named in the records of the work it runs.
    pub(crate) instance: String,
    sweeper: OnceLock<()>,
}

/// What a `tasks/*` request asks for.
#[derive(Debug)]
pub(crate) enum TaskOp {
    Get,
    Update(Option<Value>),
    Cancel,
}

impl Tasks {
    pub(crate) fn new(
        config: TaskConfig,
        store: Arc<dyn TaskStore>,
        bus: Arc<dyn TaskBus>,
    ) -> Self {
        Tasks {
            config,
            store,
            bus,
            instance: id::new_task_id().unwrap_or_else(|_| "instance".to_owned()),
            sweeper: OnceLock::new(),
        }
    }

    /// Starts the background sweep of expired tasks, once (on the first task, when a
    /// runtime is sure to exist). It stops with the server.
    pub(crate) fn ensure_sweeper(self: &Arc<Self>) {
        self.sweeper.get_or_init(|| {
            let Ok(handle) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let weak: Weak<Tasks> = Arc::downgrade(self);
            let every = self.config.sweep_interval;
            handle.spawn(async move {
                let mut ticks = tokio::time::interval(every);
                ticks.tick().await;
                loop {
                    ticks.tick().await;
                    let Some(tasks) = weak.upgrade() else { break };
                    match tasks.store.sweep(now_ms()).await {
                        Ok(0) => {}
                        Ok(n) => tracing::debug!(swept = n, "expired tasks removed"),
                        Err(e) => tracing::warn!(error = %e, "sweeping expired tasks failed"),
                    }
                }
            });
        });
    }

    /// The task `id` if `owner` owns it and it has not expired.
    pub(crate) async fn owned(
        &self,
        id: &str,
        owner: Option<&str>,
    ) -> Result<Option<Stored>, TaskStoreError> {
        if !id::plausible(id) {
            return Ok(None);
        }
        let found = self.store.get(id).await?;
        Ok(found.filter(|s| s.record.is_owned_by(owner) && !s.record.is_expired(now_ms())))
    }
}

/// The one answer for a task the caller may not see: unknown, expired, or another's.
fn not_found() -> ErrorObject {
    ErrorObject::invalid_params("Failed to retrieve task: Task not found")
}

fn unavailable(e: &TaskStoreError) -> ErrorObject {
    tracing::warn!(error = %e, "task store unavailable");
    ErrorObject::internal("Internal error: the task store is unavailable")
}

/// Serves one `tasks/*` request.
pub(crate) async fn serve(base: &Base, tasks: &Tasks, op: TaskOp, id: &str) -> Reply {
    let owner = base.principal.as_ref().map(Principal::id);
    let stored = match tasks.owned(id, owner).await {
        Ok(Some(s)) => s,
        Ok(None) => return base.error(&not_found()),
        Err(e) => return base.error(&unavailable(&e)),
    };
    let ack = || Reply::result(&base.id, &EmptyResult::complete(), base.meta_bytes());
    match op {
        TaskOp::Get => Reply::result(
            &base.id,
            &GetTaskResult::new(stored.record.to_detailed()),
            base.meta_bytes(),
        ),
        TaskOp::Cancel => match cancel(tasks, &stored.record).await {
            Ok(()) => ack(),
            Err(e) => base.error(&e),
        },
        TaskOp::Update(responses) => match update(tasks, &stored.record, responses).await {
            Ok(()) => ack(),
            Err(e) => base.error(&e),
        },
    }
}

fn edit_error(e: EditError) -> ErrorObject {
    match e {
        EditError::Store(e) => unavailable(&e),
        EditError::Refused(e) => e,
    }
}

/// Marks the task cancelled and tells the instance running it; a terminal task is left
/// as it is (the acknowledgement is the same: cancellation is cooperative).
async fn cancel(tasks: &Tasks, record: &TaskRecord) -> Result<(), ErrorObject> {
    if record.is_terminal() {
        return Ok(());
    }
    let after = edit(tasks, &record.id, |r| {
        if r.is_terminal() {
            return Ok(false);
        }
        r.status = TaskStatus::Cancelled;
        r.status_message = Some("Cancelled at the client's request".to_owned());
        r.input_requests.clear();
        r.input_responses.clear();
        Ok(true)
    })
    .await
    .map_err(edit_error)?;
    if after.is_some_and(|r| r.status == TaskStatus::Cancelled)
        && let Err(e) = tasks
            .bus
            .publish(&record.id, TaskSignal::CancelRequested)
            .await
    {
        tracing::warn!(error = %e, "could not signal a task's cancellation; its work notices on its next check");
    }
    Ok(())
}

/// Stores the answers to outstanding input requests for the work to take, and wakes it.
/// Answers to keys that are not outstanding are ignored (ext-tasks/tasks.md, "Task
/// Update Requests"); a malformed answer to an outstanding key is refused with -32602.
async fn update(
    tasks: &Tasks,
    record: &TaskRecord,
    responses: Option<Value>,
) -> Result<(), ErrorObject> {
    let responses: Map<String, Value> = match responses {
        Some(Value::Object(m)) => m,
        None => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: inputResponses is required",
            ));
        }
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: inputResponses must be an object keyed by input request",
            ));
        }
    };
    if record.is_terminal()
        || !responses
            .keys()
            .any(|k| record.input_requests.contains_key(k))
    {
        return Ok(());
    }
    let mut delivered = false;
    edit(tasks, &record.id, |r| {
        delivered = false;
        if r.is_terminal() {
            return Ok(false);
        }
        for (key, answer) in &responses {
            let Some(request) = r.input_requests.get(key) else {
                continue;
            };
            check_answer(request.get(), key, answer)?;
            r.input_requests.remove(key);
            r.input_responses.insert(key.clone(), answer.clone());
            delivered = true;
        }
        if delivered && r.input_requests.is_empty() {
            r.status = TaskStatus::Working;
        }
        Ok(delivered)
    })
    .await
    .map_err(edit_error)?;
    if delivered
        && let Err(e) = tasks
            .bus
            .publish(&record.id, TaskSignal::InputDelivered)
            .await
    {
        tracing::warn!(error = %e, "could not signal delivered answers; the work takes them on its next check");
    }
    Ok(())
}

/// Checks an answer has the shape its request's kind requires.
fn check_answer(request: &str, key: &str, answer: &Value) -> Result<(), ErrorObject> {
    use crate::ask::AskKind;
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: &'a str,
    }
    let kind = match serde_json::from_str::<Method<'_>>(request).map(|m| m.method) {
        Ok(ferry_protocol::methods::SAMPLING_CREATE_MESSAGE) => AskKind::Sampling,
        Ok(ferry_protocol::methods::ROOTS_LIST) => AskKind::Roots,
        _ => AskKind::Form,
    };
    if !answer.is_object() {
        return Err(ErrorObject::invalid_params(format!(
            "inputResponses[{key:?}] must be an object"
        )));
    }
    crate::mrtr::check_shape(kind, key, answer)
}
