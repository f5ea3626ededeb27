//! Running a task's work in the background: its asks wait for `tasks/update`, its
//! progress becomes the `statusMessage`, `tasks/cancel` (or its TTL) drops its future,
//! and its outcome is stored as the task's terminal state.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ferry_protocol::ErrorObject;
use ferry_protocol::methods;
use ferry_protocol::result::ResultType;
use ferry_protocol::tasks::TaskStatus;
use ferry_protocol::tools::CallToolResult;
use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt as _};
use parking_lot::Mutex;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::begin::Created;
use super::config::TaskOptions;
use super::edit::edit;
use super::now_ms;
use super::record::TaskRecord;
use super::service::Tasks;
use super::store::{TaskSignal, TaskSignals};
use crate::ask::{AskBook, Interrupt, InterruptKind};
use crate::context::Context;
use crate::error::{ErrorKind, Result};
use crate::outbound::Outbound;
use crate::run::Base;
use crate::tool::ToolEntry;

/// Most checkpoints (`ctx.checkpoint`) a task's handler may resume from.
const MAX_CHECKPOINTS: usize = 64;

/// Progress reaches the store at most this often; the latest report always does.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// A handler's link to the task its call became, in its [`Context`]. Empty (and
/// costing no allocation) for calls that never become tasks.
#[derive(Default)]
pub(crate) struct TaskSlot {
    run: OnceLock<Arc<TaskRun>>,
    requested: AtomicBool,
    pending: Mutex<Option<Box<Pending>>>,
}

#[derive(Default)]
struct Pending {
    options: Option<TaskOptions>,
    failure: Option<ErrorObject>,
}

impl TaskSlot {
    /// The running task, once the call is one.
    pub(crate) fn run(&self) -> Option<&Arc<TaskRun>> {
        self.run.get()
    }

    /// Whether the handler asked to become a task and waits for it.
    pub(crate) fn requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }

    pub(crate) fn request(&self, options: TaskOptions) {
        self.pending
            .lock()
            .get_or_insert_with(Default::default)
            .options = Some(options);
        self.requested.store(true, Ordering::Release);
    }

    pub(crate) fn take_request(&self) -> Option<TaskOptions> {
        self.requested.store(false, Ordering::Release);
        self.pending.lock().as_mut().and_then(|p| p.options.take())
    }

    pub(crate) fn install(&self, run: Arc<TaskRun>) {
        let _ = self.run.set(run);
    }

    pub(crate) fn fail(&self, error: ErrorObject) {
        self.pending
            .lock()
            .get_or_insert_with(Default::default)
            .failure = Some(error);
    }

    pub(crate) fn take_failure(&self) -> Option<ErrorObject> {
        self.pending.lock().as_mut().and_then(|p| p.failure.take())
    }
}

#[derive(Default)]
struct ProgressState {
    pending: Option<String>,
    last_write: Option<Instant>,
    scheduled: bool,
}

/// One task whose work runs in this process.
pub(crate) struct TaskRun {
    pub(crate) id: String,
    tasks: Arc<Tasks>,
    cancel: CancellationToken,
    expires_at_ms: u64,
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    asked: Mutex<HashSet<String>>,
    progress: Mutex<ProgressState>,
}

/// How the work ended, as the task's terminal state.
pub(crate) enum Ending {
    Completed(Box<RawValue>),
    Failed(ErrorObject),
    Cancelled,
    Expired,
}

fn internal(message: &str) -> Interrupt {
    Interrupt::failed(ErrorObject::internal(format!("Internal error: {message}")))
}

impl TaskRun {
    pub(crate) fn new(tasks: Arc<Tasks>, record: &TaskRecord) -> Self {
        TaskRun {
            id: record.id.clone(),
            tasks,
            cancel: CancellationToken::new(),
            expires_at_ms: record.expires_at_ms(),
            waiting: Mutex::new(HashMap::new()),
            asked: Mutex::new(HashSet::new()),
            progress: Mutex::new(ProgressState::default()),
        }
    }

