//! [`ClientBuilder`]: where the server is and how to talk to it.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};
use std::time::Duration;

use ferry_oauth::Authorizer;
use ferry_protocol::common::Implementation;
use parking_lot::{Mutex, RwLock};
use tokio::process::Command;
use tokio::sync::{broadcast, mpsc};

use crate::cache::ResultCache;
use crate::client::{Client, Config, Inner, InputGate, Session, WireDefaults};
use crate::era::{Era, EraCache, EraMode};
use crate::error::{Error, Result};
use crate::handler::{InputHandler, NoInput};
use crate::options::MrtrPolicy;
use crate::tool_headers::ToolHeaders;
use crate::transport::http::HttpTransport;
use crate::transport::stdio::{StdioOptions, StdioTransport};
use crate::transport::{Background, Transport};

/// How many background messages (legacy server requests, stray notifications) may wait.
const BACKGROUND_QUEUE: usize = 256;

enum Target {
    Http(String),
    Stdio(Box<Command>),
    Streams(
        Box<dyn tokio::io::AsyncRead + Send + Unpin>,
        Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
    ),
}

/// Builds a [`Client`]: choose a transport with [`http`](ClientBuilder::http) or
/// [`stdio`](ClientBuilder::stdio), then [`build`](ClientBuilder::build), which connects
/// and finds the server's era.
pub struct ClientBuilder {
    target: Option<Target>,
    bearer: Option<String>,
    authorizer: Option<Arc<dyn Authorizer>>,
    timeout: Duration,
    probe_timeout: Duration,
    handler: Option<Arc<dyn InputHandler>>,
    client_info: Implementation,
    mrtr: MrtrPolicy,
    cache: bool,
    era_cache: Option<Arc<EraCache>>,
    era_mode: EraMode,
    max_message_bytes: usize,
    max_pages: usize,
    stdio: StdioOptions,
    legacy_get_stream: bool,
    tasks: bool,
    http_client: Option<reqwest::Client>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = match &self.target {
            Some(Target::Http(url)) => format!("http {url}"),
            Some(Target::Stdio(cmd)) => format!("stdio {:?}", cmd.as_std().get_program()),
            Some(Target::Streams(..)) => "byte streams".into(),
            None => "none".into(),
        };
        f.debug_struct("ClientBuilder")
            .field("target", &target)
            .field("bearer_token", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("authorizer", &self.authorizer.is_some())
            .field("timeout", &self.timeout)
            .field("era_mode", &self.era_mode)
            .field("client_info", &self.client_info)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder::new()
    }
}

impl ClientBuilder {
    /// A builder with the defaults: 60 s timeout, 10 s era probe, caching on, no input
    /// handler.
    pub fn new() -> Self {
        ClientBuilder {
            target: None,
            bearer: None,
            authorizer: None,
            timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(10),
            handler: None,
            client_info: Implementation::new("ferry-client", env!("CARGO_PKG_VERSION")),
            mrtr: MrtrPolicy::default(),
            cache: true,
            era_cache: None,
            era_mode: EraMode::Auto,
            max_message_bytes: 16 * 1024 * 1024,
            max_pages: 1000,
            stdio: StdioOptions::default(),
            legacy_get_stream: true,
            tasks: true,
            http_client: None,
        }
    }

    /// Talks Streamable HTTP to the MCP endpoint at `url` (e.g.
    /// `http://127.0.0.1:3000/mcp`).
    pub fn http(mut self, url: impl Into<String>) -> Self {
        self.target = Some(Target::Http(url.into()));
        self
    }

    /// Starts `command` as the server and talks to it over its stdin and stdout. Its
    /// stderr is left as configured on the command (inherited by default).
    pub fn stdio(mut self, command: Command) -> Self {
        self.target = Some(Target::Stdio(Box::new(command)));
        self
    }

