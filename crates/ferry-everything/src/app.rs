//! The HTTP application: the MCP endpoint plus the account-connection page that
//! `connect_account` sends users to.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Form as FormBody, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use ferry_http::{
    BearerAuth, BearerAuthLayer, HttpConfig, McpService, StaticTokens, TokenVerifier,
};
use ferry_server::Server;
use ferry_state::{KeyRing, Sealer};
use serde::{Deserialize, Serialize};

use crate::flows::{Connections, LinkSigner};

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
        state.tokens.verify(&f.token).map(|p| p.id().to_owned())
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

/// The MCP endpoint, behind bearer authentication when dev tokens are configured.
pub type Endpoint = tower::util::Either<BearerAuth<McpService>, McpService>;

/// Bearer authentication with the dev tokens, when there are any: required, or optional
/// (requests without a token then run anonymously).
pub fn auth_layer(tokens: &StaticTokens, require_auth: bool) -> Option<BearerAuthLayer> {
    if tokens.is_empty() {
        return None;
    }
    let layer = BearerAuthLayer::new(tokens.clone());
    Some(if require_auth {
        layer
    } else {
        layer.optional()
    })
}

/// The MCP endpoint service (mount it at `/mcp`).
pub fn endpoint(
    server: Server,
    config: HttpConfig,
    tokens: &StaticTokens,
    require_auth: bool,
) -> Endpoint {
    tower::ServiceBuilder::new()
        .option_layer(auth_layer(tokens, require_auth))
        .service(McpService::new(server, config))
}

/// The web pages: the account-connection page `connect_account` links to.
pub fn pages(state: Arc<PageState>) -> Router {
    Router::new()
        .route("/connect", get(show).post(submit))
        .with_state(state)
}

/// The full application as one axum router: `/mcp` and the connect page.
pub fn router(
    server: Server,
    config: HttpConfig,
    state: Arc<PageState>,
    require_auth: bool,
) -> Router {
    let mcp = endpoint(server, config, &state.tokens, require_auth);
    Router::new().route_service("/mcp", mcp).merge(pages(state))
}
