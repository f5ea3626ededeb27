//! The tower layer: authenticates each request, sets its [`Principal`], and writes the
//! challenges of refusals (authorization spec, "Access Token Usage", "Error Handling",
//! "Scope Challenge Handling").

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use ferry_server::{InsufficientScope, Principal};
use http::header::WWW_AUTHENTICATE;
use http::{HeaderValue, Request, Response, StatusCode};
use pin_project_lite::pin_project;

use crate::cache::{CachedToken, TokenCache, TokenDigest, digest};
use crate::challenge::{Challenge, Refusal, codes, response};
use crate::credentials::{self, Credentials, Scheme};
use crate::dpop::{DPOP_NONCE_HEADER, Dpop, DpopChecker};
use crate::error::{ConfigError, TokenError};
use crate::metadata::ResourceMetadata;
use crate::scopes::Implications;
use crate::validator::TokenValidator;

type ValidationFuture = Pin<Box<dyn Future<Output = Result<Arc<CachedToken>, Refusal>> + Send>>;

/// Settings of an [`AuthLayer`], before it is built.
///
/// ```
/// use ferry_auth::{AuthLayer, ResourceMetadata, StaticTokens};
///
/// let metadata = ResourceMetadata::new("https://mcp.example.com/mcp")
///     .unwrap()
///     .authorization_server("https://auth.example.com")
///     .unwrap()
///     .scopes_supported(["mcp"]);
/// let layer = AuthLayer::builder(metadata, StaticTokens::new().with("dev", "dev-token"))
///     .require_scopes(["mcp"])
///     .imply("admin", ["mcp", "files"])
///     .build()
///     .unwrap();
/// assert_eq!(layer.metadata().scopes(), ["mcp"]);
/// ```
pub struct AuthLayerBuilder {
    metadata: ResourceMetadata,
    validator: Arc<dyn TokenValidator>,
    required: Vec<String>,
    challenge_scopes: Option<Vec<String>>,
    implications: Implications,
    anonymous: bool,
    dpop: Option<Dpop>,
    cache_capacity: usize,
    cache_max_ttl: Duration,
    max_token_bytes: usize,
}

