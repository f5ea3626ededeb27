//! The built-in JWT validator against a real issuer on loopback: what it accepts, every
//! refusal, key rotation, JWKS caching, and the refetch limit for unknown key ids.

use std::time::Duration;

use ferry_auth::testing::{KeyKind, TestIssuer};
use ferry_auth::{Algorithm, InvalidToken, JwtValidator, TokenError, TokenValidator};
use serde_json::json;

const RESOURCE: &str = "https://mcp.example.com/mcp";

fn validator(issuer: &TestIssuer) -> JwtValidator {
    JwtValidator::builder(issuer.issuer(), RESOURCE)
        .build()
        .unwrap()
}

fn invalid(r: Result<ferry_auth::VerifiedToken, TokenError>) -> InvalidToken {
    match r {
        Err(TokenError::Invalid(why)) => why,
        other => panic!("expected an invalid token, got {other:?}"),
    }
}

#[tokio::test]
async fn a_valid_token_yields_its_claims() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    let token = issuer.token(RESOURCE, "alice", "files:read files:write");
    let t = v.validate(&token).await.unwrap();
    assert_eq!(t.subject(), "alice");
    assert_eq!(t.issuer(), Some(issuer.issuer()));
    assert_eq!(t.client_id(), Some("test-client"));
    assert_eq!(t.scopes(), ["files:read", "files:write"]);
    assert!(t.expires_at().is_some());
    assert_eq!(t.jkt(), None);

    // azp stands in for client_id; scp (array or string) for scope.
    let mut c = issuer.claims(RESOURCE, "bob");
    c.as_object_mut().unwrap().remove("client_id");
    c.as_object_mut().unwrap().remove("scope");
    c["azp"] = json!("azp-client");
    c["scp"] = json!(["a", "b"]);
    let t = v.validate(&issuer.mint(&c)).await.unwrap();
    assert_eq!(t.client_id(), Some("azp-client"));
    assert_eq!(t.scopes(), ["a", "b"]);
    c["scp"] = json!("c d");
    assert_eq!(
        v.validate(&issuer.mint(&c)).await.unwrap().scopes(),
        ["c", "d"]
    );
    c["cnf"] = json!({"jkt": "thumb"});
    assert_eq!(
        v.validate(&issuer.mint(&c)).await.unwrap().jkt(),
        Some("thumb")
    );
    issuer.stop().await;
}

#[tokio::test]
async fn audiences_follow_the_canonical_uri_rules() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    for aud in [
        json!("https://mcp.example.com/mcp"),
        json!("HTTPS://MCP.EXAMPLE.COM/mcp"),
        json!("https://mcp.example.com/mcp/"),
        json!(["https://other.example.com", "https://mcp.example.com/mcp"]),
    ] {
        let mut c = issuer.claims(RESOURCE, "alice");
        c["aud"] = aud.clone();
        assert!(v.validate(&issuer.mint(&c)).await.is_ok(), "{aud}");
    }
    for aud in [
        json!("https://mcp.example.com/MCP"),
        json!("https://mcp.example.com"),
        json!("https://mcp.example.com/mcp/other"),
        json!(["https://other.example.com"]),
        json!([]),
        json!(42),
    ] {
        let mut c = issuer.claims(RESOURCE, "alice");
        c["aud"] = aud.clone();
        let r = v.validate(&issuer.mint(&c)).await;
        assert!(r.is_err(), "{aud}: {r:?}");
    }
    let mut c = issuer.claims(RESOURCE, "alice");
    c.as_object_mut().unwrap().remove("aud");
    assert_eq!(
        invalid(v.validate(&issuer.mint(&c)).await),
        InvalidToken::Audience
    );
    assert_eq!(
        invalid(v.validate(&issuer.wrong_audience_token("alice")).await),
        InvalidToken::Audience
    );
    issuer.stop().await;
}

