//! A loopback authorization server and protected resource for the tests, with switches
//! for each behaviour under test, recording every request it receives; and a minimal
//! transport that drives an `Authorizer` the way `ferry-client` does.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry_oauth::{
    AuthChallenge, AuthError, Authorizer, BoxFuture, Decision, Outgoing, RedirectHandler, Refusal,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use url::Url;

/// One request the mock received.
#[derive(Clone, Debug)]
pub struct Hit {
    pub base: String,
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub form: HashMap<String, String>,
    /// The body, when it is JSON.
    pub json: Value,
    pub headers: HeaderMap,
}

/// How the authorization endpoint sets `iss`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iss {
    Correct,
    Omit,
    Value(&'static str),
}

/// The mock's behaviour.
#[derive(Clone, Debug)]
pub struct Config {
    /// Paths that serve the protected resource metadata.
    pub prm_paths: Vec<String>,
    /// Whether the 401 names the metadata URL (the first of `prm_paths`).
    pub prm_in_header: bool,
    /// The `resource` published (default: the MCP URL).
    pub prm_resource: Option<String>,
    pub prm_scopes: Option<Vec<String>>,
    /// The scope of the 401 challenge.
    pub challenge_scope: Option<String>,
    /// The issuer path (e.g. `/tenant1`), and where its metadata is served.
    pub issuer_path: String,
    pub as_metadata_path: String,
    /// The `issuer` the metadata claims (default: the real one).
    pub claimed_issuer: Option<String>,
    pub s256: bool,
    pub iss_supported: Option<bool>,
    pub iss: Iss,
    pub as_scopes: Option<Vec<String>>,
    pub auth_methods: Vec<String>,
    pub registration: bool,
    pub cimd: bool,
    /// The scope `tools/call` needs (else 403 `insufficient_scope`).
    pub call_scope: Option<String>,
    /// Always answer 403 to authorized requests.
    pub always_forbidden: bool,
    /// Accept no token at all (every request gets a 401).
    pub reject_tokens: bool,
    pub expires_in: u64,
    pub refresh: bool,
    pub dpop: bool,
    pub as_nonce: Option<String>,
    pub rs_nonce: Option<String>,
    /// The OAuth error the token endpoint answers with, if any.
    pub token_error: Option<String>,
    /// The authorization server the metadata names (default: this mock).
    pub authorization_server: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            prm_paths: vec!["/.well-known/oauth-protected-resource/mcp".into()],
            prm_in_header: true,
            prm_resource: None,
            prm_scopes: None,
            challenge_scope: None,
            issuer_path: String::new(),
            as_metadata_path: "/.well-known/oauth-authorization-server".into(),
            claimed_issuer: None,
            s256: true,
            iss_supported: Some(true),
            iss: Iss::Correct,
            as_scopes: None,
            auth_methods: vec!["none".into()],
            registration: true,
            cimd: false,
            call_scope: None,
            always_forbidden: false,
            reject_tokens: false,
            expires_in: 3600,
            refresh: false,
            dpop: false,
            as_nonce: None,
            rs_nonce: None,
            token_error: None,
            authorization_server: None,
        }
    }
}

#[derive(Default)]
pub struct Inner {
    hits: Vec<Hit>,
    /// code -> (code_challenge, scope)
    codes: HashMap<String, (String, String)>,
    /// access token -> scopes
    tokens: HashMap<String, Vec<String>>,
    refresh_tokens: HashSet<String>,
    next: u64,
}

#[derive(Clone)]
struct Shared {
    config: Arc<Mutex<Config>>,
    inner: Arc<Mutex<Inner>>,
    base: Arc<Mutex<String>>,
}

/// The running mock; stops when dropped.
pub struct Mock {
    pub base: String,
    shared: Shared,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Mock {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

impl Mock {
    pub async fn start(config: Config) -> Mock {
        Self::start_with(config, Arc::new(Mutex::new(Inner::default()))).await
    }

    /// A second server that shares this one's records and tokens (a resource server
    /// and an authorization server that trust each other).
    pub async fn start_sharing(&self, config: Config) -> Mock {
        Self::start_with(config, self.shared.inner.clone()).await
    }

    async fn start_with(config: Config, inner: Arc<Mutex<Inner>>) -> Mock {
        let shared = Shared {
            config: Arc::new(Mutex::new(config)),
            inner,
            base: Arc::new(Mutex::new(String::new())),
        };
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        *shared.base.lock().unwrap() = base.clone();
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
                .unwrap();
        });
        Mock {
            base,
            shared,
            stop: Some(tx),
        }
    }

