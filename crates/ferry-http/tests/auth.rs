//! `BearerAuthLayer`: the principal reaches handlers; without a valid token the answer
//! is 401 with a `WWW-Authenticate: Bearer` challenge (basic/authorization).

mod support;

use ferry_testkit::rpc::{self, call};
use http::StatusCode;
use serde_json::json;
use support::{server, start_with_auth};

/// A valid token sets the principal that handlers see.
#[tokio::test]
async fn tokens_set_the_principal() {
    let (s, _) = server();
    let run = start_with_auth(s, true).await;
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
/// challenge naming the resource metadata, and an invalid one says so.
#[tokio::test]
async fn missing_or_bad_tokens_get_401_with_a_challenge() {
    let (s, _) = server();
    let run = start_with_auth(s, true).await;
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
        (
            run.client.post(&msg).header("authorization", "Bearer"),
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
        let body = res.json().await;
        assert!(body.get("error").is_some());
    }
    run.stop().await;
}

/// With optional authentication, requests without a token run anonymously, but an
/// invalid token is still refused.
#[tokio::test]
async fn optional_authentication_lets_anonymous_requests_through() {
    let (s, _) = server();
    let run = start_with_auth(s, false).await;
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
