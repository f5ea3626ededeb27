//! Running handlers: the part of a request that waits. A [`PendingCall`] owns everything
//! its handler needs, so a transport can drive it anywhere, and dropping it cancels the
//! handler.

use ferry_protocol::quote::quote;
use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use crate::cancel::{CallCancel, CancelOnDrop};
use ferry_protocol::ErrorObject;
use ferry_protocol::completion::{CompleteResult, Completion};
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::methods;
use ferry_protocol::resources::ReadResourceResult;
use ferry_protocol::result::CacheScope;
use ferry_protocol::result::ResultType;
use ferry_protocol::tools::CallToolResult;
use futures::FutureExt;
use parking_lot::Mutex;
use serde_json::Value;

use crate::ask::{AskBook, InterruptKind};
use crate::completion::{Completer, CompletionRequest, MAX_COMPLETION_VALUES};
use crate::context::{Context, ContextInner};
use crate::error::{ErrorKind, Result};
use crate::listen::{self, Filter};
use crate::mrtr::{self, Bound, MrtrInput, StatePolicy};
use crate::outbound::Outbound;
use crate::params::Checked;
use crate::principal::Principal;
use crate::prompt::PromptEntry;
use crate::reply::Reply;
use crate::resource::{CacheHint, ReadHandler, ResourceRequest};
use crate::server::{Server, ServerInner};
use crate::session::Session;
use crate::tool::ToolEntry;

/// Whether a pending call may send messages before its response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streaming {
    /// Never: a plain JSON response.
    Never,
    /// Only if the handler reports progress, logs, or (on a 2025-11-25 session) sends a
    /// request to the client.
    Maybe,
    /// Always: a `subscriptions/listen` stream.
    Always,
}

/// How a call ended.
#[derive(Debug)]
// The common variant is the large one: boxing it would cost every call an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// Send this response.
    Reply(Reply),
    /// The client cancelled the request (`notifications/cancelled` on a 2025-11-25
    /// session): nothing more is sent for it (cancellation.mdx).
    Cancelled,
}

impl Outcome {
    /// The reply, unless the request was cancelled.
    pub fn into_reply(self) -> Option<Reply> {
        match self {
            Outcome::Reply(r) => Some(r),
            Outcome::Cancelled => None,
        }
    }
}

/// A request whose handler has yet to run.
pub struct PendingCall {
    /// The request's span (disabled unless a subscriber records it).
    pub(crate) span: tracing::Span,
    pub(crate) streaming: Streaming,
    pub(crate) base: Base,
    pub(crate) kind: CallKind,
}

#[derive(Clone)]
pub(crate) struct Base {
    pub(crate) server: Server,
    pub(crate) id: RequestId,
    pub(crate) checked: Arc<Checked>,
    pub(crate) principal: Option<Principal>,
    pub(crate) session: Option<Arc<Session>>,
}

pub(crate) enum CallKind {
    Tool {
        entry: Arc<ToolEntry>,
        args: Value,
        mrtr: MrtrInput,
    },
    Prompt {
        entry: Arc<PromptEntry>,
        args: BTreeMap<String, String>,
        mrtr: MrtrInput,
    },
    Read {
        uri: String,
        handler: Arc<ReadHandler>,
        params: BTreeMap<String, String>,
        cache: CacheHint,
        mrtr: MrtrInput,
    },
    Complete {
        completer: Option<Arc<dyn Completer>>,
        req: CompletionRequest,
    },
    Listen {
        filter: Filter,
    },
    Task {
        op: crate::tasks::TaskOp,
        id: String,
    },
    Forward {
        hook: Arc<dyn crate::forward::Forward>,
        request: Box<crate::forward::ForwardRequest>,
    },
}

/// How many times a 2025-11-25 request may resume a handler that checkpointed.
const MAX_LOCAL_ROUNDS: usize = 64;

impl PendingCall {
    /// The request id.
    pub fn id(&self) -> &RequestId {
        &self.base.id
    }

    /// Whether the call may stream messages before its response.
    pub fn streaming(&self) -> Streaming {
        self.streaming
    }