    pub fn mcp_url(&self) -> Url {
        Url::parse(&format!("{}/mcp", self.base)).unwrap()
    }

    pub fn issuer(&self) -> String {
        format!(
            "{}{}",
            self.base,
            self.shared.config.lock().unwrap().issuer_path
        )
    }

    pub fn configure(&self, f: impl FnOnce(&mut Config)) {
        f(&mut self.shared.config.lock().unwrap());
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.shared.inner.lock().unwrap().hits.clone()
    }

    /// The paths requested with GET, in order.
    pub fn gets(&self) -> Vec<String> {
        self.hits()
            .into_iter()
            .filter(|h| h.method == "GET")
            .map(|h| h.path)
            .collect()
    }

    pub fn hits_to(&self, path: &str) -> Vec<Hit> {
        self.hits().into_iter().filter(|h| h.path == path).collect()
    }

    /// Revokes every access token.
    pub fn revoke_all(&self) {
        self.shared.inner.lock().unwrap().tokens.clear();
    }
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn parse_form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

async fn handle(State(s): State<Shared>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body: Bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let uri: Uri = parts.uri.clone();
    let path = uri.path().to_owned();
    let query: HashMap<String, String> = uri
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let is_form = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("application/x-www-form-urlencoded"));
    let form = if is_form {
        parse_form(&body)
    } else {
        HashMap::new()
    };
    let base = s.base.lock().unwrap().clone();
    let hit = Hit {
        base: base.clone(),
        method: parts.method.to_string(),
        path: path.clone(),
        query: query.clone(),
        form: form.clone(),
        json: serde_json::from_slice(&body).unwrap_or(Value::Null),
        headers: parts.headers.clone(),
    };
    s.inner.lock().unwrap().hits.push(hit);
    let cfg = s.config.lock().unwrap().clone();
    let issuer = format!("{base}{}", cfg.issuer_path);
    let prefix = cfg.issuer_path.clone();

    if parts.method == Method::GET && cfg.prm_paths.contains(&path) {
        let mut prm = json!({
            "resource": cfg.prm_resource.clone().unwrap_or_else(|| format!("{base}/mcp")),
            "authorization_servers": [cfg.authorization_server.clone().unwrap_or(issuer.clone())],
        });
        if let Some(sc) = &cfg.prm_scopes {
            prm["scopes_supported"] = json!(sc);
        }
        return json_response(StatusCode::OK, prm);
    }
    if parts.method == Method::GET && path == cfg.as_metadata_path {
        let mut m = json!({
            "issuer": cfg.claimed_issuer.clone().unwrap_or(issuer.clone()),
            "authorization_endpoint": format!("{base}{prefix}/authorize"),
            "token_endpoint": format!("{base}{prefix}/token"),
            "response_types_supported": ["code"],
            "token_endpoint_auth_methods_supported": cfg.auth_methods,
        });
        if cfg.s256 {
            m["code_challenge_methods_supported"] = json!(["S256"]);
        }
        if let Some(i) = cfg.iss_supported {
            m["authorization_response_iss_parameter_supported"] = json!(i);
        }
        if cfg.registration {
            m["registration_endpoint"] = json!(format!("{base}{prefix}/register"));
        }
        if cfg.cimd {
            m["client_id_metadata_document_supported"] = json!(true);
        }
        if let Some(sc) = &cfg.as_scopes {
            m["scopes_supported"] = json!(sc);
        }
        if cfg.dpop {
            m["dpop_signing_alg_values_supported"] = json!(["ES256"]);
        }
        return json_response(StatusCode::OK, m);
    }
    if parts.method == Method::GET && path == format!("{prefix}/authorize") {
        let mut inner = s.inner.lock().unwrap();
        inner.next += 1;
        let code = format!("code-{}", inner.next);
        inner.codes.insert(
            code.clone(),
            (
                query.get("code_challenge").cloned().unwrap_or_default(),
                query.get("scope").cloned().unwrap_or_default(),
            ),
        );
        let mut back = Url::parse(&query["redirect_uri"]).unwrap();
        back.query_pairs_mut().append_pair("code", &code);
        if let Some(st) = query.get("state") {
            back.query_pairs_mut().append_pair("state", st);
        }
        match cfg.iss {
            Iss::Correct => {
                back.query_pairs_mut().append_pair("iss", &issuer);
            }
            Iss::Value(v) => {
                back.query_pairs_mut().append_pair("iss", v);
            }
            Iss::Omit => {}
        }
        return (StatusCode::FOUND, [("location", back.to_string())]).into_response();
    }
    if parts.method == Method::POST && path == format!("{prefix}/register") {
        let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let method = req["token_endpoint_auth_method"]
            .as_str()
            .unwrap_or("none")
            .to_owned();
        let mut resp = json!({
            "client_id": "dyn-client",
            "token_endpoint_auth_method": method,
        });
        if method != "none" {
            resp["client_secret"] = json!("dyn-secret");
        }
        return json_response(StatusCode::CREATED, resp);
    }
    if parts.method == Method::POST && path == format!("{prefix}/token") {
        return token(&s, &cfg, &issuer, &parts.headers, &form);
    }
    if path == "/mcp" {
        return resource(&s, &cfg, &base, &parts.method, &parts.headers, &body);
    }
    (StatusCode::NOT_FOUND, "not found").into_response()
}

