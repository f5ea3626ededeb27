//! An in-process authorization server for tests (feature `test-issuer`).
//!
//! [`TestIssuer`] listens on `127.0.0.1` (port 0), serves RFC 8414 metadata (and OpenID
//! Connect discovery), a JWKS and an introspection endpoint, and mints access tokens —
//! valid ones with any claims, and deliberately broken ones (expired, wrong audience,
//! `alg: none`, HMAC signed with the public key, unknown `kid`, wrong key). Keys can be
//! added, rotated and retired while it runs. [`DpopKey`] makes DPoP proofs.
//!
//! ```
//! use ferry_auth::testing::TestIssuer;
//! use ferry_auth::{JwtValidator, TokenValidator};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let issuer = TestIssuer::start().await;
//! let resource = "http://127.0.0.1:8080/mcp";
//! let validator = JwtValidator::builder(issuer.issuer(), resource).build().unwrap();
//! let token = issuer.token(resource, "alice", "files:read");
//! let verified = validator.validate(&token).await.unwrap();
//! assert_eq!(verified.subject(), "alice");
//! assert!(validator.validate(&issuer.expired_token(resource, "alice")).await.is_err());
//! issuer.stop().await;
//! # }
//! ```

mod dpop;
mod keys;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Validation};
use parking_lot::{Mutex, RwLock};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use dpop::DpopKey;
pub use keys::{KeyKind, SigningKey};

use crate::cache::digest;
use crate::token::now_secs;

/// How long minted tokens live by default.
const LIFETIME: u64 = 300;

/// An authorization server on loopback for the length of a test.
pub struct TestIssuer {
    state: Arc<IssuerState>,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

struct IssuerState {
    issuer: String,
    keys: RwLock<Vec<Arc<SigningKey>>>,
    next_kid: AtomicUsize,
    jwks_hits: AtomicUsize,
    metadata_hits: AtomicUsize,
    introspection_hits: AtomicUsize,
    available: AtomicBool,
    oauth_metadata: AtomicBool,
    oidc_metadata: AtomicBool,
    jwks_max_age: Mutex<Option<u64>>,
    metadata_issuer: Mutex<Option<String>>,
    client: Mutex<(String, String)>,
    revoked: Mutex<HashSet<[u8; 32]>>,
    opaque: Mutex<HashMap<[u8; 32], Value>>,
}

impl std::fmt::Debug for TestIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestIssuer")
            .field("issuer", &self.state.issuer)
            .finish_non_exhaustive()
    }
}

impl TestIssuer {
    /// Starts an issuer with one ES256 key.
    pub async fn start() -> TestIssuer {
        TestIssuer::start_with(KeyKind::Es256).await
    }

