//! Building the gateway and serving it over Streamable HTTP, with `GET /metrics` beside
//! the MCP endpoint.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use ferry_auth::{AuthLayer, Dpop, JwtValidator, ResourceMetadata, StaticTokens};
use ferry_http::{HttpConfig, McpService};
use ferry_server::Server;
use ferry_state::{KeyRing, MemoryLedger, ReplayLedger, StateGuard};
use parking_lot::RwLock;

use crate::config::GatewayConfig;
use crate::envelope::Envelopes;
use crate::error::StartError;
use crate::gateway::{Core, Relay, Routes};
use crate::limit::PrincipalLimit;
use crate::meter::{JsonLinesMeter, Meter, NoMeter};
use crate::metrics::Metrics;
use crate::upstream::{Given, Secret, Upstream};

/// A running gateway: the upstreams connected, Ferry's server in front of them.
///
/// ```no_run
/// use ferry_gateway::{Gateway, GatewayConfig, UpstreamConfig};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let mut config = GatewayConfig::default();
/// config.upstreams.push(UpstreamConfig::http("files", "http://127.0.0.1:9000/mcp"));
/// let gateway = Gateway::builder(config).build().await?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// gateway.serve(listener, ferry_http::shutdown_signal()).await?;
/// # Ok(())
/// # }
/// ```
pub struct Gateway {
    core: Arc<Core>,
    server: Server,
    dev_tokens: StaticTokens,
    edge: Edge,
}

/// How the gateway's own endpoint is protected, beside the dev tokens.
#[derive(Debug, Clone, Default)]
struct Edge {
    resource: Option<String>,
    issuer: Option<String>,
    scopes: Vec<String>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("upstreams", &self.core.upstreams)
            .field("max_rounds", &self.core.max_rounds)
            .finish_non_exhaustive()
    }
}

/// Configures a [`Gateway`]: what [`GatewayConfig`] does not say (a custom meter, a
/// ledger, keys given directly).
#[must_use = "a builder does nothing until built"]
pub struct GatewayBuilder {
    config: GatewayConfig,
    meter: Option<Arc<dyn Meter>>,
    ledger: Option<Arc<dyn ReplayLedger>>,
    keys: Option<KeyRing>,
    given: HashMap<String, Given>,
}

impl Gateway {
    /// Starts configuring a gateway.
    pub fn builder(config: GatewayConfig) -> GatewayBuilder {
        GatewayBuilder {
            config,
            meter: None,
            ledger: None,
            keys: None,
            given: HashMap::new(),
        }
    }

    /// The server in front (for other transports, e.g. stdio).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The gateway's metrics.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.core.metrics.clone()
    }

    /// The upstreams, in configuration order.
    pub fn upstreams(&self) -> &[Upstream] {
        &self.core.upstreams
    }

    /// Serves the gateway on `listener` at `/mcp` (Streamable HTTP), with `GET /metrics`
    /// (Prometheus text), `/healthz` and `/readyz`, until `shutdown` resolves.
    ///
    /// With dev tokens or an authorization server configured, every MCP request needs an
    /// access token (`Authorization: Bearer`, or `DPoP` with its proof), and the
    /// gateway's Protected Resource Metadata is served at
    /// `/.well-known/oauth-protected-resource/mcp`. The client's `Authorization` is never
    /// sent upstream: each upstream gets its own credential.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let addr = listener.local_addr()?;
        let resource = self
            .edge
            .resource
            .clone()
            .unwrap_or_else(|| format!("http://{addr}/mcp"));
        let layer =
            auth_layer(&self.dev_tokens, &self.edge, &resource).map_err(std::io::Error::other)?;
        let metrics = self.core.metrics.clone();
        let pages = axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let metrics = metrics.clone();
                async move {
                    (
                        [(
                            http::header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        metrics.render(),
                    )
                }
            }),
        );
        // Other instances pass on the answers for calls held here; their requests carry a
        // token only holders of the state keys can make.
        let core = self.core.clone();
        let pages = pages.route(
            crate::gateway::HELD_PATH,
            axum::routing::post(move |body: axum::body::Bytes| {
                let core = core.clone();
                async move {
                    let body: serde_json::Value =
                        serde_json::from_slice(&body).map_err(|_| http::StatusCode::BAD_REQUEST)?;
                    let reply = core
                        .serve_peer(&body)
                        .await
                        .ok_or(http::StatusCode::FORBIDDEN)?;
                    Ok::<_, http::StatusCode>((
                        [(http::header::CONTENT_TYPE, "application/json")],
                        reply.to_string(),
                    ))
                }
            }),
        );
        // Clients find the authorization server from the metadata (RFC 9728), which
        // needs no token.
        let pages = match &layer {
            Some(auth) => pages.merge(auth.metadata().router()),
            None => pages,
        };
        // The upstreams' list changes reach the gateway's listen streams while it serves.
        let changes = crate::changes::relay(&self.core, &self.server);
        let mcp = McpService::new(self.server.clone(), HttpConfig::default());
        let result = ferry_http::serve(listener, mcp)
            .app(pages)
            .layer(tower::util::option_layer(layer))
            .with_graceful_shutdown(shutdown)
            .await;
        drop(changes);
        for u in &self.core.upstreams {
            u.close().await;
        }
        result
    }
}

