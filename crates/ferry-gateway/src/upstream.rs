//! The servers behind the gateway: one Ferry client each, with its edge policy.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ferry_client::handler::{BoxFuture, FormRequest, RootsRequest, SamplingRequest, UrlRequest};
use ferry_client::{CallOptions, Client, Era, EraMode, HandlerCapabilities, InputHandler};
use ferry_oauth::{Grant, OAuthAuthorizer, StaticClient};
use ferry_protocol::capabilities::{ClientCapabilities, ServerCapabilities};
use ferry_protocol::elicitation::ElicitResult;
use ferry_protocol::roots::Root;
use ferry_protocol::sampling::CreateMessageResult;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::bridge::{Asker, BackChannel};
use crate::config::{UpstreamConfig, UpstreamEra, UpstreamTarget};
use crate::error::StartError;

/// How long one request to an upstream may take.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(120);

/// The most pages of one list fetched from an upstream.
pub const MAX_LIST_PAGES: usize = 64;

/// How long a list may be cached and by whom (result.ts `ttlMs`, `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CacheHints {
    pub(crate) ttl_ms: u64,
    pub(crate) public: bool,
}

impl Default for CacheHints {
    /// What a page without hints allows: no caching, and only by its requester.
    fn default() -> Self {
        CacheHints {
            ttl_ms: 0,
            public: false,
        }
    }
}

impl CacheHints {
    fn of(page: &Value) -> Self {
        CacheHints {
            ttl_ms: page.get("ttlMs").and_then(Value::as_u64).unwrap_or(0),
            public: page.get("cacheScope").and_then(Value::as_str) == Some("public"),
        }
    }

    /// The hints of a list merged from lists with `self` and `other`: the shorter
    /// lifetime and the narrower scope.
    pub(crate) fn merge(self, other: CacheHints) -> CacheHints {
        CacheHints {
            ttl_ms: self.ttl_ms.min(other.ttl_ms),
            public: self.public && other.public,
        }
    }
}

/// A credential: shown as `<redacted>` in `Debug`.
#[derive(Clone)]
pub(crate) struct Secret(pub(crate) String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The credentials given to the gateway's builder for one upstream, instead of the
/// environment variables its configuration names.
#[derive(Debug, Default)]
pub(crate) struct Given {
    pub(crate) bearer: Option<Secret>,
    pub(crate) client_secret: Option<Secret>,
}

/// One connected upstream.
pub struct Upstream {
    pub(crate) config: UpstreamConfig,
    pub(crate) client: Client,
    pub(crate) capabilities: ServerCapabilities,
    /// The bridged calls running on a stdio upstream ([`BackChannel`]).
    pub(crate) back: Option<Arc<BackChannel>>,
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The client holds the upstream's credential: show only the settings.
        f.debug_struct("Upstream")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Declares every kind of input to upstreams, so they ask what the gateway's clients can
/// answer; the questions come back inside `InputRequiredResult`s and go to the client, or,
/// from a 2025-11-25 upstream over HTTP, to the call's bridge ([`crate::bridge`]). A
/// 2025-11-25 question that belongs to no call's stream (on stdio, every one) reaches
/// this handler: it goes to the one bridged call it can belong to ([`BackChannel`]), and
/// is declined when there is none, or more than one.
struct Relay {
    back: Option<Arc<BackChannel>>,
}

impl Relay {
    /// The bridged call a question arriving on its own belongs to, if it can tell, and
    /// if that call's client declared `kind` (checked by `declared`).
    fn call(&self, declared: fn(&HandlerCapabilities) -> bool, kind: &str) -> Option<Asker> {
        let asker = self.back.as_ref().and_then(|b| b.sole());
        match asker {
            Some(a) if declared(&a.capabilities()) => Some(a),
            Some(_) => {
                tracing::warn!(
                    kind,
                    "the client did not declare what the upstream asks; declining"
                );
                None
            }
            None => {
                tracing::warn!(
                    kind,
                    "a 2025-11-25 upstream asked outside any call the gateway can tie it to; declining"
                );
                None
            }
        }
    }
}

impl InputHandler for Relay {
    // Sampling and roots are deprecated, but upstreams that still ask for them are
    // relayed to clients that still answer them.
    #[allow(deprecated)]
    fn capabilities(&self) -> HandlerCapabilities {
        HandlerCapabilities::none()
            .elicitation_form()
            .elicitation_url()
            .sampling(true)
            .roots()
    }

    fn elicit_form<'a>(&'a self, request: &'a FormRequest) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async move {
            match self.call(
                HandlerCapabilities::has_elicitation_form,
                "elicitation/form",
            ) {
                Some(a) => a.elicit_form(request).await,
                None => ElicitResult::decline(),
            }
        })
    }

    fn elicit_url<'a>(&'a self, request: &'a UrlRequest) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async move {
            match self.call(HandlerCapabilities::has_elicitation_url, "elicitation/url") {
                Some(a) => a.elicit_url(request).await,
                None => ElicitResult::decline(),
            }
        })
    }

    fn create_message<'a>(
        &'a self,
        request: &'a SamplingRequest,
    ) -> BoxFuture<'a, Option<CreateMessageResult>> {
        Box::pin(async move {
            let needs = if request.params.uses_tools() {
                HandlerCapabilities::has_sampling_tools
            } else {
                HandlerCapabilities::has_sampling
            };
            self.call(needs, "sampling")?.create_message(request).await
        })
    }

    fn list_roots<'a>(&'a self, request: &'a RootsRequest) -> BoxFuture<'a, Option<Vec<Root>>> {
        Box::pin(async move {
            self.call(HandlerCapabilities::has_roots, "roots")?
                .list_roots(request)
                .await
        })
    }
}

