//! Discovery against a loopback server: the order of the metadata requests, the issuer
//! and resource checks (authorization-server-discovery.mdx).

mod common;

use common::{Config, Headless, Mock, call};
use ferry_oauth::{AuthError, OAuthAuthorizer};

fn authorizer() -> OAuthAuthorizer {
    OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .build()
        .unwrap()
}

#[tokio::test]
async fn resource_metadata_from_the_challenge_first() {
    let mock = Mock::start(Config {
        prm_paths: vec!["/custom/metadata.json".into()],
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    let gets = mock.gets();
    assert_eq!(gets[0], "/custom/metadata.json", "{gets:?}");
    assert!(
        !gets
            .iter()
            .any(|g| g.starts_with("/.well-known/oauth-protected-resource"))
    );
}

#[tokio::test]
async fn path_inserted_then_root_well_known() {
    // Path-inserted metadata exists: the root is never asked.
    let mock = Mock::start(Config {
        prm_in_header: false,
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    let gets = mock.gets();
    assert_eq!(gets[0], "/.well-known/oauth-protected-resource/mcp");
    assert!(!gets.contains(&"/.well-known/oauth-protected-resource".to_owned()));

    // Only at the root: path-inserted first, then the root.
    let mock = Mock::start(Config {
        prm_in_header: false,
        prm_paths: vec!["/.well-known/oauth-protected-resource".into()],
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    assert_eq!(
        mock.gets()[..2],
        [
            "/.well-known/oauth-protected-resource/mcp".to_owned(),
            "/.well-known/oauth-protected-resource".to_owned()
        ]
    );
}

#[tokio::test]
async fn server_metadata_order_with_an_issuer_path() {
    let mock = Mock::start(Config {
        issuer_path: "/tenant1".into(),
        as_metadata_path: "/tenant1/.well-known/openid-configuration".into(),
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    let gets: Vec<String> = mock
        .gets()
        .into_iter()
        .filter(|g| !g.contains("oauth-protected-resource") && g != "/tenant1/authorize")
        .collect();
    assert_eq!(
        gets,
        [
            "/.well-known/oauth-authorization-server/tenant1",
            "/.well-known/openid-configuration/tenant1",
            "/tenant1/.well-known/openid-configuration",
        ]
    );
}

#[tokio::test]
async fn server_metadata_order_without_a_path() {
    let mock = Mock::start(Config {
        as_metadata_path: "/.well-known/openid-configuration".into(),
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    let gets: Vec<String> = mock
        .gets()
        .into_iter()
        .filter(|g| g.contains("/.well-known/o") && !g.contains("protected-resource"))
        .collect();
    assert_eq!(
        gets,
        [
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration"
        ]
    );
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_not_used() {
    let mock = Mock::start(Config {
        claimed_issuer: Some("https://attacker.example.com".into()),
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    let err = call(&auth, &mock.mcp_url(), "tools/list")
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err}");
    for path in ["/register", "/authorize", "/token"] {
        assert!(mock.hits_to(path).is_empty(), "{path} was used");
    }
}

#[tokio::test]
async fn metadata_for_another_resource_is_refused() {
    let mock = Mock::start(Config {
        prm_resource: Some("https://evil.example.com/mcp".into()),
        ..Config::default()
    })
    .await;
    let auth = authorizer();
    let err = call(&auth, &mock.mcp_url(), "tools/list")
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::ResourceMismatch { .. }), "{err}");
    assert!(
        !mock
            .gets()
            .iter()
            .any(|g| g.contains("oauth-authorization-server")),
        "the authorization server was contacted"
    );
}

#[tokio::test]
async fn the_published_resource_is_sent_verbatim() {
    // A root metadata document describes the origin, without a trailing slash.
    let mock = Mock::start(Config {
        prm_in_header: false,
        prm_paths: vec!["/.well-known/oauth-protected-resource".into()],
        ..Config::default()
    })
    .await;
    mock.configure(|c| c.prm_resource = Some(mock.base.clone()));
    let auth = authorizer();
    assert_eq!(
        call(&auth, &mock.mcp_url(), "tools/list").await.unwrap(),
        200
    );
    assert_eq!(mock.hits_to("/authorize")[0].query["resource"], mock.base);
    assert_eq!(mock.hits_to("/token")[0].form["resource"], mock.base);
}
