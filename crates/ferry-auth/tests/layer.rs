//! The layer over HTTP on loopback: challenges, malformed credentials, principals,
//! scopes, the 403 step-up challenge, anonymous access, caching and failing closed.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferry_auth::testing::TestIssuer;
use ferry_auth::{
    AuthLayer, InvalidToken, JwtValidator, ResourceMetadata, StaticTokens, TokenError,
    TokenValidator, ValidateFuture, VerifiedToken,
};
use ferry_server::Principal;
use http::StatusCode;
use serde_json::json;
use support::{Endpoint, body, challenges, serve};

fn metadata(resource: &str, issuer: &str) -> ResourceMetadata {
    ResourceMetadata::new(resource)
        .unwrap()
        .authorization_server(issuer)
        .unwrap()
        .scopes_supported(["mcp:tools", "offline_access"])
        .resource_name("Test server")
}

async fn jwt_endpoint(
    issuer: &TestIssuer,
    configure: impl FnOnce(ferry_auth::AuthLayerBuilder) -> ferry_auth::AuthLayerBuilder,
) -> Endpoint {
    let iss = issuer.issuer().to_owned();
    serve(move |resource| {
        let v = JwtValidator::builder(&iss, resource).build().unwrap();
        configure(AuthLayer::builder(metadata(resource, &iss), v))
            .build()
            .unwrap()
    })
    .await
}

