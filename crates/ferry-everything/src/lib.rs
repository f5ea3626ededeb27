//! `ferry-everything`: an MCP server that exercises every feature of Ferry.
//!
//! It serves the fixtures of the official MCP conformance suite, an `echo` tool for
//! benchmarks, the tasks fixtures (`slow_compute`, `multi_input`, ...), and three multi-round flows: `confirm_delete` (a single-use
//! confirmation), `generate_image` (two questions in one round, then a real PNG) and
//! `connect_account` (URL mode, with a page this server serves and binds to the user).
//! `confirm_delete` really deletes, but only files inside the [`sandbox::Sandbox`] the
//! server owns.
//!
//! Run it with `ferry-everything --http 127.0.0.1:3000` (endpoint `/mcp`) or
//! `ferry-everything --stdio`, or build it in-process with [`build`].
#![forbid(unsafe_code)]

pub mod app;
pub mod fixtures;
pub mod flows;
pub mod llm;
pub mod notes;
pub mod sandbox;
pub mod tasks;

use std::sync::Arc;
use std::time::Duration;

use ferry_redis::Redis;
use ferry_server::{
    BuildError, ChangeBus, Server, ServerBuilder, SessionStore, TaskBus, TaskStore,
};
use ferry_state::{KeyRing, ReplayLedger};

use crate::app::SealedLinks;
use crate::flows::Connections;
use crate::notes::Notes;
use crate::sandbox::Sandbox;

/// How to build the server.
pub struct Options {
    /// Keys sealing `requestState` (random per process when `None`).
    pub state_keys: Option<KeyRing>,
    /// How long a `requestState` stays valid.
    pub state_ttl: Duration,
    /// Where single-use states are redeemed (in memory when `None`).
    pub ledger: Option<Arc<dyn ReplayLedger>>,
    /// The base URL links to the connect page start with.
    pub public_url: String,
    /// Items per list page.
    pub page_size: usize,
    /// Who answers `summarize`'s sampling.
    pub sampling: ferry_server::SamplingPolicy,
    /// Whether tools need scopes (`confirm_delete` needs [`app::DELETE_SCOPE`]): set it
    /// when the endpoint is behind authorization, where principals carry scopes.
    pub require_scopes: bool,
    /// Where tasks are kept (in memory when `None`).
    pub task_store: Option<Arc<dyn TaskStore>>,
    /// How task signals travel between instances (in process when `None`).
    pub task_bus: Option<Arc<dyn TaskBus>>,
    /// How change events travel between instances (in process when `None`).
    pub change_bus: Option<Arc<dyn ChangeBus>>,
    /// Where `set_note` keeps notes (in memory by default).
    pub notes: Arc<Notes>,
    /// The folder `confirm_delete` deletes files in (when `None`, [`build`] makes a fresh
    /// temporary one with the demo files, removed once the server is dropped).
    pub sandbox: Option<Arc<Sandbox>>,
    /// Where 2025-11-25 sessions are shared with other instances (not shared when `None`).
    pub session_store: Option<Arc<dyn SessionStore>>,
}

impl Options {
    /// Puts the ledger, the change bus, the task store and bus, the notes and the
    /// 2025-11-25 sessions on `redis`, so that instances sharing it (and the state keys)
    /// serve the same clients.
    pub async fn on_redis(mut self, redis: &Redis) -> Self {
        self.ledger = Some(Arc::new(redis.ledger()));
        self.change_bus = Some(Arc::new(redis.change_bus().await));
        self.task_store = Some(Arc::new(redis.task_store()));
        self.task_bus = Some(Arc::new(redis.task_bus()));
        self.notes = Arc::new(Notes::Redis(redis.clone()));
        self.session_store = Some(Arc::new(redis.session_store()));
        self
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            state_keys: None,
            state_ttl: Duration::from_secs(300),
            ledger: None,
            public_url: "http://127.0.0.1:3000".into(),
            page_size: 100,
            sampling: ferry_server::SamplingPolicy::client_only(),
            require_scopes: false,
            task_store: None,
            task_bus: None,
            change_bus: None,
            notes: Arc::new(Notes::default()),
            sandbox: None,
            session_store: None,
        }
    }
}

/// The built server and what its web page shares with it.
pub struct Everything {
    /// The MCP server.
    pub server: Server,
    /// Account connections (shared with the connect page).
    pub connections: Arc<Connections>,
    /// The connect-page link signer.
    pub links: Arc<SealedLinks>,
    /// The folder `confirm_delete` deletes files in.
    pub sandbox: Arc<Sandbox>,
}

/// Why [`build`] failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A definition of the server was refused.
    #[error(transparent)]
    Server(#[from] BuildError),
    /// The temporary sandbox could not be made or seeded.
    #[error("could not make the sandbox folder: {0}")]
    Sandbox(#[from] std::io::Error),
}

/// Builds the server.
#[allow(deprecated)]
pub fn build(options: Options) -> Result<Everything, Error> {
    let sandbox = match options.sandbox {
        Some(sandbox) => sandbox,
        None => {
            let sandbox = Sandbox::temporary()?;
            sandbox.seed_demo_files()?;
            Arc::new(sandbox)
        }
    };
    let connections = Arc::new(Connections::default());
    let links = Arc::new(SealedLinks::new(
        KeyRing::random(),
        options.public_url.clone(),
        Duration::from_secs(600),
    ));
    let mut builder: ServerBuilder = Server::builder("ferry-everything", env!("CARGO_PKG_VERSION"))
        .title("Ferry everything server")
        .instructions(
            "Test fixtures for every MCP feature, plus confirm_delete, generate_image and connect_account, which ask the user for input.",
        )
        .enable_logging()
        .state_ttl(options.state_ttl)
        .page_size(options.page_size)
        .sampling(options.sampling);
    if let Some(keys) = options.state_keys {
        builder = builder.state_keys(keys);
    }
    if let Some(ledger) = options.ledger {
        builder = builder.replay_ledger(ledger);
    }
    if let Some(store) = options.task_store {
        builder = builder.task_store(store);
    }
    if let Some(bus) = options.task_bus {
        builder = builder.task_bus(bus);
    }
    if let Some(bus) = options.change_bus {
        builder = builder.change_bus(bus);
    }
    if let Some(store) = options.session_store {
        builder = builder.session_store(store);
    }
    builder = fixtures::register(builder);
    builder = fixtures::echo(builder);
    builder = flows::register(
        builder,
        connections.clone(),
        links.clone(),
        sandbox.clone(),
        options.require_scopes,
    );
    builder = llm::register(builder);
    builder = tasks::register(builder);
    builder = notes::register(builder, options.notes);
    Ok(Everything {
        server: builder.build()?,
        connections,
        links,
        sandbox,
    })
}
