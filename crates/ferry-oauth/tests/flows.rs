//! The grants end to end against a loopback authorization server: PKCE, `state`,
//! `resource`, `iss`, scopes and step-up, migration, refresh, client authentication,
//! JWT bearer and token exchange.

mod common;

use std::sync::Arc;

use common::{Config, Headless, Iss, Mock, call};
use ferry_oauth::{
    AuthError, ClientKey, DpopKey, EnterpriseIdp, Grant, OAuthAuthorizer, Secret, StaticClient,
};
use url::Url;

fn authorizer() -> OAuthAuthorizer {
    OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .build()
        .unwrap()
}

#[tokio::test]
async fn authorization_code_with_pkce_state_and_resource() {
    let mock = Mock::start(Config {
        challenge_scope: Some("files:read".into()),
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    // The mock checks the verifier against the S256 challenge.
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    let authz = &mock.hits_to("/authorize")[0];
    assert_eq!(authz.query["code_challenge_method"], "S256");
    assert_eq!(authz.query["code_challenge"].len(), 43);
    assert!(authz.query["state"].len() >= 32);
    assert_eq!(authz.query["scope"], "files:read");
    assert_eq!(authz.query["resource"], mock.mcp_url().as_str());
    assert_eq!(authz.query["client_id"], "dyn-client");
    let token = &mock.hits_to("/token")[0];
    assert_eq!(token.form["grant_type"], "authorization_code");
    assert_eq!(token.form["resource"], mock.mcp_url().as_str());
    assert_eq!(token.form["redirect_uri"], authz.query["redirect_uri"]);
    assert!(token.form.contains_key("code_verifier"));
    // Registration: native, with refresh_token among the grant types.
    let reg = &mock.hits_to("/register")[0].json;
    assert_eq!(reg["application_type"], "native");
    assert_eq!(
        reg["redirect_uris"],
        serde_json::json!([authz.query["redirect_uri"]])
    );
    assert_eq!(
        reg["grant_types"],
        serde_json::json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(reg["token_endpoint_auth_method"], "none");
    assert_eq!(reg["response_types"], serde_json::json!(["code"]));
    // Later requests reuse the token: no second authorization.
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    assert_eq!(mock.hits_to("/authorize").len(), 1);
}

#[tokio::test]
async fn no_s256_no_authorization() {
    let mock = Mock::start(Config {
        s256: false,
        ..Config::default()
    })
    .await;
    let err = call(&authorizer(), &mock.mcp_url(), "tools/list")
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::PkceUnsupported { .. }), "{err}");
    assert!(mock.hits_to("/authorize").is_empty());
}

#[tokio::test]
async fn iss_checks_before_the_code_is_redeemed() {
    let cases = [
        (Some(true), Iss::Correct, true),
        (None, Iss::Omit, true),
        (Some(true), Iss::Omit, false),
        (Some(true), Iss::Value("https://evil.example.com"), false),
        (None, Iss::Value("https://evil.example.com"), false),
    ];
    for (supported, iss, ok) in cases {
        let mock = Mock::start(Config {
            iss_supported: supported,
            iss,
            ..Config::default()
        })
        .await;
        let result = call(&authorizer(), &mock.mcp_url(), "tools/list").await;
        assert_eq!(result.is_ok(), ok, "{supported:?} {iss:?}: {result:?}");
        assert_eq!(
            !mock.hits_to("/token").is_empty(),
            ok,
            "{supported:?} {iss:?}"
        );
    }
    // A trailing-slash variant of the issuer is a different issuer.
    let mock = Mock::start(Config::default()).await;
    let slash: &'static str = Box::leak(format!("{}/", mock.issuer()).into_boxed_str());
    mock.configure(|c| c.iss = Iss::Value(slash));
    let err = call(&authorizer(), &mock.mcp_url(), "tools/list")
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::AuthorizationResponse(_)), "{err}");
    assert!(mock.hits_to("/token").is_empty());
}

