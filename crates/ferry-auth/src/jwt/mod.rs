//! The built-in JWT access-token validator (RFC 9068 profile, RFC 7519, RFC 8725 best
//! practices; authorization spec "Token Handling").

mod issuers;
mod keys;

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;

use crate::error::{ConfigError, InvalidToken, TokenError};
use crate::fetch::Fetcher;
use crate::jose::{self, DEFAULT_ALGORITHMS};
use crate::resource::{audience_matches, canonical_resource, secure_url};
use crate::token::{VerifiedToken, now_secs};
use crate::validator::{TokenValidator, ValidateFuture};

pub use issuers::Issuers;
use keys::{Freshness, Jwks, KeySource};

/// Validates JWT access tokens signed by one issuer, with keys from its JWKS.
///
/// What it checks: the signature (asymmetric algorithms only, by default RS256, PS256,
/// ES256 and EdDSA; `alg: none`, HMAC and an `alg` that does not fit the key's type,
/// curve or own `alg` are refused), `typ` (`at+jwt` or `JWT`), `iss` (exactly),
/// `aud` (must contain the canonical resource URI, RFC 8707), `exp` (required), `nbf` and
/// `iat` (not in the future), with a leeway of 60 s by default.
///
/// Keys come from the issuer's metadata (RFC 8414 `/.well-known/oauth-authorization-server`,
/// then OpenID Connect discovery; the document's `issuer` must be the configured one),
/// from a JWKS URL, or from a fixed set. A fetched JWKS is used for its
/// `Cache-Control: max-age`, kept between 1 minute and 1 day (10 minutes without one);
/// a token with an unknown `kid` triggers a refetch at most once every 10 s.
///
/// ```no_run
/// use ferry_auth::JwtValidator;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let validator = JwtValidator::builder("https://auth.example.com", "https://mcp.example.com/mcp")
///     .build()?;
/// validator.warm_up().await?; // fetch the metadata and keys now rather than on first use
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct JwtValidator {
    inner: Arc<Inner>,
}

struct Inner {
    issuer: String,
    audience: String,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    at_jwt_only: bool,
    jwks: Jwks,
}

/// Settings of a [`JwtValidator`].
pub struct JwtValidatorBuilder {
    issuer: String,
    resource: String,
    source: Option<Source>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    at_jwt_only: bool,
    client: Option<reqwest::Client>,
    freshness: Freshness,
}

enum Source {
    Url(String),
    Fixed(JwkSet),
}

impl JwtValidator {
    /// A validator of tokens from `issuer` for the resource `resource` (the MCP
    /// server's canonical URI, the expected audience).
    pub fn builder(issuer: impl Into<String>, resource: impl Into<String>) -> JwtValidatorBuilder {
        JwtValidatorBuilder {
            issuer: issuer.into(),
            resource: resource.into(),
            source: None,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(60),
            at_jwt_only: false,
            client: None,
            freshness: Freshness {
                default_ttl: Duration::from_secs(600),
                min_ttl: Duration::from_secs(60),
                max_ttl: Duration::from_secs(86_400),
                min_interval: Duration::from_secs(10),
            },
        }
    }

    /// Fetches the issuer's metadata and keys now, so the first request does not wait
    /// and a misconfiguration shows at start-up.
    pub async fn warm_up(&self) -> Result<(), TokenError> {
        self.inner.jwks.keys_for(None).await.map(|_| ())
    }

    /// How many times the JWKS was fetched (for metrics and tests).
    pub fn jwks_fetches(&self) -> u64 {
        self.inner.jwks.fetches()
    }

    /// The expected issuer.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .field("algorithms", &self.inner.algorithms)
            .field("leeway", &self.inner.leeway)
            .finish_non_exhaustive()
    }
}

impl JwtValidatorBuilder {
    /// Fetch keys from this JWKS URL instead of discovering it from the issuer's metadata.
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.source = Some(Source::Url(url.into()));
        self
    }

    /// Verify with these keys only; nothing is fetched.
    pub fn jwks(mut self, keys: JwkSet) -> Self {
        self.source = Some(Source::Fixed(keys));
        self
    }

    /// The algorithms accepted (asymmetric only).
    pub fn algorithms(mut self, algs: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algs.into_iter().collect();
        self
    }

    /// Clock skew tolerated on `exp`, `nbf` and `iat` (default 60 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Accept only tokens whose `typ` is `at+jwt` (RFC 9068 §2.1); by default plain `JWT`
    /// and no `typ` are accepted too.
    pub fn require_at_jwt(mut self) -> Self {
        self.at_jwt_only = true;
        self
    }

    /// The HTTP client for metadata and keys (e.g. with a proxy or extra roots). Give it
    /// a timeout and no redirects.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The least time between two JWKS fetches, whatever triggers them (default 10 s).
    pub fn min_refresh_interval(mut self, d: Duration) -> Self {
        self.freshness.min_interval = d;
        self
    }

    /// How long a fetched JWKS is used: its `max-age` clamped to `[min, max]`, or
    /// `default` without one (defaults 1 minute, 1 day, 10 minutes).
    pub fn jwks_ttl(mut self, default: Duration, min: Duration, max: Duration) -> Self {
        self.freshness.default_ttl = default;
        self.freshness.min_ttl = min;
        self.freshness.max_ttl = max.max(min);
        self
    }

    /// The validator.
    pub fn build(self) -> Result<JwtValidator, ConfigError> {
        jose::check_algorithms(&self.algorithms)?;
        secure_url("issuer", &self.issuer)?;
        let audience = canonical_resource(&self.resource)?;
        let source = match self.source {
            None => KeySource::Discover {
                issuer: self.issuer.clone(),
            },
            Some(Source::Url(u)) => KeySource::Url(secure_url("JWKS URL", &u)?),
            Some(Source::Fixed(set)) => KeySource::Fixed(set),
        };
        let fetcher = Fetcher::new(self.client)?;
        Ok(JwtValidator {
            inner: Arc::new(Inner {
                issuer: self.issuer,
                audience,
                algorithms: self.algorithms,
                leeway: self.leeway.as_secs(),
                at_jwt_only: self.at_jwt_only,
                jwks: Jwks::new(source, fetcher, self.freshness),
            }),
        })
    }
}

