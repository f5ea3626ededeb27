//! Serving 2025-11-25 clients: `initialize`, sessions, and the methods 2026-07-28 removed,
//! on the same handlers as modern requests (2025-11-25 `basic/lifecycle`).

use std::sync::Arc;

use ferry_protocol::common::Implementation;
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::jsonrpc::encode_notification;
use ferry_protocol::legacy::InitializeResult;
use ferry_protocol::notifications::{self, NotificationParams, ResourceUpdatedNotificationParams};
use ferry_protocol::request::InitializeParams;
use ferry_protocol::version::ProtocolVersion;
use ferry_protocol::{ClientCapabilities, ErrorCode, ErrorObject};
use serde::Deserialize;

use tokio::sync::broadcast::error::RecvError;

use crate::deprecation::{self, Feature};
use crate::dispatch::{Handled, RequestEnv};
use crate::hub::Event;
use crate::refusal::{Attempt, Failure, Refusal};
use crate::reply::Reply;
use crate::server::Server;
use crate::session::{LEGACY_VERSIONS, Session, new_session_id};

impl Server {
    /// The 2025-11-25 session a message belongs to: the connection's (stdio) or the one
    /// named by `Mcp-Session-Id` (HTTP), if it is live.
    pub(crate) fn session_of(&self, env: &RequestEnv) -> Option<Arc<Session>> {
        if let Some(s) = &env.session {
            return (!s.is_closed()).then(|| s.clone());
        }
        let id = env
            .headers()?
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
                let empty = NotificationParams::new();
                let bytes = match event {
                    Ok(Event::ToolsChanged) => {
                        encode_notification(notifications::TOOLS_LIST_CHANGED, &empty)
                    }
                    Ok(Event::PromptsChanged) => {
                        encode_notification(notifications::PROMPTS_LIST_CHANGED, &empty)
                    }
                    Ok(Event::ResourcesChanged) => {
                        encode_notification(notifications::RESOURCES_LIST_CHANGED, &empty)
                    }
                    Ok(Event::ResourceUpdated(uri)) if session.is_subscribed(&uri) => {
                        encode_notification(
                            notifications::RESOURCES_UPDATED,
                            &ResourceUpdatedNotificationParams::new(uri.as_ref()),
                        )
                    }
                    Ok(Event::ResourceUpdated(_)) | Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                };
                session.send_standalone(bytes::Bytes::from(bytes));
            }
        });
    }

    /// For a notification or a response to the server that names (HTTP
    /// `Mcp-Session-Id`) a session this server does not hold: 404, like a request on it
    /// (transports.mdx, "Session Management"), so that a load balancer can try the
    /// instance that holds it, and a client learns that the session is gone.
    pub(crate) fn unknown_session(&self, env: &RequestEnv) -> Option<Handled> {
        let headers = env.headers()?;
        if !self.inner.legacy
            || !headers.contains_key(ferry_protocol::headers::SESSION_ID)
            || self.session_of(env).is_some()
        {
            return None;
        }
        Some(Handled::Reply(Reply::failure(None, &session_missing(env))))
    }

    /// The session a 2025-11-25 request belongs to, checking its version header.
    pub(crate) fn legacy_session(&self, env: &RequestEnv) -> Attempt<Arc<Session>> {
        let Some(session) = self.session_of(env) else {
            if let Some(h) = env.headers() {
                if h.contains_key(ferry_protocol::headers::SESSION_ID) {
                    return Err(session_missing(env));
                }
                return Err(Failure::refused(
                    Refusal::NoSession,
                    ErrorObject::invalid_params(
                        "Bad request: send MCP-Protocol-Version and _meta (2026-07-28), or initialize first (2025-11-25)",
                    ),
                ));
            }
            return Err(Failure::refused(
                Refusal::NoSession,
                ErrorObject::invalid_params(
                    "Invalid params: _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities is required (or send initialize first for 2025-11-25)",
                ),
            ));
        };
        // After initialize every request names the negotiated version (absent means
        // 2025-03-26, accepted as compatible).
        if let Some(v) = env
            .headers()
            .and_then(|h| h.get(ferry_protocol::headers::PROTOCOL_VERSION))
        {
            let ok = v.to_str().ok().and_then(ProtocolVersion::parse) == Some(session.version());
            if !ok {
                let requested = v.to_str().unwrap_or("");
                return Err(Failure::refused(
                    Refusal::UnsupportedVersion,
                    ferry_protocol::legacy::unsupported_version_error(
                        &[session.version().as_str()],
                        requested,
                    ),
                ));
            }
        }
        Ok(session)
    }

    /// `initialize`: negotiates the version, opens a session (2025-11-25 lifecycle).
    pub(crate) fn initialize(
        &self,
        id: &RequestId,
        params: &InitializeParams<'_>,
        env: &RequestEnv,
    ) -> Attempt<Handled> {
        if env.session.is_some() {
            return Err(Failure::refused(
                Refusal::AlreadyInitialized,
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Invalid request: the session is already initialized",
                ),
            ));
        }
        let requested = params.protocol_version.as_deref().unwrap_or("");
        if requested.is_empty() {
            let supported: Vec<&str> = LEGACY_VERSIONS.iter().map(|v| v.as_str()).collect();
            return Err(Failure::answered(
                ferry_protocol::legacy::unsupported_version_error(&supported, requested),
            ));
        }
        // The requested version when supported, otherwise the latest legacy one.
        let version = ProtocolVersion::parse(requested)
            .filter(|v| LEGACY_VERSIONS.contains(v))
            .unwrap_or(ProtocolVersion::V2025_11_25);
        let capabilities: ClientCapabilities = match &params.capabilities {
            Some(v) => ClientCapabilities::deserialize(v).map_err(|e| {
                Failure::invalid_params(format!(
                    "Invalid params: capabilities: {}",
                    ferry_protocol::quote::quote(&e.to_string())
                ))
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
            .as_ref()
            .and_then(|v| Implementation::deserialize(v).ok());
        let is_http = env.is_http();
        let session_id = if is_http {
            new_session_id().ok_or_else(|| {
                Failure::refused(
                    Refusal::Unavailable,
                    ErrorObject::internal("Internal error: no session id available"),
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
        if is_http {
            session.set_shareable();
        }
        if is_http && !self.inner.sessions.insert(session.clone()) {
            return Err(Failure::refused(
                Refusal::TooManySessions,
                ErrorObject::internal("Too many sessions: try again later"),
            ));
        }
        let inner = &*self.inner;
        let mut result = InitializeResult::new(
            version.as_str(),
            inner.legacy_capabilities.clone(),
            inner.info.clone(),
        );
        result.instructions = inner.instructions.clone();
        Ok(Handled::Initialized {
            reply: Reply::result(id, &result, None),
            session,
        })
    }
}

/// Why a request naming a session this instance does not hold is refused: the session
/// does not exist (404 on HTTP), or the session store could not say (503 on HTTP: the
/// session may well exist, and a retry may find it).
fn session_missing(env: &RequestEnv) -> Box<Failure> {
    if env.session_store_unavailable {
        return Failure::refused(
            Refusal::Unavailable,
            ErrorObject::internal(
                "Service unavailable: the session store cannot be reached, so this session could not be looked up; retry later",
            ),
        );
    }
    Failure::refused(
        Refusal::SessionNotFound,
        ErrorObject::new(ErrorCode::INVALID_REQUEST, "Session not found"),
    )
}