    /// Fires when the task is cancelled, expires or its work ends.
    pub(crate) fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Lists `request` under `key` in the task's `inputRequests` and waits for the
    /// answer `tasks/update` delivers.
    pub(crate) async fn ask(
        &self,
        key: String,
        request: Box<RawValue>,
    ) -> Result<Value, Interrupt> {
        if !self.asked.lock().insert(key.clone()) {
            return Err(internal(&format!(
                "the task asked twice under the key {key:?} (keys are unique for a task's lifetime)"
            )));
        }
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().insert(key.clone(), tx);
        let written = edit(&self.tasks, &self.id, |r| {
            if r.is_terminal() {
                return Ok(false);
            }
            r.input_requests.insert(key.clone(), request.clone());
            r.status = TaskStatus::InputRequired;
            Ok(true)
        })
        .await;
        if matches!(&written, Ok(Some(r)) if r.status == TaskStatus::InputRequired) {
            crate::telemetry::task_status(TaskStatus::InputRequired);
        }
        let problem = match written {
            Ok(Some(r)) if !r.is_terminal() => None,
            Ok(_) => Some(internal("the task ended while asking for input")),
            Err(e) => {
                tracing::warn!(error = ?e, task = %self.id, "could not record a task's input request");
                Some(internal("the task store is unavailable"))
            }
        };
        if let Some(p) = problem {
            self.waiting.lock().remove(&key);
            return Err(p);
        }
        rx.await
            .map_err(|_| internal("the task ended before the answer arrived"))
    }

    /// Takes the answers `tasks/update` stored for asks that wait, and hands them over.
    async fn collect_inputs(&self) {
        if self.waiting.lock().is_empty() {
            return;
        }
        let mut taken: Vec<(String, Value)> = Vec::new();
        let result = edit(&self.tasks, &self.id, |r| {
            taken.clear();
            let waiting = self.waiting.lock();
            let keys: Vec<String> = r
                .input_responses
                .keys()
                .filter(|k| waiting.contains_key(k.as_str()))
                .cloned()
                .collect();
            for k in keys {
                if let Some(v) = r.input_responses.remove(&k) {
                    taken.push((k, v));
                }
            }
            Ok(!taken.is_empty())
        })
        .await;
        if let Err(e) = result {
            tracing::warn!(error = ?e, task = %self.id, "could not take a task's answers; trying again later");
            return;
        }
        let mut waiting = self.waiting.lock();
        for (key, value) in taken {
            if let Some(tx) = waiting.remove(&key) {
                let _ = tx.send(value);
            }
        }
    }

    /// Rereads the record: whether the work must stop (the task was cancelled or ended
    /// elsewhere, or is gone), taking any answers on the way.
    async fn recheck(&self) -> bool {
        match self.tasks.store.get(&self.id).await {
            Ok(Some(s)) if s.record.is_terminal() => true,
            Ok(Some(s)) => {
                if !s.record.input_responses.is_empty() {
                    self.collect_inputs().await;
                }
                false
            }
            Ok(None) => true,
            Err(e) => {
                tracing::debug!(error = %e, task = %self.id, "could not recheck a task");
                false
            }
        }
    }

