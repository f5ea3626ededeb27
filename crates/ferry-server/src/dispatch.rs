//! From one incoming message to what a transport sends back.
//!
//! [`Server::handle`] does everything that needs no waiting at once: it decodes the
//! message (params typed by method, in one pass), settles the request's era and the rules
//! that come with it (per-request `_meta` and headers on 2026-07-28, the session on
//! 2025-11-25), and then looks the method up in one table shared by both eras. Lists and
//! `server/discover` are answered from pre-serialized bytes; anything that runs a handler
//! becomes a [`PendingCall`] for the transport to drive, and dropping it cancels the
//! handler.

use ferry_protocol::quote::quote;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::sync::Arc;

use ferry_protocol::ErrorObject;
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::logging::LoggingLevel;
use ferry_protocol::methods::Method;
use ferry_protocol::notifications;
use ferry_protocol::request::{
    self, CallParams, CompleteParams, Incoming, MethodName, Params, Problem, ReadParams,
};
use ferry_protocol::version::ProtocolVersion;
use serde_json::Value;

use crate::completion::CompletionRequest;
use crate::deprecation::{self, Feature};
use crate::header_check;
use crate::listen;
use crate::mrtr::MrtrInput;
use crate::params::{Checked, check_meta};
use crate::principal::Principal;
use crate::refusal::{Attempt, Failure, Refusal};
use crate::reply::Reply;
use crate::run::{Base, CallKind, PendingCall, Streaming};
use crate::server::Server;
use crate::session::Session;
use crate::tasks::TaskOp;
use ferry_protocol::tasks::EXTENSION as TASKS_EXTENSION;

/// A resource's read handler, template variables and caching hints.
pub(crate) type ReadTarget = (
    Arc<crate::resource::ReadHandler>,
    BTreeMap<String, String>,
    crate::resource::CacheHint,
    Arc<[String]>,
);

/// The transport a request came over.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Transport {
    /// stdio: one connection for the life of the process.
    Stdio,
    /// Streamable HTTP, with the request's header fields (checked against the body; the
    /// `Mcp-Session-Id` of 2025-11-25 sessions is read from them).
    Http(http::HeaderMap),
    /// Any other channel (an in-process connection, a test), with no header rules.
    Other,
}

/// What the transport knows about a request besides its body.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestEnv {
    /// The authenticated principal, if an authentication layer set one.
    pub principal: Option<Principal>,
    /// The transport the request came over.
    pub transport: Transport,
    /// The 2025-11-25 session of this connection (stdio and other connection-oriented
    /// transports), once `initialize` succeeded.
    pub session: Option<Arc<Session>>,
    /// The session store could not be asked about the session this request names (set
    /// by [`Server::prepare_session`]).
    pub(crate) session_store_unavailable: bool,
}

impl RequestEnv {
    /// A request on a connection-oriented transport without header fields (stdio).
    pub fn stdio() -> Self {
        RequestEnv {
            principal: None,
            transport: Transport::Stdio,
            session: None,
            session_store_unavailable: false,
        }
    }

    /// A Streamable HTTP request with these header fields.
    pub fn http(headers: http::HeaderMap) -> Self {
        RequestEnv {
            principal: None,
            transport: Transport::Http(headers),
            session: None,
            session_store_unavailable: false,
        }
    }

    /// A request over another channel (in-process, tests): no header rules.
    pub fn other() -> Self {
        RequestEnv {
            principal: None,
            transport: Transport::Other,
            session: None,
            session_store_unavailable: false,
        }
    }

    /// The same request, from `principal`.
    pub fn with_principal(mut self, principal: Option<Principal>) -> Self {
        self.principal = principal;
        self
    }

    /// The same request, on the connection's 2025-11-25 `session`.
    pub fn with_session(mut self, session: Option<Arc<Session>>) -> Self {
        self.session = session;
        self
    }