fn oauth_error(error: &str) -> Response {
    json_response(StatusCode::BAD_REQUEST, json!({ "error": error }))
}

fn token(
    s: &Shared,
    cfg: &Config,
    _issuer: &str,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Response {
    if let Some(e) = &cfg.token_error {
        return oauth_error(e);
    }
    let mut dpop_bound = false;
    if cfg.dpop
        && let Some(proof) = headers.get("dpop").and_then(|v| v.to_str().ok())
    {
        let claims = jwt_claims(proof);
        if let Some(n) = &cfg.as_nonce
            && claims["nonce"].as_str() != Some(n)
        {
            let mut r = json_response(
                StatusCode::BAD_REQUEST,
                json!({ "error": "use_dpop_nonce" }),
            );
            r.headers_mut().insert("dpop-nonce", n.parse().unwrap());
            return r;
        }
        dpop_bound = true;
    }
    let grant = form.get("grant_type").map(String::as_str).unwrap_or("");
    let scope = match grant {
        "authorization_code" => {
            let code = form.get("code").cloned().unwrap_or_default();
            let Some((challenge, scope)) = s.inner.lock().unwrap().codes.remove(&code) else {
                return oauth_error("invalid_grant");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != challenge {
                return oauth_error("invalid_grant");
            }
            scope
        }
        "refresh_token" => {
            let rt = form.get("refresh_token").cloned().unwrap_or_default();
            if !s.inner.lock().unwrap().refresh_tokens.remove(&rt) {
                return oauth_error("invalid_grant");
            }
            String::new()
        }
        "urn:ietf:params:oauth:grant-type:token-exchange" => {
            let ok = form.get("subject_token_type").map(String::as_str)
                == Some("urn:ietf:params:oauth:token-type:id_token")
                && form.get("requested_token_type").map(String::as_str)
                    == Some("urn:ietf:params:oauth:token-type:id-jag")
                && form
                    .get("subject_token")
                    .is_some_and(|t| t == "the-id-token")
                && form.get("audience").is_some()
                && form.get("resource").is_some();
            if !ok {
                return oauth_error("invalid_request");
            }
            return json_response(
                StatusCode::OK,
                json!({
                    "access_token": "the-id-jag",
                    "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "token_type": "N_A",
                }),
            );
        }
        "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
            if form.get("assertion").is_none_or(|a| a.is_empty()) {
                return oauth_error("invalid_request");
            }
            form.get("scope").cloned().unwrap_or_default()
        }
        _ => form.get("scope").cloned().unwrap_or_default(),
    };
    let mut inner = s.inner.lock().unwrap();
    inner.next += 1;
    let access = format!("at-{}", inner.next);
    let scopes: Vec<String> = scope.split_whitespace().map(str::to_owned).collect();
    inner.tokens.insert(access.clone(), scopes);
    let mut resp = json!({
        "access_token": access,
        "token_type": if dpop_bound { "DPoP" } else { "Bearer" },
        "expires_in": cfg.expires_in,
    });
    if !scope.is_empty() {
        resp["scope"] = json!(scope);
    }
    if cfg.refresh {
        let rt = format!("rt-{}", inner.next);
        inner.refresh_tokens.insert(rt.clone());
        resp["refresh_token"] = json!(rt);
    }
    json_response(StatusCode::OK, resp)
}

fn resource(
    s: &Shared,
    cfg: &Config,
    base: &str,
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let prm_url = format!(
        "{base}{}",
        cfg.prm_paths.first().cloned().unwrap_or_default()
    );
    let mut challenge = "Bearer".to_owned();
    let mut params = Vec::new();
    if cfg.prm_in_header {
        params.push(format!("resource_metadata=\"{prm_url}\""));
    }
    if let Some(sc) = &cfg.challenge_scope {
        params.push(format!("scope=\"{sc}\""));
    }
    if !params.is_empty() {
        challenge = format!("Bearer {}", params.join(", "));
    }
    let unauthorized = |challenge: String| {
        let mut r = json_response(StatusCode::UNAUTHORIZED, json!({"error": "invalid_token"}));
        r.headers_mut()
            .insert("www-authenticate", challenge.parse().unwrap());
        r
    };
    let Some(auth) = headers.get("authorization").and_then(|v| v.to_str().ok()) else {
        return unauthorized(challenge);
    };
    let (scheme, token) = auth.split_once(' ').unwrap_or((auth, ""));
    let scopes = s.inner.lock().unwrap().tokens.get(token).cloned();
    let Some(scopes) = scopes.filter(|_| !cfg.reject_tokens) else {
        return unauthorized(challenge);
    };
    if scheme.eq_ignore_ascii_case("dpop") {
        let Some(proof) = headers.get("dpop").and_then(|v| v.to_str().ok()) else {
            return unauthorized(challenge);
        };
        let claims = jwt_claims(proof);
        if claims["htm"] != json!(method.as_str()) || claims["htu"] != json!(format!("{base}/mcp"))
        {
            return unauthorized(challenge);
        }
        if let Some(n) = &cfg.rs_nonce
            && claims["nonce"].as_str() != Some(n)
        {
            let mut r = unauthorized(format!(
                "DPoP error=\"use_dpop_nonce\", resource_metadata=\"{prm_url}\""
            ));
            r.headers_mut().insert("dpop-nonce", n.parse().unwrap());
            return r;
        }
    }
    let rpc: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let needs_call_scope = rpc["method"] == "tools/call";
    if cfg.always_forbidden
        || (needs_call_scope
            && cfg
                .call_scope
                .as_ref()
                .is_some_and(|need| !scopes.iter().any(|s| s == need)))
    {
        let scope = cfg.call_scope.clone().unwrap_or_else(|| "admin".into());
        let mut r = json_response(
            StatusCode::FORBIDDEN,
            json!({"error": "insufficient_scope"}),
        );
        r.headers_mut().insert(
            "www-authenticate",
            format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{prm_url}\"")
                .parse()
                .unwrap(),
        );
        return r;
    }
    json_response(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": rpc["id"], "result": {}}),
    )
}