impl AuthLayerBuilder {
    /// Scopes every request needs, whatever it does; a token without them gets `403`
    /// with `error="insufficient_scope"`.
    pub fn require_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes named in `401` challenges (default: the required scopes if any, else
    /// the metadata's `scopes_supported`). `offline_access` is never named.
    pub fn challenge_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.challenge_scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A token granted `scope` is also granted `implied` (transitively).
    pub fn imply<I, S>(mut self, scope: impl Into<String>, implied: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.implications
            .add(scope.into(), implied.into_iter().map(Into::into).collect());
        self
    }

    /// Lets requests without any token through, with no principal (an invalid token is
    /// still refused). Handlers then see `ctx.principal() == None`.
    pub fn allow_anonymous(mut self) -> Self {
        self.anonymous = true;
        self
    }

    /// Accepts (or requires) DPoP-bound tokens; see [`Dpop`].
    pub fn dpop(mut self, dpop: Dpop) -> Self {
        self.dpop = Some(dpop);
        self
    }

    /// How many validated tokens are kept (default 10,000; 0 validates every request).
    pub fn cache_capacity(mut self, n: usize) -> Self {
        self.cache_capacity = n;
        self
    }

    /// The longest a validated token is kept, whatever its expiry (default 10 minutes).
    pub fn cache_max_ttl(mut self, ttl: Duration) -> Self {
        self.cache_max_ttl = ttl;
        self
    }

    /// The longest access token accepted, in bytes (default 16 KiB; longer gets `400`).
    pub fn max_token_bytes(mut self, n: usize) -> Self {
        self.max_token_bytes = n;
        self
    }

    /// The layer.
    pub fn build(self) -> Result<AuthLayer, ConfigError> {
        let dpop = self.dpop.map(Dpop::build).transpose()?;
        let mut metadata = self.metadata;
        if let Some(d) = &dpop {
            metadata = metadata.with_dpop(d.alg_names.clone(), d.required);
        }
        let challenge_scopes: Vec<String> = self
            .challenge_scopes
            .unwrap_or_else(|| {
                if self.required.is_empty() {
                    metadata.scopes().to_vec()
                } else {
                    self.required.clone()
                }
            })
            .into_iter()
            .filter(|s| s != "offline_access")
            .collect();
        let scope_param = (!challenge_scopes.is_empty()).then(|| challenge_scopes.join(" "));
        let origin = {
            let r = metadata.resource();
            let after = r.find("://").map_or(0, |i| i + 3);
            r[..r[after..].find('/').map_or(r.len(), |i| after + i)].to_owned()
        };
        let metadata_url = metadata.url();
        let shared = Shared {
            validator: self.validator,
            cache: TokenCache::new(self.cache_capacity, self.cache_max_ttl),
            required: self.required,
            implications: self.implications,
            anonymous: self.anonymous,
            max_token_bytes: self.max_token_bytes,
            origin,
            metadata_url,
            scope_param,
            dpop,
            metadata,
        };
        Ok(AuthLayer {
            shared: Arc::new(shared),
        })
    }
}

/// A tower layer that authenticates requests to an MCP endpoint with OAuth access
/// tokens and puts the [`Principal`] into the request's extensions.
///
/// - No token: `401` with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`
///   (or a `DPoP` challenge when DPoP is required); with
///   [`AuthLayerBuilder::allow_anonymous`] the request goes on without a principal.
/// - An invalid or expired token: `401` with `error="invalid_token"`.
/// - A malformed `Authorization` header (several headers or schemes, an empty or
///   non-token68 token, a token in the query string): `400` with
///   `error="invalid_request"`.
/// - Scopes missing for every request ([`AuthLayerBuilder::require_scopes`]), or an
///   inner `403` response carrying [`InsufficientScope`] in its extensions: `403` with
///   `error="insufficient_scope"` and every scope the operation needs.
/// - The validator cannot reach its authorization server: `503` (fail closed).
///
/// Bodies are JSON-RPC errors with the codes of [`codes`]. Validated tokens are cached by
/// their SHA-256 digest until they expire, so signatures are not verified per request.
/// The response body type only needs `From<Bytes>`.
#[derive(Clone)]
pub struct AuthLayer {
    shared: Arc<Shared>,
}

struct Shared {
    validator: Arc<dyn TokenValidator>,
    cache: TokenCache,
    required: Vec<String>,
    implications: Implications,
    anonymous: bool,
    max_token_bytes: usize,
    /// Scheme and authority of the resource, for DPoP `htu`.
    origin: String,
    metadata_url: String,
    scope_param: Option<String>,
    dpop: Option<DpopChecker>,
    metadata: ResourceMetadata,
}

impl AuthLayer {
    /// A layer for the resource described by `metadata`, validating tokens with
    /// `validator`, with default settings.
    pub fn new(metadata: ResourceMetadata, validator: impl TokenValidator) -> Self {
        AuthLayer::builder(metadata, validator)
            .build()
            .expect("the default settings are valid")
    }

    /// A builder for a layer with other settings.
    pub fn builder(metadata: ResourceMetadata, validator: impl TokenValidator) -> AuthLayerBuilder {
        AuthLayerBuilder {
            metadata,
            validator: Arc::new(validator),
            required: Vec::new(),
            challenge_scopes: None,
            implications: Implications::default(),
            anonymous: false,
            dpop: None,
            cache_capacity: 10_000,
            cache_max_ttl: Duration::from_secs(600),
            max_token_bytes: 16 * 1024,
        }
    }

    /// The Protected Resource Metadata of the resource, DPoP settings included: serve it
    /// with [`ResourceMetadata::service`] or [`ResourceMetadata::router`].
    pub fn metadata(&self) -> &ResourceMetadata {
        &self.shared.metadata
    }
}

impl std::fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayer")
            .field("resource", &self.shared.metadata.resource())
            .field("required", &self.shared.required)
            .field("anonymous", &self.shared.anonymous)
            .field("dpop", &self.shared.dpop.is_some())
            .finish_non_exhaustive()
    }
}

impl<S> tower_layer::Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> AuthService<S> {
        AuthService {
            inner,
            shared: self.shared.clone(),
        }
    }
}