    /// The HTTP header fields, on Streamable HTTP.
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        match &self.transport {
            Transport::Http(h) => Some(h),
            _ => None,
        }
    }

    /// The HTTP header fields, for editing (a layer that rewrites them).
    pub fn headers_mut(&mut self) -> Option<&mut http::HeaderMap> {
        match &mut self.transport {
            Transport::Http(h) => Some(h),
            _ => None,
        }
    }

    /// Whether [`Server::prepare_session`] could not reach the session store to look up
    /// the session this request names.
    pub fn session_store_unavailable(&self) -> bool {
        self.session_store_unavailable
    }

    pub(crate) fn is_http(&self) -> bool {
        matches!(self.transport, Transport::Http(_))
    }
}

/// What to do with one incoming message.
// Moved once per request; boxing the large variant would add an allocation to every call.
#[allow(clippy::large_enum_variant)]
pub enum Handled {
    /// Send this response now.
    Reply(Reply),
    /// A notification was accepted; nothing to send (HTTP: 202).
    Accepted,
    /// The client cancelled its request `id` (stdio `notifications/cancelled`).
    Cancel(RequestId),
    /// A JSON-RPC response from the client, which no request of this server awaits.
    UnexpectedResponse,
    /// A handler must run: drive [`PendingCall::run`].
    Pending(PendingCall),
    /// A 2025-11-25 `initialize` succeeded: send `reply`, and keep `session` for the
    /// connection (stdio) or announce its id in `Mcp-Session-Id` (HTTP).
    Initialized {
        /// The `InitializeResult` response.
        reply: Reply,
        /// The new session.
        session: Arc<Session>,
    },
}

/// The era a request belongs to, settled before its method is looked up.
enum Era {
    /// 2026-07-28: stateless, the facts in its own `_meta`.
    Modern,
    /// 2025-11-25: part of this session.
    Legacy(Arc<Session>),
}

impl Server {
    /// Handles one message (a JSON-RPC request or notification, as bytes).
    ///
    /// Everything that needs no handler is answered at once; otherwise a
    /// [`PendingCall`] is returned for the transport to drive.
    pub fn handle(&self, body: &[u8], env: RequestEnv) -> Handled {
        match request::decode(body) {
            Ok(Incoming::Request(req)) => {
                let id = req.id;
                let span = crate::telemetry::request_span(
                    req.method.as_str(),
                    req.params.name_value(),
                    &id,
                    req.params.meta(),
                    &env,
                );
                let handled = {
                    let _entered = span.enter();
                    match self.request(&id, req.method, req.params, env) {
                        Ok(h) => h,
                        Err(f) => Handled::Reply(Reply::failure(Some(&id), &f)),
                    }
                };
                match handled {
                    Handled::Pending(mut call) => {
                        call.span = span;
                        Handled::Pending(call)
                    }
                    Handled::Reply(reply) => {
                        crate::telemetry::finish(&span, &reply);
                        Handled::Reply(reply)
                    }
                    Handled::Initialized { reply, session } => {
                        crate::telemetry::finish(&span, &reply);
                        Handled::Initialized { reply, session }
                    }
                    other => other,
                }
            }
            Ok(Incoming::Notification { method, params }) => self
                .unknown_session(&env)
                .unwrap_or_else(|| self.notification(&method, params, &env)),
            Ok(Incoming::Response { id, result, error }) => self
                .unknown_session(&env)
                .unwrap_or_else(|| self.client_response(id, result, error, &env)),
            Err(refused) => {
                let reason = match refused.problem {
                    Problem::Parse => Refusal::Parse,
                    Problem::InvalidParams => Refusal::InvalidParams,
                    _ => Refusal::InvalidMessage,
                };
                Handled::Reply(Reply::refused(refused.id.as_ref(), &refused.error, reason))
            }
        }
    }

    /// A request is modern when its `_meta` names a protocol version, or (HTTP) its
    /// `MCP-Protocol-Version` header is not a legacy revision. Everything else belongs to
    /// a 2025-11-25 session (versioning.mdx, "Backwards compatibility").
    fn is_modern(&self, params: &Params<'_>, env: &RequestEnv) -> bool {
        if !self.inner.legacy {
            return true;
        }
        if params.meta().is_some_and(|m| m.protocol_version.is_some()) {
            return true;
        }
        match env
            .headers()
            .and_then(|h| h.get(ferry_protocol::headers::PROTOCOL_VERSION))
        {
            Some(v) => !v
                .to_str()
                .ok()
                .and_then(ProtocolVersion::parse)
                .is_some_and(ProtocolVersion::is_legacy),
            None => false,
        }
    }

