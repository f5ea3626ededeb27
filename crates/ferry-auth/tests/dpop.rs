//! DPoP on the resource side over HTTP (RFC 9449 §4.3, §7, §9): valid proofs, every
//! refusal, replay, nonces, and DPoP-only resources.

mod support;

use std::time::Duration;

use ferry_auth::testing::{DpopKey, TestIssuer};
use ferry_auth::{AuthLayer, Dpop, JwtValidator, ResourceMetadata};
use http::StatusCode;
use serde_json::json;
use support::{Endpoint, body, challenges, serve};

async fn endpoint(issuer: &TestIssuer, dpop: Dpop) -> Endpoint {
    let iss = issuer.issuer().to_owned();
    serve(move |resource| {
        let v = JwtValidator::builder(&iss, resource).build().unwrap();
        let m = ResourceMetadata::new(resource)
            .unwrap()
            .authorization_server(&iss)
            .unwrap();
        AuthLayer::builder(m, v).dpop(dpop).build().unwrap()
    })
    .await
}

/// A token bound to `key`.
fn bound(issuer: &TestIssuer, resource: &str, key: &DpopKey) -> String {
    let mut c = issuer.claims(resource, "alice");
    c["cnf"] = json!({"jkt": key.jkt()});
    issuer.mint(&c)
}

fn send_dpop(ep: &Endpoint, token: &str, proof: &str) -> ferry_testkit::http::Call {
    ep.post(Some(&format!("DPoP {token}")))
        .header("dpop", proof)
}