#[tokio::test]
async fn scopes_from_challenge_then_metadata_then_none() {
    let mock = Mock::start(Config {
        challenge_scope: Some("a".into()),
        prm_scopes: Some(vec!["b".into(), "c".into()]),
        ..Config::default()
    })
    .await;
    call(&authorizer(), &mock.mcp_url(), "x").await.unwrap();
    assert_eq!(mock.hits_to("/authorize")[0].query["scope"], "a");

    let mock = Mock::start(Config {
        prm_scopes: Some(vec!["b".into(), "c".into()]),
        ..Config::default()
    })
    .await;
    call(&authorizer(), &mock.mcp_url(), "x").await.unwrap();
    assert_eq!(mock.hits_to("/authorize")[0].query["scope"], "b c");

    let mock = Mock::start(Config::default()).await;
    call(&authorizer(), &mock.mcp_url(), "x").await.unwrap();
    assert!(!mock.hits_to("/authorize")[0].query.contains_key("scope"));
}

#[tokio::test]
async fn offline_access_only_when_the_server_lists_it() {
    let mock = Mock::start(Config {
        prm_scopes: Some(vec!["mcp".into()]),
        as_scopes: Some(vec!["mcp".into(), "offline_access".into()]),
        ..Config::default()
    })
    .await;
    call(&authorizer(), &mock.mcp_url(), "x").await.unwrap();
    assert_eq!(
        mock.hits_to("/authorize")[0].query["scope"],
        "mcp offline_access"
    );

    let mock = Mock::start(Config {
        prm_scopes: Some(vec!["mcp".into()]),
        as_scopes: Some(vec!["mcp".into()]),
        ..Config::default()
    })
    .await;
    call(&authorizer(), &mock.mcp_url(), "x").await.unwrap();
    assert_eq!(mock.hits_to("/authorize")[0].query["scope"], "mcp");
}