    /// Shows `text` as the task's `statusMessage`, at most every [`PROGRESS_EVERY`]
    /// (later reports within the window are merged into one write at its end).
    pub(crate) async fn report(self: &Arc<Self>, text: String) {
        let wait = {
            let mut p = self.progress.lock();
            p.pending = Some(text);
            if p.scheduled {
                return;
            }
            let wait = p
                .last_write
                .map(|t| (t + PROGRESS_EVERY).saturating_duration_since(Instant::now()))
                .unwrap_or_default();
            p.scheduled = true;
            wait
        };
        if wait.is_zero() {
            self.flush_progress().await;
            return;
        }
        let run = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            if let Some(run) = run.upgrade() {
                run.flush_progress().await;
            }
        });
    }

    async fn flush_progress(&self) {
        let text = {
            let mut p = self.progress.lock();
            p.scheduled = false;
            p.last_write = Some(Instant::now());
            p.pending.take()
        };
        let Some(text) = text else { return };
        let result = edit(&self.tasks, &self.id, |r| {
            if r.is_terminal() || r.status_message.as_deref() == Some(text.as_str()) {
                return Ok(false);
            }
            r.status_message = Some(text.clone());
            Ok(true)
        })
        .await;
        if let Err(e) = result {
            tracing::debug!(error = ?e, task = %self.id, "could not store a task's progress");
        }
    }

    /// Stores the terminal state, unless the task already has one (a cancellation that
    /// won the race). Retried briefly when the store fails.
    async fn finish(&self, ending: Ending) {
        let mut delay = Duration::from_millis(50);
        for attempt in 0..4 {
            let mut ended = None;
            let result = edit(&self.tasks, &self.id, |r| {
                ended = None;
                if r.is_terminal() {
                    return Ok(false);
                }
                r.input_requests.clear();
                r.input_responses.clear();
                r.runner = None;
                match &ending {
                    Ending::Completed(result) => {
                        r.status = TaskStatus::Completed;
                        r.result = Some(result.clone());
                        r.status_message = None;
                    }
                    Ending::Failed(error) => {
                        r.status = TaskStatus::Failed;
                        r.status_message = Some(error.message.clone());
                        r.error = Some(error.clone());
                    }
                    Ending::Cancelled => {
                        r.status = TaskStatus::Cancelled;
                        r.status_message = Some("Cancelled".to_owned());
                    }
                    Ending::Expired => {
                        let why = "the task ran past its ttlMs and was stopped";
                        r.status = TaskStatus::Failed;
                        r.status_message = Some(why.to_owned());
                        r.error = Some(ErrorObject::internal(format!("Internal error: {why}")));
                    }
                }
                ended = Some(r.status);
                Ok(true)
            })
            .await;
            match result {
                Ok(Some(_)) => {
                    if let Some(status) = ended {
                        crate::telemetry::task_status(status);
                    }
                    return;
                }
                Ok(_) => return,
                Err(e) if attempt == 3 => {
                    tracing::error!(error = ?e, task = %self.id, "could not store a task's outcome");
                }
                Err(_) => {
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
            }
        }
    }
}

/// The text a progress report becomes: `40% (2/5): message`, `2: message`, ...
pub(crate) fn describe_progress(
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> String {
    let n = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 1e15 {
            format!("{}", x as i64)
        } else {
            format!("{x:.2}")
        }
    };
    let amount = match total.filter(|t| *t > 0.0) {
        Some(t) => format!(
            "{}% ({}/{})",
            ((progress / t).clamp(0.0, 1.0) * 100.0).round() as u32,
            n(progress),
            n(t)
        ),
        None => n(progress),
    };
    match message {
        Some(m) => format!("{amount}: {m}"),
        None => amount,
    }
}

/// `ctx.progress` inside a task.
pub(crate) async fn progress(
    run: &Arc<TaskRun>,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) {
    run.report(describe_progress(progress, total, message))
        .await;
}

/// The terminal state a tool handler's outcome gives its task.
fn ending_of(entry: &ToolEntry, outcome: Result<CallToolResult>) -> Ending {
    let to_raw = |mut r: CallToolResult| {
        r.result_type = Some(ResultType::Complete);
        match serde_json::value::to_raw_value(&r) {
            Ok(raw) => Ending::Completed(raw),
            Err(_) => Ending::Failed(ErrorObject::internal(
                "Internal error: the result could not be serialized",
            )),
        }
    };
    match outcome {
        Ok(result) => match entry.check_output(&result) {
            Ok(()) => to_raw(result),
            Err(problem) => {
                tracing::error!(tool = %entry.def.name, %problem, "tool result does not match its outputSchema");
                Ending::Failed(ErrorObject::internal(
                    "Internal error: the tool's result does not match its outputSchema",
                ))
            }
        },
        Err(e) => match e.kind {
            ErrorKind::Execution(m) => to_raw(CallToolResult::error(m)),
            ErrorKind::Protocol(e) => Ending::Failed(e),
            ErrorKind::Refused(refused) => Ending::Failed(refused.0),
            ErrorKind::ResourceNotFound(uri) => {
                Ending::Failed(crate::error::resource_not_found(&uri, false))
            }
            ErrorKind::Interrupt(i) => match i.kind {
                InterruptKind::Failed(e) => Ending::Failed(e),
                _ => Ending::Failed(ErrorObject::internal(
                    "Internal error: the handler stopped for input outside its task",
                )),
            },
        },
    }
}

