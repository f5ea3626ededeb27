//! [`Authorizer`]: what an HTTP transport needs from an authorization engine. Before each
//! request it asks for [`Credentials`] (`Authorization` and `DPoP` headers); when the
//! server refuses a request (401, 403) it reports the [`Refusal`] and sends the request
//! again if told to.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use http::{HeaderMap, HeaderValue};
use url::Url;

use crate::challenge::AuthChallenge;
use crate::error::AuthError;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A request about to be sent.
#[derive(Clone, Copy, Debug)]
pub struct Outgoing<'a> {
    /// The HTTP method, e.g. `POST`.
    pub method: &'a str,
    /// The URL.
    pub url: &'a Url,
}

/// The authorization headers of one request.
#[derive(Clone, Default)]
pub struct Credentials {
    /// The `Authorization` header (marked sensitive).
    pub authorization: Option<HeaderValue>,
    /// The `DPoP` proof header.
    pub dpop: Option<HeaderValue>,
    /// Which credentials these were: handed back in a [`Refusal`] so that requests
    /// refused with old credentials are simply sent again once new ones exist.
    pub generation: u64,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .field("dpop", &self.dpop.as_ref().map(|_| "<proof>"))
            .field("generation", &self.generation)
            .finish()
    }
}

impl Credentials {
    /// Adds the headers to `headers`.
    pub fn apply(&self, headers: &mut HeaderMap) {
        if let Some(v) = &self.authorization {
            headers.insert(http::header::AUTHORIZATION, v.clone());
        }
        if let Some(v) = &self.dpop {
            headers.insert("dpop", v.clone());
        }
    }
}

/// A request the server refused with 401 or 403.
#[derive(Clone, Debug)]
pub struct Refusal<'a> {
    /// The request's method.
    pub method: &'a str,
    /// The request's URL (the MCP endpoint).
    pub url: &'a Url,
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` challenges.
    pub challenge: AuthChallenge,
    /// The `DPoP-Nonce` header, if any.
    pub dpop_nonce: Option<&'a str>,
    /// The generation of the credentials the request carried.
    pub generation: u64,
    /// Whether the request carried an `Authorization` header.
    pub had_token: bool,
}

/// What to do after a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Credentials changed: send the request again.
    Retry,
    /// Not an authorization matter: hand the response to the caller as it is.
    Pass,
}

/// An authorization engine for an HTTP transport.
pub trait Authorizer: Send + Sync + 'static {
    /// The headers for a request.
    fn credentials<'a>(
        &'a self,
        request: Outgoing<'a>,
    ) -> BoxFuture<'a, Result<Credentials, AuthError>>;

    /// The server refused a request; obtain new credentials if that can help.
    fn refused<'a>(&'a self, refusal: Refusal<'a>) -> BoxFuture<'a, Result<Decision, AuthError>>;

    /// A request was answered with something other than 401 or 403 (its headers may
    /// carry a new `DPoP-Nonce`).
    fn answered(&self, url: &Url, headers: &HeaderMap) {
        let _ = (url, headers);
    }
}

/// Sends the user agent to the authorization URL and brings back the redirect.
///
/// A CLI opens a browser and listens on `http://127.0.0.1:<port>/callback`; a headless
/// client fetches the URL itself and reads the redirect's `Location`.
pub trait RedirectHandler: Send + Sync + 'static {
    /// The redirect URI, registered with the authorization server and sent with each
    /// authorization request.
    fn redirect_uri(&self) -> String;

    /// Opens `authorization_url` and returns the full URL the authorization server
    /// redirected back to (with its `code`, `state` and `iss`).
    fn authorize<'a>(&'a self, authorization_url: &'a Url)
    -> BoxFuture<'a, Result<Url, AuthError>>;
}

/// The source of a JWT the client presents as an authorization grant (RFC 7523): a
/// workload platform's token, or an identity provider's ID token.
pub trait AssertionProvider: Send + Sync + 'static {
    /// The current assertion (read again each time: platform tokens rotate).
    fn assertion(&self) -> Result<crate::Secret, AuthError>;
}

impl AssertionProvider for crate::Secret {
    fn assertion(&self) -> Result<crate::Secret, AuthError> {
        Ok(self.clone())
    }
}

/// An assertion read from a file each time it is needed (e.g. a Kubernetes projected
/// service account token).
#[derive(Clone, Debug)]
pub struct AssertionFile(pub std::path::PathBuf);

impl AssertionProvider for AssertionFile {
    fn assertion(&self) -> Result<crate::Secret, AuthError> {
        use std::io::Read;
        let mut text = String::new();
        std::fs::File::open(&self.0)
            .and_then(|f| f.take(64 * 1024).read_to_string(&mut text))
            .map_err(|e| AuthError::Config(format!("reading {}: {e}", self.0.display())))?;
        let t = text.trim();
        if t.is_empty() {
            return Err(AuthError::Config(format!("{} is empty", self.0.display())));
        }
        Ok(crate::Secret::new(t))
    }
}
