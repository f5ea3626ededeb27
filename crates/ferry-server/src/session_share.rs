//! 2025-11-25 sessions shared through a [`SessionStore`]: written at `initialize`, adopted
//! by an instance that does not hold them, checked at a bounded rate, removed by `DELETE`.

use std::sync::Arc;
use std::time::Duration;

use crate::dispatch::RequestEnv;
use crate::server::Server;
use crate::session::Session;
use crate::session_store::{SessionKey, SessionStore, SessionStoreError};

/// The store a server shares its sessions through, and how often it checks them.
pub(crate) struct SharedSessions {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) refresh: Duration,
}

impl Server {
    /// Whether the server shares its 2025-11-25 sessions through a [`SessionStore`].
    pub fn has_session_store(&self) -> bool {
        self.inner.shared_sessions.is_some()
    }

    /// Readies the 2025-11-25 session an HTTP request names (`Mcp-Session-Id`), before
    /// [`Server::handle`], when the server has a [`SessionStore`]; without one it does
    /// nothing.
    ///
    /// - A session this instance does not hold is read from the store and adopted.
    /// - A session it holds is checked against the store at most once per refresh
    ///   interval: gone there (`DELETE` on another instance, expiry), it ends here too;
    ///   otherwise its expiry is extended and the log level and subscriptions set on other
    ///   instances are taken. A request in between touches nothing but memory.
    /// - When the store cannot be reached, a session held here keeps working, and a
    ///   request naming one that is not is answered with an error saying the session
    ///   could not be looked up (Streamable HTTP: 503), not that it does not exist.
    ///
    /// Requests that name a 2026-07-28 `MCP-Protocol-Version` are left alone.
    pub async fn prepare_session(&self, env: &mut RequestEnv) {
        let Some(shared) = &self.inner.shared_sessions else {
            return;
        };
        if !self.inner.legacy {
            return;
        }
        let Some(headers) = env.headers() else {
            return;
        };
        if headers
            .get(ferry_protocol::headers::PROTOCOL_VERSION)
            .and_then(|v| v.to_str().ok())
            .and_then(ferry_protocol::version::ProtocolVersion::parse)
            .is_some_and(|v| v.is_modern())
        {
            return;
        }
        let Some(id) = headers
            .get(ferry_protocol::headers::SESSION_ID)
            .and_then(|v| v.to_str().ok())
        else {
            return;
        };
        let id = id.to_owned();
        match self.inner.sessions.get(&id) {
            Some(session) => {
                if session.claim_refresh(shared.refresh) {
                    self.refresh(shared, &session).await;
                }
            }
            None => {
                if let Err(e) = self.adopt(shared, &id).await {
                    tracing::warn!(error = %e, "a 2025-11-25 session could not be looked up in the session store");
                    env.session_store_unavailable = true;
                }
            }
        }
    }

    /// Reads session `id` from the store and adopts it (nothing when the store has none).
    async fn adopt(&self, shared: &SharedSessions, id: &str) -> Result<(), SessionStoreError> {
        let key = SessionKey::of(id);
        let Some(bytes) = shared.store.load(&key).await? else {
            return Ok(());
        };
        let Some(session) = Session::from_record(id, &bytes) else {
            tracing::warn!("an unreadable session record in the session store was ignored");
            return Ok(());
        };
        let session = Arc::new(session);
        match self.inner.sessions.adopt(session.clone()) {
            Some(held) => {
                if Arc::ptr_eq(&held, &session) {
                    self.watch_session(&session);
                }
                Ok(())
            }
            None => Err(SessionStoreError::storage(
                "no room for another session on this instance",
            )),
        }
    }

    /// Checks a session held here against the store (see [`Server::prepare_session`]).
    async fn refresh(&self, shared: &SharedSessions, session: &Arc<Session>) {
        let key = SessionKey::of(session.id());
        let idle = self.inner.sessions.idle;
        if !session.is_stored() {
            // Opened while the store was unreachable: write it now that it may be back.
            if shared
                .store
                .save(&key, &session.record(), idle)
                .await
                .is_ok()
            {
                session.set_stored();
            }
            return;
        }
        match shared.store.touch(&key, idle).await {
            Ok(Some(bytes)) => {
                match session.refresh_from(&bytes) {
                    None => tracing::warn!(
                        "an unreadable session record in the session store was ignored"
                    ),
                    // Subscribed or unsubscribed on another instance.
                    Some(true) => self.inner.hub.interest.touch(),
                    Some(false) => {}
                }
            }
            Ok(None) => {
                // Ended on another instance, or expired there: it ends here too.
                self.inner.sessions.remove(session.id());
            }
            Err(e) => {
                tracing::warn!(error = %e, "the session store could not be reached; the session goes on here");
            }
        }
    }

    /// Writes a session `initialize` just opened to the store, so any instance can serve
    /// its next request. Transports await it before sending the `initialize` response.
    ///
    /// When the store cannot be reached (or the record is over
    /// [`MAX_SESSION_RECORD_BYTES`](crate::MAX_SESSION_RECORD_BYTES)), the session is
    /// served by this instance alone (`initialize` is not failed: the session is sound,
    /// only not shared): other instances answer that it could not be looked up while the
    /// store is down, and this instance writes it on its first use after the store is back.
    pub async fn share_session(&self, session: &Arc<Session>) {
        let Some(shared) = &self.inner.shared_sessions else {
            return;
        };
        if !session.is_shareable() {
            return;
        }
        let key = SessionKey::of(session.id());
        match shared
            .store
            .save(&key, &session.record(), self.inner.sessions.idle)
            .await
        {
            Ok(()) => session.set_stored(),
            Err(e) => {
                tracing::warn!(error = %e, "a new 2025-11-25 session is served by this instance only: the session store failed")
            }
        }
    }

    /// Ends the HTTP session `id` (`DELETE`) here and, with a [`SessionStore`], in the
    /// store, so every instance refuses it from then on (an instance that holds it does so
    /// at its next check, within the refresh interval). Returns whether it existed.
    ///
    /// When the store cannot be reached the session still ends here, and the error is
    /// returned: other instances may serve it until it expires there.
    pub async fn delete_session(&self, id: &str) -> Result<bool, SessionStoreError> {
        let local = self.end_session(id);
        let Some(shared) = &self.inner.shared_sessions else {
            return Ok(local);
        };
        let stored = shared.store.remove(&SessionKey::of(id)).await?;
        Ok(local || stored)
    }

    /// Writes a session's changed log level, subscriptions or initialized flag to the
    /// store, in the background, one write at a time per session.
    pub(crate) fn session_changed(&self, session: &Arc<Session>) {
        let Some(shared) = &self.inner.shared_sessions else {
            return;
        };
        if !session.is_shareable() || !session.mark_dirty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            session.end_write();
            return;
        };
        let store = shared.store.clone();
        let server = self.clone();
        let session = session.clone();
        runtime.spawn(async move {
            let key = SessionKey::of(session.id());
            let idle = server.inner.sessions.idle;
            loop {
                session.begin_write();
                let record = session.record();
                if session.is_stored() {
                    match store.update(&key, &record, idle).await {
                        Ok(true) => {}
                        Ok(false) => {
                            server.inner.sessions.remove(session.id());
                        }
                        Err(e) => tracing::warn!(error = %e, "a session change was not written to the session store"),
                    }
                } else if store.save(&key, &record, idle).await.is_ok() {
                    session.set_stored();
                }
                if !session.end_write() {
                    break;
                }
            }
        });
    }
}
