//! Turning a `tools/call` into a task: at once (a tool registered with
//! [`ToolBuilder::task`](crate::ToolBuilder::task)), or when its handler calls
//! [`Context::into_task`](crate::Context::into_task) after its MRTR rounds. Either way
//! the task is stored before the `CreateTaskResult` goes out, so a `tasks/get` right
//! after it finds the task (ext-tasks/tasks.md, "Task Creation").

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as Cx, Poll};

use ferry_protocol::ErrorObject;
use ferry_protocol::methods;
use ferry_protocol::tasks::{CreateTaskResult, EXTENSION, Task};
use futures::future::BoxFuture;
use serde_json::Value;

use super::config::TaskOptions;
use super::id::new_task_id;
use super::now_ms;
use super::record::TaskRecord;
use super::run::{TaskRun, spawn_detached};
use super::service::Tasks;
use super::store::{TaskSignals, TaskStoreError};
use crate::ask::{AskBook, Interrupt};
use crate::context::Context;
use crate::mrtr::{self, MrtrInput};
use crate::outbound::Outbound;
use crate::principal::Principal;
use crate::reply::Reply;
use crate::run::Base;
use crate::tool::ToolEntry;

/// A task just stored, with its work's link to it.
pub(crate) struct Created {
    pub(crate) run: Arc<TaskRun>,
    pub(crate) signals: TaskSignals,
    pub(crate) task: Task,
}

impl Created {
    /// The `CreateTaskResult` answering the call.
    pub(crate) fn reply(&self, base: &Base) -> Reply {
        Reply::result(
            &base.id,
            &CreateTaskResult::new(self.task.clone()),
            base.meta_bytes(),
        )
    }
}

/// Stores a new task owned by the request's principal, subscribed first so that no
/// signal about it is missed.
async fn create(
    tasks: &Arc<Tasks>,
    principal: Option<&Principal>,
    options: TaskOptions,
) -> Result<Created, ErrorObject> {
    let id = new_task_id().map_err(|e| {
        tracing::error!(error = %e, "no randomness for a task id");
        ErrorObject::internal("Internal error: could not create a task id")
    })?;
    let config = &tasks.config;
    let ttl = u64::try_from(config.ttl(options.ttl).as_millis()).unwrap_or(u64::MAX);
    let poll = options.poll_interval.unwrap_or(config.poll_interval);
    let mut record = TaskRecord::new(id, principal.map(|p| p.id().to_owned()), now_ms(), ttl);
    record.poll_interval_ms = Some(u64::try_from(poll.as_millis()).unwrap_or(u64::MAX).max(1));
    record.status_message = options.status_message;
    record.runner = Some(tasks.instance.clone());
    let refused = |e: TaskStoreError| match e {
        TaskStoreError::LimitReached { limit } => ErrorObject::internal(format!(
            "Internal error: too many tasks (at most {limit}); cancel some or wait for finished ones to expire"
        )),
        e => {
            tracing::warn!(error = %e, "could not store a new task");
            ErrorObject::internal("Internal error: the task store is unavailable")
        }
    };
    let signals = tasks.bus.subscribe(&record.id).await.map_err(refused)?;
    tasks
        .store
        .create(&record, config.max_per_principal)
        .await
        .map_err(refused)?;
    crate::telemetry::task_status(record.status);
    tasks.ensure_sweeper();
    Ok(Created {
        run: Arc::new(TaskRun::new(tasks.clone(), &record)),
        signals,
        task: record.to_task(),
    })
}

/// Whether this request may become a task: a 2026-07-28 `tools/call` whose client
/// declared the extension, on a server with tasks.
pub(crate) fn eligible(ctx: &Context) -> bool {
    let inner = ctx.inner();
    inner.method == methods::TOOLS_CALL
        && inner.session.is_none()
        && inner.server.inner.tasks.is_some()
        && ctx.client_capabilities().has_extension(EXTENSION)
}