/// The service an [`AuthLayer`] wraps around an MCP endpoint.
#[derive(Clone)]
pub struct AuthService<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S> std::fmt::Debug for AuthService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthService")
            .field("resource", &self.shared.metadata.resource())
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// The response for a refusal of a request presented with `scheme`.
    fn refuse<B: From<Bytes>>(&self, refusal: Refusal, scheme: Option<Scheme>) -> Response<B> {
        tracing::debug!(?refusal, "request refused");
        let dpop_only = self.dpop.as_ref().is_some_and(|d| d.required);
        // Which challenges to send: the scheme the client used, or every scheme we take.
        let schemes: Vec<Scheme> = match scheme {
            Some(s) if !dpop_only => vec![s],
            _ => self.offered(),
        };
        let (status, code, message, error, scope, nonce) = match &refusal {
            Refusal::Malformed(why) => (
                StatusCode::BAD_REQUEST,
                codes::MALFORMED,
                format!("Bad Request: {why}"),
                Some("invalid_request"),
                None,
                None,
            ),
            Refusal::NoToken => (
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                "Unauthorized: an access token is required".to_owned(),
                None,
                self.scope_param.clone(),
                self.dpop.as_ref().and_then(DpopChecker::current_nonce),
            ),
            Refusal::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                format!("Unauthorized: the access token is not valid ({why})"),
                Some("invalid_token"),
                self.scope_param.clone(),
                None,
            ),
            Refusal::InvalidProof(why) => (
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                format!("Unauthorized: invalid DPoP proof ({why})"),
                Some("invalid_dpop_proof"),
                None,
                None,
            ),
            Refusal::UseNonce(n) => (
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                "Unauthorized: a DPoP nonce is required".to_owned(),
                Some("use_dpop_nonce"),
                None,
                Some(n.clone()),
            ),
            Refusal::InsufficientScope(scopes) => (
                StatusCode::FORBIDDEN,
                codes::FORBIDDEN,
                format!("Forbidden: insufficient scope (needs {})", scopes.join(" ")),
                Some("insufficient_scope"),
                Some(scopes.join(" ")),
                None,
            ),
            Refusal::Unavailable(_) => {
                return response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    codes::UNAVAILABLE,
                    "Service Unavailable: access tokens cannot be validated now",
                    None,
                );
            }
        };
        let challenges = schemes.into_iter().map(|s| {
            let mut c = Challenge::new(s.name());
            if let Some(e) = error
                && (s == Scheme::Dpop || !e.contains("dpop"))
            {
                c = c.param("error", e);
            }
            c = c
                .param("resource_metadata", self.metadata_url.clone())
                .param_if("scope", scope.clone());
            if s == Scheme::Dpop
                && let Some(d) = &self.dpop
            {
                c = c.param("algs", d.algs_param());
            }
            c.to_header()
        });
        let mut res = response(status, code, &message, challenges.collect::<Vec<_>>());
        if let Some(n) = nonce {
            res.headers_mut().insert(DPOP_NONCE_HEADER, n);
        }
        res
    }

    /// Turns an inner `403` carrying [`InsufficientScope`] into the step-up challenge,
    /// naming every scope the operation needs with the scopes every request needs. An
    /// anonymous request gets `401` instead: it needs a token first.
    fn step_up<B>(&self, res: &mut Response<B>, scheme: Option<Scheme>, needed: &[String]) {
        let mut scopes: Vec<String> = self.required.clone();
        for s in needed {
            if !scopes.contains(s) {
                scopes.push(s.clone());
            }
        }
        tracing::debug!(?scopes, anonymous = scheme.is_none(), "insufficient scope");
        let scope = scopes.join(" ");
        let challenges: Vec<HeaderValue> = match scheme {
            Some(s) => vec![
                Challenge::new(s.name())
                    .param("error", "insufficient_scope")
                    .param("scope", scope)
                    .param("resource_metadata", self.metadata_url.clone())
                    .to_header(),
            ],
            None => {
                *res.status_mut() = StatusCode::UNAUTHORIZED;
                self.offered()
                    .into_iter()
                    .map(|s| {
                        Challenge::new(s.name())
                            .param("resource_metadata", self.metadata_url.clone())
                            .param("scope", scope.clone())
                            .to_header()
                    })
                    .collect()
            }
        };
        let h = res.headers_mut();
        h.remove(WWW_AUTHENTICATE);
        for c in challenges {
            h.append(WWW_AUTHENTICATE, c);
        }
    }

    /// The schemes a client without a token is offered.
    fn offered(&self) -> Vec<Scheme> {
        match &self.dpop {
            Some(d) if d.required => vec![Scheme::Dpop],
            Some(_) => vec![Scheme::Bearer, Scheme::Dpop],
            None => vec![Scheme::Bearer],
        }
    }

    /// Builds the cached verdict of a token the validator accepted.
    fn admit_verified(&self, key: TokenDigest, v: crate::VerifiedToken) -> Arc<CachedToken> {
        let mut principal = match v.issuer() {
            Some(iss) => Principal::oauth(iss, v.subject()),
            None => Principal::new(v.subject()),
        };
        if let Some(c) = v.client_id() {
            principal = principal.with_client_id(c);
        }
        principal = principal.with_scopes(self.implications.expand(v.scopes()));
        let entry = Arc::new(CachedToken {
            principal,
            jkt: v.jkt().map(Into::into),
            until: self.cache.deadline(v.expires_at(), v.cache_for()),
        });
        self.cache.insert(key, entry.clone());
        entry
    }

    /// The checks after a token is known valid: DPoP and the scopes every request needs.
    /// Returns a nonce to send, if any.
    fn admit<B>(
        &self,
        entry: &CachedToken,
        scheme: Scheme,
        token: &str,
        req: &Request<B>,
    ) -> Result<Option<HeaderValue>, Refusal> {
        let nonce = match &self.dpop {
            Some(d) => d.check(scheme, token, entry.jkt.as_deref(), req, &self.origin)?,
            None if entry.jkt.is_some() => {
                return Err(Refusal::Invalid(crate::InvalidToken::Dpop(
                    "DPoP-bound tokens are not accepted here".into(),
                )));
            }
            None => None,
        };
        if !self.required.is_empty() {
            let missing = entry.principal.scopes().missing(&self.required);
            if !missing.is_empty() {
                return Err(Refusal::InsufficientScope(self.required.clone()));
            }
        }
        Ok(nonce)
    }
}

