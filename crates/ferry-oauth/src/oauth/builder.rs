//! Configuration of [`OAuthAuthorizer`].

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::OAuthAuthorizer;
use crate::authorizer::{AssertionProvider, RedirectHandler};
use crate::error::AuthError;
use crate::http::{Http, UrlPolicy};
use crate::jwt::{ClientKey, Nonces};
use crate::registration::{StaticClient, check_metadata_document_url};
use crate::store::{MemoryTokenStore, TokenStore};

/// How tokens are obtained.
#[derive(Clone)]
pub enum Grant {
    /// Authorization code with PKCE, through a [`RedirectHandler`] (a user signs in).
    AuthorizationCode,
    /// Client credentials (the client acts on its own behalf): needs a
    /// [`StaticClient`] with a secret, or a [`ClientKey`] for `private_key_jwt`.
    ClientCredentials,
    /// RFC 7523 JWT bearer grant with a workload identity token (workload identity
    /// federation). Failures are reported, never retried with another grant.
    JwtBearer(Arc<dyn AssertionProvider>),
    /// Enterprise-managed authorization: the identity provider's ID token is exchanged
    /// (RFC 8693) for an ID-JAG, presented to the MCP authorization server as a JWT
    /// bearer grant.
    Enterprise(EnterpriseIdp),
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Grant::AuthorizationCode => "AuthorizationCode",
            Grant::ClientCredentials => "ClientCredentials",
            Grant::JwtBearer(_) => "JwtBearer",
            Grant::Enterprise(_) => "Enterprise",
        })
    }
}

/// The enterprise identity provider of [`Grant::Enterprise`].
#[derive(Clone)]
pub struct EnterpriseIdp {
    /// The identity provider's token endpoint.
    pub token_endpoint: Url,
    /// The client registered with the identity provider.
    pub client: StaticClient,
    /// The user's ID token from the identity provider.
    pub id_token: Arc<dyn AssertionProvider>,
}

/// When to bind tokens to a DPoP key (RFC 9449).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DpopMode {
    /// Never send DPoP proofs.
    Off,
    /// Send proofs when the authorization server advertises `ES256` in
    /// `dpop_signing_alg_values_supported`.
    #[default]
    IfSupported,
    /// Refuse an authorization server that does not support DPoP with `ES256`.
    Required,
}

pub(crate) struct Config {
    pub grant: Grant,
    pub client_name: String,
    pub metadata_document: Option<String>,
    pub static_client: Option<StaticClient>,
    pub client_key: Option<ClientKey>,
    pub redirect: Option<Arc<dyn RedirectHandler>>,
    pub store: Arc<dyn TokenStore>,
    pub dpop: DpopMode,
    pub refresh_tokens: bool,
    pub application_type: Option<String>,
    pub max_step_ups: u32,
    pub max_reauthorizations: u32,
}

/// Builds an [`OAuthAuthorizer`].
pub struct OAuthBuilder {
    config: Config,
    http: Option<reqwest::Client>,
    policy: UrlPolicy,
    timeout: Duration,
}

impl Default for OAuthBuilder {
    fn default() -> Self {
        OAuthBuilder {
            config: Config {
                grant: Grant::AuthorizationCode,
                client_name: "Ferry MCP client".into(),
                metadata_document: None,
                static_client: None,
                client_key: None,
                redirect: None,
                store: Arc::new(MemoryTokenStore::new()),
                dpop: DpopMode::default(),
                refresh_tokens: true,
                application_type: None,
                max_step_ups: 2,
                max_reauthorizations: 2,
            },
            http: None,
            policy: UrlPolicy::default(),
            timeout: Duration::from_secs(30),
        }
    }
}

impl OAuthBuilder {
    /// How tokens are obtained (default: authorization code).
    pub fn grant(mut self, grant: Grant) -> Self {
        self.config.grant = grant;
        self
    }

    /// The `client_name` for dynamic registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.config.client_name = name.into();
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as the client id
    /// with authorization servers that advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_document(mut self, url: impl Into<String>) -> Self {
        self.config.metadata_document = Some(url.into());
        self
    }

    /// Pre-registered client credentials; they take precedence over other registration
    /// mechanisms.
    pub fn static_client(mut self, client: StaticClient) -> Self {
        self.config.static_client = Some(client);
        self
    }

    /// The private key for `private_key_jwt` client authentication.
    pub fn client_key(mut self, key: ClientKey) -> Self {
        self.config.client_key = Some(key);
        self
    }

    /// Who takes the user through the authorization endpoint (authorization code grant).
    pub fn redirect_handler(mut self, handler: impl RedirectHandler) -> Self {
        self.config.redirect = Some(Arc::new(handler));
        self
    }

    /// Where credentials are kept (default: in memory).
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.config.store = store;
        self
    }

    /// DPoP (default: when the authorization server supports it).
    pub fn dpop(mut self, mode: DpopMode) -> Self {
        self.config.dpop = mode;
        self
    }

    /// Whether to ask for refresh tokens: `refresh_token` among the registered grant
    /// types, and `offline_access` in the scope when the authorization server lists it
    /// (default on).
    pub fn refresh_tokens(mut self, enabled: bool) -> Self {
        self.config.refresh_tokens = enabled;
        self
    }

    /// The `application_type` for dynamic registration (default: from the redirect URI,
    /// `native` for loopback).
    pub fn application_type(mut self, kind: impl Into<String>) -> Self {
        self.config.application_type = Some(kind.into());
        self
    }

    /// How many step-up authorizations one scope set may get (default 2).
    pub fn max_step_ups(mut self, n: u32) -> Self {
        self.config.max_step_ups = n;
        self
    }

    /// How many re-authorizations in a row after 401s without an answered request in
    /// between (default 2).
    pub fn max_reauthorizations(mut self, n: u32) -> Self {
        self.config.max_reauthorizations = n;
        self
    }

    /// The `reqwest` client for discovery and token requests. It should not follow
    /// redirects.
    pub fn reqwest_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Which URLs may be used (default: HTTPS, or HTTP on loopback).
    pub fn url_policy(mut self, policy: UrlPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The time limit of each HTTP request of the flows (default 30 s).
    pub fn http_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Checks the configuration and builds the authorizer.
    pub fn build(self) -> Result<OAuthAuthorizer, AuthError> {
        let c = &self.config;
        if let Some(url) = &c.metadata_document {
            check_metadata_document_url(url)?;
        }
        match &c.grant {
            Grant::AuthorizationCode if c.redirect.is_none() => {
                return Err(AuthError::Config(
                    "the authorization code grant needs a redirect handler".into(),
                ));
            }
            Grant::ClientCredentials => {
                let ok = c
                    .static_client
                    .as_ref()
                    .is_some_and(|s| s.client_secret.is_some() || c.client_key.is_some());
                if !ok {
                    return Err(AuthError::Config(
                        "client credentials need a static client with a secret or a private key"
                            .into(),
                    ));
                }
            }
            Grant::Enterprise(_) if c.static_client.is_none() => {
                return Err(AuthError::Config(
                    "enterprise-managed authorization needs the client registered with the MCP authorization server".into(),
                ));
            }
            _ => {}
        }
        let client = match self.http {
            Some(c) => c,
            None => Http::default_client()?,
        };
        Ok(OAuthAuthorizer {
            config: self.config,
            http: Http::new(client, self.policy, self.timeout),
            nonces: Nonces::default(),
            failures: Default::default(),
            state: tokio::sync::Mutex::new(Default::default()),
        })
    }
}