/// A tool registered with `.task(..)`: stores the task, answers with its
/// `CreateTaskResult` and starts the handler in the background.
pub(crate) fn start(
    base: Base,
    entry: Arc<ToolEntry>,
    args: Value,
    mrtr: MrtrInput,
) -> BoxFuture<'static, Reply> {
    Box::pin(async move {
        let Some(tasks) = base.inner().tasks.clone() else {
            return base.error(&ErrorObject::internal("Internal error: no task store"));
        };
        let book = if mrtr.is_retry() {
            let bound = base.bound(methods::TOOLS_CALL, &entry.def.name, &args);
            match mrtr::open(base.inner(), &bound, mrtr, entry.policy).await {
                Ok(b) => b,
                Err(e) => return base.error(&e),
            }
        } else {
            AskBook::default()
        };
        let created = match create(&tasks, base.principal.as_ref(), TaskOptions::default()).await {
            Ok(c) => c,
            Err(e) => return base.error(&e),
        };
        let ctx = base.context(
            methods::TOOLS_CALL,
            Some(&entry.def.name),
            Outbound::none(),
            crate::cancel::CallCancel::new(),
            book,
        );
        ctx.inner().task.install(created.run.clone());
        let first = entry.handler.call(ctx.clone(), &args);
        let reply = created.reply(&base);
        spawn_detached(base, entry, args, ctx, first, created);
        reply
    })
}

/// A handler that called `ctx.into_task`: stores the task and links the handler's
/// context to it. `None` when it could not be stored; the handler's `into_task` then
/// returns the error.
pub(crate) fn begin<'a>(base: &'a Base, ctx: &'a Context) -> BoxFuture<'a, Option<Created>> {
    Box::pin(async move {
        let slot = &ctx.inner().task;
        let options = slot.take_request()?;
        let Some(tasks) = base.inner().tasks.clone() else {
            slot.fail(ErrorObject::internal("Internal error: no task store"));
            return None;
        };
        match create(&tasks, base.principal.as_ref(), options).await {
            Ok(created) => {
                slot.install(created.run.clone());
                Some(created)
            }
            Err(e) => {
                slot.fail(e);
                None
            }
        }
    })
}

/// What watching a handler's future came to.
pub(crate) enum Watched<F: Future> {
    /// It finished.
    Done(F::Output),
    /// It waits in `ctx.into_task`: here it is, to go on as a task.
    Detach(F),
}

/// Polls a handler's future and hands it back when the handler waits to become a task.
/// Costs one atomic load per poll otherwise. A handler that panics while polled ends
/// with the error of [`crate::panic::handler_panicked`]; its future is dropped.
pub(crate) struct Watch<'a, F> {
    fut: Option<F>,
    ctx: &'a Context,
}

impl<'a, F> Watch<'a, F> {
    pub(crate) fn new(fut: F, ctx: &'a Context) -> Self {
        Watch {
            fut: Some(fut),
            ctx,
        }
    }
}

impl<F, T> Future for Watch<'_, F>
where
    F: Future<Output = crate::Result<T>> + Unpin,
{
    type Output = Watched<F>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Cx<'_>) -> Poll<Watched<F>> {
        let Some(fut) = self.fut.as_mut() else {
            return Poll::Pending;
        };
        let polled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Pin::new(fut).poll(cx)));
        match polled {
            Ok(Poll::Ready(out)) => Poll::Ready(Watched::Done(out)),
            Ok(Poll::Pending) if self.ctx.inner().task.requested() => match self.fut.take() {
                Some(fut) => Poll::Ready(Watched::Detach(fut)),
                None => Poll::Pending,
            },
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => {
                crate::panic::discard_payload(payload);
                crate::panic::discard(self.fut.take());
                let ctx = self.ctx;
                Poll::Ready(Watched::Done(Err(crate::Error::protocol(
                    crate::panic::handler_panicked(ctx.method(), ctx.target()),
                ))))
            }
        }
    }
}

/// The future of [`Context::into_task`](crate::Context::into_task).
pub(crate) struct IntoTask<'a> {
    ctx: &'a Context,
    options: Option<TaskOptions>,
}

/// See [`Context::into_task`](crate::Context::into_task).
pub(crate) fn into_task(ctx: &Context, options: TaskOptions) -> IntoTask<'_> {
    IntoTask {
        ctx,
        options: Some(options),
    }
}

impl Future for IntoTask<'_> {
    type Output = Result<(), Interrupt>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Cx<'_>) -> Poll<Self::Output> {
        let slot = &self.ctx.inner().task;
        if slot.run().is_some() {
            return Poll::Ready(Ok(()));
        }
        if let Some(e) = slot.take_failure() {
            return Poll::Ready(Err(Interrupt::failed(e)));
        }
        let Some(options) = self.options.take() else {
            // Waiting for the server to store the task: it polls again once it has.
            return Poll::Pending;
        };
        if !eligible(self.ctx) {
            // No task for this request: the work goes on in the call itself.
            return Poll::Ready(Ok(()));
        }
        slot.request(options);
        Poll::Pending
    }
}
