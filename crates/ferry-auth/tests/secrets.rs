//! Tokens and secrets never appear in `Debug` output or in logs, whatever happens to them.

use ferry_auth::testing::{DpopKey, KeyKind, SigningKey, TestIssuer};
use ferry_auth::{
    AuthLayer, ClientAuth, Dpop, IntrospectionValidator, JwtValidator, ResourceMetadata,
    StaticTokens, TokenValidator,
};
use ferry_testkit::logs::Captured;
use tower::{Layer, ServiceExt};

const RESOURCE: &str = "http://127.0.0.1/mcp";

#[tokio::test]
async fn debug_output_holds_no_token_or_secret() {
    let issuer = TestIssuer::start().await;
    let token = issuer.token(RESOURCE, "alice", "x");
    let tokens = StaticTokens::new().with("alice", "static-secret-token");
    let jwt = JwtValidator::builder(issuer.issuer(), RESOURCE)
        .build()
        .unwrap();
    let verified = jwt.validate(&token).await.unwrap();
    let introspection = IntrospectionValidator::builder(RESOURCE)
        .endpoint(issuer.introspection_endpoint())
        .client_credentials("ferry-resource", "resource-secret", ClientAuth::Basic)
        .build()
        .unwrap();
    let layer = AuthLayer::builder(ResourceMetadata::new(RESOURCE).unwrap(), tokens.clone())
        .dpop(Dpop::allowed())
        .build()
        .unwrap();
    let service = layer.layer(tower::service_fn(|_: http::Request<()>| async {
        Ok::<_, std::convert::Infallible>(http::Response::new(axum::body::Body::empty()))
    }));
    let key = SigningKey::generate(KeyKind::Es256, "k");
    let dpop = DpopKey::generate();
    let refusal = jwt
        .validate(&issuer.expired_token(RESOURCE, "a"))
        .await
        .unwrap_err();
    let outputs = [
        format!("{tokens:?}"),
        format!("{jwt:?}"),
        format!("{verified:?}"),
        format!("{introspection:?}"),
        format!("{layer:?}"),
        format!("{service:?}"),
        format!("{key:?}"),
        format!("{dpop:?}"),
        format!("{issuer:?}"),
        format!("{refusal:?} {refusal}"),
        format!("{:?}", Dpop::required()),
        format!("{:?}", layer.metadata().service::<axum::body::Body>()),
    ];
    let key_material = serde_json::to_string(&key.public_jwk()).unwrap();
    for out in &outputs {
        for secret in [
            token.as_str(),
            "static-secret-token",
            "resource-secret",
            token.split('.').nth(2).unwrap(),
        ] {
            assert!(!out.contains(secret), "{out}");
        }
        assert!(!out.contains(&key_material), "no key material: {out}");
    }
    assert!(
        outputs[0].contains("alice"),
        "subjects are shown: {}",
        outputs[0]
    );
    issuer.stop().await;
}

#[tokio::test]
async fn refusals_are_logged_without_the_token() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let issuer = TestIssuer::start().await;
    let (id, secret) = issuer.client_credentials();
    let introspection = IntrospectionValidator::builder(RESOURCE)
        .endpoint(issuer.introspection_endpoint())
        .client_credentials(id, secret.clone(), ClientAuth::Basic)
        .build()
        .unwrap();
    let layer = AuthLayer::new(ResourceMetadata::new(RESOURCE).unwrap(), introspection);
    let svc = layer.layer(tower::service_fn(|_: http::Request<()>| async {
        Ok::<_, std::convert::Infallible>(http::Response::new(axum::body::Body::empty()))
    }));
    let good = issuer.token(RESOURCE, "alice", "");
    let expired = issuer.expired_token(RESOURCE, "alice");
    let foreign = issuer.wrong_audience_token("alice");
    let mut sent = Vec::new();
    for t in [&good, &expired, &foreign, &good] {
        let req = http::Request::builder()
            .header("authorization", format!("Bearer {t}"))
            .body(())
            .unwrap();
        sent.push(svc.clone().oneshot(req).await.unwrap().status());
    }
    issuer.set_available(false);
    let down = issuer.token(RESOURCE, "bob", "");
    let req = http::Request::builder()
        .header("authorization", format!("Bearer {down}"))
        .body(())
        .unwrap();
    sent.push(svc.clone().oneshot(req).await.unwrap().status());
    assert_eq!(sent, [200, 401, 401, 200, 503]);
    issuer.stop().await;

    let logs = captured.text();
    assert!(
        logs.contains("request refused"),
        "refusals are logged: {logs}"
    );
    for t in [&good, &expired, &foreign, &down, &secret] {
        assert!(!logs.contains(t.as_str()), "a token or secret was logged");
        // Not even the signature part.
        if let Some(sig) = t.split('.').nth(2) {
            assert!(!logs.contains(sig), "a token's signature was logged");
        }
    }
}