    /// A `subscriptions/listen` call as a stream of messages, for transports that can
    /// drive a stream directly; any other call is given back (boxed: the rare path).
    pub fn into_listen(self) -> Result<crate::listen::ListenStream, Box<PendingCall>> {
        match self.kind {
            CallKind::Listen { filter } => Ok(crate::listen::ListenStream::new(
                self.base.server.clone(),
                self.base.id.clone(),
                filter,
            )),
            kind => Err(Box::new(PendingCall {
                span: self.span,
                streaming: self.streaming,
                base: self.base,
                kind,
            })),
        }
    }

    /// The 2025-11-25 session the call belongs to, if any.
    pub fn session(&self) -> Option<&Arc<Session>> {
        self.base.session.as_ref()
    }

    /// Runs the handler. Notifications (and, on a 2025-11-25 session, requests to the
    /// client) go to `outbound`; the response is returned. Dropping the future cancels
    /// the handler.
    ///
    /// The future is boxed once here, sized for its kind of request: a long-lived
    /// `subscriptions/listen` stream holds only what it needs.
    pub fn run(mut self, outbound: Outbound) -> Pin<Box<dyn Future<Output = Outcome> + Send>> {
        if self.span.is_disabled() {
            return self.run_untraced(outbound);
        }
        // Making the future runs none of the handler, so only polling it enters the
        // span; the span moves into the future rather than being cloned (each enter,
        // exit, clone and drop is a call into the subscriber).
        let span = std::mem::replace(&mut self.span, tracing::Span::none());
        let work = self.run_untraced(outbound);
        Box::pin(Traced {
            span,
            work: Some(work),
        })
    }

    fn run_untraced(self, outbound: Outbound) -> Pin<Box<dyn Future<Output = Outcome> + Send>> {
        let PendingCall { base, kind, .. } = self;
        match kind {
            CallKind::Listen { filter } => Box::pin(async move {
                Outcome::Reply(listen::run(&base.server, base.id.clone(), filter, outbound).await)
            }),
            CallKind::Tool { entry, args, mrtr } => Box::pin(guarded(base, move |base, cancel| {
                run_tool(base, entry, args, mrtr, outbound, cancel)
            })),
            kind => Box::pin(guarded(base, move |base, cancel| async move {
                match kind {
                    CallKind::Prompt { entry, args, mrtr } => {
                        run_prompt(&base, entry, args, mrtr, outbound, cancel).await
                    }
                    CallKind::Read {
                        uri,
                        handler,
                        params,
                        cache,
                        mrtr,
                    } => run_read(&base, uri, handler, params, cache, mrtr, outbound, cancel).await,
                    CallKind::Complete { completer, req } => {
                        run_complete(&base, completer, req, outbound, cancel).await
                    }
                    CallKind::Task { op, id } => match base.inner().tasks.clone() {
                        Some(tasks) => crate::tasks::serve(&base, &tasks, op, &id).await,
                        None => base.error(&ErrorObject::method_not_found("tasks")),
                    },
                    CallKind::Forward { hook, mut request } => {
                        if outbound.is_open()
                            && let Some(token) = &base.checked.meta.progress_token
                        {
                            request.progress = Some(crate::forward::ForwardProgress::new(
                                outbound.clone(),
                                token.clone(),
                            ));
                        }
                        let drive = crate::forward::Drive {
                            session: base.session.as_ref(),
                            outbound: &outbound,
                            ask_timeout: base.server.inner.ask_timeout,
                            cancel: cancel.token(),
                        };
                        match drive.run(&*hook, *request).await {
                            Ok(result) => Reply::result(&base.id, &result, None),
                            Err(e) => match e.refusal {
                                Some(reason) => Reply::refused(Some(&base.id), &e.error, reason),
                                None => base.error(&e.error),
                            },
                        }
                    }
                    CallKind::Tool { .. } | CallKind::Listen { .. } => {
                        Reply::error(Some(&base.id), &ErrorObject::internal("Internal error"))
                    }
                }
            })),
        }
    }
}

/// A traced call: the handler runs inside the request span, is dropped inside it (as
/// soon as it finishes, or when the call is cancelled), and how it ended is recorded on
/// the span. Unlike `tracing::Instrumented`, a call that finishes does not enter its span
/// once more to be dropped: one enter and exit per poll, nothing else.
struct Traced {
    span: tracing::Span,
    /// The handler; `None` once it has finished.
    work: Option<Pin<Box<dyn Future<Output = Outcome> + Send>>>,
}

