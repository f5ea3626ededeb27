//! Bearer-token authentication as a tower layer: it sets the request's [`Principal`].

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ferry_server::Principal;
use http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, Request, Response, StatusCode};
use subtle_eq::constant_time_eq;

use crate::body::McpBody;

/// Decides who a bearer token belongs to.
pub trait TokenVerifier: Send + Sync + 'static {
    /// The principal for `token`, or `None` when it is not valid.
    fn verify(&self, token: &str) -> Option<Principal>;
}

/// A fixed table of tokens, for development and tests (`--dev-token NAME=TOKEN`).
#[derive(Clone, Default)]
pub struct StaticTokens {
    tokens: HashMap<String, Principal>,
}

impl StaticTokens {
    /// An empty table.
    pub fn new() -> Self {
        StaticTokens::default()
    }

    /// Adds `token`, authenticating as `name`.
    pub fn with(mut self, name: impl Into<String>, token: impl Into<String>) -> Self {
        self.tokens
            .insert(token.into(), Principal::new(name.into()));
        self
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

impl std::fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the tokens themselves.
        f.debug_struct("StaticTokens")
            .field("principals", &self.tokens.values().collect::<Vec<_>>())
            .finish()
    }
}

impl TokenVerifier for StaticTokens {
    fn verify(&self, token: &str) -> Option<Principal> {
        // Compare every entry in constant time so timing reveals nothing about tokens.
        let mut found = None;
        for (t, p) in &self.tokens {
            if constant_time_eq(t.as_bytes(), token.as_bytes()) {
                found = Some(p.clone());
            }
        }
        found
    }
}

mod subtle_eq {
    /// Equality whose time depends only on the lengths.
    pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
        if a.len() != b.len() {
            return false;
        }
        a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

/// A tower layer that authenticates `Authorization: Bearer …` and puts the
/// [`Principal`] into the request's extensions.
///
/// With `required` (the default), requests without a valid token get 401 with a
/// `WWW-Authenticate: Bearer` challenge; otherwise they pass through anonymously.
#[derive(Clone)]
pub struct BearerAuthLayer {
    verifier: Arc<dyn TokenVerifier>,
    required: bool,
    resource_metadata: Option<String>,
}

impl BearerAuthLayer {
    /// Authenticates with `verifier`; tokens are required.
    pub fn new(verifier: impl TokenVerifier) -> Self {
        BearerAuthLayer {
            verifier: Arc::new(verifier),
            required: true,
            resource_metadata: None,
        }
    }

    /// Lets requests without a token through, anonymously (an invalid token is still 401).
    pub fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// The Protected Resource Metadata URL to name in the 401 challenge (RFC 9728).
    pub fn resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata = Some(url.into());
        self
    }
}

impl<S> tower_layer::Layer<S> for BearerAuthLayer {
    type Service = BearerAuth<S>;
    fn layer(&self, inner: S) -> BearerAuth<S> {
        BearerAuth {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`BearerAuthLayer`] produces.
#[derive(Clone)]
pub struct BearerAuth<S> {
    inner: S,
    layer: BearerAuthLayer,
}

impl<S, B> tower_service::Service<Request<B>> for BearerAuth<S>
where
    S: tower_service::Service<Request<B>, Response = Response<McpBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<McpBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let token = req
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then(|| rest.trim().to_owned())
            });
        let outcome = match token {
            Some(t) => match self.layer.verifier.verify(&t) {
                Some(p) => Ok(Some(p)),
                None => Err("invalid_token"),
            },
            None if self.layer.required => Err(""),
            None => Ok(None),
        };
        match outcome {
            Ok(principal) => {
                req.extensions_mut().remove::<Principal>();
                if let Some(p) = principal {
                    req.extensions_mut().insert(p);
                }
                let fut = self.inner.call(req);
                Box::pin(fut)
            }
            Err(error) => {
                let mut challenge = String::from("Bearer");
                let mut params = Vec::new();
                if let Some(url) = &self.layer.resource_metadata {
                    params.push(format!("resource_metadata=\"{url}\""));
                }
                if !error.is_empty() {
                    params.push(format!("error=\"{error}\""));
                }
                if !params.is_empty() {
                    challenge.push(' ');
                    challenge.push_str(&params.join(", "));
                }
                let body = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: a valid bearer token is required"}}"#;
                let mut r =
                    Response::new(McpBody::full(bytes::Bytes::from_static(body.as_bytes())));
                *r.status_mut() = StatusCode::UNAUTHORIZED;
                r.headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                if let Ok(v) = HeaderValue::from_str(&challenge) {
                    r.headers_mut().insert(WWW_AUTHENTICATE, v);
                }
                Box::pin(std::future::ready(Ok(r)))
            }
        }
    }
}