#[tokio::test]
async fn times_are_checked_with_leeway() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    let strict = JwtValidator::builder(issuer.issuer(), RESOURCE)
        .leeway(Duration::ZERO)
        .build()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(
        invalid(v.validate(&issuer.expired_token(RESOURCE, "a")).await),
        InvalidToken::Expired
    );
    // Expired 20 s ago: inside the default 60 s leeway, outside a zero one.
    let mut c = issuer.claims(RESOURCE, "a");
    c["exp"] = json!(now - 20);
    let t = issuer.mint(&c);
    assert!(v.validate(&t).await.is_ok());
    assert_eq!(invalid(strict.validate(&t).await), InvalidToken::Expired);
    // exp is required.
    let mut c = issuer.claims(RESOURCE, "a");
    c.as_object_mut().unwrap().remove("exp");
    assert_eq!(
        invalid(v.validate(&issuer.mint(&c)).await),
        InvalidToken::MissingClaim("exp")
    );
    let mut c = issuer.claims(RESOURCE, "a");
    c["exp"] = json!("tomorrow");
    assert!(v.validate(&issuer.mint(&c)).await.is_err());
    // nbf and iat in the future.
    let mut c = issuer.claims(RESOURCE, "a");
    c["nbf"] = json!(now + 600);
    assert_eq!(
        invalid(v.validate(&issuer.mint(&c)).await),
        InvalidToken::NotYetValid
    );
    let mut c = issuer.claims(RESOURCE, "a");
    c["iat"] = json!(now + 600);
    assert_eq!(
        invalid(v.validate(&issuer.mint(&c)).await),
        InvalidToken::NotYetValid
    );
    let mut c = issuer.claims(RESOURCE, "a");
    c["nbf"] = json!(now + 20);
    assert!(
        v.validate(&issuer.mint(&c)).await.is_ok(),
        "nbf within leeway"
    );
    issuer.stop().await;
}

#[tokio::test]
async fn issuer_subject_and_type_are_checked() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    let mut c = issuer.claims(RESOURCE, "a");
    c["iss"] = json!(format!("{}/", issuer.issuer()));
    assert_eq!(
        invalid(v.validate(&issuer.mint(&c)).await),
        InvalidToken::Issuer
    );
    c.as_object_mut().unwrap().remove("iss");
    assert_eq!(
        invalid(v.validate(&issuer.mint(&c)).await),
        InvalidToken::MissingClaim("iss")
    );
    let mut c = issuer.claims(RESOURCE, "a");
    c.as_object_mut().unwrap().remove("sub");
    assert_eq!(
        invalid(v.validate(&issuer.mint(&c)).await),
        InvalidToken::MissingClaim("sub")
    );

    let key = issuer.current_key();
    let claims = issuer.claims(RESOURCE, "a");
    let with_typ = |typ: Option<&str>| {
        let mut h = issuer.header(&key);
        match typ {
            Some(t) => h["typ"] = json!(t),
            None => {
                h.as_object_mut().unwrap().remove("typ");
            }
        }
        issuer.mint_with_header(&h, &claims)
    };
    for ok in [
        Some("at+jwt"),
        Some("application/at+jwt"),
        Some("JWT"),
        None,
    ] {
        assert!(v.validate(&with_typ(ok)).await.is_ok(), "{ok:?}");
    }
    for bad in ["dpop+jwt", "id_token+jwt", "logout+jwt"] {
        assert!(
            matches!(
                invalid(v.validate(&with_typ(Some(bad))).await),
                InvalidToken::Type(_)
            ),
            "{bad}"
        );
    }
    let strict = JwtValidator::builder(issuer.issuer(), RESOURCE)
        .require_at_jwt()
        .build()
        .unwrap();
    assert!(strict.validate(&with_typ(Some("at+jwt"))).await.is_ok());
    assert!(strict.validate(&with_typ(Some("JWT"))).await.is_err());
    assert!(strict.validate(&with_typ(None)).await.is_err());
    issuer.stop().await;
}