#[tokio::test]
async fn missing_and_invalid_tokens_get_401_challenges() {
    let issuer = TestIssuer::start().await;
    let ep = jwt_endpoint(&issuer, |b| b).await;
    let url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        ep.addr
    );

    for (what, call) in [
        ("no header", ep.post(None)),
        ("another scheme", ep.post(Some("Basic YWxpY2U6eA=="))),
    ] {
        let res = call.send().await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{what}");
        assert_eq!(
            challenges(&res),
            [format!(
                r#"Bearer resource_metadata="{url}", scope="mcp:tools""#
            )],
            "{what}"
        );
        let b = body(res).await;
        assert_eq!(b["jsonrpc"], "2.0");
        assert_eq!(b["error"]["code"], ferry_auth::codes::UNAUTHORIZED);
    }
    let resource = ep.resource();
    for (what, token) in [
        ("garbage", "not-a-jwt".to_owned()),
        ("expired", issuer.expired_token(&resource, "alice")),
        ("other audience", issuer.wrong_audience_token("alice")),
        ("alg none", issuer.none_alg_token(&resource, "alice")),
        (
            "unknown kid",
            issuer.unknown_kid_token(&resource, "alice", "zzz"),
        ),
    ] {
        let res = ep.bearer(&token).send().await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{what}");
        let c = challenges(&res);
        assert_eq!(c.len(), 1);
        assert!(
            c[0].starts_with(r#"Bearer error="invalid_token", "#),
            "{what}: {c:?}"
        );
        assert!(
            c[0].contains(&format!(r#"resource_metadata="{url}""#)),
            "{c:?}"
        );
        assert!(c[0].contains(r#"scope="mcp:tools""#), "{c:?}");
        let b = body(res).await;
        assert_eq!(b["error"]["code"], -32001);
        assert!(
            !b.to_string().contains(&token),
            "the body never echoes the token"
        );
    }
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn malformed_credentials_get_400() {
    let issuer = TestIssuer::start().await;
    let ep = jwt_endpoint(&issuer, |b| b).await;
    let good = issuer.token(&ep.resource(), "alice", "");
    let cases = [
        ep.post(Some("Bearer")),
        ep.post(Some("Bearer ")),
        ep.post(Some(&format!("Bearer {good}, Basic eHg="))),
        ep.post(Some(&format!("Bearer DPoP {good}"))),
        ep.post(Some("Bearer a\"b")),
        ep.post(Some("Bearer a=b")),
        ep.bearer(&good)
            .append("authorization", &format!("Bearer {good}")),
        ep.post(Some(&format!("Bearer {}", "a".repeat(17 * 1024)))),
    ];
    for (i, call) in cases.into_iter().enumerate() {
        let res = call.send().await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "case {i}");
        let c = challenges(&res);
        assert!(
            c[0].starts_with(r#"Bearer error="invalid_request""#),
            "case {i}: {c:?}"
        );
        assert_eq!(body(res).await["error"]["code"], -32600, "case {i}");
    }
    assert_eq!(
        ep.bearer(&good).send().await.status,
        StatusCode::OK,
        "the control case"
    );
    // A token in the query string is refused even with a good header.
    let q = ferry_testkit::http::Client::new(ep.addr, &format!("/mcp?access_token={good}"));
    // axum routes by path, so the query reaches the layer.
    let res = q
        .with_token(&good)
        .call(http::Method::POST)
        .body("{}")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST);
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn a_valid_token_sets_the_principal_with_implied_scopes() {
    let issuer = TestIssuer::start().await;
    let ep = jwt_endpoint(&issuer, |b| b.imply("admin", ["files", "users:read"])).await;
    let token = issuer.token(&ep.resource(), "alice", "admin mcp:tools");
    let res = ep.bearer(&token).send().await;
    assert_eq!(res.status, StatusCode::OK);
    let b = body(res).await;
    assert_eq!(b["subject"], "alice");
    assert_eq!(b["issuer"], issuer.issuer());
    assert_eq!(b["client_id"], "test-client");
    assert_eq!(b["scopes"], "admin mcp:tools files users:read");
    assert_eq!(
        b["id"],
        json!(serde_json::to_string(&(issuer.issuer(), "alice", "test-client")).unwrap())
    );
    // The DPoP scheme is not taken without DPoP: like no token at all.
    let res = ep.post(Some(&format!("DPoP {token}"))).send().await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    assert!(!challenges(&res)[0].contains("error="));
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn scopes_required_for_every_request_get_403() {
    let issuer = TestIssuer::start().await;
    let ep = jwt_endpoint(&issuer, |b| b.require_scopes(["mcp", "files:read"])).await;
    let r = ep.resource();
    let res = ep.post(None).send().await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    assert!(
        challenges(&res)[0].contains(r#"scope="mcp files:read""#),
        "the 401 names the required scopes"
    );

    let res = ep.bearer(&issuer.token(&r, "alice", "mcp")).send().await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    let c = challenges(&res);
    assert!(
        c[0].starts_with(r#"Bearer error="insufficient_scope", "#),
        "{c:?}"
    );
    assert!(c[0].contains(r#"scope="mcp files:read""#), "{c:?}");
    assert!(c[0].contains("resource_metadata="), "{c:?}");
    assert_eq!(body(res).await["error"]["code"], -32003);
    // The hierarchy: `files` covers `files:read`; `mcp:tools` does not cover `mcp`.
    let res = ep
        .bearer(&issuer.token(&r, "alice", "mcp files"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let res = ep
        .bearer(&issuer.token(&r, "alice", "mcp:tools files"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn an_inner_403_with_insufficient_scope_gets_the_union_challenge() {
    let issuer = TestIssuer::start().await;
    let ep = jwt_endpoint(&issuer, |b| b.require_scopes(["mcp"])).await;
    let token = issuer.token(&ep.resource(), "alice", "mcp files:read");
    let res = ep
        .bearer(&token)
        .header("x-need-scopes", "files:read files:write")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    let c = challenges(&res);
    assert_eq!(c.len(), 1);
    assert!(
        c[0].starts_with(r#"Bearer error="insufficient_scope", scope="mcp files:read files:write", resource_metadata=""#),
        "{c:?}"
    );
    // The inner body is kept.
    assert_eq!(body(res).await["id"], 1);
    let token = issuer.token(&ep.resource(), "alice", "mcp files");
    let res = ep
        .bearer(&token)
        .header("x-need-scopes", "files:read files:write")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn the_metadata_is_served_at_both_well_known_uris() {
    let issuer = TestIssuer::start().await;
    let ep = jwt_endpoint(&issuer, |b| b).await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let res = ferry_testkit::http::Client::new(ep.addr, path)
            .call(http::Method::GET)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{path}");
        assert_eq!(res.header("access-control-allow-origin"), Some("*"));
        assert_eq!(res.content_type(), Some("application/json"));
        let m = body(res).await;
        assert_eq!(
            m,
            json!({
                "resource": ep.resource(),
                "authorization_servers": [issuer.issuer()],
                "scopes_supported": ["mcp:tools"],
                "bearer_methods_supported": ["header"],
                "resource_name": "Test server",
            }),
            "{path}"
        );
    }
    let res =
        ferry_testkit::http::Client::new(ep.addr, "/.well-known/oauth-protected-resource/other")
            .call(http::Method::GET)
            .send()
            .await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn anonymous_requests_pass_when_allowed() {
    let ep = serve(|resource| {
        AuthLayer::builder(
            ResourceMetadata::new(resource).unwrap(),
            StaticTokens::new().with("dev", "dev-token"),
        )
        .allow_anonymous()
        .build()
        .unwrap()
    })
    .await;
    assert_eq!(body(ep.post(None).send().await).await["anonymous"], true);
    assert_eq!(
        body(ep.bearer("dev-token").send().await).await["subject"],
        "dev"
    );
    assert_eq!(
        ep.bearer("nope").send().await.status,
        StatusCode::UNAUTHORIZED
    );
    // An anonymous request to an operation that needs scopes is asked for a token.
    let res = ep
        .post(None)
        .header("x-need-scopes", "files:read")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    let c = challenges(&res);
    assert_eq!(c.len(), 1);
    assert!(c[0].starts_with("Bearer resource_metadata="), "{c:?}");
    assert!(c[0].ends_with(r#"scope="files:read""#), "{c:?}");
    // With a token lacking it: the step-up challenge.
    let res = ep
        .bearer("dev-token")
        .header("x-need-scopes", "files:read")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN);
    assert!(
        challenges(&res)[0].starts_with(r#"Bearer error="insufficient_scope", scope="files:read""#)
    );
    ep.stop().await;
}

/// Counts validations; tokens are `user.<name>.<seconds to live>`.
struct Counting(Arc<AtomicUsize>);

impl TokenValidator for Counting {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let r = match token.split('.').collect::<Vec<_>>()[..] {
            ["user", name, ttl] => {
                let exp = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs()
                    + ttl.parse::<u64>().unwrap();
                Ok(VerifiedToken::new(name).with_expiry(exp))
            }
            ["down"] => Err(TokenError::Unavailable("the store is down".into())),
            _ => Err(TokenError::Invalid(InvalidToken::Unknown)),
        };
        Box::pin(std::future::ready(r))
    }
}

#[tokio::test]
async fn valid_tokens_are_cached_until_they_expire() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    let ep = serve(move |resource| {
        AuthLayer::new(ResourceMetadata::new(resource).unwrap(), Counting(c))
    })
    .await;
    for _ in 0..10 {
        let b = body(ep.bearer("user.alice.300").send().await).await;
        assert_eq!(b["subject"], "alice");
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "validated once, then served from the cache"
    );
    for _ in 0..3 {
        assert_eq!(ep.bearer("user.bob.3").send().await.status, StatusCode::OK);
    }
    assert_eq!(count.load(Ordering::SeqCst), 2);
    tokio::time::sleep(Duration::from_millis(3200)).await;
    ep.bearer("user.bob.3").send().await;
    assert_eq!(
        count.load(Ordering::SeqCst),
        3,
        "an expired entry is validated again"
    );
    // Invalid tokens are not cached as valid.
    for _ in 0..2 {
        assert_eq!(
            ep.bearer("bogus").send().await.status,
            StatusCode::UNAUTHORIZED
        );
    }
    ep.stop().await;
}

#[tokio::test]
async fn validation_outages_fail_closed_with_503() {
    let ep = serve(|resource| {
        AuthLayer::new(
            ResourceMetadata::new(resource).unwrap(),
            Counting(Arc::default()),
        )
    })
    .await;
    let res = ep.bearer("down").send().await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(challenges(&res).is_empty());
    assert_eq!(body(res).await["error"]["code"], -32603);
    ep.stop().await;
}

#[tokio::test]
async fn a_principal_set_before_the_layer_is_replaced_or_removed() {
    use tower::{Layer, ServiceExt};
    let layer = AuthLayer::builder(
        ResourceMetadata::new("http://127.0.0.1/mcp").unwrap(),
        StaticTokens::new().with("alice", "a"),
    )
    .allow_anonymous()
    .build()
    .unwrap();
    let svc = layer.layer(tower::service_fn(support::inner));
    let forged = || {
        let mut req = http::Request::new(axum::body::Body::empty());
        req.extensions_mut().insert(Principal::new("mallory"));
        req
    };
    let res = svc.clone().oneshot(forged()).await.unwrap();
    let b: serde_json::Value = serde_json::from_slice(
        &http_body_util::BodyExt::collect(res.into_body())
            .await
            .unwrap()
            .to_bytes(),
    )
    .unwrap();
    assert_eq!(b["anonymous"], true);
    let mut req = forged();
    req.headers_mut()
        .insert("authorization", "Bearer a".parse().unwrap());
    let res = svc.oneshot(req).await.unwrap();
    let b: serde_json::Value = serde_json::from_slice(
        &http_body_util::BodyExt::collect(res.into_body())
            .await
            .unwrap()
            .to_bytes(),
    )
    .unwrap();
    assert_eq!(b["subject"], "alice");
}