/// The resource-server layer, when dev tokens or an authorization server are configured:
/// dev tokens first, then the issuer's JWTs for `resource` (bearer or DPoP-bound).
fn auth_layer(
    tokens: &StaticTokens,
    edge: &Edge,
    resource: &str,
) -> Result<Option<AuthLayer>, String> {
    let text = |e: ferry_auth::ConfigError| e.to_string();
    let mut metadata = ResourceMetadata::new(resource)
        .map_err(text)?
        .resource_name("Ferry gateway");
    if !edge.scopes.is_empty() {
        metadata = metadata.scopes_supported(edge.scopes.iter().cloned());
    }
    let layer = match &edge.issuer {
        Some(issuer) => {
            metadata = metadata.authorization_server(issuer).map_err(text)?;
            let jwt = JwtValidator::builder(issuer, resource)
                .build()
                .map_err(text)?;
            AuthLayer::builder(metadata, tokens.clone().or(jwt)).dpop(Dpop::allowed())
        }
        None if tokens.is_empty() => return Ok(None),
        None => AuthLayer::builder(metadata, tokens.clone()),
    };
    layer.build().map(Some).map_err(text)
}

impl GatewayBuilder {
    /// Meters rounds with `meter` instead of the configuration's usage log.
    pub fn meter(mut self, meter: impl Meter) -> Self {
        self.meter = Some(Arc::new(meter));
        self
    }