impl Future for Traced {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Outcome> {
        let this = &mut *self;
        // Polled again after it finished: nothing more will come.
        let Some(work) = this.work.as_mut() else {
            return std::task::Poll::Pending;
        };
        let _entered = this.span.enter();
        let outcome = std::task::ready!(work.as_mut().poll(cx));
        this.work = None;
        if let Outcome::Reply(reply) = &outcome {
            crate::telemetry::finish(&this.span, reply);
        }
        std::task::Poll::Ready(outcome)
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        // Cancelled before it finished: what the handler drops belongs to its span.
        if let Some(work) = self.work.take() {
            let _entered = self.span.enter();
            drop(work);
        }
    }
}

/// Runs `work` with a cancellation token that fires when the future is dropped or, on a
/// 2025-11-25 session, when the request is cancelled (`notifications/cancelled`).
///
/// Outside a session nothing but dropping the future cancels a request (HTTP disconnect,
/// stdio `notifications/cancelled` handled by the transport), so only session calls
/// watch the token.
fn guarded<F, Fut>(base: Base, work: F) -> Guarded<Fut>
where
    F: FnOnce(Base, CallCancel) -> Fut,
    Fut: Future<Output = Reply>,
{
    let cancel = CallCancel::new();
    let watch = base.session.clone().map(|s| {
        let token = cancel.token().clone();
        s.track(base.id.clone(), token.clone());
        Watch {
            cancelled: Box::pin(token.cancelled_owned()),
            _tracked: TrackGuard(s, base.id.clone()),
        }
    });
    Guarded {
        _guard: cancel.clone().drop_guard(),
        work: work(base, cancel),
        watch,
    }
}

/// What a session call watches besides its handler: its token, fired by
/// `notifications/cancelled`.
struct Watch {
    cancelled: Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
    _tracked: TrackGuard,
}

pin_project_lite::pin_project! {
    /// A handler's future that ends with a cancellation reply when its request is
    /// cancelled. A plain struct rather than an `async` block, so the handler's future is
    /// stored once. Dropping it drops the handler, stops tracking the request and fires
    /// the token, in that order.
    struct Guarded<F> {
        #[pin]
        work: F,
        watch: Option<Watch>,
        _guard: CancelOnDrop,
    }
}

impl<F: Future<Output = Reply>> Future for Guarded<F> {
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Outcome> {
        let this = self.project();
        // The handler first: a reply that is ready wins over a cancellation.
        if let std::task::Poll::Ready(reply) = this.work.poll(cx) {
            return std::task::Poll::Ready(Outcome::Reply(reply));
        }
        if let Some(w) = this.watch
            && w.cancelled.as_mut().poll(cx).is_ready()
        {
            return std::task::Poll::Ready(Outcome::Cancelled);
        }
        std::task::Poll::Pending
    }
}

struct TrackGuard(Arc<Session>, RequestId);

impl Drop for TrackGuard {
    fn drop(&mut self) {
        self.0.untrack(&self.1);
    }
}

/// What running a handler came to.
enum Step<T, Fut> {
    Done(T),
    Execution(String),
    Stop(Reply),
    /// The handler turned its call into a task (`ctx.into_task`): its future goes on in
    /// the background.
    Detach(Box<Detached<Fut>>),
}

/// A handler's future that waits to go on as a task, with its context and the task.
struct Detached<Fut> {
    fut: Fut,
    ctx: Context,
    created: crate::tasks::Created,
}

impl Base {
    pub(crate) fn context(
        &self,
        method: &'static str,
        target: Option<&str>,
        outbound: Outbound,
        cancel: CallCancel,
        book: AskBook,
    ) -> Context {
        Context::new(ContextInner {
            id: self.id.clone(),
            method,
            target: target.map(Arc::from),
            checked: self.checked.clone(),
            log_level: match &self.session {
                Some(s) => s.log_level(),
                None => self.checked.log_level,
            },
            principal: self.principal.clone(),
            outbound,
            cancel,
            server: self.server.clone(),
            session: self.session.clone(),
            progress: Default::default(),
            asks: Mutex::new(book),
            task: crate::tasks::TaskSlot::default(),
        })
    }

    pub(crate) fn inner(&self) -> &ServerInner {
        &self.server.inner
    }

    fn legacy(&self) -> bool {
        self.session.is_some()
    }

    /// `_meta` spliced into results: serverInfo, on modern requests only.
    pub(crate) fn meta_bytes(&self) -> Option<&[u8]> {
        if self.legacy() {
            None
        } else {
            self.inner().server_meta.as_deref()
        }
    }