    fn request(
        &self,
        id: &RequestId,
        method: MethodName<'_>,
        mut params: Params<'_>,
        env: RequestEnv,
    ) -> Attempt<Handled> {
        let (era, checked) = if self.is_modern(&params, &env) {
            let checked = self.modern_facts(&method, &mut params, &env)?;
            (Era::Modern, checked)
        } else {
            if method.known() == Some(Method::Initialize) {
                let Params::Initialize(p) = params else {
                    return Err(not_found(&method));
                };
                return self.initialize(id, &p, &env);
            }
            let session = self.legacy_session(&env)?;
            let checked = Checked {
                version: session.version(),
                capabilities: session.capabilities().clone(),
                log_level: session.log_level(),
                meta: params.take_meta().unwrap_or_default(),
                exact_arguments: None,
            };
            (Era::Legacy(session), checked)
        };
        self.route(id, method, params, env, era, checked)
    }

    /// The per-request rules of 2026-07-28, in the order the spec's probes expect:
    /// `_meta` present, header matches body, version supported, method known
    /// (basic/index.mdx and transports/streamable-http.mdx).
    fn modern_facts(
        &self,
        method: &MethodName<'_>,
        params: &mut Params<'_>,
        env: &RequestEnv,
    ) -> Attempt<Checked> {
        let inner = &*self.inner;
        if method.known() == Some(Method::Initialize)
            && params
                .meta()
                .and_then(|m| m.protocol_version.as_ref())
                .is_none()
        {
            // A 2025-11-25 client, and this server speaks only the modern revision: name
            // the versions it does speak (versioning.mdx).
            let requested = match params {
                Params::Initialize(p) => p.protocol_version.as_deref().unwrap_or(""),
                _ => "",
            };
            let mut e = ErrorObject::unsupported_version(&inner.supported_strs, requested);
            e.message = format!(
                "Unsupported protocol version: this server supports {} (no initialize handshake)",
                inner.supported_strs.join(", ")
            );
            return Err(Failure::refused(Refusal::UnsupportedVersion, e));
        }
        if let (Some(h), Some(v)) = (
            env.headers(),
            params.meta().and_then(|m| m.protocol_version.as_deref()),
        ) {
            header_check::check_version(h, v).map_err(header_failure)?;
        }
        let checked = check_meta(params.take_meta(), &inner.supported, &inner.supported_strs)?;
        if let Some(h) = env.headers() {
            let name = method
                .known()
                .and_then(Method::name_member)
                .map(|_| params.name_value());
            header_check::check_method_and_name(h, method.as_str(), name)
                .map_err(header_failure)?;
        }
        Ok(checked)
    }