    /// Redeems states in `ledger` instead of memory or the configuration's Redis.
    pub fn ledger(mut self, ledger: Arc<dyn ReplayLedger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Seals states with `keys` instead of the configuration's.
    pub fn state_keys(mut self, keys: KeyRing) -> Self {
        self.keys = Some(keys);
        self
    }

    /// Sends `token` as the bearer credential to the upstream `name`, instead of reading
    /// the environment variable its configuration names (for secrets kept elsewhere).
    pub fn bearer_token(mut self, name: impl Into<String>, token: impl Into<String>) -> Self {
        self.given.entry(name.into()).or_default().bearer = Some(Secret(token.into()));
        self
    }

    /// Uses `secret` as the client secret of the upstream `name`'s
    /// [`client_credentials`](crate::UpstreamConfig::client_credentials), instead of
    /// reading the environment variable they name.
    pub fn client_secret(mut self, name: impl Into<String>, secret: impl Into<String>) -> Self {
        self.given.entry(name.into()).or_default().client_secret = Some(Secret(secret.into()));
        self
    }

    /// Connects every upstream and builds the server in front of them.
    pub async fn build(self) -> Result<Gateway, StartError> {
        let config = self.config;
        config.check()?;
        let keys = match (self.keys, &config.state_keys_env) {
            (Some(k), _) => k,
            (None, Some(var)) => {
                let text = std::env::var(var)
                    .map_err(|_| StartError::StateKeys(format!("{var} is not set")))?;
                KeyRing::parse(&text).map_err(|e| StartError::StateKeys(e.to_string()))?
            }
            (None, None) => KeyRing::random(),
        };
        let limited = config.rate_limit > 0 || config.tool_rate_limit > 0;
        let redis = match &config.redis {
            Some(url) if self.ledger.is_none() || limited => Some(
                ferry_redis::Redis::connect(ferry_redis::RedisConfig::new(url))
                    .await
                    .map_err(|e| StartError::Redis(e.to_string()))?,
            ),
            _ => None,
        };
        let ledger: Arc<dyn ReplayLedger> = match (self.ledger, &redis) {
            (Some(l), _) => l,
            (None, Some(redis)) => Arc::new(redis.ledger()),
            (None, None) => Arc::new(MemoryLedger::default()),
        };
        // With Redis, every instance on it counts against one budget.
        let (limit, tool_limit) = match &redis {
            Some(redis) => (
                PrincipalLimit::redis(redis, "requests", config.rate_limit),
                PrincipalLimit::redis(redis, "tool", config.tool_rate_limit),
            ),
            None => (
                PrincipalLimit::memory(config.rate_limit),
                PrincipalLimit::memory(config.tool_rate_limit),
            ),
        };
        let meter: Arc<dyn Meter> = match (self.meter, &config.usage_log) {
            (Some(m), _) => m,
            (None, Some(path)) => {
                Arc::new(
                    JsonLinesMeter::open(path).map_err(|source| StartError::UsageLog {
                        path: path.display().to_string(),
                        source,
                    })?,
                )
            }
            (None, None) => Arc::new(NoMeter),
        };
        let mut dev_tokens = StaticTokens::new();
        for spec in &config.dev_tokens {
            let (name, token) = spec
                .split_once('=')
                .filter(|(n, t)| !n.is_empty() && !t.is_empty())
                .ok_or_else(|| StartError::Auth("a dev token is written NAME=TOKEN".into()))?;
            dev_tokens = dev_tokens.with(name, token);
        }
        let mut given = self.given;
        let connecting = config
            .upstreams
            .iter()
            .cloned()
            .map(|u| {
                let given = given.remove(&u.name).unwrap_or_default();
                Upstream::connect(u, given)
            })
            .collect::<Vec<_>>();
        let upstreams = futures::future::try_join_all(connecting).await?;
        let tasks = crate::tasks::TaskIds::new(keys.clone());
        let guard = StateGuard::new(keys).with_ttl(config.state_ttl());
        let metrics = Arc::new(Metrics::default());
        let core = Arc::new(Core {
            upstreams,
            envelopes: Envelopes::new(guard, ledger),
            meter,
            metrics: Arc::clone(&metrics),
            max_rounds: config.max_rounds,
            page_size: config.page_size,
            routes: RwLock::new(Routes::default()),
            limit,
            tool_limit,
            bridge: crate::bridge::Bridge::new(
                config.max_held_calls,
                config.state_ttl() + crate::bridge::HOLD_MARGIN,
                metrics.held_calls(),
            ),
            tasks,
            advertise: config.advertise_url.clone(),
            peers: reqwest::Client::builder()
                .timeout(crate::upstream::UPSTREAM_TIMEOUT * 2)
                .build()
                .map_err(|e| StartError::Server(e.to_string()))?,
        });
        let server = front_server(&core)?;
        let edge = Edge {
            resource: config.resource.clone(),
            issuer: config.auth_issuer.clone(),
            scopes: config.scopes_supported.clone(),
        };
        Ok(Gateway {
            core,
            server,
            dev_tokens,
            edge,
        })
    }
}

/// Ferry's server, answering what the upstreams offer through the relay.
fn front_server(core: &Arc<Core>) -> Result<Server, StartError> {
    let mut tools = false;
    let mut prompts = false;
    let mut resources = false;
    let mut completions = false;
    let mut tasks = false;
    for u in &core.upstreams {
        let caps = &u.capabilities;
        tasks |= u.offers_tasks();
        tools |= caps.tools.is_some();
        prompts |= caps.prompts.is_some();
        resources |= caps.resources.is_some();
        completions |= caps.completions.is_some();
    }
    let mut builder = Server::builder("ferry-gateway", env!("CARGO_PKG_VERSION"));
    if tools {
        builder = builder.enable_tools();
    }
    if prompts {
        builder = builder.enable_prompts();
    }
    if resources {
        builder = builder.enable_resources();
    }
    if completions {
        builder = builder.enable_completions();
    }
    if tasks {
        builder = builder.extension(ferry_protocol::tasks::EXTENSION, serde_json::json!({}));
    }
    if tasks {
        // Listen streams follow the gateway's task ids on their upstreams.
        builder = builder.task_feed(crate::tasks::Feed(core.clone()));
    }
    builder
        .forward(Relay(core.clone()))
        .build()
        .map_err(|e| StartError::Server(e.to_string()))
}
