//! The HTTP application: the MCP endpoint, behind `ferry-auth`'s resource-server layer
//! when authorization is configured, plus the account-connection page that
//! `connect_account` sends users to and the Protected Resource Metadata.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Form as FormBody, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use ferry_auth::{AuthLayer, AuthService, Dpop, JwtValidator, ResourceMetadata, VerifiedToken};
use ferry_http::{HttpConfig, McpService};
use ferry_server::{Principal, Server};
use ferry_state::{KeyRing, Sealer};
use serde::{Deserialize, Serialize};

use crate::flows::{Connections, LinkSigner};
use crate::sandbox::Sandbox;
use crate::{Everything, Options, build};

pub use ferry_auth::StaticTokens;

/// The scope `confirm_delete` needs when authorization is on.
pub const DELETE_SCOPE: &str = "files:delete";
/// The scopes the server's tools ask for, as its metadata advertises them.
pub const SCOPES: [&str; 2] = ["files:read", DELETE_SCOPE];

/// Signs connect-page links: the link carries the flow and the user who started it,
/// sealed, so a changed link does not open.
pub struct SealedLinks {
    sealer: Sealer,
    base: String,
    ttl: Duration,
}

#[derive(Serialize, Deserialize)]
struct LinkClaims {
    flow: String,
    principal: String,
    exp: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl SealedLinks {
    /// Links under `base` (e.g. `http://127.0.0.1:3000`), valid for `ttl`.
    pub fn new(keys: KeyRing, base: impl Into<String>, ttl: Duration) -> Self {
        SealedLinks {
            sealer: Sealer::new(keys),
            base: base.into().trim_end_matches('/').to_owned(),
            ttl,
        }
    }

    /// The base URL links start with (no trailing `/`).
    pub fn base(&self) -> &str {
        &self.base
    }

    fn open(&self, token: &str) -> Option<LinkClaims> {
        let bytes = self.sealer.open(token).ok()?;
        let claims: LinkClaims = serde_json::from_slice(&bytes).ok()?;
        (claims.exp >= now()).then_some(claims)
    }
}

impl LinkSigner for SealedLinks {
    fn link(&self, flow: &str, principal: &str) -> String {
        let claims = LinkClaims {
            flow: flow.to_owned(),
            principal: principal.to_owned(),
            exp: now() + self.ttl.as_secs(),
        };
        let token = self
            .sealer
            .seal(&serde_json::to_vec(&claims).unwrap_or_default());
        format!("{}/connect?t={token}", self.base)
    }
}

/// Everything the connect page needs.
pub struct PageState {
    /// The flows.
    pub connections: Arc<Connections>,
    /// Opens links.
    pub links: Arc<SealedLinks>,
    /// Checks the token a user signs in with.
    pub tokens: StaticTokens,
}

impl PageState {
    /// The pages' state for `everything`, signing users in with `tokens`.
    pub fn of(everything: &Everything, tokens: StaticTokens) -> Arc<PageState> {
        Arc::new(PageState {
            connections: everything.connections.clone(),
            links: everything.links.clone(),
            tokens,
        })
    }
}

#[derive(Deserialize)]
struct LinkQuery {
    t: String,
}

#[derive(Deserialize)]
struct Submit {
    t: String,
    #[serde(default)]
    token: String,
}

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><h1>{title}</h1>{body}</body></html>"
    ))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

async fn show(State(state): State<Arc<PageState>>, Query(q): Query<LinkQuery>) -> Response {
    let Some(claims) = state.links.open(&q.t) else {
        return (
            StatusCode::BAD_REQUEST,
            page(
                "Invalid link",
                "<p id=\"result\">This link is invalid or has expired.</p>",
            ),
        )
            .into_response();
    };
    let Some(flow) = state.connections.get(&claims.flow) else {
        return (
            StatusCode::NOT_FOUND,
            page(
                "Unknown request",
                "<p id=\"result\">This connection request does not exist.</p>",
            ),
        )
            .into_response();
    };
    let sign_in = if claims.principal.is_empty() {
        String::new()
    } else {
        "<p><label>Your access token <input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"off\"></label></p>".to_owned()
    };
    page(
        &format!("Connect your {} account", escape(&flow.service)),
        &format!(
            "<form method=\"post\" action=\"connect\"><input type=\"hidden\" name=\"t\" value=\"{}\">{sign_in}\
             <p><button id=\"connect\" type=\"submit\">Connect {}</button></p></form>",
            escape(&q.t),
            escape(&flow.service)
        ),
    )
    .into_response()
}