    /// The one method table, for both eras.
    fn route(
        &self,
        id: &RequestId,
        method: MethodName<'_>,
        params: Params<'_>,
        env: RequestEnv,
        era: Era,
        checked: Checked,
    ) -> Attempt<Handled> {
        let inner = &*self.inner;
        let caps = &inner.capabilities;
        let (legacy, session) = match era {
            Era::Modern => (false, None),
            Era::Legacy(s) => (true, Some(s)),
        };
        let Some(m) = method.known() else {
            return Err(not_found(&method));
        };
        if (legacy && m.is_modern_only()) || (!legacy && m.is_legacy_only()) {
            return Err(not_found(&method));
        }
        let reply = |bytes: &[u8]| Ok(Handled::Reply(Reply::result_raw(id, bytes)));
        let empty = || Ok(Handled::Reply(Reply::result_raw(id, b"{}")));
        let streaming = if legacy {
            // A session's handler may send requests to the client on its stream.
            Streaming::Maybe
        } else if checked.meta.progress_token.is_some() || checked.log_level.is_some() {
            Streaming::Maybe
        } else {
            Streaming::Never
        };
        let pending = |kind: CallKind, streaming: Streaming, checked: Checked| {
            Ok(Handled::Pending(PendingCall {
                span: tracing::Span::none(),
                streaming,
                base: Base {
                    server: self.clone(),
                    id: id.clone(),
                    checked: Arc::new(checked),
                    principal: env.principal.clone(),
                    session: session.clone(),
                },
                kind,
            }))
        };
        if let Some(hook) = &inner.forward
            && crate::forward::is_forwarded(m)
            && offers(caps, m)
        {
            let task_method = matches!(
                m,
                Method::TasksGet | Method::TasksUpdate | Method::TasksCancel
            );
            if task_method && !checked.capabilities.has_extension(TASKS_EXTENSION) {
                return Err(missing_tasks_extension(m));
            }
            let mut client_capabilities = checked.capabilities.clone();
            if legacy && let Some(extensions) = client_capabilities.extensions.as_mut() {
                // A 2025-11-25 session is answered in full: a task could not reach it.
                extensions.remove(TASKS_EXTENSION);
            }
            let request = Box::new(crate::forward::ForwardRequest {
                method: m.as_str(),
                params: crate::forward::raw_params(params),
                principal: env.principal.clone(),
                client_capabilities,
                // Set where the request runs, beside its stream.
                progress: None,
            });
            let hook = hook.clone();
            return pending(CallKind::Forward { hook, request }, streaming, checked);
        }
        match (m, params) {
            (Method::Discover, _) => reply(&inner.discover),
            (
                Method::ToolsList
                | Method::PromptsList
                | Method::ResourcesList
                | Method::ResourcesTemplatesList,
                Params::List(p),
            ) => match self.list_page(m, p.cursor.as_deref(), legacy) {
                Some(page) => reply(&page.map_err(Failure::answered)?),
                None => Err(not_found(&method)),
            },
            (Method::ToolsCall, Params::Call(p)) if caps.tools.is_some() => {
                let CallParams {
                    name,
                    arguments,
                    exact_arguments,
                    input_responses,
                    request_state,
                    ..
                } = *p;
                let (entry, args) = self.tool_call_target(name.as_deref(), arguments)?;
                let checked = Checked {
                    exact_arguments,
                    ..checked
                };
                check_scopes(&entry.scopes, env.principal.as_ref())?;
                if entry.task.is_some_and(|t| t.required()) {
                    check_tasks_extension(legacy, &checked, &entry.def.name)?;
                }
                if !legacy && let Some(h) = env.headers() {
                    header_check::check_params(h, &entry.headers, &args).map_err(header_failure)?;
                }
                let mrtr = mrtr_input(legacy, request_state, input_responses);
                pending(CallKind::Tool { entry, args, mrtr }, streaming, checked)
            }
            (Method::PromptsGet, Params::Call(p)) if caps.prompts.is_some() => {
                let CallParams {
                    name,
                    arguments,
                    input_responses,
                    request_state,
                    ..
                } = *p;
                let (entry, args) = self.prompt_target(name.as_deref(), arguments)?;
                check_scopes(&entry.scopes, env.principal.as_ref())?;
                let mrtr = mrtr_input(legacy, request_state, input_responses);
                pending(CallKind::Prompt { entry, args, mrtr }, streaming, checked)
            }
            (Method::ResourcesRead, Params::Read(p)) if caps.resources.is_some() => {
                let ReadParams {
                    uri,
                    input_responses,
                    request_state,
                    ..
                } = *p;
                let uri = uri
                    .ok_or_else(|| Failure::invalid_params("Invalid params: uri is required"))?
                    .into_owned();
                let (handler, vars, cache, scopes) = self.find_resource(&uri).ok_or_else(|| {
                    Failure::answered(crate::error::resource_not_found(&uri, legacy))
                })?;
                check_scopes(&scopes, env.principal.as_ref())?;
                let mrtr = mrtr_input(legacy, request_state, input_responses);
                let kind = CallKind::Read {
                    uri,
                    handler,
                    params: vars,
                    cache,
                    mrtr,
                };
                pending(kind, streaming, checked)
            }
            (Method::CompletionComplete, Params::Complete(p)) if caps.completions.is_some() => {
                let (completer, req) = self.completion_target(*p)?;
                pending(
                    CallKind::Complete { completer, req },
                    Streaming::Never,
                    checked,
                )
            }
            (Method::SubscriptionsListen, Params::Listen(p)) => {
                let filter = listen::parse_filter(
                    p.notifications,
                    &checked.capabilities,
                    caps,
                    (inner.tasks.is_some() || inner.task_feed.is_some())
                        .then_some(env.principal.as_ref()),
                )?;
                pending(CallKind::Listen { filter }, Streaming::Always, checked)
            }
            (Method::TasksGet | Method::TasksUpdate | Method::TasksCancel, Params::Task(p))
                if inner.tasks.is_some() =>
            {
                if !checked.capabilities.has_extension(TASKS_EXTENSION) {
                    return Err(missing_tasks_extension(m));
                }
                let request::TaskParams {
                    task_id,
                    input_responses,
                    ..
                } = *p;
                let id = task_id
                    .ok_or_else(|| Failure::invalid_params("Invalid params: taskId is required"))?
                    .into_owned();
                let op = match m {
                    Method::TasksGet => TaskOp::Get,
                    Method::TasksUpdate => TaskOp::Update(input_responses),
                    _ => TaskOp::Cancel,
                };
                pending(CallKind::Task { op, id }, Streaming::Never, checked)
            }
            (Method::Ping, _) => empty(),
            (Method::LoggingSetLevel, Params::SetLevel(p)) => {
                let level = p
                    .level
                    .as_deref()
                    .and_then(LoggingLevel::parse)
                    .ok_or_else(|| Failure::invalid_params("Invalid params: unknown log level"))?;
                deprecation::warn_once(Feature::Logging);
                if let Some(s) = &session {
                    s.set_log_level(level);
                    self.session_changed(s);
                }
                empty()
            }
            (Method::ResourcesSubscribe | Method::ResourcesUnsubscribe, Params::Uri(p))
                if caps.resources.is_some() =>
            {
                let uri = p
                    .uri
                    .ok_or_else(|| Failure::invalid_params("Invalid params: uri is required"))?;
                if let Some(s) = &session {
                    let changed = if m == Method::ResourcesSubscribe {
                        s.subscribe(uri.into_owned())
                    } else {
                        s.unsubscribe(&uri)
                    };
                    self.session_changed(s);
                    if changed {
                        self.inner.hub.interest.touch();
                    }
                }
                empty()
            }
            _ => Err(not_found(&method)),
        }
    }