    pub(crate) fn error(&self, e: &ErrorObject) -> Reply {
        Reply::error(Some(&self.id), e)
    }

    /// Whether this request may run as a task: a 2026-07-28 request whose client
    /// declared the extension, on a server that offers it.
    pub(crate) fn tasks_allowed(&self) -> bool {
        !self.legacy()
            && self.inner().tasks.is_some()
            && self
                .checked
                .capabilities
                .has_extension(ferry_protocol::tasks::EXTENSION)
    }

    fn result_type(&self) -> Option<ResultType> {
        (!self.legacy()).then_some(ResultType::Complete)
    }

    pub(crate) fn bound<'a>(
        &'a self,
        method: &'static str,
        target: &'a str,
        args: &'a Value,
    ) -> Bound<'a> {
        Bound::new(
            self.principal.as_ref().map(Principal::id),
            method,
            target,
            args,
        )
    }

    /// A handler that went on after an ask stopped it for input (it dropped the ask's
    /// error with `.ok()`, `unwrap_or`, `let _ =` ...) would act without the answer it
    /// asked for: the call fails instead, naming the ask.
    fn swallowed_ask<T>(&self, ctx: &Context, outcome: &Result<T>) -> Option<Reply> {
        if matches!(outcome, Err(e) if matches!(e.kind, ErrorKind::Interrupt(_))) {
            return None;
        }
        let book = ctx.asks();
        let (key, _) = book.pending.first()?;
        tracing::error!(
            method = ctx.method(),
            ask = %key,
            "a handler went on after an ask stopped it for input; pass the ask's error on with `?`"
        );
        Some(self.error(&ErrorObject::internal(format!(
            "Internal error: the handler went on after the ask {key:?} stopped it for input (the ask's result must be passed on with `?`)"
        ))))
    }

    /// Runs a handler through the MRTR engine (modern) or with live asks (2025-11-25).
    #[allow(clippy::too_many_arguments)]
    async fn execute<T, F, Fut>(
        &self,
        method: &'static str,
        bound: &Bound<'_>,
        policy: StatePolicy,
        mrtr: MrtrInput,
        outbound: Outbound,
        cancel: CallCancel,
        f: F,
    ) -> Step<T, Fut>
    where
        F: Fn(Context) -> Fut,
        Fut: Future<Output = Result<T>> + Unpin,
    {
        let mut book = if self.legacy() || !mrtr.is_retry() {
            AskBook::default()
        } else {
            // Boxed: a first round (the common call) keeps a small future.
            match Box::pin(mrtr::open(self.inner(), bound, mrtr, policy)).await {
                Ok(b) => b,
                Err(e) => return Step::Stop(self.error(&e)),
            }
        };
        for _ in 0..MAX_LOCAL_ROUNDS {
            let ctx = self.context(
                method,
                Some(bound.target),
                outbound.clone(),
                cancel.clone(),
                book,
            );
            // A handler that panics before its future exists fails like one that panics
            // while polled (see `Watch`).
            let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(ctx.clone())));
            let mut fut = match made {
                Ok(fut) => fut,
                Err(payload) => {
                    crate::panic::discard_payload(payload);
                    return Step::Stop(
                        self.error(&crate::panic::handler_panicked(method, Some(bound.target))),
                    );
                }
            };
            let outcome = loop {
                match crate::tasks::Watch::new(fut, &ctx).await {
                    crate::tasks::Watched::Done(outcome) => break outcome,
                    crate::tasks::Watched::Detach(rest) => {
                        match crate::tasks::begin(self, &ctx).await {
                            Some(created) => {
                                return Step::Detach(Box::new(Detached {
                                    fut: rest,
                                    ctx,
                                    created,
                                }));
                            }
                            // Not stored: the handler's `into_task` returns the error.
                            None => fut = rest,
                        }
                    }
                }
            };
            if let Some(stop) = self.swallowed_ask(&ctx, &outcome) {
                return Step::Stop(stop);
            }
            let e = match outcome {
                Ok(v) => return Step::Done(v),
                Err(e) => e,
            };
            match e.kind {
                ErrorKind::Execution(m) => return Step::Execution(m),
                ErrorKind::Protocol(e) => return Step::Stop(self.error(&e)),
                ErrorKind::Refused(refused) => {
                    let (e, reason) = *refused;
                    return Step::Stop(Reply::refused(Some(&self.id), &e, reason));
                }
                ErrorKind::ResourceNotFound(uri) => {
                    return Step::Stop(
                        self.error(&crate::error::resource_not_found(&uri, self.legacy())),
                    );
                }
                ErrorKind::Interrupt(i) => match i.kind {
                    InterruptKind::Failed(e) => return Step::Stop(self.error(&e)),
                    InterruptKind::Checkpoint if self.legacy() => {
                        // No client round trip on a session: resume here.
                        let prev = std::mem::take(&mut *ctx.asks());
                        book = AskBook {
                            app_in: prev.app_out.or(prev.app_in),
                            ..AskBook::default()
                        };
                    }
                    kind if !self.legacy() => {
                        let prev = std::mem::take(&mut *ctx.asks());
                        return Step::Stop(
                            match mrtr::input_required(self.inner(), bound, prev, &kind) {
                                Ok(result) => Reply::result_sized(
                                    &self.id,
                                    &result,
                                    self.meta_bytes(),
                                    result.json_len_hint(),
                                ),
                                Err(e) => self.error(&e),
                            },
                        );
                    }
                    _ => {
                        return Step::Stop(self.error(&ErrorObject::internal(
                            "Internal error: the handler stopped for input on a session",
                        )));
                    }
                },
            }
        }
        Step::Stop(self.error(&ErrorObject::internal(
            "Internal error: the handler did not finish",
        )))
    }
}

