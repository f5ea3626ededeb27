//! What a validator learns from a valid token.

use std::time::Duration;

/// The facts a [`crate::TokenValidator`] established about a valid access token, from
/// which the layer builds the request's [`ferry_server::Principal`].
///
/// ```
/// use ferry_auth::VerifiedToken;
///
/// let t = VerifiedToken::new("alice")
///     .with_issuer("https://auth.example.com")
///     .with_client_id("ferry-cli")
///     .with_scopes(["files:read", "files:write"])
///     .with_expiry(4_102_444_800);
/// assert_eq!(t.subject(), "alice");
/// assert_eq!(t.scopes(), ["files:read", "files:write"]);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    subject: String,
    issuer: Option<String>,
    client_id: Option<String>,
    scopes: Vec<String>,
    expires_at: Option<u64>,
    jkt: Option<String>,
    cache_for: Option<Duration>,
}

impl VerifiedToken {
    /// A valid token for `subject`, with no issuer, client, scopes or expiry yet.
    pub fn new(subject: impl Into<String>) -> Self {
        VerifiedToken {
            subject: subject.into(),
            issuer: None,
            client_id: None,
            scopes: Vec::new(),
            expires_at: None,
            jkt: None,
            cache_for: None,
        }
    }

    /// Who issued the token (`iss`).
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The OAuth client the token was issued to (`client_id` or `azp`).
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The granted scopes.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// When the token expires, in seconds since the Unix epoch (`exp`).
    pub fn with_expiry(mut self, exp: u64) -> Self {
        self.expires_at = Some(exp);
        self
    }

    /// The JWK SHA-256 thumbprint the token is bound to (`cnf.jkt`, RFC 9449 §6).
    pub fn with_jkt(mut self, jkt: impl Into<String>) -> Self {
        self.jkt = Some(jkt.into());
        self
    }

    /// How long the verdict may be reused without asking the validator again (besides
    /// the expiry); e.g. an introspection result's lifetime.
    pub fn with_cache_for(mut self, d: Duration) -> Self {
        self.cache_for = Some(d);
        self
    }

    /// The token's subject.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The token's issuer.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The client the token was issued to.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The granted scopes.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The expiry, in seconds since the Unix epoch.
    pub fn expires_at(&self) -> Option<u64> {
        self.expires_at
    }

    /// The DPoP key thumbprint the token is bound to.
    pub fn jkt(&self) -> Option<&str> {
        self.jkt.as_deref()
    }

    /// How long the verdict may be cached, if the validator limits it.
    pub fn cache_for(&self) -> Option<Duration> {
        self.cache_for
    }
}

impl std::fmt::Debug for VerifiedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedToken")
            .field("subject", &self.subject)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .field("jkt", &self.jkt)
            .finish()
    }
}

/// Seconds since the Unix epoch, now.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