    fn notification(&self, method: &str, params: Option<&RawValue>, env: &RequestEnv) -> Handled {
        let session = self.session_of(env);
        match method {
            notifications::CANCELLED => {
                #[derive(serde::Deserialize)]
                struct Cancelled {
                    #[serde(rename = "requestId", default)]
                    request_id: Option<Value>,
                }
                let id = params
                    .and_then(|p| serde_json::from_str::<Cancelled>(p.get()).ok())
                    .and_then(|c| c.request_id)
                    .and_then(|v| RequestId::from_value(&v));
                match (id, session) {
                    (Some(id), Some(s)) if env.is_http() => {
                        s.cancel(&id);
                        Handled::Accepted
                    }
                    (Some(id), _) => Handled::Cancel(id),
                    (None, _) => {
                        tracing::debug!(
                            "ignoring a notifications/cancelled without a valid requestId"
                        );
                        Handled::Accepted
                    }
                }
            }
            ferry_protocol::legacy::INITIALIZED => {
                if let Some(s) = session {
                    s.mark_initialized();
                    self.session_changed(&s);
                }
                Handled::Accepted
            }
            _ => Handled::Accepted,
        }
    }

    fn client_response(
        &self,
        id: Option<RequestId>,
        result: Option<&RawValue>,
        error: Option<&RawValue>,
        env: &RequestEnv,
    ) -> Handled {
        let (Some(session), Some(id)) = (self.session_of(env), id) else {
            return Handled::UnexpectedResponse;
        };
        let answer = match (result, error) {
            (Some(r), _) => serde_json::from_str::<Value>(r.get())
                .map_err(|_| ErrorObject::internal("malformed result")),
            (None, Some(e)) => Err(serde_json::from_str::<ErrorObject>(e.get())
                .unwrap_or_else(|_| ErrorObject::internal("malformed error from the client"))),
            (None, None) => return Handled::UnexpectedResponse,
        };
        if !session.resolve(&id, answer) {
            tracing::debug!(%id, "response for no pending request ignored");
        }
        Handled::Accepted
    }

