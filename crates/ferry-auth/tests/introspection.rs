//! The introspection validator against the test issuer's RFC 7662 endpoint.

use std::time::Duration;

use ferry_auth::testing::TestIssuer;
use ferry_auth::{ClientAuth, IntrospectionValidator, InvalidToken, TokenError, TokenValidator};
use serde_json::json;

const RESOURCE: &str = "https://mcp.example.com/mcp";

fn validator(issuer: &TestIssuer, auth: ClientAuth) -> IntrospectionValidator {
    let (id, secret) = issuer.client_credentials();
    IntrospectionValidator::builder(RESOURCE)
        .endpoint(issuer.introspection_endpoint())
        .client_credentials(id, secret, auth)
        .build()
        .unwrap()
}

#[tokio::test]
async fn active_tokens_are_accepted_with_either_client_authentication() {
    let issuer = TestIssuer::start().await;
    for auth in [ClientAuth::Basic, ClientAuth::Post] {
        let v = validator(&issuer, auth);
        let t = v
            .validate(&issuer.token(RESOURCE, "alice", "files:read"))
            .await
            .unwrap();
        assert_eq!(t.subject(), "alice");
        assert_eq!(t.issuer(), Some(issuer.issuer()));
        assert_eq!(t.client_id(), Some("test-client"));
        assert_eq!(t.scopes(), ["files:read"]);
        assert!(t.cache_for().is_some());
    }
    // Wrong client credentials: the server refuses us, so we cannot judge (fail closed).
    let v = IntrospectionValidator::builder(RESOURCE)
        .endpoint(issuer.introspection_endpoint())
        .client_credentials("ferry-resource", "wrong", ClientAuth::Basic)
        .build()
        .unwrap();
    assert!(matches!(
        v.validate(&issuer.token(RESOURCE, "alice", "")).await,
        Err(TokenError::Unavailable(_))
    ));
    issuer.stop().await;
}

#[tokio::test]
async fn inactive_revoked_and_foreign_tokens_are_refused() {
    let issuer = TestIssuer::start().await;
    let v = IntrospectionValidator::builder(RESOURCE)
        .endpoint(issuer.introspection_endpoint())
        .client_credentials("ferry-resource", "resource-secret", ClientAuth::Basic)
        .issuer(issuer.issuer())
        .cache_capacity(0)
        .build()
        .unwrap();
    let err = |r: Result<_, TokenError>| match r {
        Err(TokenError::Invalid(why)) => why,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        err(v.validate("opaque-unknown").await),
        InvalidToken::Inactive
    );
    assert_eq!(
        err(v.validate(&issuer.expired_token(RESOURCE, "a")).await),
        InvalidToken::Inactive
    );
    assert_eq!(
        err(v.validate(&issuer.wrong_audience_token("a")).await),
        InvalidToken::Audience
    );
    let t = issuer.token(RESOURCE, "alice", "");
    assert!(v.validate(&t).await.is_ok());
    issuer.revoke(&t);
    assert_eq!(err(v.validate(&t).await), InvalidToken::Inactive);

    // Opaque tokens: the answer's claims decide.
    issuer.register_opaque(
        "op-1",
        json!({"sub": "carol", "aud": RESOURCE, "scope": "x y"}),
    );
    assert_eq!(v.validate("op-1").await.unwrap().scopes(), ["x", "y"]);
    issuer.register_opaque("op-2", json!({"sub": "carol"}));
    assert_eq!(
        err(v.validate("op-2").await),
        InvalidToken::Audience,
        "aud is required by default"
    );
    issuer.register_opaque(
        "op-3",
        json!({"sub": "carol", "aud": RESOURCE, "iss": "https://evil"}),
    );
    assert_eq!(err(v.validate("op-3").await), InvalidToken::Issuer);
    issuer.register_opaque("op-4", json!({"aud": RESOURCE}));
    assert_eq!(
        err(v.validate("op-4").await),
        InvalidToken::MissingClaim("sub")
    );
    let lenient = IntrospectionValidator::builder(RESOURCE)
        .endpoint(issuer.introspection_endpoint())
        .client_credentials("ferry-resource", "resource-secret", ClientAuth::Post)
        .audience_optional()
        .build()
        .unwrap();
    assert!(lenient.validate("op-2").await.is_ok());
    issuer.stop().await;
}

#[tokio::test]
async fn answers_are_cached_for_the_configured_time_only() {
    let issuer = TestIssuer::start().await;
    let (id, secret) = issuer.client_credentials();
    let v = IntrospectionValidator::builder(RESOURCE)
        .endpoint(issuer.introspection_endpoint())
        .client_credentials(id, secret, ClientAuth::Basic)
        .cache_ttl(Duration::from_millis(300))
        .build()
        .unwrap();
    let t = issuer.token(RESOURCE, "alice", "");
    for _ in 0..5 {
        assert!(v.validate(&t).await.is_ok());
    }
    assert_eq!(issuer.introspection_calls(), 1);
    issuer.revoke(&t);
    assert!(v.validate(&t).await.is_ok(), "still cached");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        v.validate(&t).await.is_err(),
        "the revocation shows once the answer expires"
    );
    assert_eq!(issuer.introspection_calls(), 2);
    issuer.stop().await;
}

#[tokio::test]
async fn the_endpoint_is_discovered_and_outages_fail_closed() {
    let issuer = TestIssuer::start().await;
    let (id, secret) = issuer.client_credentials();
    let v = IntrospectionValidator::builder(RESOURCE)
        .issuer(issuer.issuer())
        .client_credentials(id, secret, ClientAuth::Basic)
        .build()
        .unwrap();
    assert!(v.validate(&issuer.token(RESOURCE, "a", "")).await.is_ok());
    issuer.set_available(false);
    assert!(matches!(
        v.validate(&issuer.token(RESOURCE, "b", "")).await,
        Err(TokenError::Unavailable(_))
    ));
    assert!(
        IntrospectionValidator::builder(RESOURCE)
            .client_credentials("a", "b", ClientAuth::Basic)
            .build()
            .is_err(),
        "an endpoint or an issuer is needed"
    );
    issuer.stop().await;
}
