//! The context a handler receives: who asked, with what capabilities, and the means to
//! report progress, log, notice cancellation and ask the client for input.

use std::sync::Arc;

use bytes::Bytes;
use ferry_form::Form;
use ferry_protocol::common::Implementation;
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::jsonrpc::encode_notification;
use ferry_protocol::legacy::ElicitationCompleteNotificationParams;
use ferry_protocol::logging::LoggingLevel;
use ferry_protocol::logging::LoggingMessageNotificationParams;
use ferry_protocol::meta::RequestMeta;
use ferry_protocol::notifications;
#[allow(deprecated)]
use ferry_protocol::roots::Root;
#[allow(deprecated)]
use ferry_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};
use ferry_protocol::{ClientCapabilities, ProtocolVersion};
use parking_lot::{Mutex, MutexGuard};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ask::{Ask, AskBook, AskOutput, AskSet, AskSpec, Elicitation, Interrupt, UrlConsent};
use crate::deprecation;
use crate::error::Error;
use crate::outbound::Outbound;
use crate::principal::Principal;
use crate::server::Server;

/// Everything a handler may need about the request it serves.
///
/// Cheap to clone; clones share the request's state. It is only valid for the request it
/// was made for: Ferry never carries anything from one request into another.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

pub(crate) struct ContextInner {
    pub(crate) id: RequestId,
    pub(crate) method: &'static str,
    /// The tool, prompt or resource being served.
    pub(crate) target: Option<Arc<str>>,
    pub(crate) checked: Arc<crate::params::Checked>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) principal: Option<Principal>,
    pub(crate) outbound: Outbound,
    pub(crate) cancel: crate::cancel::CallCancel,
    pub(crate) server: Server,
    pub(crate) session: Option<std::sync::Arc<crate::session::Session>>,
    pub(crate) progress: crate::outbound::ProgressReports,
    pub(crate) asks: Mutex<AskBook>,
    /// The task this call became, if it became one.
    pub(crate) task: crate::tasks::TaskSlot,
}

impl Context {
    pub(crate) fn new(inner: ContextInner) -> Self {
        Context {
            inner: Arc::new(inner),
        }
    }

    /// The arguments of the `tools/call` as sent, when a number in them is beyond what a
    /// `serde_json::Value` holds exactly (an integer beyond 64 bits, more digits than an
    /// `f64` carries, or beyond its range); `None` otherwise. The arguments the handler
    /// gets as a `Value` hold such a number as the nearest `f64` (the largest finite one
    /// beyond the range); a handler whose arguments type asks for the exact number
    /// (`Box<RawValue>`, `u128`, `i128`) is given it from this text.
    pub fn exact_arguments(&self) -> Option<&serde_json::value::RawValue> {
        self.inner.checked.exact_arguments.as_deref()
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The name of the tool or prompt, or the URI of the resource, being served; `None`
    /// for requests without one (e.g. `completion/complete`).
    pub fn target(&self) -> Option<&str> {
        self.inner.target.as_deref()
    }

    /// The method being served, e.g. `tools/call`.
    pub fn method(&self) -> &'static str {
        self.inner.method
    }