impl Upstream {
    /// Connects to the upstream `config` describes (era detection and fallback are the
    /// client's). Its credential is the bearer token or client secret in `given`, or else
    /// read from the environment variable the configuration names.
    pub(crate) async fn connect(
        config: UpstreamConfig,
        given: Given,
    ) -> Result<Upstream, StartError> {
        let name = config.name.clone();
        let target = config.target()?;
        let back = matches!(target, UpstreamTarget::Stdio(_)).then(Arc::default);
        let mut builder = Client::builder()
            .client_info("ferry-gateway", env!("CARGO_PKG_VERSION"))
            .input_handler(Relay { back: back.clone() })
            .era(match config.era {
                UpstreamEra::Modern => EraMode::Modern,
                UpstreamEra::Legacy => EraMode::Legacy,
                _ => EraMode::Auto,
            })
            .timeout(UPSTREAM_TIMEOUT);
        builder = match &target {
            UpstreamTarget::Http(url) => builder.http(url.clone()),
            UpstreamTarget::Stdio(words) => {
                let mut cmd = tokio::process::Command::new(&words[0]);
                cmd.args(&words[1..]);
                builder.stdio(cmd)
            }
        };
        let from_env = |var: &String| {
            std::env::var(var)
                .map(Secret)
                .map_err(|_| StartError::MissingCredential {
                    name: name.clone(),
                    var: var.clone(),
                })
        };
        if let Some(cc) = &config.client_credentials {
            let secret = match (given.client_secret, &cc.client_secret_env) {
                (Some(s), _) => s,
                (None, Some(var)) => from_env(var)?,
                (None, None) => {
                    return Err(StartError::Auth(format!(
                        "upstream {name}: client_credentials need client_secret_env"
                    )));
                }
            };
            let oauth = OAuthAuthorizer::builder()
                .grant(Grant::ClientCredentials)
                .static_client(
                    StaticClient::new(&cc.client_id)
                        .secret(secret.0)
                        .issuer(&cc.issuer),
                )
                .build()
                .map_err(|e| StartError::Auth(format!("upstream {name}: {e}")))?;
            let oauth = Arc::new(oauth);
            if let (UpstreamTarget::Http(url), false) = (&target, cc.scopes.is_empty()) {
                let url = url::Url::parse(url)
                    .map_err(|e| StartError::Auth(format!("upstream {name}: {e}")))?;
                oauth
                    .authorize_with_scopes(&url, cc.scopes.clone())
                    .await
                    .map_err(|e| StartError::Auth(format!("upstream {name}: {e}")))?;
            }
            builder = builder.shared_authorizer(oauth);
        } else {
            let token = match (given.bearer, &config.bearer_env) {
                (Some(t), _) => Some(t),
                (None, Some(var)) => Some(from_env(var)?),
                (None, None) => None,
            };
            if let Some(Secret(token)) = token {
                builder = builder.bearer_token(token);
            }
        }
        let client = builder
            .build()
            .await
            .map_err(|source| StartError::Upstream {
                name: name.clone(),
                source,
            })?;
        // A client that knew the server's era already may not have asked what it offers.
        let capabilities = match client.server_capabilities() {
            Some(c) => c,
            None => {
                client
                    .discover()
                    .await
                    .map_err(|source| StartError::Upstream { name, source })?
                    .capabilities
            }
        };
        Ok(Upstream {
            config,
            client,
            capabilities,
            back,
        })
    }

