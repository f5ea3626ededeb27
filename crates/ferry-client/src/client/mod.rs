//! The [`Client`] and the state it shares between clones.

mod background;
mod connect;
mod features;
mod request;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use ferry_protocol::common::Implementation;
use ferry_protocol::jsonrpc::{JsonRpcNotification, RequestId};
use ferry_protocol::{ClientCapabilities, ServerCapabilities};
use parking_lot::{Mutex, RwLock};
use tokio::sync::broadcast;
use tokio::task::AbortHandle;

pub(crate) use background::spawn as spawn_background;
pub(crate) use request::Req;
pub(crate) use request::parse;

use crate::cache::ResultCache;
use crate::era::{Era, EraCache, EraMode};
use crate::handler::{HandlerCapabilities, InputHandler};
use crate::options::MrtrPolicy;
use crate::tool_headers::ToolHeaders;
use crate::transport::Transport;

/// An MCP client connected to one server. Cheap to clone; clones share the connection.
///
/// Build one with [`Client::builder`]. See the [crate documentation](crate) for an
/// example.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.inner.state.read();
        f.debug_struct("Client")
            .field("server", &self.inner.label)
            .field("era", &s.era)
            .field("version", &s.version)
            .finish()
    }
}

/// Settings fixed when the client is built.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub client_info: Implementation,
    pub timeout: Duration,
    pub probe_timeout: Duration,
    pub mrtr: MrtrPolicy,
    pub cache: bool,
    pub era_mode: EraMode,
    pub max_pages: usize,
    pub legacy_get_stream: bool,
    pub tasks: bool,
}

/// What the client knows about the server it talks to.
#[derive(Clone, Debug)]
pub(crate) struct Session {
    pub era: Era,
    pub version: String,
    pub server_info: Option<Implementation>,
    pub capabilities: Option<ServerCapabilities>,
    pub instructions: Option<String>,
}

/// Counts input handlers at work, so legacy requests waiting on the user do not time
/// out meanwhile.
#[derive(Debug, Default)]
pub(crate) struct InputGate {
    active: AtomicUsize,
    epoch: AtomicU64,
}

pub(crate) struct GateGuard<'a>(&'a InputGate);

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::AcqRel);
        self.0.epoch.fetch_add(1, Ordering::AcqRel);
    }
}

impl InputGate {
    pub(crate) fn enter(&self) -> GateGuard<'_> {
        self.active.fetch_add(1, Ordering::AcqRel);
        self.epoch.fetch_add(1, Ordering::AcqRel);
        GateGuard(self)
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Whether a handler is at work or worked since `seen` (which is updated).
    pub(crate) fn busy_since(&self, seen: &mut u64) -> bool {
        let now = self.epoch();
        let busy = self.active.load(Ordering::Acquire) > 0 || now != *seen;
        *seen = now;
        busy
    }
}

/// What every clone of a [`Client`] shares.
pub(crate) struct Inner {
    pub transport: Transport,
    pub config: Config,
    pub handler: Arc<dyn InputHandler>,
    pub handler_caps: HandlerCapabilities,
    pub state: RwLock<Arc<Session>>,
    pub next_id: AtomicI64,
    pub next_token: AtomicU64,
    pub cache: ResultCache,
    pub tools: ToolHeaders,
    pub gate: InputGate,
    pub events: broadcast::Sender<JsonRpcNotification>,
    pub era_cache: Arc<EraCache>,
    pub origin: Option<String>,
    pub label: String,
    pub background: Mutex<Option<AbortHandle>>,
    pub closed: AtomicBool,
    /// On a 2025-11-25 server: how many of this client's subscriptions follow each URI,
    /// changed only while the lock is held, with the `resources/subscribe` or
    /// `resources/unsubscribe` it calls for, so that those reach the server in order.
    pub legacy_subscriptions: tokio::sync::Mutex<std::collections::HashMap<String, usize>>,
    /// What every 2026-07-28 request's `_meta` carries, serialised once.
    pub wire: WireDefaults,
}

/// The client's own `_meta` entries, as JSON, made once when the client is built.
pub(crate) struct WireDefaults {
    /// `io.modelcontextprotocol/clientInfo`.
    pub client_info: serde_json::Value,
    /// `io.modelcontextprotocol/clientCapabilities`, with the client's input handler.
    pub capabilities: serde_json::Value,
}

impl WireDefaults {
    pub(crate) fn new(config: &Config, handler: HandlerCapabilities) -> Self {
        let json = |v: Result<serde_json::Value, serde_json::Error>| {
            v.unwrap_or_else(|_| serde_json::Value::Object(serde_json::Map::new()))
        };
        WireDefaults {
            client_info: json(serde_json::to_value(&config.client_info)),
            capabilities: json(serde_json::to_value(capabilities_with(config, handler))),
        }
    }
}

/// The capabilities declared by a client configured with `config` whose input handler
/// provides `handler`.
fn capabilities_with(config: &Config, handler: HandlerCapabilities) -> ClientCapabilities {
    let mut caps = handler.to_client_capabilities();
    if config.tasks {
        caps.extensions.get_or_insert_with(Default::default).insert(
            ferry_protocol::tasks::EXTENSION.to_owned(),
            serde_json::Value::Object(Default::default()),
        );
    }
    caps
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(h) = self.background.get_mut().take() {
            h.abort();
        }
    }
}

impl Inner {
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    pub(crate) fn next_progress_token(&self) -> RequestId {
        let n = self.next_token.fetch_add(1, Ordering::Relaxed);
        RequestId::String(format!("ferry-progress-{n}"))
    }

    pub(crate) fn client_capabilities(&self) -> ClientCapabilities {
        self.client_capabilities_with(self.handler_caps)
    }

    /// The capabilities declared with an input handler providing `handler`.
    pub(crate) fn client_capabilities_with(
        &self,
        handler: HandlerCapabilities,
    ) -> ClientCapabilities {
        capabilities_with(&self.config, handler)
    }

    pub(crate) fn era(&self) -> Era {
        self.state.read().era
    }

    /// Whether `tools/list` results are filtered and `Mcp-Param-*` headers sent: on
    /// Streamable HTTP with a modern server.
    pub(crate) fn uses_param_headers(&self) -> bool {
        self.transport.is_http() && self.era() == Era::Modern
    }
}