    /// Starts an issuer with one key of `kind`.
    pub async fn start_with(kind: KeyKind) -> TestIssuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(IssuerState {
            issuer: format!("http://{addr}"),
            keys: RwLock::new(Vec::new()),
            next_kid: AtomicUsize::new(1),
            jwks_hits: AtomicUsize::new(0),
            metadata_hits: AtomicUsize::new(0),
            introspection_hits: AtomicUsize::new(0),
            available: AtomicBool::new(true),
            oauth_metadata: AtomicBool::new(true),
            oidc_metadata: AtomicBool::new(true),
            jwks_max_age: Mutex::new(None),
            metadata_issuer: Mutex::new(None),
            client: Mutex::new(("ferry-resource".into(), "resource-secret".into())),
            revoked: Mutex::new(HashSet::new()),
            opaque: Mutex::new(HashMap::new()),
        });
        let mut issuer = TestIssuer {
            state: state.clone(),
            addr,
            shutdown: None,
            task: None,
        };
        issuer.add_key(kind);
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(oauth_metadata),
            )
            .route("/.well-known/openid-configuration", get(oidc_metadata))
            .route("/jwks", get(jwks))
            .route("/introspect", post(introspect))
            .with_state(state);
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        issuer.shutdown = Some(tx);
        issuer.task = Some(task);
        issuer
    }

    /// The issuer identifier, `http://127.0.0.1:PORT`.
    pub fn issuer(&self) -> &str {
        &self.state.issuer
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The JWKS URL.
    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.state.issuer)
    }

    /// The introspection endpoint.
    pub fn introspection_endpoint(&self) -> String {
        format!("{}/introspect", self.state.issuer)
    }

    /// Adds a key of `kind` to the JWKS; it signs new tokens from now on. Returns its `kid`.
    pub fn add_key(&self, kind: KeyKind) -> String {
        let n = self.state.next_kid.fetch_add(1, Ordering::Relaxed);
        let key = Arc::new(SigningKey::generate(kind, format!("key-{n}")));
        let kid = key.kid().to_owned();
        self.state.keys.write().push(key);
        kid
    }

    /// Replaces every key with a new one of `kind` (tokens signed by the old keys stop
    /// verifying once a resource refetches the JWKS). Returns the new `kid`.
    pub fn rotate(&self, kind: KeyKind) -> String {
        let kid = self.add_key(kind);
        self.state.keys.write().retain(|k| k.kid() == kid);
        kid
    }

    /// Removes the key `kid` from the JWKS.
    pub fn retire(&self, kid: &str) {
        self.state.keys.write().retain(|k| k.kid() != kid);
    }

    /// The key that signs new tokens.
    pub fn current_key(&self) -> Arc<SigningKey> {
        self.state
            .keys
            .read()
            .last()
            .cloned()
            .expect("the issuer has a key")
    }

    /// The published JWKS.
    pub fn jwks(&self) -> jsonwebtoken::jwk::JwkSet {
        serde_json::from_value(jwks_json(&self.state)).expect("a JWK set")
    }

    /// How many times the JWKS was fetched.
    pub fn jwks_fetches(&self) -> usize {
        self.state.jwks_hits.load(Ordering::SeqCst)
    }

    /// How many times a metadata document was fetched.
    pub fn metadata_fetches(&self) -> usize {
        self.state.metadata_hits.load(Ordering::SeqCst)
    }

    /// How many introspection requests arrived.
    pub fn introspection_calls(&self) -> usize {
        self.state.introspection_hits.load(Ordering::SeqCst)
    }

    /// The `Cache-Control: max-age` sent with the JWKS (none by default).
    pub fn set_jwks_max_age(&self, secs: Option<u64>) {
        *self.state.jwks_max_age.lock() = secs;
    }

    /// Makes the metadata name another issuer (a mix-up the resource must refuse).
    pub fn set_metadata_issuer(&self, issuer: Option<&str>) {
        *self.state.metadata_issuer.lock() = issuer.map(str::to_owned);
    }

    /// Which discovery documents are served (both by default).
    pub fn serve_discovery(&self, oauth: bool, openid: bool) {
        self.state.oauth_metadata.store(oauth, Ordering::SeqCst);
        self.state.oidc_metadata.store(openid, Ordering::SeqCst);
    }

    /// When unavailable, every endpoint answers `503`.
    pub fn set_available(&self, available: bool) {
        self.state.available.store(available, Ordering::SeqCst);
    }

    /// The client credentials the introspection endpoint expects.
    pub fn client_credentials(&self) -> (String, String) {
        self.state.client.lock().clone()
    }

    /// Revokes `token`: introspection reports it inactive.
    pub fn revoke(&self, token: &str) {
        self.state.revoked.lock().insert(digest(token));
    }

    /// Registers an opaque token that introspection reports with `claims` (`active`
    /// is added).
    pub fn register_opaque(&self, token: &str, claims: Value) {
        self.state.opaque.lock().insert(digest(token), claims);
    }

    /// The claims of a valid token for `resource` and `subject`: `iss`, `sub`, `aud`,
    /// `exp` (5 minutes), `iat`, `jti`, `client_id`, and an empty `scope`. Change any and
    /// [`TestIssuer::mint`] it.
    pub fn claims(&self, resource: &str, subject: &str) -> Value {
        let now = now_secs();
        let mut jti = [0u8; 12];
        let _ = getrandom::fill(&mut jti);
        json!({
            "iss": self.state.issuer,
            "sub": subject,
            "aud": resource,
            "exp": now + LIFETIME,
            "iat": now,
            "jti": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(jti),
            "client_id": "test-client",
            "scope": "",
        })
    }

    /// A valid token for `resource` and `subject` with these space-separated `scopes`.
    pub fn token(&self, resource: &str, subject: &str, scopes: &str) -> String {
        let mut c = self.claims(resource, subject);
        c["scope"] = json!(scopes);
        self.mint(&c)
    }

    /// `claims` signed by the current key, with `typ: at+jwt` and its `kid`.
    pub fn mint(&self, claims: &Value) -> String {
        let key = self.current_key();
        self.mint_with_header(&self.header(&key), claims)
    }

    /// `claims` signed by the current key under `header`, exactly as given.
    pub fn mint_with_header(&self, header: &Value, claims: &Value) -> String {
        self.current_key().sign_raw(header, claims)
    }

    /// The default header of the current key: `alg`, `typ: at+jwt` and `kid`.
    pub fn header(&self, key: &SigningKey) -> Value {
        json!({
            "alg": crate::jose::alg_name(key.algorithm()),
            "typ": "at+jwt",
            "kid": key.kid(),
        })
    }

    /// A token that expired ten minutes ago.
    pub fn expired_token(&self, resource: &str, subject: &str) -> String {
        let mut c = self.claims(resource, subject);
        c["exp"] = json!(now_secs() - 600);
        c["iat"] = json!(now_secs() - 900);
        self.mint(&c)
    }

    /// A token issued for another resource.
    pub fn wrong_audience_token(&self, subject: &str) -> String {
        self.mint(&self.claims("https://other.example.com/mcp", subject))
    }

    /// A token naming a `kid` the JWKS does not have (signed by the current key).
    pub fn unknown_kid_token(&self, resource: &str, subject: &str, kid: &str) -> String {
        let key = self.current_key();
        let mut h = self.header(&key);
        h["kid"] = json!(kid);
        key.sign_raw(&h, &self.claims(resource, subject))
    }

    /// A token with the current `kid` signed by a key the issuer never published.
    pub fn wrong_key_token(&self, resource: &str, subject: &str) -> String {
        let current = self.current_key();
        let kind = match current.algorithm() {
            Algorithm::EdDSA => KeyKind::EdDsa,
            Algorithm::RS256 => KeyKind::Rs256,
            Algorithm::PS256 => KeyKind::Ps256,
            _ => KeyKind::Es256,
        };
        let stranger = SigningKey::generate(kind, current.kid());
        stranger.sign_raw(&self.header(&current), &self.claims(resource, subject))
    }

    /// An unsigned token (`alg: none`).
    pub fn none_alg_token(&self, resource: &str, subject: &str) -> String {
        keys::unsigned(&self.claims(resource, subject))
    }

    /// A token signed with HS256 using the current public key's JWK as the secret, under
    /// the current `kid` (the classic algorithm-confusion forgery).
    pub fn hmac_with_public_key_token(&self, resource: &str, subject: &str) -> String {
        let key = self.current_key();
        let secret = serde_json::to_vec(key.public_jwk()).expect("JSON");
        let mut h = self.header(&key);
        h["alg"] = json!("HS256");
        keys::sign_with(
            &EncodingKey::from_secret(&secret).expect("a secret"),
            Algorithm::HS256,
            &h,
            &self.claims(resource, subject),
        )
    }

    /// A token whose header names `alg` while the current key signs it with its own
    /// algorithm (e.g. `ES384` on a P-256 key: the algorithm does not fit the key).
    pub fn mismatched_alg_token(&self, resource: &str, subject: &str, alg: &str) -> String {
        let key = self.current_key();
        let mut h = self.header(&key);
        h["alg"] = json!(alg);
        key.sign_raw(&h, &self.claims(resource, subject))
    }

    /// Stops the server.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// A JSON response.
fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&body).unwrap_or_default(),
    )
        .into_response()
}

fn unavailable() -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, "unavailable").into_response()
}

fn metadata_json(s: &IssuerState) -> Value {
    let issuer = s
        .metadata_issuer
        .lock()
        .clone()
        .unwrap_or_else(|| s.issuer.clone());
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{}/authorize", s.issuer),
        "token_endpoint": format!("{}/token", s.issuer),
        "jwks_uri": format!("{}/jwks", s.issuer),
        "introspection_endpoint": format!("{}/introspect", s.issuer),
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
    })
}

async fn oauth_metadata(State(s): State<Arc<IssuerState>>) -> Response {
    s.metadata_hits.fetch_add(1, Ordering::SeqCst);
    if !s.available.load(Ordering::SeqCst) {
        return unavailable();
    }
    if !s.oauth_metadata.load(Ordering::SeqCst) {
        return StatusCode::NOT_FOUND.into_response();
    }
    json_response(StatusCode::OK, metadata_json(&s))
}

async fn oidc_metadata(State(s): State<Arc<IssuerState>>) -> Response {
    s.metadata_hits.fetch_add(1, Ordering::SeqCst);
    if !s.available.load(Ordering::SeqCst) {
        return unavailable();
    }
    if !s.oidc_metadata.load(Ordering::SeqCst) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let mut m = metadata_json(&s);
    m["subject_types_supported"] = json!(["public"]);
    m["id_token_signing_alg_values_supported"] = json!(["ES256", "RS256"]);
    json_response(StatusCode::OK, m)
}