#[tokio::test]
async fn forged_algorithms_and_keys_are_refused() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    assert!(matches!(
        invalid(v.validate(&issuer.none_alg_token(RESOURCE, "a")).await),
        InvalidToken::Algorithm(_)
    ));
    assert!(matches!(
        invalid(
            v.validate(&issuer.hmac_with_public_key_token(RESOURCE, "a"))
                .await
        ),
        InvalidToken::Algorithm(_)
    ));
    // An HS256 validator cannot even be built.
    assert!(
        JwtValidator::builder(issuer.issuer(), RESOURCE)
            .algorithms([Algorithm::HS256])
            .build()
            .is_err()
    );
    // ES384 is allowed here, but the key is P-256: algorithm confusion.
    let lenient = JwtValidator::builder(issuer.issuer(), RESOURCE)
        .algorithms([Algorithm::ES256, Algorithm::ES384, Algorithm::RS256])
        .build()
        .unwrap();
    assert!(matches!(
        invalid(
            lenient
                .validate(&issuer.mismatched_alg_token(RESOURCE, "a", "ES384"))
                .await
        ),
        InvalidToken::KeyMismatch(_)
    ));
    assert!(matches!(
        invalid(
            lenient
                .validate(&issuer.mismatched_alg_token(RESOURCE, "a", "RS256"))
                .await
        ),
        InvalidToken::KeyMismatch(_)
    ));
    // ES384 is not in the default list at all.
    assert!(matches!(
        invalid(
            v.validate(&issuer.mismatched_alg_token(RESOURCE, "a", "ES384"))
                .await
        ),
        InvalidToken::Algorithm(_)
    ));
    assert_eq!(
        invalid(v.validate(&issuer.wrong_key_token(RESOURCE, "a")).await),
        InvalidToken::Signature
    );
    assert_eq!(
        invalid(
            v.validate(&issuer.unknown_kid_token(RESOURCE, "a", "nope"))
                .await
        ),
        InvalidToken::UnknownKey
    );
    // A tampered payload breaks the signature.
    let token = issuer.token(RESOURCE, "alice", "");
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let forged = issuer.token(RESOURCE, "mallory", "admin");
    parts[1] = forged.split('.').nth(1).unwrap().to_owned();
    assert_eq!(
        invalid(v.validate(&parts.join(".")).await),
        InvalidToken::Signature
    );
    for junk in [
        "",
        "abc",
        "a.b",
        "a.b.c",
        "a.b.c.d",
        "..",
        "eyJhbGciOiJFUzI1NiJ9.e30.",
    ] {
        assert!(v.validate(junk).await.is_err(), "{junk:?}");
    }
    issuer.stop().await;
}

#[tokio::test]
async fn rsa_and_ed25519_keys_verify() {
    for kind in [KeyKind::Rs256, KeyKind::Ps256, KeyKind::EdDsa] {
        let issuer = TestIssuer::start_with(kind).await;
        let v = validator(&issuer);
        let t = issuer.token(RESOURCE, "alice", "x");
        assert_eq!(v.validate(&t).await.unwrap().subject(), "alice", "{kind:?}");
        assert_eq!(
            invalid(v.validate(&issuer.wrong_key_token(RESOURCE, "a")).await),
            InvalidToken::Signature,
            "{kind:?}"
        );
        issuer.stop().await;
    }
}

#[tokio::test]
async fn rotated_keys_are_picked_up_and_old_ones_dropped() {
    let issuer = TestIssuer::start().await;
    let v = JwtValidator::builder(issuer.issuer(), RESOURCE)
        .min_refresh_interval(Duration::ZERO)
        .build()
        .unwrap();
    let old = issuer.token(RESOURCE, "alice", "");
    assert!(v.validate(&old).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 1);
    issuer.rotate(KeyKind::EdDsa);
    let new = issuer.token(RESOURCE, "alice", "");
    // The unknown kid makes the validator refetch, and the new key verifies.
    assert!(v.validate(&new).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 2);
    // The old key is gone from the refetched set.
    let r = v.validate(&old).await;
    assert_eq!(invalid(r), InvalidToken::UnknownKey);
    issuer.stop().await;
}