impl<S, ReqBody, ResBody> tower_service::Service<Request<ReqBody>> for AuthService<S>
where
    S: tower_service::Service<Request<ReqBody>, Response = Response<ResBody>> + Clone,
    ResBody: From<Bytes>,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<S, ReqBody, ResBody>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let shared = &self.shared;
        let creds = credentials::read(req.headers(), req.uri().query(), shared.max_token_bytes);
        let (scheme, token) = match creds {
            Err(m) => return ResponseFuture::ready(shared.refuse(Refusal::Malformed(m.0), None)),
            Ok(Credentials::Token { scheme, token })
                if scheme == Scheme::Bearer || shared.dpop.is_some() =>
            {
                (scheme, token)
            }
            Ok(_) if shared.anonymous => {
                req.extensions_mut().remove::<Principal>();
                return ResponseFuture::inner(self.inner.call(req), None, shared, None);
            }
            Ok(_) => return ResponseFuture::ready(shared.refuse(Refusal::NoToken, None)),
        };
        let key = digest(token);
        if let Some(entry) = shared.cache.get(&key) {
            return match shared.admit(&entry, scheme, token, &req) {
                Ok(nonce) => {
                    set_principal(&mut req, &entry.principal);
                    ResponseFuture::inner(self.inner.call(req), Some(scheme), shared, nonce)
                }
                Err(r) => ResponseFuture::ready(shared.refuse(r, Some(scheme))),
            };
        }
        if let Err(m) = credentials::check_syntax(token) {
            return ResponseFuture::ready(shared.refuse(Refusal::Malformed(m.0), None));
        }
        let token = token.to_owned();
        let validating = {
            let shared = shared.clone();
            let token = token.clone();
            Box::pin(async move {
                match shared.validator.validate(&token).await {
                    Ok(v) => Ok(shared.admit_verified(key, v)),
                    Err(TokenError::Invalid(why)) => Err(Refusal::Invalid(why)),
                    Err(TokenError::Unavailable(why)) => {
                        tracing::warn!(reason = %why, "token validation unavailable");
                        Err(Refusal::Unavailable(why))
                    }
                }
            }) as ValidationFuture
        };
        // The ready service goes into the future; this one keeps a fresh clone.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        ResponseFuture {
            state: State::Validating {
                fut: validating,
                pending: Some(Box::new(Pending {
                    req,
                    inner,
                    token,
                    scheme,
                    shared: shared.clone(),
                })),
            },
        }
    }
}