/// Runs a tool.
async fn run_tool(
    base: Base,
    entry: Arc<ToolEntry>,
    args: Value,
    mrtr: MrtrInput,
    outbound: Outbound,
    cancel: CallCancel,
) -> Reply {
    let finish = |mut r: CallToolResult| {
        if r.is_error == Some(true) {
            crate::telemetry::tool_error("the tool reported an error (isError)");
        }
        r.result_type = base.result_type();
        Reply::result(&base.id, &r, base.meta_bytes())
    };
    if let Err(problems) = entry.input.validate(&args) {
        return finish(CallToolResult::error(format!(
            "Invalid arguments: {problems}"
        )));
    }
    if entry.task.is_some_and(|t| !t.when_ready) && base.tasks_allowed() {
        return crate::tasks::start(base, entry, args, mrtr).await;
    }
    let bound = base.bound(methods::TOOLS_CALL, &entry.def.name, &args);
    let step = base
        .execute(
            methods::TOOLS_CALL,
            &bound,
            entry.policy,
            mrtr,
            outbound,
            cancel,
            |ctx| entry.handler.call(ctx, &args),
        )
        .await;
    match step {
        Step::Done(result) => {
            if let Err(problem) = entry.check_output(&result) {
                tracing::error!(tool = %entry.def.name, %problem, "tool result does not match its outputSchema");
                return base.error(&ErrorObject::internal(
                    "Internal error: the tool's result does not match its outputSchema",
                ));
            }
            finish(result)
        }
        Step::Execution(message) => finish(CallToolResult::error(message)),
        Step::Stop(reply) => reply,
        Step::Detach(d) => {
            let Detached { fut, ctx, created } = *d;
            let reply = created.reply(&base);
            crate::tasks::spawn_detached(base.clone(), entry, args, ctx, fut, created);
            reply
        }
    }
}

async fn run_prompt(
    base: &Base,
    entry: Arc<PromptEntry>,
    args: BTreeMap<String, String>,
    mrtr: MrtrInput,
    outbound: Outbound,
    cancel: CallCancel,
) -> Reply {
    let args_json = serde_json::to_value(&args).unwrap_or_default();
    let bound = base.bound(methods::PROMPTS_GET, &entry.def.name, &args_json);
    let step = base
        .execute(
            methods::PROMPTS_GET,
            &bound,
            entry.policy,
            mrtr,
            outbound,
            cancel,
            |ctx| entry.handler.call(ctx, &args),
        )
        .await;
    match step {
        Step::Done(mut result) => {
            result.result_type = base.result_type();
            Reply::result(&base.id, &result, base.meta_bytes())
        }
        Step::Execution(message) => {
            tracing::warn!(prompt = %entry.def.name, %message, "prompt handler failed");
            base.error(&ErrorObject::internal(format!("Internal error: {message}")))
        }
        Step::Stop(reply) => reply,
        Step::Detach(_) => not_a_task(base),
    }
}