/// `aud`: one string or several.
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
struct AccessClaims {
    sub: Option<String>,
    aud: Option<OneOrMany>,
    exp: Option<serde_json::Number>,
    iat: Option<serde_json::Number>,
    client_id: Option<String>,
    azp: Option<String>,
    scope: Option<String>,
    scp: Option<OneOrMany>,
    cnf: Option<Confirmation>,
}

fn seconds(n: &serde_json::Number) -> Option<u64> {
    n.as_u64()
        .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
}

fn map_error(e: jsonwebtoken::errors::Error) -> InvalidToken {
    match e.kind() {
        ErrorKind::ExpiredSignature => InvalidToken::Expired,
        ErrorKind::ImmatureSignature => InvalidToken::NotYetValid,
        ErrorKind::InvalidIssuer => InvalidToken::Issuer,
        ErrorKind::InvalidAudience => InvalidToken::Audience,
        ErrorKind::MissingRequiredClaim(c) => InvalidToken::MissingClaim(match c.as_str() {
            "exp" => "exp",
            "iss" => "iss",
            "nbf" => "nbf",
            _ => "claim",
        }),
        ErrorKind::InvalidSignature => InvalidToken::Signature,
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => {
            InvalidToken::Algorithm("not allowed for this key".into())
        }
        ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidRsaKey(_) | ErrorKind::InvalidKeyFormat => {
            InvalidToken::KeyMismatch("the key cannot verify this algorithm".into())
        }
        ErrorKind::Json(_) => {
            InvalidToken::Malformed("claims are not valid JSON of the expected types".into())
        }
        ErrorKind::Base64(_) | ErrorKind::Utf8(_) | ErrorKind::InvalidToken => {
            InvalidToken::Malformed("not a well-formed JWT".into())
        }
        other => InvalidToken::Other(format!("{other:?}")),
    }
}

impl Inner {
    async fn validate(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let header = jose::raw_header(token)?;
        let alg = jose::header_alg(&header, &self.algorithms)?;
        match header.get("typ") {
            None if !self.at_jwt_only => {}
            Some(serde_json::Value::String(t)) => {
                let t = t.to_ascii_lowercase();
                let ok =
                    t == "at+jwt" || t == "application/at+jwt" || (!self.at_jwt_only && t == "jwt");
                if !ok {
                    return Err(InvalidToken::Type(t).into());
                }
            }
            other => {
                return Err(
                    InvalidToken::Type(other.map(|v| v.to_string()).unwrap_or_default()).into(),
                );
            }
        }
        let kid = match header.get("kid") {
            None => None,
            Some(serde_json::Value::String(k)) => Some(k.as_str()),
            Some(_) => return Err(InvalidToken::Malformed("kid is not a string".into()).into()),
        };
        let keys = self.jwks.keys_for(kid).await?;
        let key = keys.find(kid, alg)?;

        let mut validation = Validation::new(alg);
        validation.leeway = self.leeway;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["exp", "iss"]);
        validation.set_issuer(&[&self.issuer]);
        let claims = jsonwebtoken::decode::<AccessClaims>(token, &key.decoding, &validation)
            .map_err(map_error)?
            .claims;

        let now = now_secs();
        let exp = claims
            .exp
            .as_ref()
            .and_then(seconds)
            .ok_or(InvalidToken::MissingClaim("exp"))?;
        if let Some(iat) = &claims.iat {
            let iat = seconds(iat).ok_or(InvalidToken::MissingClaim("iat"))?;
            if iat > now + self.leeway {
                return Err(InvalidToken::NotYetValid.into());
            }
        }
        let audience_ok = match &claims.aud {
            Some(OneOrMany::One(a)) => audience_matches(a, &self.audience),
            Some(OneOrMany::Many(list)) => list.iter().any(|a| audience_matches(a, &self.audience)),
            None => false,
        };
        if !audience_ok {
            return Err(InvalidToken::Audience.into());
        }
        let subject = claims
            .sub
            .filter(|s| !s.is_empty())
            .ok_or(InvalidToken::MissingClaim("sub"))?;
        let scopes: Vec<String> = match (claims.scope, claims.scp) {
            (Some(s), _) => s
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            (None, Some(OneOrMany::One(s))) => s
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            (None, Some(OneOrMany::Many(list))) => list,
            (None, None) => Vec::new(),
        };
        let mut v = VerifiedToken::new(subject)
            .with_issuer(self.issuer.clone())
            .with_scopes(scopes)
            .with_expiry(exp);
        if let Some(c) = claims.client_id.or(claims.azp) {
            v = v.with_client_id(c);
        }
        if let Some(jkt) = claims.cnf.and_then(|c| c.jkt) {
            v = v.with_jkt(jkt);
        }
        Ok(v)
    }
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        Box::pin(self.inner.validate(token))
    }
}
