//! `AuthLayer` with `StaticTokens` in front of ferry-http's endpoint, added with the serve
//! builder's `.layer(..)`: the principal reaches handlers; without a valid token the
//! answer is 401 with a `WWW-Authenticate: Bearer` challenge (basic/authorization).

use std::future::IntoFuture;
use std::time::Duration;

use ferry_auth::{AuthLayer, ResourceMetadata, StaticTokens};
use ferry_http::{HttpConfig, McpService};
use ferry_server::Server;
use ferry_testkit::probe::whoami;
use ferry_testkit::rpc::{self, call};
use ferry_testkit::serve::Running;
use http::StatusCode;
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("auth-endpoint-test", "1")
        .tool(whoami())
        .build()
        .expect("server builds")
}

/// The endpoint behind `AuthLayer` with tokens for alice and bob; `required: false`
/// lets requests without a token through anonymously.
async fn start_with_auth(required: bool) -> Running {
    let tokens = StaticTokens::new()
        .with("alice", "alice-token")
        .with("bob", "bob-token");
    let metadata = ResourceMetadata::new("http://127.0.0.1").unwrap();
    let mut builder = AuthLayer::builder(metadata, tokens);
    if !required {
        builder = builder.allow_anonymous();
    }
    let auth = builder.build().unwrap();
    let config = HttpConfig::builder()
        .drain_grace(Duration::ZERO)
        .build()
        .unwrap();
    Running::spawn("/mcp", |listener, stopped| {
        ferry_http::serve(listener, McpService::new(server(), config))
            .layer(auth)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .into_future()
    })
    .await
}

/// A valid token sets the principal that handlers see.
#[tokio::test]
async fn tokens_set_the_principal() {
    let run = start_with_auth(true).await;
    for (token, who) in [("alice-token", "alice"), ("bob-token", "bob")] {
        let r = run
            .client
            .with_token(token)
            .post(&call(1, "whoami", json!({}), json!({})))
            .send()
            .await;
        assert_eq!(rpc::text(&r.json().await), who);
    }
    run.stop().await;
}

/// When tokens are required, a missing or invalid token gets 401 with a Bearer
/// challenge naming the resource metadata, and an invalid one says so. `Bearer` with no
/// token is a malformed request: 400 with `invalid_request` (RFC 6750 §3.1).
#[tokio::test]
async fn missing_or_bad_tokens_get_401_with_a_challenge() {
    let run = start_with_auth(true).await;
    let msg = call(1, "whoami", json!({}), json!({}));
    let cases = [
        (run.client.post(&msg), false),
        (run.client.with_token("mallory-token").post(&msg), true),
        (
            run.client
                .with_token("alice-token ")
                .post(&msg)
                .header("authorization", "Basic YWxpY2U6eA=="),
            false,
        ),
    ];
    for (i, (post, invalid)) in cases.into_iter().enumerate() {
        let res = post.send().await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "case {i}");
        let challenge = res
            .header("www-authenticate")
            .expect("a challenge")
            .to_owned();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        assert!(
            challenge.contains(
                "resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\""
            ),
            "{challenge}"
        );
        assert_eq!(
            challenge.contains("error=\"invalid_token\""),
            invalid,
            "case {i}: {challenge}"
        );
        // Parsed as plain JSON: the layer's own error codes are not MCP's.
        let body: Value = serde_json::from_slice(&res.bytes().await).expect("a JSON body");
        assert!(body.get("error").is_some());
    }
    let malformed = [run.client.post(&msg).header("authorization", "Bearer")];
    for (i, post) in malformed.into_iter().enumerate() {
        let res = post.send().await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "malformed case {i}");
        let challenge = res
            .header("www-authenticate")
            .expect("a challenge")
            .to_owned();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        assert!(
            challenge.contains("error=\"invalid_request\""),
            "malformed case {i}: {challenge}"
        );
        // Parsed as plain JSON: the layer's own error codes are not MCP's.
        let body: Value = serde_json::from_slice(&res.bytes().await).expect("a JSON body");
        assert!(body.get("error").is_some());
    }
    run.stop().await;
}

/// With optional authentication, requests without a token run anonymously, but an
/// invalid token is still refused.
#[tokio::test]
async fn optional_authentication_lets_anonymous_requests_through() {
    let run = start_with_auth(false).await;
    let msg = call(1, "whoami", json!({}), json!({}));
    assert_eq!(
        rpc::text(&run.client.post(&msg).send().await.json().await),
        "anonymous"
    );
    assert_eq!(
        rpc::text(
            &run.client
                .with_token("bob-token")
                .post(&msg)
                .send()
                .await
                .json()
                .await
        ),
        "bob"
    );
    let bad = run.client.with_token("nobody").post(&msg).send().await;
    assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
    run.stop().await;
}