/// Puts `principal` into the request's extensions, replacing any that was there.
fn set_principal<B>(req: &mut Request<B>, principal: &Principal) {
    req.extensions_mut().insert(principal.clone());
}

/// What waits for the validation: the request and the ready inner service.
struct Pending<S, B> {
    req: Request<B>,
    inner: S,
    token: String,
    scheme: Scheme,
    shared: Arc<Shared>,
}

pin_project! {
    /// The future of an [`AuthService`] call.
    pub struct ResponseFuture<S, ReqBody, ResBody>
    where
        S: tower_service::Service<Request<ReqBody>>,
    {
        #[pin]
        state: State<S, ReqBody, ResBody>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S, ReqBody, ResBody>
    where
        S: tower_service::Service<Request<ReqBody>>,
    {
        Ready { response: Option<Response<ResBody>> },
        Validating { fut: ValidationFuture, pending: Option<Box<Pending<S, ReqBody>>> },
        Inner {
            #[pin]
            fut: S::Future,
            // `None` for an anonymous request.
            scheme: Option<Scheme>,
            shared: Arc<Shared>,
            nonce: Option<HeaderValue>,
        },
    }
}

impl<S, ReqBody, ResBody> ResponseFuture<S, ReqBody, ResBody>
where
    S: tower_service::Service<Request<ReqBody>>,
{
    fn ready(response: Response<ResBody>) -> Self {
        ResponseFuture {
            state: State::Ready {
                response: Some(response),
            },
        }
    }

    fn inner(
        fut: S::Future,
        scheme: Option<Scheme>,
        shared: &Arc<Shared>,
        nonce: Option<HeaderValue>,
    ) -> Self {
        ResponseFuture {
            state: State::Inner {
                fut,
                scheme,
                shared: shared.clone(),
                nonce,
            },
        }
    }
}

impl<S, ReqBody, ResBody> Future for ResponseFuture<S, ReqBody, ResBody>
where
    S: tower_service::Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: From<Bytes>,
{
    type Output = Result<Response<ResBody>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Ready { response } => {
                    return Poll::Ready(Ok(response.take().expect("polled after completion")));
                }
                StateProj::Validating { fut, pending } => {
                    let verdict = std::task::ready!(fut.as_mut().poll(cx));
                    let Pending {
                        mut req,
                        mut inner,
                        token,
                        scheme,
                        shared,
                    } = *pending.take().expect("polled after completion");
                    let admitted = verdict.and_then(|entry| {
                        let nonce = shared.admit(&entry, scheme, &token, &req)?;
                        set_principal(&mut req, &entry.principal);
                        Ok(nonce)
                    });
                    drop(token);
                    let next = match admitted {
                        Ok(nonce) => State::Inner {
                            fut: inner.call(req),
                            scheme: Some(scheme),
                            shared,
                            nonce,
                        },
                        Err(r) => State::Ready {
                            response: Some(shared.refuse(r, Some(scheme))),
                        },
                    };
                    state.set(next);
                }
                StateProj::Inner {
                    fut,
                    scheme,
                    shared,
                    nonce,
                } => {
                    let mut res = std::task::ready!(fut.poll(cx))?;
                    if let Some(n) = nonce.take() {
                        res.headers_mut().insert(DPOP_NONCE_HEADER, n);
                    }
                    if res.status() == StatusCode::FORBIDDEN
                        && let Some(needed) = res.extensions().get::<InsufficientScope>()
                    {
                        let needed = needed.required.clone();
                        shared.step_up(&mut res, *scheme, &needed);
                    }
                    return Poll::Ready(Ok(res));
                }
            }
        }
    }
}
