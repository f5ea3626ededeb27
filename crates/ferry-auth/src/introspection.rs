//! Token introspection (RFC 7662): ask the authorization server whether a token is
//! active, for opaque tokens or when revocation must take effect quickly.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use url::Url;

use crate::cache::{TokenDigest, digest};
use crate::discovery;
use crate::error::{ConfigError, InvalidToken, TokenError};
use crate::fetch::Fetcher;
use crate::resource::{audience_matches, canonical_resource, secure_url};
use crate::token::{VerifiedToken, now_secs};
use crate::validator::{TokenValidator, ValidateFuture};

/// How the resource authenticates to the introspection endpoint (RFC 7662 §2.1 with
/// RFC 6749 §2.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// HTTP Basic (`client_secret_basic`).
    Basic,
    /// Credentials in the form body (`client_secret_post`).
    Post,
}

/// Validates tokens by asking the authorization server's introspection endpoint, and
/// keeps the answers (by token digest) for a short time.
///
/// An active answer is accepted only if its `aud` names this resource (unless
/// [`IntrospectionValidatorBuilder::audience_optional`]), its `iss` (when given) is the
/// configured issuer, and it has not expired. The endpoint being out of reach refuses the
/// request (`503`).
///
/// ```no_run
/// use std::time::Duration;
/// use ferry_auth::{ClientAuth, IntrospectionValidator};
///
/// let v = IntrospectionValidator::builder("https://mcp.example.com/mcp")
///     .endpoint("https://auth.example.com/introspect")
///     .client_credentials("mcp-server", "s3cret", ClientAuth::Basic)
///     .cache_ttl(Duration::from_secs(30))
///     .build()
///     .unwrap();
/// assert!(!format!("{v:?}").contains("s3cret"));
/// ```
#[derive(Clone)]
pub struct IntrospectionValidator {
    inner: Arc<Inner>,
}

struct Inner {
    audience: String,
    issuer: Option<String>,
    endpoint: Endpoint,
    client_id: String,
    client_secret: String,
    auth: ClientAuth,
    audience_required: bool,
    ttl: Duration,
    fetcher: Fetcher,
    cache: Option<quick_cache::sync::Cache<TokenDigest, (VerifiedToken, Instant)>>,
}

enum Endpoint {
    Fixed(Url),
    Discover {
        issuer: String,
        found: tokio::sync::OnceCell<Url>,
    },
}

/// Settings of an [`IntrospectionValidator`].
pub struct IntrospectionValidatorBuilder {
    resource: String,
    issuer: Option<String>,
    endpoint: Option<String>,
    client_id: String,
    client_secret: String,
    auth: ClientAuth,
    audience_required: bool,
    ttl: Duration,
    capacity: usize,
    client: Option<reqwest::Client>,
}

impl IntrospectionValidator {
    /// A validator for the resource `resource` (its canonical URI, the expected audience).
    pub fn builder(resource: impl Into<String>) -> IntrospectionValidatorBuilder {
        IntrospectionValidatorBuilder {
            resource: resource.into(),
            issuer: None,
            endpoint: None,
            client_id: String::new(),
            client_secret: String::new(),
            auth: ClientAuth::Basic,
            audience_required: true,
            ttl: Duration::from_secs(60),
            capacity: 10_000,
            client: None,
        }
    }
}

impl IntrospectionValidatorBuilder {
    /// The introspection endpoint.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// The issuer: answers naming another `iss` are refused, and without an explicit
    /// endpoint its metadata's `introspection_endpoint` is used.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The resource's own client credentials at the authorization server.
    pub fn client_credentials(
        mut self,
        client_id: impl Into<String>,
        secret: impl Into<String>,
        auth: ClientAuth,
    ) -> Self {
        self.client_id = client_id.into();
        self.client_secret = secret.into();
        self.auth = auth;
        self
    }

    /// Accept active answers without `aud` (some servers leave it out). Answers that
    /// name audiences must still name this resource.
    pub fn audience_optional(mut self) -> Self {
        self.audience_required = false;
        self
    }

    /// The longest an answer is reused (default 60 s; never past the token's `exp`).
    /// Shorter means revocation takes effect sooner, at the cost of more requests.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How many answers are kept (default 10,000; 0 asks every time).
    pub fn cache_capacity(mut self, n: usize) -> Self {
        self.capacity = n;
        self
    }

    /// The HTTP client (give it a timeout and no redirects).
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The validator.
    pub fn build(self) -> Result<IntrospectionValidator, ConfigError> {
        let audience = canonical_resource(&self.resource)?;
        let endpoint = match (self.endpoint, &self.issuer) {
            (Some(e), _) => Endpoint::Fixed(secure_url("introspection endpoint", &e)?),
            (None, Some(issuer)) => {
                secure_url("issuer", issuer)?;
                Endpoint::Discover {
                    issuer: issuer.clone(),
                    found: tokio::sync::OnceCell::new(),
                }
            }
            (None, None) => {
                return Err(ConfigError::Setting(
                    "introspection needs an endpoint or an issuer to discover it from".into(),
                ));
            }
        };
        if self.client_id.is_empty() {
            return Err(ConfigError::Setting(
                "introspection needs the resource's client credentials".into(),
            ));
        }
        Ok(IntrospectionValidator {
            inner: Arc::new(Inner {
                audience,
                issuer: self.issuer,
                endpoint,
                client_id: self.client_id,
                client_secret: self.client_secret,
                auth: self.auth,
                audience_required: self.audience_required,
                ttl: self.ttl,
                fetcher: Fetcher::new(self.client)?,
                cache: (self.capacity > 0).then(|| quick_cache::sync::Cache::new(self.capacity)),
            }),
        })
    }
}