    /// The upstream's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Whether its calls go through the bridge: a 2025-11-25 upstream, which asks in
    /// the middle of a call.
    pub(crate) fn bridges(&self) -> bool {
        self.client.era() == Era::Legacy
    }

    /// Whether it offers the Tasks extension.
    pub(crate) fn offers_tasks(&self) -> bool {
        self.capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(ferry_protocol::tasks::EXTENSION))
    }

    /// The options of one request that declares `capabilities` (the client's, so the
    /// upstream asks only what the client can answer).
    pub(crate) fn options(&self, capabilities: &ClientCapabilities) -> CallOptions {
        let mut caps =
            serde_json::to_value(capabilities).unwrap_or_else(|_| Value::Object(Map::new()));
        // Tasks are relayed only from an upstream that offers them (the gateway then
        // advertises them too); another must answer in full.
        if !self.offers_tasks()
            && let Some(extensions) = caps.get_mut("extensions").and_then(Value::as_object_mut)
        {
            extensions.remove(ferry_protocol::tasks::EXTENSION);
        }
        CallOptions::new()
            .bypass_cache()
            .meta(ferry_protocol::meta::CLIENT_CAPABILITIES, caps)
    }

    /// Sends one request, declaring the client's `capabilities` (so the upstream asks
    /// only what the client can answer), and returns the raw result. Never cached: every
    /// round reaches the upstream.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        capabilities: &ClientCapabilities,
    ) -> Result<Value, ferry_client::Error> {
        self.send(method, params, &self.options(capabilities)).await
    }

    /// Sends one request with `options` (from [`Upstream::options`]) and returns the raw
    /// result.
    pub(crate) async fn send(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, ferry_client::Error> {
        self.client
            .request(method, Value::Object(params), options)
            .await
    }

    /// [`send`](Upstream::send), with the result as the upstream wrote it (checked for a
    /// valid `resultType`), for relaying without parsing it.
    pub(crate) async fn send_raw(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Box<RawValue>, ferry_client::Error> {
        self.client
            .request_raw(method, Value::Object(params), options)
            .await
    }

    /// Every item of a list (`member` of `method`'s results), following pagination,
    /// with the first page's caching hints.
    pub(crate) async fn list_all(
        &self,
        method: &str,
        member: &str,
    ) -> Result<(Vec<Value>, CacheHints), ferry_client::Error> {
        let mut items = Vec::new();
        let mut hints: Option<CacheHints> = None;
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let mut params = Map::new();
            if let Some(c) = cursor.take() {
                params.insert("cursor".into(), Value::String(c));
            }
            let page = self
                .client
                .request(method, Value::Object(params), &CallOptions::new())
                .await?;
            hints.get_or_insert_with(|| CacheHints::of(&page));
            if let Some(Value::Array(list)) = page.get(member) {
                items.extend(list.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !c.is_empty() => cursor = Some(c.to_owned()),
                _ => break,
            }
        }
        Ok((items, hints.unwrap_or_default()))
    }

    /// Closes the connection (a stdio upstream is stopped).
    pub async fn close(&self) {
        let _ = self.client.close().await;
    }
}
