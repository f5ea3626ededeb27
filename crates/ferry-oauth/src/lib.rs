//! OAuth 2.1 for MCP clients, as the MCP authorization specification describes it
//! (`basic/authorization/`: index.mdx, authorization-server-discovery.mdx,
//! client-registration.mdx, security-considerations.mdx).
//!
//! - **Discovery**: Protected Resource Metadata from the 401's `resource_metadata`, else
//!   the path-inserted then root well-known URI (RFC 9728); the metadata's `resource`
//!   must identify the server; authorization server metadata by RFC 8414 path
//!   insertion, OpenID Connect path insertion, then path appending, with the `issuer`
//!   checked against the URL it came from ([`discovery`]).
//! - **Authorization code with PKCE** (`S256` required), `state`, RFC 8707 `resource`
//!   on the authorization and token requests, RFC 9207 `iss` checks
//!   ([`PendingAuthorization`]), through a [`RedirectHandler`].
//! - **Client registration**: pre-registered clients ([`StaticClient`]), Client ID
//!   Metadata Documents, and Dynamic Client Registration as the fallback; credentials
//!   are bound to their issuer.
//! - **Token endpoint authentication**: `client_secret_basic`, `client_secret_post`,
//!   `private_key_jwt` ([`ClientKey`]) and public clients, chosen from the server's
//!   metadata.
//! - **Other grants**: client credentials, RFC 7523 JWT bearer (workload identity),
//!   enterprise-managed authorization (RFC 8693 token exchange for an ID-JAG, then a
//!   JWT bearer grant) ([`Grant`]).
//! - **Scopes**: from the challenge, else `scopes_supported`, else none; `offline_access`
//!   only when the authorization server lists it; step-up on 403 `insufficient_scope`
//!   with the union of scopes and a retry limit.
//! - **DPoP** (RFC 9449): a fresh proof per request, server nonces at the authorization
//!   and resource servers ([`DpopKey`]).
//! - **Token stores** keyed by issuer: [`MemoryTokenStore`], [`FileTokenStore`]
//!   (owner-only files, atomic writes). Secrets are [`Secret`]s: never in `Debug` output.
//!
//! [`OAuthAuthorizer`] puts it together behind the [`Authorizer`] trait, which an HTTP
//! transport (such as `ferry-client`'s) calls before each request and after each 401 or
//! 403.
//!
//! ```no_run
//! use ferry_oauth::{AuthError, BoxFuture, OAuthAuthorizer, RedirectHandler};
//! use url::Url;
//!
//! /// Opens the system browser and waits for the redirect on a loopback listener.
//! struct Browser;
//!
//! impl RedirectHandler for Browser {
//!     fn redirect_uri(&self) -> String {
//!         "http://127.0.0.1:8765/callback".into()
//!     }
//!     fn authorize<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Url, AuthError>> {
//!         Box::pin(async move {
//!             println!("open {url}");
//!             // ... accept one request on 127.0.0.1:8765 and return its URL ...
//!             # unimplemented!()
//!         })
//!     }
//! }
//!
//! # fn run() -> Result<(), AuthError> {
//! let oauth = OAuthAuthorizer::builder()
//!     .client_metadata_document("https://app.example.com/oauth/client.json")
//!     .redirect_handler(Browser)
//!     .build()?;
//! # let _ = oauth;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod authorizer;
mod challenge;
mod code_flow;
pub mod discovery;
mod error;
mod http;
mod jwt;
mod metadata;
mod oauth;
mod pkce;
mod registration;
mod secret;
mod store;
mod token;

pub use authorizer::{
    AssertionFile, AssertionProvider, Authorizer, BoxFuture, Credentials, Decision, Outgoing,
    RedirectHandler, Refusal,
};
pub use challenge::{AuthChallenge, Challenge};
pub use code_flow::{AuthorizationCode, PendingAuthorization};
pub use error::AuthError;
pub use http::{UrlPolicy, is_loopback};
pub use jwt::{ClientKey, DpopKey};
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use oauth::{DpopMode, EnterpriseIdp, Grant, OAuthAuthorizer, OAuthBuilder};
pub use pkce::Pkce;
pub use registration::{
    RegisteredClient, RegistrationKind, StaticClient, application_type_for,
    check_metadata_document_url,
};
pub use secret::Secret;
pub use store::{FileTokenStore, IssuerRecord, MemoryTokenStore, TokenStore};
pub use token::{ClientAuthMethod, JWT_BEARER, TOKEN_EXCHANGE, TokenType, Tokens};

/// Compiles the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
