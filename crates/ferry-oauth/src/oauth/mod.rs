//! [`OAuthAuthorizer`]: the MCP authorization flows behind the [`Authorizer`] trait.

mod builder;
mod engine;
mod grants;

use std::sync::atomic::AtomicU32;

use url::Url;

pub use builder::{DpopMode, EnterpriseIdp, Grant, OAuthBuilder};

use crate::authorizer::{Authorizer, BoxFuture, Credentials, Decision, Outgoing, Refusal};
use crate::error::AuthError;
use crate::http::Http;
use crate::jwt::Nonces;

/// The MCP client side of OAuth 2.1 (index.mdx), driven by the HTTP transport: on a 401
/// it discovers the authorization server, obtains a client id and tokens with the
/// configured [`Grant`], stores them by issuer, and sends the request again; on a 403
/// `insufficient_scope` it re-authorizes with the union of scopes, a bounded number of
/// times; it refreshes expired tokens and adds DPoP proofs.
///
/// ```no_run
/// use std::sync::Arc;
/// use ferry_oauth::{FileTokenStore, Grant, OAuthAuthorizer, StaticClient};
///
/// # fn run() -> Result<(), ferry_oauth::AuthError> {
/// let oauth = OAuthAuthorizer::builder()
///     .grant(Grant::ClientCredentials)
///     .static_client(StaticClient::new("my-service").secret("s3cret"))
///     .store(Arc::new(FileTokenStore::new("/var/lib/my-service/tokens")?))
///     .build()?;
/// # let _ = oauth;
/// # Ok(())
/// # }
/// ```
pub struct OAuthAuthorizer {
    config: builder::Config,
    http: Http,
    nonces: Nonces,
    /// Refusals since the last answered request.
    failures: AtomicU32,
    state: tokio::sync::Mutex<engine::State>,
}

impl std::fmt::Debug for OAuthAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthAuthorizer")
            .field("grant", &self.config.grant)
            .field("dpop", &self.config.dpop)
            .finish_non_exhaustive()
    }
}

impl OAuthAuthorizer {
    /// A builder; the default grant is the authorization code with PKCE.
    pub fn builder() -> OAuthBuilder {
        OAuthBuilder::default()
    }

    /// Authorizes ahead of any MCP request (e.g. a `login` command): discovers the
    /// authorization server of `server` from its well-known metadata, runs the grant,
    /// and stores the tokens.
    pub async fn authorize(&self, server: &Url) -> Result<(), AuthError> {
        let mut st = self.state.lock().await;
        self.full_authorization(&mut st, server, None, None).await
    }

    /// [`authorize`](OAuthAuthorizer::authorize) for exactly `scopes` instead of the
    /// resource's `scopes_supported` (a later 403 `insufficient_scope` still steps up).
    pub async fn authorize_with_scopes(
        &self,
        server: &Url,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let mut st = self.state.lock().await;
        self.full_authorization(&mut st, server, None, Some(scopes))
            .await
    }

    /// Forgets the tokens held for the current resource (the client registration is
    /// kept).
    pub async fn forget_tokens(&self) -> Result<(), AuthError> {
        let mut st = self.state.lock().await;
        st.tokens = None;
        if let (Some(d), Some(resource)) = (&st.discovered, &st.resource) {
            let issuer = d.issuer.clone();
            let resource = resource.clone();
            if let Some(mut rec) = self.config.store.load(&issuer)? {
                rec.tokens.remove(&resource);
                self.config.store.save(&rec)?;
            }
        }
        Ok(())
    }
}

impl OAuthAuthorizer {
    /// Signs out of `server` (e.g. a `logout` command): discovers its authorization
    /// server and forgets the tokens stored for it. The client registration is kept, so
    /// signing in again needs no new registration. Returns whether tokens were held.
    pub async fn sign_out(&self, server: &Url) -> Result<bool, AuthError> {
        let d = crate::discovery::discover(&self.http, server, None).await?;
        let mut st = self.state.lock().await;
        st.tokens = None;
        st.dpop_key = None;
        st.generation += 1;
        let resource = d.resource.resource.clone();
        let issuer = d.issuer.clone();
        let Some(mut rec) = self.config.store.load(&issuer)? else {
            return Ok(false);
        };
        let held = rec.tokens.remove(&resource).is_some();
        if held {
            self.config.store.save(&rec)?;
        }
        Ok(held)
    }
}

impl Authorizer for OAuthAuthorizer {
    fn credentials<'a>(
        &'a self,
        request: Outgoing<'a>,
    ) -> BoxFuture<'a, Result<Credentials, AuthError>> {
        Box::pin(self.credentials_for(request))
    }

    fn refused<'a>(&'a self, refusal: Refusal<'a>) -> BoxFuture<'a, Result<Decision, AuthError>> {
        Box::pin(self.handle_refusal(refusal))
    }

    fn answered(&self, url: &Url, headers: &http::HeaderMap) {
        self.failures.store(0, std::sync::atomic::Ordering::Relaxed);
        if let Some(n) = headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) {
            self.nonces.set(url, n);
        }
    }
}