#[tokio::test]
async fn a_flood_of_forged_key_ids_fetches_the_jwks_at_most_twice() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    v.warm_up().await.unwrap();
    let forged: Vec<String> = (0..1000)
        .map(|i| issuer.unknown_kid_token(RESOURCE, "mallory", &format!("forged-{i}")))
        .collect();
    let results = futures::future::join_all(forged.iter().map(|t| v.validate(t))).await;
    assert!(results.iter().all(|r| r.is_err()));
    // Again, sequentially.
    for t in forged.iter().take(200) {
        assert!(v.validate(t).await.is_err());
    }
    let fetches = issuer.jwks_fetches();
    assert!((1..=2).contains(&fetches), "{fetches} JWKS fetches");
    assert_eq!(v.jwks_fetches() as usize, fetches);
    // Real tokens still work.
    assert!(
        v.validate(&issuer.token(RESOURCE, "alice", ""))
            .await
            .is_ok()
    );
    issuer.stop().await;
}

#[tokio::test]
async fn the_jwks_max_age_is_respected_within_bounds() {
    let issuer = TestIssuer::start().await;
    issuer.set_jwks_max_age(Some(1));
    let v = JwtValidator::builder(issuer.issuer(), RESOURCE)
        .jwks_ttl(
            Duration::from_secs(600),
            Duration::from_millis(200),
            Duration::from_secs(60),
        )
        .min_refresh_interval(Duration::ZERO)
        .build()
        .unwrap();
    let t = issuer.token(RESOURCE, "alice", "");
    assert!(v.validate(&t).await.is_ok());
    assert!(v.validate(&t).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 1, "fresh keys are not refetched");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(v.validate(&t).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 2, "stale keys are refetched");

    // A max-age far above the bound is clamped to the maximum (60 s here): once the
    // stale set is replaced, no further fetch happens.
    issuer.set_jwks_max_age(Some(10_000_000));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(v.validate(&t).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 3);
    assert!(v.validate(&t).await.is_ok());
    assert_eq!(issuer.jwks_fetches(), 3);
    issuer.stop().await;
}

#[tokio::test]
async fn discovery_checks_the_issuer_and_falls_back_to_openid() {
    let issuer = TestIssuer::start().await;
    // Only OpenID Connect discovery served: found on the second candidate.
    issuer.serve_discovery(false, true);
    let v = validator(&issuer);
    assert!(v.validate(&issuer.token(RESOURCE, "a", "")).await.is_ok());

    // Metadata naming another issuer is never used: validation is unavailable.
    let mixed = TestIssuer::start().await;
    mixed.set_metadata_issuer(Some("https://honest.example.com"));
    let v = validator(&mixed);
    let r = v.validate(&mixed.token(RESOURCE, "a", "")).await;
    assert!(
        matches!(r, Err(TokenError::Unavailable(ref m)) if m.contains("another issuer")),
        "{r:?}"
    );
    assert!(v.warm_up().await.is_err());
    assert_eq!(
        mixed.jwks_fetches(),
        0,
        "the keys of a mixed-up issuer are never fetched"
    );
    issuer.stop().await;
    mixed.stop().await;
}