    /// The tool a `tools/call` names, and its arguments as an object.
    pub(crate) fn tool_call_target(
        &self,
        name: Option<&str>,
        arguments: Option<Value>,
    ) -> Attempt<(Arc<crate::tool::ToolEntry>, Value)> {
        let name =
            name.ok_or_else(|| Failure::invalid_params("Invalid params: name is required"))?;
        let entry = self
            .inner
            .tools
            .get(name)
            .ok_or_else(|| Failure::invalid_params(format!("Unknown tool: {}", quote(name))))?;
        let args = match arguments {
            None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
            Some(v @ Value::Object(_)) => v,
            Some(_) => {
                return Err(Failure::invalid_params(
                    "Invalid params: arguments must be an object",
                ));
            }
        };
        Ok((entry, args))
    }

    /// The prompt a `prompts/get` names, and its arguments, checking required ones.
    pub(crate) fn prompt_target(
        &self,
        name: Option<&str>,
        arguments: Option<Value>,
    ) -> Attempt<(Arc<crate::prompt::PromptEntry>, BTreeMap<String, String>)> {
        let name =
            name.ok_or_else(|| Failure::invalid_params("Invalid params: name is required"))?;
        let entry =
            self.inner.prompts.get(name).ok_or_else(|| {
                Failure::invalid_params(format!("Unknown prompt: {}", quote(name)))
            })?;
        let args: BTreeMap<String, String> = match arguments {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(v) => serde_json::from_value(v).map_err(|_| {
                Failure::invalid_params("Invalid params: prompt arguments must be strings")
            })?,
        };
        let missing: Vec<&str> = entry
            .required
            .iter()
            .filter(|r| !args.contains_key(r.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(Failure::invalid_params(format!(
                "Missing required arguments: {}",
                missing.join(", ")
            )));
        }
        Ok((entry, args))
    }

    /// One page of a list, modern or legacy shaped. `None` when the server does not offer
    /// that kind of list.
    pub(crate) fn list_page(
        &self,
        method: Method,
        cursor: Option<&str>,
        legacy: bool,
    ) -> Option<Result<bytes::Bytes, ErrorObject>> {
        let inner = &*self.inner;
        let caps = &inner.capabilities;
        Some(match method {
            Method::ToolsList if caps.tools.is_some() => {
                inner.tools.page(cursor, &inner.tools_shape, legacy)
            }
            Method::PromptsList if caps.prompts.is_some() => {
                inner.prompts.page(cursor, &inner.prompts_shape, legacy)
            }
            Method::ResourcesList if caps.resources.is_some() => {
                inner.resources.page(cursor, &inner.resources_shape, legacy)
            }
            Method::ResourcesTemplatesList if caps.resources.is_some() => {
                inner.templates.page(cursor, &inner.templates_shape, legacy)
            }
            _ => return None,
        })
    }

    /// The handler of a fixed resource or the first template matching `uri`.
    pub(crate) fn find_resource(&self, uri: &str) -> Option<ReadTarget> {
        let inner = &*self.inner;
        if let Some(entry) = inner.resources.get(uri) {
            return Some((
                entry.handler.clone(),
                BTreeMap::new(),
                entry.cache.unwrap_or(inner.read_cache),
                entry.scopes.clone(),
            ));
        }
        let snap = inner.templates.snapshot();
        snap.items.values().find_map(|t| {
            t.template.matches(uri).map(|p| {
                (
                    t.handler.clone(),
                    p,
                    t.cache.unwrap_or(inner.read_cache),
                    t.scopes.clone(),
                )
            })
        })
    }

    pub(crate) fn completion_target(
        &self,
        params: CompleteParams,
    ) -> Attempt<(
        Option<Arc<dyn crate::completion::Completer>>,
        CompletionRequest,
    )> {
        let bad = |m: &str| Failure::invalid_params(format!("Invalid params: {m}"));
        let reference = params.reference.ok_or_else(|| bad("ref is required"))?;
        let argument = params.argument.ok_or_else(|| bad("argument is required"))?;
        let arg_name = argument
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("argument.name is required"))?
            .to_owned();
        let value = argument
            .get("value")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("argument.value is required"))?
            .to_owned();
        let ctx_args: BTreeMap<String, String> = params
            .context
            .and_then(|c| c.get("arguments").cloned())
            .and_then(|a| serde_json::from_value(a).ok())
            .unwrap_or_default();
        let completer = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("ref.name is required"))?;
                let p = self.inner.prompts.get(name).ok_or_else(|| {
                    Failure::invalid_params(format!("Unknown prompt: {}", quote(name)))
                })?;
                p.completers.get(&arg_name).cloned()
            }
            Some("ref/resource") => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("ref.uri is required"))?;
                let t = self.inner.templates.get(uri).ok_or_else(|| {
                    Failure::invalid_params(format!("Unknown resource template: {}", quote(uri)))
                })?;
                t.completers.get(&arg_name).cloned()
            }
            _ => return Err(bad("ref.type must be ref/prompt or ref/resource")),
        };
        Ok((
            completer,
            CompletionRequest {
                argument: arg_name,
                value,
                context: ctx_args,
            },
        ))
    }
}

