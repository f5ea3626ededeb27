//! Serving 2025-11-25 clients: `initialize`, sessions, and the methods 2026-07-28 removed,
//! on the same handlers as modern requests (DIGEST §3.4).

use std::sync::Arc;

use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::logging::LoggingLevel;
use ferry_protocol::version::ProtocolVersion;
use ferry_protocol::{ClientCapabilities, ErrorCode, ErrorObject};
use serde_json::{Value, json};

use tokio::sync::broadcast::error::RecvError;

use crate::deprecation::{self, Feature};
use crate::dispatch::{Handled, RequestEnv};
use crate::hub::Event;
use crate::mrtr::MrtrInput;
use crate::params::{Checked, Params};
use crate::reply::Reply;
use crate::run::{Base, CallKind, PendingCall, Streaming};
use crate::server::Server;
use crate::session::{LEGACY_VERSIONS, Session, new_session_id};

type Outcome = Result<Handled, (ErrorObject, u16)>;

impl Server {
    /// The 2025-11-25 session a message belongs to: the connection's (stdio) or the one
    /// named by `Mcp-Session-Id` (HTTP), if it is live.
    pub(crate) fn session_of(&self, env: &RequestEnv) -> Option<Arc<Session>> {
        if let Some(s) = &env.session {
            return (!s.is_closed()).then(|| s.clone());
        }
        let id = env
            .headers
            .as_ref()?
            .get(ferry_protocol::headers::SESSION_ID)?
            .to_str()
            .ok()?;
        let s = self.inner.sessions.get(id)?;
        (s.principal() == env.principal.as_ref()).then_some(s)
    }

    /// Ends the HTTP session `id` (`DELETE`). Returns whether it existed.
    pub fn end_session(&self, id: &str) -> bool {
        self.inner.sessions.remove(id).is_some()
    }

