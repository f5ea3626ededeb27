//! The HTTP transport with an authorizer: ferry-everything behind a bearer-token check,
//! with its protected resource metadata and a small authorization server on the same
//! loopback origin.

mod common;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use ferry_client::ferry_oauth::{Grant, OAuthAuthorizer, StaticClient};
use ferry_client::{Client, EraCache, EraMode, Error};
use ferry_everything::app::{PageState, StaticTokens, router};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use serde_json::json;

const TOKEN: &str = "issued-access-token";

fn json_reply(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn origin(headers: &HeaderMap) -> String {
    format!("http://{}", headers["host"].to_str().unwrap())
}

/// What the resource saw: method and whether a valid token came with it.
type Seen = Arc<Mutex<Vec<(String, bool)>>>;

async fn server(token_error: bool) -> (common::TestServer, Seen) {
    let e = build(Options::default()).expect("build ferry-everything");
    let state = Arc::new(PageState {
        connections: e.connections.clone(),
        links: e.links.clone(),
        tokens: StaticTokens::new(),
    });
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let mcp = router(e.server, HttpConfig::default(), state, false)
        .expect("the application builds")
        .layer(axum::middleware::from_fn(
            move |req: Request, next: Next| {
                let log = log.clone();
                async move {
                    let ok = req
                        .headers()
                        .get("authorization")
                        .is_some_and(|v| v == format!("Bearer {TOKEN}").as_str());
                    log.lock().unwrap().push((req.method().to_string(), ok));
                    if !ok && req.uri().path() == "/mcp" {
                        let prm = format!(
                            "{}/.well-known/oauth-protected-resource/mcp",
                            origin(req.headers())
                        );
                        return (
                            StatusCode::UNAUTHORIZED,
                            [(
                                "www-authenticate",
                                format!("Bearer resource_metadata=\"{prm}\""),
                            )],
                        )
                            .into_response();
                    }
                    let r: Response = next.run(req).await;
                    r
                }
            },
        ));
    let app = Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(|h: HeaderMap| async move {
                let o = origin(&h);
                json_reply(
                    StatusCode::OK,
                    json!({"resource": format!("{o}/mcp"), "authorization_servers": [o]}),
                )
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(|h: HeaderMap| async move {
                let o = origin(&h);
                json_reply(
                    StatusCode::OK,
                    json!({
                        "issuer": o,
                        "token_endpoint": format!("{o}/token"),
                        "grant_types_supported": ["client_credentials"],
                        "token_endpoint_auth_methods_supported": ["client_secret_post"],
                        "code_challenge_methods_supported": ["S256"],
                    }),
                )
            }),
        )
        .route(
            "/token",
            post(move |body: String| async move {
                let form: std::collections::HashMap<&str, &str> = body
                    .split('&')
                    .filter_map(|kv| kv.split_once('='))
                    .collect();
                let good = form.get("grant_type") == Some(&"client_credentials")
                    && form.get("client_secret") == Some(&"svc-secret")
                    && !token_error;
                if good {
                    json_reply(
                        StatusCode::OK,
                        json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}),
                    )
                } else {
                    json_reply(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}))
                }
            }),
        )
        .merge(mcp);
    (common::serve(app).await, seen)
}

fn authorizer() -> OAuthAuthorizer {
    OAuthAuthorizer::builder()
        .grant(Grant::ClientCredentials)
        .static_client(StaticClient::new("svc").secret("svc-secret"))
        .build()
        .unwrap()
}

async fn client(url: &str, era: EraMode) -> Result<Client, Error> {
    Client::builder()
        .http(url)
        .era(era)
        .era_cache(Arc::new(EraCache::new()))
        .authorizer(authorizer())
        .build()
        .await
}

#[tokio::test]
async fn modern_requests_are_authorized_after_one_401() {
    let (srv, seen) = server(false).await;
    let client = client(&srv.url, EraMode::Auto).await.unwrap();
    assert!(!client.list_tools().await.unwrap().is_empty());
    client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    client.close().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let refused = seen.iter().filter(|(_, ok)| !ok).count();
    assert_eq!(refused, 1, "{seen:?}");
    assert!(seen.len() >= 4);
}

#[tokio::test]
async fn legacy_sessions_authorize_every_request() {
    let (srv, seen) = server(false).await;
    let client = client(&srv.url, EraMode::Legacy).await.unwrap();
    client.list_tools().await.unwrap();
    // Give the standalone GET stream a moment to open.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    client.close().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.iter().filter(|(_, ok)| !ok).count(), 1, "{seen:?}");
    for m in ["GET", "DELETE"] {
        assert!(
            seen.iter().any(|(x, ok)| x == m && *ok),
            "no authorized {m}: {seen:?}"
        );
    }
}

#[tokio::test]
async fn a_failed_authorization_is_an_authorization_error() {
    let (srv, _) = server(true).await;
    let err = client(&srv.url, EraMode::Auto).await.unwrap_err();
    assert!(matches!(err, Error::Authorization(_)), "{err}");
    assert!(err.to_string().contains("invalid_client"), "{err}");
}
