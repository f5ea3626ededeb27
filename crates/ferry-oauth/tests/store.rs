//! Token stores: the file store's permissions, atomic writes and one file per issuer;
//! stored credentials reused across authorizers; a failing store fails closed.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{Config, Headless, Mock, call};
use ferry_oauth::{
    AuthError, FileTokenStore, IssuerRecord, MemoryTokenStore, OAuthAuthorizer, RegisteredClient,
    RegistrationKind, Secret, TokenStore, TokenType, Tokens,
};

fn record(issuer: &str) -> IssuerRecord {
    let mut tokens = BTreeMap::new();
    tokens.insert(
        "https://mcp.example.com/mcp".to_owned(),
        Tokens {
            access_token: Secret::new("access-123"),
            token_type: TokenType::Bearer,
            expires_at: Some(4_000_000_000),
            refresh_token: Some(Secret::new("refresh-456")),
            scopes: vec!["a".into()],
            requested_scopes: vec!["a".into()],
            dpop_key: None,
        },
    );
    IssuerRecord {
        issuer: issuer.to_owned(),
        client: Some(RegisteredClient {
            issuer: issuer.to_owned(),
            client_id: "cid".into(),
            client_secret: Some(Secret::new("csecret")),
            token_endpoint_auth_method: Some("client_secret_basic".into()),
            kind: RegistrationKind::Dynamic,
        }),
        tokens,
    }
}

fn parity(store: &dyn TokenStore) {
    assert_eq!(store.load("https://as.one").unwrap(), None);
    let one = record("https://as.one");
    store.save(&one).unwrap();
    store.save(&record("https://as.two")).unwrap();
    assert_eq!(store.load("https://as.one").unwrap().as_ref(), Some(&one));
    let mut changed = one.clone();
    changed.tokens.clear();
    store.save(&changed).unwrap();
    assert_eq!(store.load("https://as.one").unwrap(), Some(changed));
    store.remove("https://as.one").unwrap();
    store.remove("https://as.one").unwrap();
    assert_eq!(store.load("https://as.one").unwrap(), None);
    assert!(store.load("https://as.two").unwrap().is_some());
}

#[test]
fn memory_and_file_stores_behave_alike() {
    parity(&MemoryTokenStore::new());
    let dir = tempfile::tempdir().unwrap();
    parity(&FileTokenStore::new(dir.path().join("tokens")).unwrap());
}

#[cfg(unix)]
#[test]
fn files_are_private_one_per_issuer_and_written_atomically() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::new(dir.path().join("tokens")).unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(store.dir()), 0o700);
    for i in 0..5 {
        store.save(&record("https://as.one")).unwrap();
        store.save(&record(&format!("https://as.{i}"))).unwrap();
    }
    let files: Vec<_> = std::fs::read_dir(store.dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        files.len(),
        6,
        "one file per issuer, no temporary files left: {files:?}"
    );
    for f in &files {
        assert_eq!(mode(f), 0o600, "{}", f.display());
        assert_eq!(f.extension().unwrap(), "json");
    }
    let path = store.path_for("https://as.one");
    assert!(files.contains(&path));
    // The file name says nothing about the issuer.
    assert!(!path.to_string_lossy().contains("as.one"));
}

#[test]
fn damaged_or_misplaced_records_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileTokenStore::new(dir.path()).unwrap();
    std::fs::write(store.path_for("https://as.one"), b"{ not json").unwrap();
    assert!(matches!(
        store.load("https://as.one"),
        Err(AuthError::Store(_))
    ));
    // A record copied under another issuer's name is refused.
    store.save(&record("https://as.two")).unwrap();
    std::fs::copy(
        store.path_for("https://as.two"),
        store.path_for("https://as.one"),
    )
    .unwrap();
    assert!(matches!(
        store.load("https://as.one"),
        Err(AuthError::Store(_))
    ));
}

#[tokio::test]
async fn stored_credentials_are_used_by_the_next_authorizer() {
    let mock = Mock::start(Config::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(dir.path()).unwrap());
    let first = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .store(store.clone())
        .build()
        .unwrap();
    call(&first, &mock.mcp_url(), "x").await.unwrap();
    let rec = store
        .load(&mock.issuer())
        .unwrap()
        .expect("a record for the issuer");
    assert_eq!(rec.client.unwrap().client_id, "dyn-client");
    assert!(rec.tokens.contains_key(mock.mcp_url().as_str()));

    // A new process: discovery again (the 401), then the stored token, no new sign-in.
    let second = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .store(Arc::new(FileTokenStore::new(dir.path()).unwrap()))
        .build()
        .unwrap();
    assert_eq!(call(&second, &mock.mcp_url(), "x").await.unwrap(), 200);
    assert_eq!(mock.hits_to("/authorize").len(), 1);
    assert_eq!(mock.hits_to("/register").len(), 1);
}

/// A store whose disk is gone.
struct Broken;

impl TokenStore for Broken {
    fn load(&self, _: &str) -> Result<Option<IssuerRecord>, AuthError> {
        Err(AuthError::Store("the disk is gone".into()))
    }
    fn save(&self, _: &IssuerRecord) -> Result<(), AuthError> {
        Err(AuthError::Store("the disk is gone".into()))
    }
    fn remove(&self, _: &str) -> Result<(), AuthError> {
        Err(AuthError::Store("the disk is gone".into()))
    }
}

#[tokio::test]
async fn a_failing_store_fails_closed() {
    let mock = Mock::start(Config::default()).await;
    let auth = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .store(Arc::new(Broken))
        .build()
        .unwrap();
    let err = call(&auth, &mock.mcp_url(), "x").await.unwrap_err();
    assert!(matches!(err, AuthError::Store(_)), "{err}");
    // No request was ever sent with a token.
    assert!(
        mock.hits_to("/mcp")
            .iter()
            .all(|h| h.headers.get("authorization").is_none())
    );
}