#[tokio::test]
async fn a_valid_proof_admits_the_request_and_bad_ones_are_refused() {
    let issuer = TestIssuer::start().await;
    let ep = endpoint(&issuer, Dpop::allowed()).await;
    let url = ep.resource();
    let key = DpopKey::generate();
    let token = bound(&issuer, &url, &key);
    let proof = key.proof("POST", &url, &token, None);
    let res = send_dpop(&ep, &token, &proof).send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(body(res).await["subject"], "alice");

    // The same proof again: replayed.
    let res = send_dpop(&ep, &token, &proof).send().await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    let c = challenges(&res);
    assert!(
        c[0].starts_with(r#"DPoP error="invalid_dpop_proof""#),
        "{c:?}"
    );
    assert!(c[0].contains(r#"algs="RS256 PS256 ES256 EdDSA""#), "{c:?}");

    // htu is normalised: case, default port, query and fragment do not matter.
    let loud = url.replace("http://", "HTTP://") + "?x=1#f";
    let res = send_dpop(&ep, &token, &key.proof("POST", &loud, &token, None))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = || key.proof_claims("POST", &url, &token, None);
    let header = key.proof_header();
    let mut cases: Vec<(&str, String)> = Vec::new();
    let mut c = claims();
    c["htm"] = json!("GET");
    cases.push(("htm", key.sign(&header, &c)));
    let mut c = claims();
    c["htu"] = json!(url.replace("/mcp", "/other"));
    cases.push(("htu", key.sign(&header, &c)));
    let mut c = claims();
    c["iat"] = json!(now - 600);
    cases.push(("old iat", key.sign(&header, &c)));
    let mut c = claims();
    c["iat"] = json!(now + 600);
    cases.push(("future iat", key.sign(&header, &c)));
    let mut c = claims();
    c["ath"] = json!("AAAA");
    cases.push(("ath", key.sign(&header, &c)));
    let mut c = claims();
    c.as_object_mut().unwrap().remove("ath");
    cases.push(("no ath", key.sign(&header, &c)));
    let mut c = claims();
    c.as_object_mut().unwrap().remove("jti");
    cases.push(("no jti", key.sign(&header, &c)));
    let mut h = header.clone();
    h["typ"] = json!("JWT");
    cases.push(("typ", key.sign(&h, &claims())));
    let mut h = header.clone();
    h.as_object_mut().unwrap().remove("jwk");
    cases.push(("no jwk", key.sign(&h, &claims())));
    let mut h = header.clone();
    h["jwk"]["d"] = json!("c2VjcmV0");
    cases.push(("private jwk", key.sign(&h, &claims())));
    let other = DpopKey::generate();
    let mut h = header.clone();
    h["jwk"] = other.public_jwk();
    cases.push(("signed by another key", key.sign(&h, &claims())));
    let mut h = header.clone();
    h["alg"] = json!("none");
    cases.push(("alg none", key.sign(&h, &claims())));
    cases.push(("not a JWT", "abc.def".to_owned()));
    for (what, proof) in cases {
        let res = send_dpop(&ep, &token, &proof).send().await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{what}");
        let c = challenges(&res);
        assert!(
            c[0].starts_with(r#"DPoP error="invalid_dpop_proof""#),
            "{what}: {c:?}"
        );
    }

    // A valid proof by another key than the token's: the binding fails.
    let res = send_dpop(&ep, &token, &other.proof("POST", &url, &token, None))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    assert!(challenges(&res)[0].starts_with(r#"DPoP error="invalid_token""#));
    // No proof, or two.
    let res = ep.post(Some(&format!("DPoP {token}"))).send().await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    let two = send_dpop(&ep, &token, &key.proof("POST", &url, &token, None))
        .append("dpop", &key.proof("POST", &url, &token, None));
    assert_eq!(two.send().await.status, StatusCode::UNAUTHORIZED);
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn bound_and_unbound_tokens_keep_to_their_scheme() {
    let issuer = TestIssuer::start().await;
    let ep = endpoint(&issuer, Dpop::allowed()).await;
    let url = ep.resource();
    let key = DpopKey::generate();
    let token = bound(&issuer, &url, &key);
    // A bound token as a bearer token: refused.
    let res = ep.bearer(&token).send().await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    assert!(challenges(&res)[0].starts_with(r#"Bearer error="invalid_token""#));
    // A plain bearer token still works; with the DPoP scheme it is refused.
    let plain = issuer.token(&url, "bob", "");
    assert_eq!(ep.bearer(&plain).send().await.status, StatusCode::OK);
    let res = send_dpop(&ep, &plain, &key.proof("POST", &url, &plain, None))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    // Without a token, both schemes are offered.
    let res = ep.post(None).send().await;
    let c = challenges(&res);
    assert_eq!(c.len(), 2, "{c:?}");
    assert!(c[0].starts_with("Bearer resource_metadata="));
    assert!(c[1].starts_with("DPoP resource_metadata=") && c[1].contains("algs="));
    // The metadata advertises DPoP.
    let res =
        ferry_testkit::http::Client::new(ep.addr, "/.well-known/oauth-protected-resource/mcp")
            .call(http::Method::GET)
            .send()
            .await;
    let m = body(res).await;
    assert_eq!(
        m["dpop_signing_alg_values_supported"],
        json!(["RS256", "PS256", "ES256", "EdDSA"])
    );
    assert!(m.get("dpop_bound_access_tokens_required").is_none());
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn a_dpop_only_resource_refuses_bearer_tokens() {
    let issuer = TestIssuer::start().await;
    let ep = endpoint(&issuer, Dpop::required()).await;
    let url = ep.resource();
    let res = ep.bearer(&issuer.token(&url, "bob", "")).send().await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    let c = challenges(&res);
    assert_eq!(c.len(), 1);
    assert!(c[0].starts_with(r#"DPoP error="invalid_token""#), "{c:?}");
    let res = ep.post(None).send().await;
    let c = challenges(&res);
    assert_eq!(c.len(), 1);
    assert!(c[0].starts_with("DPoP "), "{c:?}");
    let key = DpopKey::generate();
    let token = bound(&issuer, &url, &key);
    let res = send_dpop(&ep, &token, &key.proof("POST", &url, &token, None))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn server_nonces_are_demanded_and_accepted() {
    let issuer = TestIssuer::start().await;
    let ep = endpoint(&issuer, Dpop::allowed().nonce(Duration::from_secs(300))).await;
    let url = ep.resource();
    let key = DpopKey::generate();
    let token = bound(&issuer, &url, &key);
    let res = send_dpop(&ep, &token, &key.proof("POST", &url, &token, None))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    assert!(challenges(&res)[0].starts_with(r#"DPoP error="use_dpop_nonce""#));
    let nonce = res.header("dpop-nonce").expect("a nonce").to_owned();
    let res = send_dpop(&ep, &token, &key.proof("POST", &url, &token, Some(&nonce)))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let res = send_dpop(
        &ep,
        &token,
        &key.proof("POST", &url, &token, Some("made-up")),
    )
    .send()
    .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    assert_eq!(res.header("dpop-nonce"), Some(nonce.as_str()));
    ep.stop().await;
    issuer.stop().await;
}

#[tokio::test]
async fn a_full_replay_store_refuses_rather_than_forgets() {
    let issuer = TestIssuer::start().await;
    let ep = endpoint(&issuer, Dpop::allowed().replay_capacity(2)).await;
    let url = ep.resource();
    let key = DpopKey::generate();
    let token = bound(&issuer, &url, &key);
    for _ in 0..2 {
        let res = send_dpop(&ep, &token, &key.proof("POST", &url, &token, None))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK);
    }
    let res = send_dpop(&ep, &token, &key.proof("POST", &url, &token, None))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE);
    ep.stop().await;
    issuer.stop().await;
}