impl std::fmt::Debug for IntrospectionValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let endpoint = match &self.inner.endpoint {
            Endpoint::Fixed(u) => u.as_str().to_owned(),
            Endpoint::Discover { issuer, .. } => format!("discovered from {issuer}"),
        };
        f.debug_struct("IntrospectionValidator")
            .field("audience", &self.inner.audience)
            .field("endpoint", &endpoint)
            .field("client_id", &self.inner.client_id)
            .field("auth", &self.inner.auth)
            .field("ttl", &self.inner.ttl)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
struct Confirmation {
    jkt: Option<String>,
}

#[derive(Deserialize)]
struct Answer {
    active: bool,
    scope: Option<String>,
    client_id: Option<String>,
    username: Option<String>,
    exp: Option<u64>,
    iat: Option<u64>,
    nbf: Option<u64>,
    sub: Option<String>,
    aud: Option<OneOrMany>,
    iss: Option<String>,
    cnf: Option<Confirmation>,
}

impl Inner {
    async fn endpoint(&self) -> Result<&Url, TokenError> {
        match &self.endpoint {
            Endpoint::Fixed(u) => Ok(u),
            Endpoint::Discover { issuer, found } => {
                found
                    .get_or_try_init(|| async {
                        discovery::discover(&self.fetcher, issuer)
                            .await
                            .and_then(|m| {
                                m.introspection_endpoint.ok_or_else(|| {
                                    format!(
                                        "the metadata of {issuer} names no introspection_endpoint"
                                    )
                                })
                            })
                            .map_err(TokenError::Unavailable)
                    })
                    .await
            }
        }
    }

    async fn validate(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let key = digest(token);
        if let Some(cache) = &self.cache
            && let Some((v, until)) = cache.get(&key)
        {
            if Instant::now() < until {
                return Ok(v);
            }
            cache.remove(&key);
        }
        let url = self.endpoint().await?;
        let mut form = vec![("token", token), ("token_type_hint", "access_token")];
        let basic = match self.auth {
            ClientAuth::Basic => Some((self.client_id.as_str(), self.client_secret.as_str())),
            ClientAuth::Post => {
                form.push(("client_id", &self.client_id));
                form.push(("client_secret", &self.client_secret));
                None
            }
        };
        let fetched = self
            .fetcher
            .post_form(url, &form, basic)
            .await
            .map_err(|e| TokenError::Unavailable(e.0))?;
        let answer: Answer = serde_json::from_value(fetched.json).map_err(|_| {
            TokenError::Unavailable(format!("{url}: not an introspection response"))
        })?;
        let v = self.judge(answer)?;
        if let Some(cache) = &self.cache {
            let mut ttl = self.ttl;
            if let Some(exp) = v.expires_at() {
                ttl = ttl.min(Duration::from_secs(exp.saturating_sub(now_secs())));
            }
            if !ttl.is_zero() {
                cache.insert(key, (v.clone(), Instant::now() + ttl));
            }
        }
        Ok(v)
    }

    fn judge(&self, a: Answer) -> Result<VerifiedToken, TokenError> {
        if !a.active {
            return Err(InvalidToken::Inactive.into());
        }
        let now = now_secs();
        if a.exp.is_some_and(|exp| exp <= now) {
            return Err(InvalidToken::Expired.into());
        }
        if a.nbf.is_some_and(|nbf| nbf > now + 60) || a.iat.is_some_and(|iat| iat > now + 60) {
            return Err(InvalidToken::NotYetValid.into());
        }
        if let (Some(expected), Some(iss)) = (&self.issuer, &a.iss)
            && expected != iss
        {
            return Err(InvalidToken::Issuer.into());
        }
        let aud_ok = match &a.aud {
            Some(OneOrMany::One(x)) => audience_matches(x, &self.audience),
            Some(OneOrMany::Many(xs)) => xs.iter().any(|x| audience_matches(x, &self.audience)),
            None => !self.audience_required,
        };
        if !aud_ok {
            return Err(InvalidToken::Audience.into());
        }
        let subject = a
            .sub
            .or(a.username)
            .or_else(|| a.client_id.clone())
            .filter(|s| !s.is_empty())
            .ok_or(InvalidToken::MissingClaim("sub"))?;
        let mut v = VerifiedToken::new(subject)
            .with_scopes(
                a.scope
                    .as_deref()
                    .unwrap_or("")
                    .split(' ')
                    .filter(|s| !s.is_empty()),
            )
            .with_cache_for(self.ttl);
        if let Some(iss) = a.iss.or_else(|| self.issuer.clone()) {
            v = v.with_issuer(iss);
        }
        if let Some(c) = a.client_id {
            v = v.with_client_id(c);
        }
        if let Some(exp) = a.exp {
            v = v.with_expiry(exp);
        }
        if let Some(jkt) = a.cnf.and_then(|c| c.jkt) {
            v = v.with_jkt(jkt);
        }
        Ok(v)
    }
}

impl TokenValidator for IntrospectionValidator {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        Box::pin(self.inner.validate(token))
    }
}