    /// The protocol revision of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.checked.version
    }

    /// The request's `_meta`, as sent.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.checked.meta
    }

    /// The client capabilities declared on this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.checked.capabilities
    }

    /// The client's self-description, if it sent one. Unverified: display and logs only.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.checked.meta.client_info.as_ref()
    }

    /// The authenticated principal, set by an authentication layer; `None` without one.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }

    /// The server serving this request, e.g. to publish a resource update.
    pub fn server(&self) -> &Server {
        &self.inner.server
    }

    /// Whether the client cancelled the request (stdio `notifications/cancelled`, HTTP
    /// disconnect) or, once the call is a task, the task (`tasks/cancel`, its TTL).
    /// Ferry also drops the handler's future on cancellation; this is for work the
    /// handler spawned elsewhere.
    pub fn is_cancelled(&self) -> bool {
        match self.inner.task.run() {
            Some(run) => run.cancellation().is_cancelled(),
            None => self.inner.cancel.is_cancelled(),
        }
    }

    /// Completes when the request (or, once the call is a task, the task) is cancelled.
    pub async fn cancelled(&self) {
        self.cancel_token().cancelled().await
    }

    /// A token cancelled with the request (or, once the call is a task, with the task),
    /// to hand to spawned work.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel_token().clone()
    }

    fn cancel_token(&self) -> &CancellationToken {
        match self.inner.task.run() {
            Some(run) => run.cancellation(),
            None => self.inner.cancel.token(),
        }
    }

    /// Turns this `tools/call` into a task (Tasks extension): the client gets a
    /// `CreateTaskResult` at once and the handler goes on in the background from here.
    /// Gather the input the call needs first (its asks are MRTR rounds until here; in
    /// the task they wait for `tasks/update`), then `ctx.into_task(TaskOptions::new()).await?`.
    ///
    /// When the request cannot become a task (its client did not declare the extension,
    /// it is not a 2026-07-28 `tools/call`, or the server has no tasks), the handler
    /// simply goes on in the call. Call it from the handler's own future, not from work
    /// it spawned. It fails only when the task cannot be stored.
    ///
    /// ```
    /// use ferry_server::{tool, Context, Elicitation, Form, TaskMode, TaskOptions};
    /// # use serde::Deserialize;
    /// #[derive(Deserialize, Form)]
    /// struct Go { go: bool }
    ///
    /// let deploy = tool("deploy").task_when_ready(TaskMode::Optional).handler(|ctx: Context| async move {
    ///     if !matches!(ctx.elicit::<Go>("Deploy now?").await?, Elicitation::Accept(Go { go: true })) {
    ///         return Ok("not deployed".to_owned());
    ///     }
    ///     ctx.into_task(TaskOptions::new().status_message("deploying")).await?;
    ///     // ... the long part, in the background ...
    ///     Ok("deployed".to_owned())
    /// });
    /// # let _ = deploy;
    /// ```
    pub async fn into_task(&self, options: crate::tasks::TaskOptions) -> Result<(), Interrupt> {
        crate::tasks::into_task(self, options).await
    }

    /// The id of the task this call runs as, once it is one.
    pub fn task_id(&self) -> Option<&str> {
        self.inner.task.run().map(|r| r.id.as_str())
    }

    /// Reports progress, if the client asked for it with a `progressToken`. `progress`
    /// must grow with every call; a value that does not is dropped (progress.mdx).
    /// Inside a task it becomes the task's `statusMessage` instead.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(run) = self.inner.task.run() {
            crate::tasks::progress(run, progress, total, message).await;
            return;
        }
        let Some(token) = &self.inner.checked.meta.progress_token else {
            return;
        };
        let Some(notification) = self.inner.progress.next(token, progress, total, message) else {
            return;
        };
        if self.inner.outbound.is_open() {
            self.inner.outbound.send(notification).await;
        }
    }

    /// Sends a log message to the client (deprecated feature: prefer stderr or
    /// OpenTelemetry). On a 2026-07-28 request it is sent only when the request's `_meta`
    /// carries `io.modelcontextprotocol/logLevel` and `level` is at or above it, and only on
    /// this request's own stream.
    #[deprecated(
        since = "0.1.0",
        note = "MCP logging is deprecated in 2026-07-28 (SEP-2577): log to stderr (stdio) or OpenTelemetry instead"
    )]
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        let Some(min) = self.inner.log_level else {
            return;
        };
        if level < min {
            return;
        }
        deprecation::warn_once(deprecation::Feature::Logging);
        let params = LoggingMessageNotificationParams {
            meta: None,
            level,
            logger: logger.map(str::to_owned),
            data,
        };
        self.notify(notifications::MESSAGE, &params).await;
    }

    async fn notify<P: Serialize>(&self, method: &str, params: &P) {
        if !self.inner.outbound.is_open() {
            return;
        }
        let bytes = encode_notification(method, params);
        self.inner.outbound.send(Bytes::from(bytes)).await;
    }

    /// Asks the user to fill in a form described by `T` (elicitation, form mode).
    ///
    /// Await it for the answer; chain [`Ask::key`] first to name it. Accept, decline and
    /// cancel all come back as values. Fails with -32021 when this request's client did
    /// not declare form elicitation.
    pub fn elicit<T: Form + Send + 'static>(
        &self,
        message: impl Into<String>,
    ) -> Ask<Elicitation<T>> {
        Ask::new(self.clone(), crate::ask::form_spec::<T>(message.into()))
    }

    /// Asks the user to fill in a form built at run time. The schema must be in the
    /// spec's flat primitive subset ([`ferry_form::FormSchema::from_value`] checks it).
    pub fn elicit_with(
        &self,
        message: impl Into<String>,
        schema: ferry_form::FormSchema,
    ) -> Ask<Elicitation<crate::ask::FormAnswers>> {
        Ask::new(
            self.clone(),
            AskSpec::Form {
                message: message.into(),
                schema: std::sync::Arc::new(crate::ask::PreparedSchema::new(schema)),
            },
        )
    }

    /// Asks the user to open `url` and finish an interaction there (elicitation, URL
    /// mode), for anything that must not pass through the client: credentials, payments,
    /// third-party authorization. Fails with -32021 when the client did not declare URL
    /// mode.
    pub fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Ask<UrlConsent> {
        Ask::new(
            self.clone(),
            AskSpec::Url {
                message: message.into(),
                url: url.into(),
            },
        )
    }

    /// Asks the client's model for a completion (sampling).
    #[deprecated(
        since = "0.1.0",
        note = "MCP sampling is deprecated in 2026-07-28 (SEP-2577): call your LLM provider's API directly; with the `llm` feature, give the server a provider (`ServerBuilder::sampling`) and call `ctx.generate`, which has the same shape"
    )]
    #[allow(deprecated)]
    pub fn sample(&self, params: CreateMessageRequestParams) -> Ask<CreateMessageResult> {
        Ask::new(
            self.clone(),
            crate::ask::sampling_spec(params, &self.inner.checked.capabilities),
        )
    }

    /// Asks a model for a completion under the server's
    /// [`SamplingPolicy`](crate::SamplingPolicy): the LLM provider the server was given
    /// answers, or the client's sampling (the deprecated path) when the policy prefers it
    /// and the request declared it. The same shape as [`Context::sample`], so migrating a
    /// handler is a rename. A provider's answer is kept across MRTR rounds.
    #[cfg(feature = "llm")]
    #[allow(deprecated)]
    pub fn generate(&self, params: CreateMessageRequestParams) -> Ask<CreateMessageResult> {
        Ask::new(
            self.clone(),
            crate::ask::sampling_spec(params, &self.inner.checked.capabilities),
        )
    }

    /// Asks the client for its roots.
    #[deprecated(
        since = "0.1.0",
        note = "MCP roots are deprecated in 2026-07-28 (SEP-2577): pass directories and files as tool parameters, resource URIs or server configuration"
    )]
    #[allow(deprecated)]
    pub fn roots(&self) -> Ask<Vec<Root>> {
        deprecation::warn_once(deprecation::Feature::Roots);
        Ask::new(self.clone(), AskSpec::Roots)
    }

    /// Awaits several asks at once, so those without answers go to the client in one
    /// round: `let (a, b) = ctx.ask_all((ask_a, ask_b)).await?;`.
    pub async fn ask_all<S: AskSet>(&self, asks: S) -> Result<S::Output, Interrupt> {
        asks.resolve_all().await
    }

    /// Tells a 2025-11-25 client that the URL-mode interaction asked under `key` is
    /// finished (`notifications/elicitation/complete`). Does nothing on 2026-07-28
    /// requests, where the retry carries that news.
    pub async fn complete_url_elicitation(&self, key: &str) {
        let Some(session) = &self.inner.session else {
            return;
        };
        let Some(id) = self.asks().url_ids.get(key).cloned() else {
            return;
        };
        let params = ElicitationCompleteNotificationParams { elicitation_id: id };
        let bytes = Bytes::from(encode_notification(
            ferry_protocol::legacy::ELICITATION_COMPLETE,
            &params,
        ));
        if self.inner.outbound.is_open() {
            self.inner.outbound.send(bytes).await;
        } else {
            session.send_standalone(bytes);
        }
    }

    /// What the handler carried over from the previous round with [`Context::carry`] or
    /// [`Context::checkpoint`], sealed in the `requestState` (2026-07-28) or kept in
    /// memory (2025-11-25). `None` in a first round, or when it does not parse as `T`.
    ///
    /// This is per-call progress, not application state: for that, see
    /// [`crate::State`].
    pub fn carried<T: DeserializeOwned>(&self) -> Option<T> {
        let book = self.asks();
        book.app_in.as_ref().and_then(|v| T::deserialize(v).ok())
    }

    /// Carries `value` into the next round of this call (sealed with the rest of the
    /// `requestState`, so the client can neither read nor change it). Keep it small: it
    /// travels with every retry.
    pub fn carry<T: Serialize>(&self, value: &T) -> Result<(), Error> {
        let value = serde_json::to_value(value)
            .map_err(|e| Error::execution(format!("carried state could not be serialized: {e}")))?;
        self.asks().app_out = Some(value);
        Ok(())
    }

    /// Carries `value` and ends this round with a state-only `InputRequiredResult`: the
    /// client retries at once, possibly on another instance, and the handler resumes from
    /// [`Context::carried`]. Use it to shed load or split long work. Return the result:
    /// `return Err(ctx.checkpoint(&progress))`.
    pub fn checkpoint<T: Serialize>(&self, value: &T) -> Error {
        match self.carry(value) {
            Ok(()) => Error::from(Interrupt::checkpoint()),
            Err(e) => e,
        }
    }

    pub(crate) fn asks(&self) -> MutexGuard<'_, AskBook> {
        self.inner.asks.lock()
    }

    pub(crate) fn inner(&self) -> &ContextInner {
        &self.inner
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.inner.id)
            .field("method", &self.inner.method)
            .field("principal", &self.inner.principal)
            .finish_non_exhaustive()
    }
}

impl<T: AskOutput> Ask<T> {
    /// Shorthand for awaiting: resolves this ask alone.
    pub async fn get(self) -> Result<T, Interrupt> {
        self.await
    }
}