/// Whether the server advertises the feature `method` belongs to.
fn offers(caps: &ferry_protocol::capabilities::ServerCapabilities, method: Method) -> bool {
    match method {
        Method::ToolsList | Method::ToolsCall => caps.tools.is_some(),
        Method::PromptsList | Method::PromptsGet => caps.prompts.is_some(),
        Method::CompletionComplete => caps.completions.is_some(),
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => caps
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(TASKS_EXTENSION)),
        _ => caps.resources.is_some(),
    }
}

/// -32021 for a `tasks/*` request whose client capabilities lack the extension.
fn missing_tasks_extension(method: Method) -> Box<Failure> {
    Failure::refused(
        Refusal::MissingCapability,
        ferry_protocol::tasks::missing_extension(format!(
            "{} needs the {TASKS_EXTENSION} extension in the request's client capabilities",
            method.as_str()
        )),
    )
}

/// -32601 for a method this server does not serve (in this era).
fn not_found(method: &MethodName<'_>) -> Box<Failure> {
    Failure::refused(
        Refusal::MethodNotFound,
        ErrorObject::method_not_found(method.as_str()),
    )
}

fn header_failure(e: ErrorObject) -> Box<Failure> {
    Failure::refused(Refusal::HeaderMismatch, e)
}

/// Refuses a call to a tool that runs only as a task from a request that cannot have one
/// (ext-tasks/tasks.md: -32021 naming the extension).
fn check_tasks_extension(legacy: bool, checked: &Checked, tool: &str) -> Attempt<()> {
    if !legacy && checked.capabilities.has_extension(TASKS_EXTENSION) {
        return Ok(());
    }
    Err(Failure::refused(
        Refusal::MissingCapability,
        ferry_protocol::tasks::missing_extension(format!(
            "Tool {tool} runs only as a task: declare the {TASKS_EXTENSION} extension in the request's client capabilities"
        )),
    ))
}

/// What a retry carries; 2025-11-25 requests have no rounds, so nothing.
fn mrtr_input(legacy: bool, state: Option<String>, responses: Option<Value>) -> MrtrInput {
    if legacy {
        MrtrInput::default()
    } else {
        MrtrInput { state, responses }
    }
}

/// Refuses a request whose principal lacks a scope the operation needs.
fn check_scopes(required: &[String], principal: Option<&Principal>) -> Attempt<()> {
    if required.is_empty() {
        return Ok(());
    }
    let Some(principal) = principal else {
        return Err(Failure::refused(
            Refusal::Unauthenticated,
            ErrorObject::new(
                ferry_protocol::ErrorCode::INVALID_REQUEST,
                "Unauthorized: this operation needs an authenticated user",
            ),
        ));
    };
    let missing = principal.scopes().missing(required);
    if missing.is_empty() {
        return Ok(());
    }
    let mut e = ErrorObject::new(
        ferry_protocol::ErrorCode::INVALID_REQUEST,
        format!(
            "Forbidden: insufficient scope (this operation needs {})",
            required.join(" ")
        ),
    );
    e.data = Some(serde_json::json!({ "requiredScopes": required }));
    Err(Failure::refused(
        Refusal::InsufficientScope(required.iter().cloned().collect()),
        e,
    ))
}