fn jwks_json(s: &IssuerState) -> Value {
    let keys: Vec<Value> = s
        .keys
        .read()
        .iter()
        .map(|k| k.public_jwk().clone())
        .collect();
    json!({ "keys": keys })
}

async fn jwks(State(s): State<Arc<IssuerState>>) -> Response {
    s.jwks_hits.fetch_add(1, Ordering::SeqCst);
    if !s.available.load(Ordering::SeqCst) {
        return unavailable();
    }
    let mut res = json_response(StatusCode::OK, jwks_json(&s));
    if let Some(age) = *s.jwks_max_age.lock()
        && let Ok(v) = format!("public, max-age={age}").parse()
    {
        res.headers_mut().insert(header::CACHE_CONTROL, v);
    }
    res
}

/// The client credentials of an introspection request: HTTP Basic or form fields.
fn client_of(headers: &HeaderMap, form: &HashMap<String, String>) -> Option<(String, String)> {
    if let Some(basic) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic)
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (id, secret) = decoded.split_once(':')?;
        let dec = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        };
        return Some((dec(id)?, dec(secret)?));
    }
    Some((
        form.get("client_id")?.clone(),
        form.get("client_secret")?.clone(),
    ))
}

async fn introspect(
    State(s): State<Arc<IssuerState>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    s.introspection_hits.fetch_add(1, Ordering::SeqCst);
    if !s.available.load(Ordering::SeqCst) {
        return unavailable();
    }
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    if client_of(&headers, &form).as_ref() != Some(&*s.client.lock()) {
        return json_response(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
    }
    let Some(token) = form.get("token") else {
        return json_response(StatusCode::BAD_REQUEST, json!({"error": "invalid_request"}));
    };
    let d = digest(token);
    if s.revoked.lock().contains(&d) {
        return json_response(StatusCode::OK, json!({"active": false}));
    }
    if let Some(claims) = s.opaque.lock().get(&d).cloned() {
        let mut c = claims;
        c["active"] = json!(true);
        return json_response(StatusCode::OK, c);
    }
    // A JWT of ours: verified with the published keys; expired means inactive.
    let keys: Vec<Arc<SigningKey>> = s.keys.read().clone();
    for key in keys {
        let Ok(jwk) = serde_json::from_value::<jsonwebtoken::jwk::Jwk>(key.public_jwk().clone())
        else {
            continue;
        };
        let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        let mut v = Validation::new(key.algorithm());
        v.validate_aud = false;
        v.leeway = 0;
        if let Ok(data) = jsonwebtoken::decode::<Value>(token, &decoding, &v) {
            let mut c = data.claims;
            c["active"] = json!(true);
            c["token_type"] = json!("Bearer");
            return json_response(StatusCode::OK, c);
        }
    }
    json_response(StatusCode::OK, json!({"active": false}))
}