    /// The live HTTP session `id`, if any.
    pub fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.inner.sessions.get(id)
    }

    /// How many HTTP sessions are live.
    pub fn session_count(&self) -> usize {
        self.inner.sessions.len()
    }

    /// Forwards change notifications to a 2025-11-25 session's standalone stream (the GET
    /// stream on HTTP, stdout on stdio) until the session ends: list changes, and updates
    /// of the resources it subscribed to. Transports call it once per new session.
    pub fn watch_session(&self, session: &Arc<Session>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let server = self.clone();
        let session = session.clone();
        let mut events = self.inner.hub.subscribe();
        runtime.spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = session.closed() => break,
                    _ = server.shutting_down() => break,
                    e = events.recv() => e,
                };
                let (method, params) = match event {
                    Ok(Event::ToolsChanged) => ("notifications/tools/list_changed", json!({})),
                    Ok(Event::PromptsChanged) => ("notifications/prompts/list_changed", json!({})),
                    Ok(Event::ResourcesChanged) => {
                        ("notifications/resources/list_changed", json!({}))
                    }
                    Ok(Event::ResourceUpdated(uri)) if session.is_subscribed(&uri) => (
                        "notifications/resources/updated",
                        json!({ "uri": uri.as_ref() }),
                    ),
                    Ok(Event::ResourceUpdated(_)) | Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                };
                let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
                session.send_standalone(bytes::Bytes::from(
                    serde_json::to_vec(&msg).unwrap_or_default(),
                ));
            }
        });
    }

    pub(crate) fn legacy_request(
        &self,
        id: &RequestId,
        method: &str,
        params: Params<'_>,
        env: RequestEnv,
    ) -> Outcome {
        if method == "initialize" {
            return self.initialize(id, params, env);
        }
        let Some(session) = self.session_of(&env) else {
            if let Some(h) = &env.headers {
                if h.contains_key(ferry_protocol::headers::SESSION_ID) {
                    return Err((
                        ErrorObject::new(ErrorCode::INVALID_REQUEST, "Session not found"),
                        404,
                    ));
                }
                return Err((
                    ErrorObject::invalid_params(
                        "Bad request: send MCP-Protocol-Version and _meta (2026-07-28), or initialize first (2025-11-25)",
                    ),
                    400,
                ));
            }
            return Err((
                ErrorObject::invalid_params(
                    "Invalid params: _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities is required (or send initialize first for 2025-11-25)",
                ),
                400,
            ));
        };
        if let Some(h) = &env.headers {
            // After initialize every request names the negotiated version (absent means
            // 2025-03-26, accepted as compatible).
            if let Some(v) = h.get(ferry_protocol::headers::PROTOCOL_VERSION) {
                let ok =
                    v.to_str().ok().and_then(ProtocolVersion::parse) == Some(session.version());
                if !ok {
                    let requested = v.to_str().unwrap_or("");
                    return Err((
                        ferry_protocol::legacy::unsupported_version_error(
                            &[session.version().as_str()],
                            requested,
                        ),
                        400,
                    ));
                }
            }
        }
        let inner = &*self.inner;
        let checked = Checked {
            version: session.version(),
            capabilities: session.capabilities().clone(),
            log_level: session.log_level(),
            meta: params.meta.clone().unwrap_or_default(),
        };
        let reply_value = |v: Value| Ok(Handled::Reply(Reply::result(id, &v, None)));
        let base = |checked: Checked| Base {
            server: self.clone(),
            id: id.clone(),
            checked: Arc::new(checked),
            principal: env.principal.clone(),
            session: Some(session.clone()),
        };
        let pending = |kind: CallKind, checked: Checked| {
            Ok(Handled::Pending(PendingCall {
                // A session's handler may send requests to the client on its stream.
                streaming: Streaming::Maybe,
                base: base(checked),
                kind,
            }))
        };
        match method {
            "ping" => reply_value(json!({})),
            "logging/setLevel" => {
                let level = params
                    .level
                    .as_deref()
                    .and_then(LoggingLevel::parse)
                    .ok_or_else(|| {
                        (
                            ErrorObject::invalid_params("Invalid params: unknown log level"),
                            200,
                        )
                    })?;
                deprecation::warn_once(Feature::Logging);
                session.set_log_level(level);
                reply_value(json!({}))
            }
            "resources/subscribe" | "resources/unsubscribe"
                if inner.capabilities.resources.is_some() =>
            {
                let uri = params.uri.ok_or_else(|| {
                    (
                        ErrorObject::invalid_params("Invalid params: uri is required"),
                        200,
                    )
                })?;
                if method == "resources/subscribe" {
                    session.subscribe(uri.into_owned());
                } else {
                    session.unsubscribe(&uri);
                }
                reply_value(json!({}))
            }
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                match self.list_page(method, params.cursor.as_deref(), true) {
                    Some(page) => Ok(Handled::Reply(Reply::result_raw(
                        id,
                        &page.map_err(|e| (e, 200))?,
                    ))),
                    None => Err((ErrorObject::method_not_found(method), 404)),
                }
            }
            "tools/call" if inner.capabilities.tools.is_some() => {
                let (entry, args) =
                    self.tool_call_target(params.name.as_deref(), params.arguments)?;
                pending(
                    CallKind::Tool {
                        entry,
                        args,
                        mrtr: MrtrInput::default(),
                    },
                    checked,
                )
            }
            "prompts/get" if inner.capabilities.prompts.is_some() => {
                let (entry, args) = self.prompt_target(params.name.as_deref(), params.arguments)?;
                pending(
                    CallKind::Prompt {
                        entry,
                        args,
                        mrtr: MrtrInput::default(),
                    },
                    checked,
                )
            }
            "resources/read" if inner.capabilities.resources.is_some() => {
                let uri = params
                    .uri
                    .ok_or_else(|| {
                        (
                            ErrorObject::invalid_params("Invalid params: uri is required"),
                            200,
                        )
                    })?
                    .into_owned();
                let Some((handler, vars, cache)) = self.find_resource(&uri) else {
                    let mut e = ErrorObject::resource_not_found(&uri);
                    e.code = ErrorCode::LEGACY_RESOURCE_NOT_FOUND;
                    return Err((e, 200));
                };
                pending(
                    CallKind::Read {
                        uri,
                        handler,
                        params: vars,
                        cache,
                        mrtr: MrtrInput::default(),
                    },
                    checked,
                )
            }
            "completion/complete" if inner.capabilities.completions.is_some() => {
                let (completer, req) =
                    self.completion_target(params.reference, params.argument, params.context)?;
                Ok(Handled::Pending(PendingCall {
                    streaming: Streaming::Never,
                    base: base(checked),
                    kind: CallKind::Complete { completer, req },
                }))
            }
            _ => Err((ErrorObject::method_not_found(method), 404)),
        }
    }

    /// `initialize`: negotiates the version, opens a session (DIGEST §3.4).
    fn initialize(&self, id: &RequestId, params: Params<'_>, env: RequestEnv) -> Outcome {
        if env.session.is_some() {
            return Err((
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Invalid request: the session is already initialized",
                ),
                400,
            ));
        }
        let requested = params.protocol_version.as_deref().unwrap_or("");
        if requested.is_empty() {
            let supported: Vec<&str> = LEGACY_VERSIONS.iter().map(|v| v.as_str()).collect();
            return Err((
                ferry_protocol::legacy::unsupported_version_error(&supported, requested),
                200,
            ));
        }
        // The requested version when supported, otherwise the latest legacy one.
        let version = ProtocolVersion::parse(requested)
            .filter(|v| LEGACY_VERSIONS.contains(v))
            .unwrap_or(ProtocolVersion::V2025_11_25);
        let capabilities: ClientCapabilities = match params.capabilities {
            Some(v) => serde_json::from_value(v).map_err(|e| {
                (
                    ErrorObject::invalid_params(format!("Invalid params: capabilities: {e}")),
                    200,
                )
            })?,
            None => ClientCapabilities::default(),
        };
        if capabilities.supports_sampling() {
            deprecation::warn_once(Feature::Sampling);
        }
        if capabilities.supports_roots() {
            deprecation::warn_once(Feature::Roots);
        }
        let client_info = params
            .client_info
            .and_then(|v| serde_json::from_value(v).ok());
        let is_http = env.headers.is_some();
        let session_id = if is_http {
            new_session_id().ok_or_else(|| {
                (
                    ErrorObject::internal("Internal error: no session id available"),
                    500,
                )
            })?
        } else {
            "stdio".to_owned()
        };
        let session = Arc::new(Session::new(
            session_id,
            version,
            capabilities,
            client_info,
            env.principal.clone(),
        ));
        if is_http && !self.inner.sessions.insert(session.clone()) {
            return Err((
                ErrorObject::internal("Too many sessions: try again later"),
                503,
            ));
        }
        let inner = &*self.inner;
        let mut result = json!({
            "protocolVersion": version.as_str(),
            "capabilities": inner.legacy_capabilities,
            "serverInfo": inner.info,
        });
        if let Some(i) = &inner.instructions {
            result["instructions"] = json!(i);
        }
        Ok(Handled::Initialized {
            reply: Reply::result(id, &result, None),
            session,
        })
    }
}