async fn submit(State(state): State<Arc<PageState>>, FormBody(f): FormBody<Submit>) -> Response {
    let Some(claims) = state.links.open(&f.t) else {
        return (
            StatusCode::BAD_REQUEST,
            page(
                "Invalid link",
                "<p id=\"result\">This link is invalid or has expired.</p>",
            ),
        )
            .into_response();
    };
    // The person on the page must be the one who started the connection.
    let who = if claims.principal.is_empty() {
        Some(String::new())
    } else {
        state.tokens.lookup(&f.token).map(principal_id)
    };
    if who.as_deref() != Some(claims.principal.as_str()) {
        return (
            StatusCode::FORBIDDEN,
            page(
                "Not allowed",
                "<p id=\"result\">This connection request belongs to someone else.</p>",
            ),
        )
            .into_response();
    }
    if !state.connections.complete(&claims.flow) {
        return (
            StatusCode::NOT_FOUND,
            page(
                "Unknown request",
                "<p id=\"result\">This connection request does not exist.</p>",
            ),
        )
            .into_response();
    }
    page(
        "Connected",
        "<p id=\"result\">Connected. You can close this page and return to your client.</p>",
    )
    .into_response()
}

/// The id of the principal `token` stands for, as the authorization layer sets it.
fn principal_id(token: &VerifiedToken) -> String {
    match token.issuer() {
        Some(iss) => Principal::oauth(iss, token.subject()).id().to_owned(),
        None => Principal::new(token.subject()).id().to_owned(),
    }
}

/// The MCP endpoint, behind the authorization layer when authorization is configured.
pub type Endpoint = tower::util::Either<AuthService<McpService>, McpService>;

/// Why the authorization layer could not be set up.
pub type AuthSetupError = Box<dyn std::error::Error + Send + Sync>;

/// Who may call the endpoint.
#[derive(Clone, Debug, Default)]
pub struct AuthOptions {
    /// Development tokens (`--dev-token NAME=TOKEN`).
    pub dev_tokens: StaticTokens,
    /// The authorization server whose JWT access tokens are accepted (`--auth-issuer`):
    /// its keys come from its metadata.
    pub issuer: Option<String>,
    /// Refuse requests without a token. With an issuer they are always refused.
    pub require_auth: bool,
}

impl AuthOptions {
    /// Whether any authorization is configured.
    pub fn is_on(&self) -> bool {
        self.issuer.is_some() || !self.dev_tokens.is_empty()
    }
}

/// The authorization layer for the endpoint whose canonical URI is `resource`, or
/// `None` when no authorization is configured: `ferry-auth`'s resource-server layer, its
/// Protected Resource Metadata naming the issuer and [`SCOPES`], tokens validated as
/// dev tokens first and then as the issuer's JWTs.
pub fn auth_layer(
    options: &AuthOptions,
    resource: &str,
) -> Result<Option<AuthLayer>, AuthSetupError> {
    if !options.is_on() {
        return Ok(None);
    }
    let mut metadata = ResourceMetadata::new(resource)?
        .scopes_supported(SCOPES)
        .resource_name("Ferry everything server");
    let dev = options.dev_tokens.clone();
    let builder = match &options.issuer {
        Some(issuer) => {
            metadata = metadata.authorization_server(issuer)?;
            let jwt = JwtValidator::builder(issuer, resource).build()?;
            // An authorization server that supports DPoP binds its tokens to the
            // client's key (RFC 9449): accept those, with their proofs, and bearer tokens.
            AuthLayer::builder(metadata, dev.or(jwt)).dpop(Dpop::allowed())
        }
        None => {
            let builder = AuthLayer::builder(metadata, dev);
            if options.require_auth {
                builder
            } else {
                builder.allow_anonymous()
            }
        }
    };
    Ok(Some(builder.build()?))
}

/// The canonical resource URI of an endpoint at `path` under `base`
/// (`http://127.0.0.1:3000` and `/mcp` give `http://127.0.0.1:3000/mcp`).
pub fn resource_uri(base: &str, path: &str) -> String {
    format!("{}{path}", base.trim_end_matches('/'))
}