#[tokio::test]
async fn an_unreachable_issuer_fails_closed_without_hammering() {
    let issuer = TestIssuer::start().await;
    issuer.set_available(false);
    let v = JwtValidator::builder(issuer.issuer(), RESOURCE)
        .jwks_uri(issuer.jwks_uri())
        .build()
        .unwrap();
    let t = issuer.token(RESOURCE, "a", "");
    for _ in 0..50 {
        assert!(matches!(
            v.validate(&t).await,
            Err(TokenError::Unavailable(_))
        ));
    }
    assert_eq!(
        issuer.jwks_fetches(),
        1,
        "failures are not retried before the interval"
    );

    // Keys held survive an outage.
    let up = TestIssuer::start().await;
    let v = JwtValidator::builder(up.issuer(), RESOURCE)
        .min_refresh_interval(Duration::ZERO)
        .build()
        .unwrap();
    let t = up.token(RESOURCE, "a", "");
    assert!(v.validate(&t).await.is_ok());
    up.set_available(false);
    assert!(
        v.validate(&up.unknown_kid_token(RESOURCE, "a", "x"))
            .await
            .is_err()
    );
    assert!(v.validate(&t).await.is_ok(), "the held key still verifies");
    issuer.stop().await;
    up.stop().await;
}

#[tokio::test]
async fn fixed_keys_need_no_fetch() {
    let issuer = TestIssuer::start().await;
    let v = JwtValidator::builder(issuer.issuer(), RESOURCE)
        .jwks(issuer.jwks())
        .build()
        .unwrap();
    assert!(v.validate(&issuer.token(RESOURCE, "a", "")).await.is_ok());
    assert!(
        v.validate(&issuer.unknown_kid_token(RESOURCE, "a", "x"))
            .await
            .is_err()
    );
    assert_eq!(issuer.jwks_fetches(), 0);
    assert_eq!(issuer.metadata_fetches(), 0);
    issuer.stop().await;
}

#[tokio::test]
async fn tokens_without_kid_need_a_single_fitting_key() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    let key = issuer.current_key();
    let mut h = issuer.header(&key);
    h.as_object_mut().unwrap().remove("kid");
    let t = issuer.mint_with_header(&h, &issuer.claims(RESOURCE, "a"));
    assert!(v.validate(&t).await.is_ok(), "one key: used");
    issuer.add_key(KeyKind::Es256);
    let v = validator(&issuer);
    assert_eq!(
        invalid(v.validate(&t).await),
        InvalidToken::UnknownKey,
        "two ES256 keys: ambiguous"
    );
    issuer.stop().await;
}

#[test]
fn insecure_issuers_are_refused() {
    assert!(
        JwtValidator::builder("http://auth.example.com", RESOURCE)
            .build()
            .is_err()
    );
    assert!(
        JwtValidator::builder("https://auth.example.com", "mcp.example.com")
            .build()
            .is_err()
    );
    assert!(
        JwtValidator::builder("https://auth.example.com", RESOURCE)
            .jwks_uri("http://keys.example.com/jwks")
            .build()
            .is_err()
    );
    assert!(
        JwtValidator::builder("https://auth.example.com", RESOURCE)
            .build()
            .is_ok()
    );
}

#[tokio::test]
async fn several_issuers_each_validate_their_own_tokens() {
    let a = TestIssuer::start().await;
    let b = TestIssuer::start_with(KeyKind::EdDsa).await;
    let issuers = ferry_auth::Issuers::new([validator(&a), validator(&b)]);
    let from_a = issuers
        .validate(&a.token(RESOURCE, "alice", ""))
        .await
        .unwrap();
    assert_eq!(from_a.issuer(), Some(a.issuer()));
    let from_b = issuers
        .validate(&b.token(RESOURCE, "bob", ""))
        .await
        .unwrap();
    assert_eq!(from_b.issuer(), Some(b.issuer()));
    // A token claiming issuer b but signed by a's key: b's keys do not verify it.
    let mut c = a.claims(RESOURCE, "mallory");
    c["iss"] = json!(b.issuer());
    assert!(issuers.validate(&a.mint(&c)).await.is_err());
    // An issuer nobody trusts.
    let stranger = TestIssuer::start().await;
    assert_eq!(
        invalid(issuers.validate(&stranger.token(RESOURCE, "eve", "")).await),
        InvalidToken::Issuer
    );
    for i in [a, b, stranger] {
        i.stop().await;
    }
}