    /// Talks to a server over a pair of byte streams, one JSON-RPC message per line as on
    /// stdio: an in-process server on a `tokio::io::duplex` (for tests, with no socket
    /// and no process), a Unix socket, a pipe.
    ///
    /// ```
    /// # async fn run() -> Result<(), ferry_client::Error> {
    /// let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    /// let (reader, writer) = tokio::io::split(client_end);
    /// // ... serve an MCP server on `server_end` (ferry_stdio::serve) ...
    /// # drop(server_end);
    /// let client = ferry_client::Client::builder().streams(reader, writer);
    /// # let _ = client;
    /// # Ok(())
    /// # }
    /// ```
    pub fn streams<R, W>(mut self, reader: R, writer: W) -> Self
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        self.target = Some(Target::Streams(Box::new(reader), Box::new(writer)));
        self
    }

    /// Sends `Authorization: Bearer <token>` on every HTTP request. The token is never
    /// logged.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Authorizes HTTP requests with `authorizer`, e.g. a
    /// [`ferry_oauth::OAuthAuthorizer`]: it supplies the `Authorization` (and `DPoP`)
    /// headers of every request, and on a 401 or 403 it may authorize (again) before the
    /// request is sent once more. Replaces [`bearer_token`](ClientBuilder::bearer_token).
    ///
    /// The time an authorization takes counts against the timeout of the request that
    /// triggered it; to sign a user in interactively, run
    /// [`OAuthAuthorizer::authorize`](ferry_oauth::OAuthAuthorizer::authorize) first.
    pub fn authorizer(mut self, authorizer: impl Authorizer) -> Self {
        self.authorizer = Some(Arc::new(authorizer));
        self
    }

    /// [`authorizer`](ClientBuilder::authorizer) for an authorizer already shared.
    pub fn shared_authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// The default timeout of each request (default 60 s). On expiry the request is
    /// cancelled.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the `server/discover` probe waits before taking the server for a legacy
    /// one (default 10 s).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// The handler that answers the server's questions. The client declares the
    /// capabilities the handler enables, and nothing else.
    pub fn input_handler(mut self, handler: impl InputHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// [`input_handler`](ClientBuilder::input_handler) for a handler already shared.
    pub fn shared_input_handler(mut self, handler: Arc<dyn InputHandler>) -> Self {
        self.handler = Some(handler);
        self
    }

    /// The name and version this client reports (`clientInfo`).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info = Implementation::new(name, version);
        self
    }

    /// The full self-description this client reports.
    pub fn client_implementation(mut self, info: Implementation) -> Self {
        self.client_info = info;
        self
    }

    /// How multi round-trip requests are driven (rounds cap, backoff).
    pub fn mrtr_policy(mut self, policy: MrtrPolicy) -> Self {
        self.mrtr = policy;
        self
    }

    /// Declares the Tasks extension (`io.modelcontextprotocol/tasks`) or not (default
    /// on). With it, servers may answer a tool call with a task, which
    /// [`Client::call_tool`](crate::Client::call_tool) follows to its end; without it,
    /// tools that only run as tasks refuse the call (-32021).
    pub fn tasks(mut self, enabled: bool) -> Self {
        self.tasks = enabled;
        self
    }

    /// Turns the result cache on or off (default on).
    pub fn cache(mut self, enabled: bool) -> Self {
        self.cache = enabled;
        self
    }

    /// Where HTTP eras are remembered (default: [`EraCache::shared`]).
    pub fn era_cache(mut self, cache: Arc<EraCache>) -> Self {
        self.era_cache = Some(cache);
        self
    }

    /// Which eras to accept (default: detect).
    pub fn era(mut self, mode: EraMode) -> Self {
        self.era_mode = mode;
        self
    }

    /// The largest message accepted from the server (default 16 MiB). Also the stdio
    /// line limit.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self.stdio.max_line_bytes = bytes;
        self
    }

    /// The most pages one list call follows (default 1000).
    pub fn max_pages(mut self, pages: usize) -> Self {
        self.max_pages = pages;
        self
    }

    /// How a stdio server is shut down.
    pub fn stdio_options(mut self, options: StdioOptions) -> Self {
        self.max_message_bytes = options.max_line_bytes;
        self.stdio = options;
        self
    }

    /// Whether a legacy HTTP session opens the standalone GET stream, which carries
    /// server requests and notifications outside any request (default on).
    pub fn legacy_get_stream(mut self, enabled: bool) -> Self {
        self.legacy_get_stream = enabled;
        self
    }

    /// Uses this `reqwest` client (proxies, TLS roots, ...) for every request. Do not
    /// give it a total request timeout: event streams stay open.
    ///
    /// Without one, requests to an `http://` server with no proxy configured in the
    /// environment (`HTTP_PROXY`, `ALL_PROXY`) go through hyper's pooled client directly,
    /// without reqwest's per-request layers; `https://` servers and proxies go through
    /// reqwest.
    pub fn reqwest_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// Connects: starts the transport and finds the server's era (probing with
    /// `server/discover`, or using the cached era), opening a legacy session if needed.
    pub async fn build(self) -> Result<Client> {
        let (bg_tx, bg_rx) = mpsc::channel::<Background>(BACKGROUND_QUEUE);
        let (transport, origin) = match self.target {
            None => {
                return Err(Error::InvalidInput(
                    "no server given: call .http(url), .stdio(command) or .streams(reader, writer)"
                        .into(),
                ));
            }
            Some(Target::Http(url)) => {
                let url = reqwest::Url::parse(&url)
                    .map_err(|e| Error::InvalidInput(format!("invalid URL {url:?}: {e}")))?;
                if !matches!(url.scheme(), "http" | "https") {
                    return Err(Error::InvalidInput(format!(
                        "the URL must be http or https, not {}",
                        url.scheme()
                    )));
                }
                // A caller's own reqwest client carries every request (its proxies,
                // its TLS roots); otherwise plain-HTTP POSTs may skip reqwest.
                let direct = match self.http_client {
                    Some(_) => None,
                    None => crate::transport::direct_client(&url),
                };
                let client = match self.http_client {
                    Some(c) => c,
                    None => reqwest::Client::builder()
                        .connect_timeout(crate::transport::CONNECT_TIMEOUT)
                        .build()
                        .map_err(|e| Error::transport_from("could not set up HTTP", e))?,
                };
                let t = HttpTransport::new(
                    client,
                    direct,
                    url,
                    if self.authorizer.is_some() {
                        None
                    } else {
                        self.bearer.as_deref()
                    },
                    self.authorizer,
                    self.max_message_bytes,
                    bg_tx,
                )?;
                let origin = t.origin();
                (Transport::Http(t), Some(origin))
            }
            Some(Target::Stdio(cmd)) => {
                let t = StdioTransport::spawn(*cmd, self.stdio, bg_tx)?;
                (Transport::Stdio(Box::new(t)), None)
            }
            Some(Target::Streams(reader, writer)) => {
                let t = StdioTransport::connect(reader, writer, self.stdio, bg_tx);
                (Transport::Stdio(Box::new(t)), None)
            }
        };
        let handler = self.handler.unwrap_or_else(|| Arc::new(NoInput));
        let (events, _) = broadcast::channel(256);
        let label = transport.label();
        let config = Config {
            client_info: self.client_info,
            timeout: self.timeout,
            probe_timeout: self.probe_timeout,
            mrtr: self.mrtr,
            cache: self.cache,
            era_mode: self.era_mode,
            max_pages: self.max_pages,
            legacy_get_stream: self.legacy_get_stream,
            tasks: self.tasks,
        };
        let handler_caps = handler.capabilities();
        let inner = Arc::new(Inner {
            wire: WireDefaults::new(&config, handler_caps),
            handler_caps,
            handler,
            transport,
            config,
            state: RwLock::new(Arc::new(Session {
                era: Era::Modern,
                version: crate::era::MODERN_VERSIONS[0].to_owned(),
                server_info: None,
                capabilities: None,
                instructions: None,
            })),
            next_id: AtomicI64::new(1),
            next_token: AtomicU64::new(1),
            legacy_subscriptions: tokio::sync::Mutex::default(),
            cache: ResultCache::default(),
            tools: ToolHeaders::default(),
            gate: InputGate::default(),
            events,
            era_cache: self.era_cache.unwrap_or_else(EraCache::shared),
            origin,
            label,
            background: Mutex::new(None),
            closed: AtomicBool::new(false),
        });
        let task = crate::client::spawn_background(Arc::downgrade(&inner), bg_rx);
        *inner.background.lock() = Some(task);
        if let Err(e) = inner.connect().await {
            let _ = inner.transport.close().await;
            return Err(e);
        }
        Ok(Client { inner })
    }
}