/// The MCP endpoint service (mount it at `/mcp`), behind `auth` if given.
pub fn endpoint(server: Server, config: HttpConfig, auth: Option<AuthLayer>) -> Endpoint {
    tower::ServiceBuilder::new()
        .option_layer(auth)
        .service(McpService::new(server, config))
}

/// The pages and, with authorization, the Protected Resource Metadata at its well-known
/// paths: everything but the endpoint.
pub fn site(state: Arc<PageState>, auth: Option<&AuthLayer>) -> Router {
    let pages = pages(state);
    match auth {
        Some(auth) => pages.merge(auth.metadata().router()),
        None => pages,
    }
}

/// The web pages: the account-connection page `connect_account` links to.
pub fn pages(state: Arc<PageState>) -> Router {
    Router::new()
        .route("/connect", get(show).post(submit))
        .with_state(state)
}

/// The full application as one axum router: `/mcp` (behind the dev tokens in `state`,
/// if any), the connect page and the resource metadata.
pub fn router(
    server: Server,
    config: HttpConfig,
    state: Arc<PageState>,
    require_auth: bool,
) -> Result<Router, AuthSetupError> {
    let options = AuthOptions {
        dev_tokens: state.tokens.clone(),
        issuer: None,
        require_auth,
    };
    let auth = auth_layer(&options, &resource_uri(state.links.base(), "/mcp"))?;
    Ok(router_with(server, config, state, auth))
}

/// The full application as one axum router, with `auth` in front of `/mcp`.
pub fn router_with(
    server: Server,
    config: HttpConfig,
    state: Arc<PageState>,
    auth: Option<AuthLayer>,
) -> Router {
    let site = site(state, auth.as_ref());
    let mcp = endpoint(server, config, auth);
    Router::new().route_service("/mcp", mcp).merge(site)
}

/// The full application of `everything` as one axum router ([`router`]), its pages
/// signing users in with `tokens`, and `/mcp` behind those tokens when there are any.
pub fn app(
    everything: Everything,
    config: HttpConfig,
    tokens: StaticTokens,
    require_auth: bool,
) -> Result<Router, AuthSetupError> {
    let state = PageState::of(&everything, tokens);
    router(everything.server, config, state, require_auth)
}

/// Why [`protected`] could not set the server up.
#[derive(Debug, thiserror::Error)]
pub enum ProtectedError {
    /// The server did not build.
    #[error(transparent)]
    Build(#[from] crate::Error),
    /// The authorization layer did not build.
    #[error("authorization: {0}")]
    Auth(AuthSetupError),
    /// The listener has no local address.
    #[error("the listener's address: {0}")]
    Address(#[from] std::io::Error),
}

/// A server as [`protected`] sets it up, ready to run.
pub struct Protected {
    /// The endpoint's canonical resource URI, `http://ADDR/mcp`.
    pub resource: String,
    /// The server; `.with_graceful_shutdown(..)` or `.into_future()` it.
    pub serve: ferry_http::Serve<Endpoint, Router>,
}

/// The everything server on `listener` as `--auth-issuer ISSUER` sets it up: every
/// request needs a token, checked as the issuer's JWT for the resource `http://ADDR/mcp`;
/// tools declare their scopes (`confirm_delete` needs [`DELETE_SCOPE`]); the Protected
/// Resource Metadata and the pages share the listener. `confirm_delete` acts in `sandbox`
/// (`None`: a temporary one, as [`build`] makes it).
pub fn protected(
    listener: tokio::net::TcpListener,
    issuer: &str,
    config: HttpConfig,
    sandbox: Option<Arc<Sandbox>>,
) -> Result<Protected, ProtectedError> {
    let public_url = format!("http://{}", listener.local_addr()?);
    let everything = build(Options {
        public_url: public_url.clone(),
        require_scopes: true,
        sandbox,
        ..Options::default()
    })?;
    let auth = AuthOptions {
        issuer: Some(issuer.to_owned()),
        require_auth: true,
        ..AuthOptions::default()
    };
    let resource = resource_uri(&public_url, "/mcp");
    let layer = auth_layer(&auth, &resource).map_err(ProtectedError::Auth)?;
    let state = PageState::of(&everything, auth.dev_tokens);
    let serve = ferry_http::serve(listener, McpService::new(everything.server, config))
        .app(site(state, layer.as_ref()))
        .layer(tower::util::option_layer(layer));
    Ok(Protected { resource, serve })
}