#[tokio::test]
async fn step_up_with_the_union_of_scopes() {
    let mock = Mock::start(Config {
        challenge_scope: Some("read".into()),
        call_scope: Some("write".into()),
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/call").await.unwrap(),
        200
    );
    let authz = mock.hits_to("/authorize");
    assert_eq!(authz.len(), 2);
    let second: Vec<&str> = authz[1].query["scope"].split(' ').collect();
    assert!(
        second.contains(&"read") && second.contains(&"write"),
        "{second:?}"
    );
}

#[tokio::test]
async fn step_up_is_bounded() {
    let mock = Mock::start(Config {
        challenge_scope: Some("admin".into()),
        always_forbidden: true,
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    let err = call(&auth, &mock.mcp_url(), "tools/list")
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::InsufficientScope { .. }), "{err}");
    // The first authorization and two step-ups; later requests add none.
    assert_eq!(mock.hits_to("/authorize").len(), 3);
    assert!(call(&auth, &mock.mcp_url(), "tools/list").await.is_err());
    assert_eq!(mock.hits_to("/authorize").len(), 3);
}

#[tokio::test]
async fn repeated_401s_are_bounded() {
    let mock = Mock::start(Config {
        reject_tokens: true,
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    let result = call(&auth, &mock.mcp_url(), "x").await;
    assert!(
        matches!(result, Err(AuthError::RetryLimit { .. })),
        "{result:?}"
    );
    assert!(mock.hits_to("/authorize").len() <= 3);
}

#[tokio::test]
async fn a_new_authorization_server_gets_a_new_registration() {
    let rs = Mock::start(Config::default()).await;
    let auth = authorizer();
    call(&auth, &rs.mcp_url(), "x").await.unwrap();
    assert_eq!(rs.hits_to("/register").len(), 1);
    // The resource moves to another authorization server and rejects the old tokens.
    let as2 = rs.start_sharing(Config::default()).await;
    rs.configure(|c| c.authorization_server = Some(as2.issuer()));
    rs.revoke_all();
    assert_eq!(call(&auth, &rs.mcp_url(), "x").await.unwrap(), 200);
    let at_as2: Vec<_> = as2
        .hits()
        .into_iter()
        .filter(|h| h.base == as2.base)
        .collect();
    assert!(
        at_as2.iter().any(|h| h.path == "/register"),
        "no registration at the new server"
    );
    let token = at_as2
        .iter()
        .find(|h| h.path == "/token")
        .expect("a token request");
    assert_eq!(token.form["client_id"], "dyn-client");
    let authz = at_as2.iter().find(|h| h.path == "/authorize").unwrap();
    assert!(authz.query["redirect_uri"].starts_with("http://127.0.0.1"));
}

#[tokio::test]
async fn expired_tokens_are_refreshed() {
    let mock = Mock::start(Config {
        expires_in: 1,
        refresh: true,
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    call(&auth, &mock.mcp_url(), "x").await.unwrap();
    call(&auth, &mock.mcp_url(), "x").await.unwrap();
    let tokens = mock.hits_to("/token");
    assert_eq!(mock.hits_to("/authorize").len(), 1);
    assert_eq!(tokens[1].form["grant_type"], "refresh_token");
    assert!(tokens[1].form["refresh_token"].starts_with("rt-"));
    assert_eq!(tokens[1].form["resource"], mock.mcp_url().as_str());
}

fn basic_of(hit: &common::Hit) -> Option<String> {
    use base64::Engine;
    let v = hit.headers.get("authorization")?.to_str().ok()?;
    let b = base64::engine::general_purpose::STANDARD
        .decode(v.strip_prefix("Basic ")?)
        .ok()?;
    String::from_utf8(b).ok()
}

#[tokio::test]
async fn client_credentials_with_each_authentication_method() {
    for (method, expect_basic) in [("client_secret_basic", true), ("client_secret_post", false)] {
        let mock = Mock::start(Config {
            auth_methods: vec![method.into()],
            challenge_scope: Some("jobs".into()),
            ..Config::default()
        })
        .await;
        let auth = OAuthAuthorizer::builder()
            .grant(Grant::ClientCredentials)
            .static_client(StaticClient::new("svc one").secret("p@ss:word"))
            .build()
            .unwrap();
        assert_eq!(call(&auth, &mock.mcp_url(), "x").await.unwrap(), 200);
        let t = &mock.hits_to("/token")[0];
        assert_eq!(t.form["grant_type"], "client_credentials");
        assert_eq!(t.form["scope"], "jobs");
        assert_eq!(t.form["resource"], mock.mcp_url().as_str());
        if expect_basic {
            assert_eq!(basic_of(t).unwrap(), "svc+one:p%40ss%3Aword");
            assert!(!t.form.contains_key("client_secret"));
        } else {
            assert_eq!(t.form["client_id"], "svc one");
            assert_eq!(t.form["client_secret"], "p@ss:word");
            assert!(t.headers.get("authorization").is_none());
        }
        assert!(mock.hits_to("/authorize").is_empty());
    }
}

#[tokio::test]
async fn client_credentials_with_private_key_jwt() {
    let key = DpopKey::generate().unwrap();
    let der = key.to_pkcs8_base64().expose().to_owned();
    let body: Vec<String> = der
        .as_bytes()
        .chunks(64)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        body.join("\n")
    );
    let mock = Mock::start(Config {
        auth_methods: vec!["private_key_jwt".into()],
        ..Config::default()
    })
    .await;
    let auth = OAuthAuthorizer::builder()
        .grant(Grant::ClientCredentials)
        .static_client(StaticClient::new("svc"))
        .client_key(ClientKey::from_pem(&pem, "ES256").unwrap())
        .build()
        .unwrap();
    assert_eq!(call(&auth, &mock.mcp_url(), "x").await.unwrap(), 200);
    let t = &mock.hits_to("/token")[0];
    assert_eq!(
        t.form["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    let jwk = key.public_jwk();
    let dk = jsonwebtoken::DecodingKey::from_ec_components(
        jwk["x"].as_str().unwrap(),
        jwk["y"].as_str().unwrap(),
    )
    .unwrap();
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    v.set_audience(&[mock.issuer()]);
    let data =
        jsonwebtoken::decode::<serde_json::Value>(&t.form["client_assertion"], &dk, &v).unwrap();
    assert_eq!(data.claims["iss"], "svc");
    assert_eq!(data.claims["sub"], "svc");
    assert!(data.claims["jti"].as_str().is_some_and(|j| !j.is_empty()));
}

#[tokio::test]
async fn jwt_bearer_failures_are_reported_once() {
    let mock = Mock::start(Config {
        token_error: Some("invalid_grant".into()),
        registration: false,
        ..Config::default()
    })
    .await;
    let auth = OAuthAuthorizer::builder()
        .grant(Grant::JwtBearer(Arc::new(Secret::new(
            "platform.jwt.token",
        ))))
        .static_client(StaticClient::new("workload"))
        .build()
        .unwrap();
    let err = call(&auth, &mock.mcp_url(), "x").await.unwrap_err();
    assert!(
        matches!(err, AuthError::OAuth { ref error, .. } if error == "invalid_grant"),
        "{err}"
    );
    let tokens = mock.hits_to("/token");
    assert_eq!(tokens.len(), 1, "retried");
    assert_eq!(
        tokens[0].form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(tokens[0].form["assertion"], "platform.jwt.token");
    assert_eq!(tokens[0].form["client_id"], "workload");
    assert!(mock.hits_to("/authorize").is_empty() && mock.hits_to("/register").is_empty());

    mock.configure(|c| c.token_error = None);
    assert_eq!(call(&auth, &mock.mcp_url(), "x").await.unwrap(), 200);
}

#[tokio::test]
async fn enterprise_token_exchange_then_jwt_bearer() {
    let mock = Mock::start(Config {
        auth_methods: vec!["client_secret_basic".into()],
        ..Config::default()
    })
    .await;
    let idp_token = Url::parse(&format!("{}/token", mock.base)).unwrap();
    let auth = OAuthAuthorizer::builder()
        .grant(Grant::Enterprise(EnterpriseIdp {
            token_endpoint: idp_token,
            client: StaticClient::new("idp-client"),
            id_token: Arc::new(Secret::new("the-id-token")),
        }))
        .static_client(StaticClient::new("mcp-client").secret("mcp-secret"))
        .build()
        .unwrap();
    assert_eq!(call(&auth, &mock.mcp_url(), "x").await.unwrap(), 200);
    let t = mock.hits_to("/token");
    assert_eq!(t.len(), 2);
    assert_eq!(
        t[0].form["grant_type"],
        "urn:ietf:params:oauth:grant-type:token-exchange"
    );
    assert_eq!(t[0].form["audience"], mock.issuer());
    assert_eq!(t[0].form["resource"], mock.mcp_url().as_str());
    assert_eq!(t[0].form["client_id"], "idp-client");
    assert_eq!(
        t[1].form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(t[1].form["assertion"], "the-id-jag");
    assert_eq!(basic_of(&t[1]).unwrap(), "mcp-client:mcp-secret");
}

#[tokio::test]
async fn pre_registered_clients_stay_with_their_issuer() {
    let mock = Mock::start(Config {
        registration: false,
        auth_methods: vec!["client_secret_basic".into()],
        ..Config::default()
    })
    .await;
    let auth = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .static_client(StaticClient::new("pre").secret("s").issuer(mock.issuer()))
        .build()
        .unwrap();
    assert_eq!(call(&auth, &mock.mcp_url(), "x").await.unwrap(), 200);
    assert_eq!(basic_of(&mock.hits_to("/token")[0]).unwrap(), "pre:s");

    let other = Mock::start(Config::default()).await;
    let auth = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .static_client(StaticClient::new("pre").secret("s").issuer(mock.issuer()))
        .build()
        .unwrap();
    let err = call(&auth, &other.mcp_url(), "x").await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerChanged { .. }), "{err}");
    assert!(other.hits_to("/authorize").is_empty());
}

#[tokio::test]
async fn metadata_document_client_ids() {
    let mock = Mock::start(Config {
        cimd: true,
        ..Config::default()
    })
    .await;
    let auth = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .client_metadata_document("https://app.example.com/client.json")
        .build()
        .unwrap();
    call(&auth, &mock.mcp_url(), "x").await.unwrap();
    assert_eq!(
        mock.hits_to("/authorize")[0].query["client_id"],
        "https://app.example.com/client.json"
    );
    assert!(mock.hits_to("/register").is_empty());
}
