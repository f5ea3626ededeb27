//! [`AuthError`]: everything that can stop an authorization.

/// Why an authorization could not be completed. Secrets never appear in these messages.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// An HTTP request to the resource or authorization server failed.
    #[error("{context}: {source}")]
    Http {
        /// What was being fetched.
        context: String,
        /// The underlying failure.
        #[source]
        source: reqwest::Error,
    },
    /// A server answered with an unexpected HTTP status.
    #[error("{context}: HTTP {status}")]
    Status {
        /// What was being fetched.
        context: String,
        /// The status code.
        status: u16,
    },
    /// A document or response was malformed or too large.
    #[error("{context}: {reason}")]
    Invalid {
        /// What was being read.
        context: String,
        /// What was wrong with it.
        reason: String,
    },
    /// No Protected Resource Metadata could be found for the server.
    #[error("no protected resource metadata found for {server} (tried {tried:?})")]
    NoResourceMetadata {
        /// The MCP server.
        server: String,
        /// The URLs that were tried, in order.
        tried: Vec<String>,
    },
    /// The Protected Resource Metadata names another resource than the server.
    #[error("the protected resource metadata is for {resource}, not for {server}")]
    ResourceMismatch {
        /// The `resource` of the metadata.
        resource: String,
        /// The server the client talks to.
        server: String,
    },
    /// No authorization server metadata could be found for the issuer.
    #[error("no authorization server metadata found for {issuer} (tried {tried:?})")]
    NoServerMetadata {
        /// The issuer from the protected resource metadata.
        issuer: String,
        /// The URLs that were tried, in order.
        tried: Vec<String>,
    },
    /// The authorization server metadata names another issuer than the one it was
    /// fetched for (RFC 8414 section 3.3).
    #[error("the metadata at {url} names the issuer {found}, not {expected}")]
    IssuerMismatch {
        /// The issuer the well-known URL was built from.
        expected: String,
        /// The issuer in the document.
        found: String,
        /// Where the document came from.
        url: String,
    },
    /// The authorization server does not advertise PKCE with S256.
    #[error("the authorization server {issuer} does not support PKCE with S256")]
    PkceUnsupported {
        /// The issuer.
        issuer: String,
    },
    /// A URL is not allowed: not HTTPS (outside loopback), or otherwise unusable.
    #[error("refusing {url}: {reason}")]
    InsecureUrl {
        /// The URL.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// The client has no way to obtain a client id from this authorization server.
    #[error("no client registration is possible with {issuer}: {reason}")]
    NoRegistration {
        /// The issuer.
        issuer: String,
        /// Why not.
        reason: String,
    },
    /// The authorization response did not pass validation (state, `iss`, missing code).
    #[error("authorization response rejected: {0}")]
    AuthorizationResponse(String),
    /// The authorization server or the user refused the authorization.
    #[error("authorization refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    AuthorizationDenied {
        /// The OAuth error code.
        error: String,
        /// The server's description, if any.
        description: Option<String>,
    },
    /// An endpoint answered with an OAuth error (RFC 6749 section 5.2).
    #[error("{endpoint} refused the request: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    OAuth {
        /// Which endpoint.
        endpoint: String,
        /// The OAuth error code, e.g. `invalid_grant`.
        error: String,
        /// The server's description, if any.
        description: Option<String>,
        /// The HTTP status.
        status: u16,
    },
    /// The server still refuses after the allowed number of re-authorizations.
    #[error("the server still refuses access after {attempts} authorization attempts")]
    RetryLimit {
        /// How many authorizations were made.
        attempts: u32,
    },
    /// The server asks for scopes that were already requested, more often than allowed.
    #[error(
        "the server requires the scopes {scopes:?}, which were refused after {attempts} step-up attempts"
    )]
    InsufficientScope {
        /// The scopes the server asked for.
        scopes: Vec<String>,
        /// How many step-up authorizations were made for them.
        attempts: u32,
    },
    /// Pre-registered credentials belong to another authorization server.
    #[error(
        "the configured client is registered with {configured}, but the server now uses {issuer}"
    )]
    IssuerChanged {
        /// The issuer the credentials were registered with.
        configured: String,
        /// The issuer the protected resource metadata names.
        issuer: String,
    },
    /// A key or signing operation failed.
    #[error("{0}")]
    Key(String),
    /// The token store failed; the client fails closed.
    #[error("token store: {0}")]
    Store(String),
    /// The redirect handler could not complete the browser step.
    #[error("redirect: {0}")]
    Redirect(String),
    /// The configuration cannot work.
    #[error("configuration: {0}")]
    Config(String),
}

impl AuthError {
    pub(crate) fn invalid(context: impl Into<String>, reason: impl Into<String>) -> Self {
        AuthError::Invalid {
            context: context.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn http(context: impl Into<String>, source: reqwest::Error) -> Self {
        AuthError::Http {
            context: context.into(),
            source: source.without_url(),
        }
    }
}
