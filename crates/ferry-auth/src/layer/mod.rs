//! The tower layer: authenticates each request, sets its [`Principal`], and writes the
//! challenges of refusals (authorization spec, "Access Token Usage", "Error Handling",
//! "Scope Challenge Handling").

mod builder;
mod future;
mod respond;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use ferry_server::Principal;
use http::{HeaderValue, Request, Response};

use crate::cache::{CachedToken, TokenCache, TokenDigest, digest};
use crate::challenge::Refusal;
use crate::credentials::{self, Credentials, Scheme};
use crate::dpop::DpopChecker;
use crate::error::TokenError;
use crate::metadata::ResourceMetadata;
use crate::scopes::Implications;
use crate::validator::TokenValidator;

pub use builder::AuthLayerBuilder;
pub use future::ResponseFuture;
use future::State;

type ValidationFuture = Pin<Box<dyn Future<Output = Result<Arc<CachedToken>, Refusal>> + Send>>;

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
