//! DPoP (RFC 9449) against a loopback authorization server and resource: the proof's
//! structure and signature, a fresh `jti` per request, `ath`, and the nonces of both
//! servers.

mod common;

use std::collections::HashSet;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::{Config, Headless, Mock, call, jwt_claims, jwt_header};
use ferry_oauth::{DpopKey, DpopMode, OAuthAuthorizer};
use serde_json::Value;
use sha2::{Digest, Sha256};
use url::Url;

/// Verifies a proof's signature with the key in its own header; returns the claims.
fn verify(proof: &str) -> Value {
    let header = jwt_header(proof);
    assert_eq!(header["typ"], "dpop+jwt");
    assert_eq!(header["alg"], "ES256");
    let jwk = &header["jwk"];
    assert_eq!(jwk["kty"], "EC");
    assert_eq!(jwk["crv"], "P-256");
    assert!(
        jwk.get("d").is_none(),
        "the private key leaked into the proof"
    );
    let key = jsonwebtoken::DecodingKey::from_ec_components(
        jwk["x"].as_str().unwrap(),
        jwk["y"].as_str().unwrap(),
    )
    .unwrap();
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    jsonwebtoken::decode::<Value>(proof, &key, &v)
        .expect("the proof verifies")
        .claims
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[test]
fn proof_structure() {
    let key = DpopKey::generate().unwrap();
    let url = Url::parse("https://mcp.example.com/mcp?x=1#f").unwrap();
    let a = key.proof("POST", &url, Some("tok"), Some("n1")).unwrap();
    let b = key.proof("POST", &url, Some("tok"), None).unwrap();
    let (ca, cb) = (verify(&a), verify(&b));
    assert_eq!(ca["htm"], "POST");
    assert_eq!(ca["htu"], "https://mcp.example.com/mcp");
    assert!((ca["iat"].as_i64().unwrap() - now()).abs() < 5);
    assert_eq!(ca["ath"], URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok")));
    assert_eq!(ca["nonce"], "n1");
    assert!(cb.get("nonce").is_none());
    assert_ne!(ca["jti"], cb["jti"]);
    // The key survives a round trip through its stored form.
    let again = DpopKey::from_pkcs8_base64(key.to_pkcs8_base64().expose()).unwrap();
    assert_eq!(again.thumbprint().unwrap(), key.thumbprint().unwrap());
    assert_eq!(key.thumbprint().unwrap().len(), 43);
}

#[tokio::test]
async fn bound_tokens_with_both_nonces() {
    let mock = Mock::start(Config {
        dpop: true,
        as_nonce: Some("as-nonce".into()),
        rs_nonce: Some("rs-nonce".into()),
        ..Config::default()
    })
    .await;
    let auth = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .build()
        .unwrap();
    for _ in 0..3 {
        assert_eq!(
            call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
            200
        );
    }
    let token_endpoint = format!("{}/token", mock.base);
    let tokens = mock.hits_to("/token");
    assert_eq!(
        tokens.len(),
        2,
        "one use_dpop_nonce retry at the token endpoint"
    );
    let first = verify(tokens[0].headers["dpop"].to_str().unwrap());
    let second = verify(tokens[1].headers["dpop"].to_str().unwrap());
    assert!(first.get("nonce").is_none());
    assert_eq!(second["nonce"], "as-nonce");
    for c in [&first, &second] {
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], token_endpoint);
        assert!(c.get("ath").is_none());
    }
    let mut jtis = HashSet::new();
    let mut authorized = 0;
    for hit in mock.hits_to("/mcp") {
        let Some(auth) = hit.headers.get("authorization") else {
            continue;
        };
        authorized += 1;
        let auth = auth.to_str().unwrap();
        let token = auth.strip_prefix("DPoP ").expect("the DPoP scheme");
        let claims = verify(hit.headers["dpop"].to_str().unwrap());
        assert_eq!(claims["htu"], mock.mcp_url().as_str());
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
        );
        assert!(
            jtis.insert(claims["jti"].as_str().unwrap().to_owned()),
            "a jti was reused"
        );
        assert!(jwt_claims(token).is_null(), "the mock's tokens are opaque");
    }
    // The first authorized request learns the nonce; three answered after it.
    assert_eq!(authorized, 4);
}

#[tokio::test]
async fn off_means_bearer() {
    let mock = Mock::start(Config {
        dpop: true,
        ..Config::default()
    })
    .await;
    let auth = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .dpop(DpopMode::Off)
        .build()
        .unwrap();
    assert_eq!(call(&auth, &mock.mcp_url(), "x").await.unwrap(), 200);
    assert!(mock.hits_to("/token")[0].headers.get("dpop").is_none());
    let last = mock.hits_to("/mcp").pop().unwrap();
    assert!(
        last.headers["authorization"]
            .to_str()
            .unwrap()
            .starts_with("Bearer ")
    );

    let plain = Mock::start(Config::default()).await;
    let auth = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .dpop(DpopMode::Required)
        .build()
        .unwrap();
    assert!(call(&auth, &plain.mcp_url(), "x").await.is_err());
}
