//! The settings of an [`AuthLayer`].

use std::sync::Arc;
use std::time::Duration;

use super::{AuthLayer, Shared};
use crate::cache::TokenCache;
use crate::dpop::Dpop;
use crate::error::ConfigError;
use crate::metadata::ResourceMetadata;
use crate::scopes::Implications;
use crate::validator::TokenValidator;

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
    pub(super) metadata: ResourceMetadata,
    pub(super) validator: Arc<dyn TokenValidator>,
    pub(super) required: Vec<String>,
    pub(super) challenge_scopes: Option<Vec<String>>,
    pub(super) implications: Implications,
    pub(super) anonymous: bool,
    pub(super) dpop: Option<Dpop>,
    pub(super) cache_capacity: usize,
    pub(super) cache_max_ttl: Duration,
    pub(super) max_token_bytes: usize,
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