/// The claims of a JWT, unverified.
pub fn jwt_claims(jwt: &str) -> Value {
    jwt_part(jwt, 1)
}

/// The header of a JWT, unverified.
pub fn jwt_header(jwt: &str) -> Value {
    jwt_part(jwt, 0)
}

fn jwt_part(jwt: &str, i: usize) -> Value {
    jwt.split('.')
        .nth(i)
        .and_then(|p| URL_SAFE_NO_PAD.decode(p).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

/// Follows the authorization URL without a browser.
pub struct Headless;

impl RedirectHandler for Headless {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:9/callback".into()
    }

    fn authorize<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Url, AuthError>> {
        Box::pin(async move {
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let resp = client
                .get(url.clone())
                .send()
                .await
                .map_err(|e| AuthError::Redirect(e.to_string()))?;
            let loc = resp
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| AuthError::Redirect("no Location".into()))?;
            Url::parse(loc).map_err(|e| AuthError::Redirect(e.to_string()))
        })
    }
}

/// Sends a JSON-RPC request with `method` to `url` the way `ferry-client`'s transport
/// does: credentials first, and on 401/403 the authorizer decides whether to send again.
/// Returns the final status.
pub async fn call(auth: &dyn Authorizer, url: &Url, rpc_method: &str) -> Result<u16, AuthError> {
    let http = reqwest::Client::new();
    for _ in 0..8 {
        let creds = auth
            .credentials(Outgoing {
                method: "POST",
                url,
            })
            .await?;
        let mut req = http
            .post(url.clone())
            .header("content-type", "application/json")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": rpc_method}).to_string());
        if let Some(v) = &creds.authorization {
            req = req.header("authorization", v.clone());
        }
        if let Some(v) = &creds.dpop {
            req = req.header("dpop", v.clone());
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        if status != 401 && status != 403 {
            auth.answered(url, resp.headers());
            return Ok(status);
        }
        let challenge = AuthChallenge::parse(
            resp.headers()
                .get_all("www-authenticate")
                .iter()
                .filter_map(|v| v.to_str().ok()),
        );
        let nonce = resp
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let decision = auth
            .refused(Refusal {
                method: "POST",
                url,
                status,
                challenge,
                dpop_nonce: nonce.as_deref(),
                generation: creds.generation,
                had_token: creds.authorization.is_some(),
            })
            .await?;
        if decision == Decision::Pass {
            return Ok(status);
        }
    }
    panic!("the authorizer never stopped retrying");
}