/// A tool handler's work in a task: the first run, then a new run from each
/// checkpoint (there are no client rounds in a task).
async fn tool_work(
    base: Base,
    entry: Arc<ToolEntry>,
    args: Value,
    ctx: Context,
    first: BoxFuture<'static, Result<CallToolResult>>,
    run: Arc<TaskRun>,
) -> Ending {
    let mut outcome = first.await;
    let mut ctx = ctx;
    for _ in 0..MAX_CHECKPOINTS {
        let checkpoint = matches!(&outcome, Err(e) if matches!(&e.kind, ErrorKind::Interrupt(i) if matches!(i.kind, InterruptKind::Checkpoint)));
        if !checkpoint {
            break;
        }
        let prev = std::mem::take(&mut *ctx.asks());
        let book = AskBook {
            app_in: prev.app_out.or(prev.app_in),
            ..AskBook::default()
        };
        ctx = base.context(
            methods::TOOLS_CALL,
            Some(&entry.def.name),
            Outbound::none(),
            crate::cancel::CallCancel::new(),
            book,
        );
        ctx.inner().task.install(run.clone());
        outcome = entry.handler.call(ctx.clone(), &args).await;
    }
    ending_of(&entry, outcome)
}

/// Runs a tool call's work as task `created`, in the background: `first` is the
/// handler's future (fresh, or part-run before it turned into a task).
pub(crate) fn spawn_detached(
    base: Base,
    entry: Arc<ToolEntry>,
    args: Value,
    ctx: Context,
    first: BoxFuture<'static, Result<CallToolResult>>,
    created: Created,
) {
    let Created { run, signals, .. } = created;
    let work = tool_work(base, entry, args, ctx, first, run.clone());
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            handle.spawn(drive(run, work, signals));
        }
        Err(_) => {
            tracing::error!(task = %run.id, "no async runtime to run the task on");
        }
    }
}

/// Drives the work until it ends, the task is cancelled or it expires, then stores the
/// outcome.
async fn drive(
    run: Arc<TaskRun>,
    work: impl Future<Output = Ending> + Send + 'static,
    mut signals: TaskSignals,
) {
    let mut work = Box::pin(AssertUnwindSafe(work).catch_unwind());
    let left = Duration::from_millis(run.expires_at_ms.saturating_sub(now_ms()));
    let expires = Instant::now() + left;
    let every = run.tasks.config.recheck_interval;
    let mut recheck = tokio::time::interval_at(Instant::now() + every, every);
    let mut listening = true;
    let ending = loop {
        tokio::select! {
            out = &mut work => break out.unwrap_or_else(|_| {
                tracing::error!(task = %run.id, "a task's handler panicked");
                Ending::Failed(ErrorObject::internal("Internal error: the tool's handler panicked"))
            }),
            signal = signals.next(), if listening => match signal {
                Some(TaskSignal::CancelRequested) => break Ending::Cancelled,
                Some(TaskSignal::Changed(r)) if r.is_terminal() => break Ending::Cancelled,
                Some(TaskSignal::InputDelivered) => run.collect_inputs().await,
                Some(_) => {}
                None => listening = false,
            },
            _ = recheck.tick() => if run.recheck().await {
                break Ending::Cancelled;
            },
            _ = tokio::time::sleep_until(expires) => break Ending::Expired,
        }
    };
    // Dropping the future stops the handler wherever it waits.
    drop(work);
    run.cancel.cancel();
    run.finish(ending).await;
}