/// Only `tools/call` becomes a task; anything else reaching here is a bug.
fn not_a_task(base: &Base) -> Reply {
    base.error(&ErrorObject::internal(
        "Internal error: only tools/call can become a task",
    ))
}

#[allow(clippy::too_many_arguments)]
async fn run_read(
    base: &Base,
    uri: String,
    handler: Arc<ReadHandler>,
    params: BTreeMap<String, String>,
    cache: CacheHint,
    mrtr: MrtrInput,
    outbound: Outbound,
    cancel: CallCancel,
) -> Reply {
    let retry = mrtr.is_retry();
    let request = ResourceRequest { uri, params };
    let uri = &request.uri;
    let bound = base.bound(methods::RESOURCES_READ, uri, &Value::Null);
    let step = base
        .execute(
            methods::RESOURCES_READ,
            &bound,
            StatePolicy::default(),
            mrtr,
            outbound,
            cancel,
            |ctx| handler.call(ctx, &request),
        )
        .await;
    match step {
        Step::Done(contents) if contents.is_empty() => {
            base.error(&crate::error::resource_not_found(uri, base.legacy()))
        }
        Step::Done(contents) => {
            let mut result = ReadResourceResult::new(contents);
            result.result_type = base.result_type();
            if !base.legacy() {
                // Results of MRTR retries must not be cached (caching.mdx): the hints the
                // schema requires say so (stale at once, never shared).
                let hint = if retry {
                    CacheHint::new(0, CacheScope::Private)
                } else {
                    cache
                };
                result.ttl_ms = Some(hint.ttl_ms);
                result.cache_scope = Some(hint.scope);
            }
            Reply::result(&base.id, &result, base.meta_bytes())
        }
        Step::Execution(message) => {
            tracing::warn!(uri = %quote(uri), %message, "resource read failed");
            base.error(&ErrorObject::internal(format!("Internal error: {message}")))
        }
        Step::Stop(reply) => reply,
        Step::Detach(_) => not_a_task(base),
    }
}

async fn run_complete(
    base: &Base,
    completer: Option<Arc<dyn Completer>>,
    req: CompletionRequest,
    outbound: Outbound,
    cancel: CallCancel,
) -> Reply {
    let values = match completer {
        None => Vec::new(),
        Some(c) => {
            let ctx = base.context(
                methods::COMPLETION_COMPLETE,
                None,
                outbound,
                cancel,
                AskBook::default(),
            );
            let completed = AssertUnwindSafe(async move { c.complete(ctx, req).await })
                .catch_unwind()
                .await;
            let Ok(completed) = completed.map_err(crate::panic::discard_payload) else {
                return base.error(&crate::panic::handler_panicked(
                    methods::COMPLETION_COMPLETE,
                    None,
                ));
            };
            match completed {
                Ok(v) => v,
                Err(e) => {
                    return match e.kind {
                        ErrorKind::Protocol(e) => base.error(&e),
                        ErrorKind::Refused(refused) => {
                            Reply::refused(Some(&base.id), &refused.0, refused.1)
                        }
                        ErrorKind::ResourceNotFound(uri) => {
                            base.error(&crate::error::resource_not_found(&uri, base.legacy()))
                        }
                        ErrorKind::Execution(m) => {
                            base.error(&ErrorObject::internal(format!("Internal error: {m}")))
                        }
                        ErrorKind::Interrupt(_) => base.error(&ErrorObject::internal(
                            "Internal error: completion/complete cannot ask for input",
                        )),
                    };
                }
            }
        }
    };
    let total = values.len();
    let has_more = total > MAX_COMPLETION_VALUES;
    let values: Vec<String> = values.into_iter().take(MAX_COMPLETION_VALUES).collect();
    let result = CompleteResult {
        meta: None,
        result_type: base.result_type(),
        completion: Completion {
            values,
            total: Some(total as u64),
            has_more: Some(has_more),
        },
    };
    Reply::result(&base.id, &result, base.meta_bytes())
}

/// Transports drive calls on multi-threaded runtimes: the future must stay `Send`.
#[allow(dead_code)]
fn run_future_is_send(call: PendingCall) -> Pin<Box<dyn Future<Output = Outcome> + Send>> {
    call.run(Outbound::none())
}
