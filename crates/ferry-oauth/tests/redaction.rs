//! Secrets never show: not in `Debug` output, not in errors, not in logs of a whole
//! flow.

mod common;

use common::{Config, Headless, Mock, call};
use ferry_oauth::{
    ClientKey, Credentials, DpopKey, Grant, IssuerRecord, OAuthAuthorizer, RegisteredClient,
    RegistrationKind, Secret, StaticClient, TokenType, Tokens,
};
use ferry_testkit::logs::Captured;

const SECRETS: [&str; 4] = [
    "access-SECRET",
    "refresh-SECRET",
    "client-SECRET",
    "key-SECRET",
];

fn assert_clean(text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{s} leaked: {text}");
    }
}

#[test]
fn debug_output_is_redacted() {
    let tokens = Tokens {
        access_token: Secret::new("access-SECRET"),
        token_type: TokenType::Bearer,
        expires_at: None,
        refresh_token: Some(Secret::new("refresh-SECRET")),
        scopes: vec![],
        requested_scopes: vec![],
        dpop_key: Some(Secret::new("key-SECRET")),
    };
    let client = RegisteredClient {
        issuer: "https://as".into(),
        client_id: "id".into(),
        client_secret: Some(Secret::new("client-SECRET")),
        token_endpoint_auth_method: None,
        kind: RegistrationKind::PreRegistered,
    };
    let mut record = IssuerRecord::new("https://as");
    record.client = Some(client.clone());
    record.tokens.insert("https://r".into(), tokens.clone());
    let mut header = http::HeaderValue::from_static("Bearer access-SECRET");
    header.set_sensitive(true);
    let creds = Credentials {
        authorization: Some(header),
        dpop: None,
        generation: 1,
    };
    let stat = StaticClient::new("id").secret("client-SECRET");
    let auth = OAuthAuthorizer::builder()
        .grant(Grant::ClientCredentials)
        .static_client(stat.clone())
        .build()
        .unwrap();
    let key = DpopKey::generate().unwrap();
    let key_text = key.to_pkcs8_base64().expose().to_owned();
    let all = format!(
        "{tokens:?} {client:?} {record:?} {creds:?} {stat:?} {auth:?} {key:?} {:?}",
        Secret::new("access-SECRET")
    );
    assert_clean(&all);
    assert!(!all.contains(&key_text));
    assert!(all.contains("<redacted>"));
}

#[test]
fn client_keys_do_not_print_their_pem() {
    let key = DpopKey::generate().unwrap();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        key.to_pkcs8_base64().expose()
    );
    let ck = ClientKey::from_pem(&pem, "ES256").unwrap();
    let text = format!("{ck:?}");
    assert!(
        !text.contains(&key.to_pkcs8_base64().expose()[10..30]),
        "{text}"
    );
    // A bad key is an error that does not echo the input.
    let err = ClientKey::from_pem(
        "-----BEGIN PRIVATE KEY-----\nkey-SECRET\n-----END PRIVATE KEY-----",
        "ES256",
    )
    .unwrap_err();
    assert_clean(&format!("{err} {err:?}"));
}

#[tokio::test]
async fn a_whole_flow_logs_no_secret() {
    let capture = Captured::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let mock = Mock::start(Config {
        refresh: true,
        expires_in: 1,
        auth_methods: vec!["client_secret_post".into()],
        ..Config::default()
    })
    .await;
    let auth = OAuthAuthorizer::builder()
        .redirect_handler(Headless)
        .build()
        .unwrap();
    call(&auth, &mock.mcp_url(), "x").await.unwrap();
    call(&auth, &mock.mcp_url(), "x").await.unwrap();
    let logs = capture.text();
    assert!(!logs.is_empty(), "nothing was logged");
    for token in ["at-", "rt-", "dyn-secret", "code-"] {
        assert!(
            !logs.contains(token),
            "{token} appears in the logs:\n{logs}"
        );
    }
}
