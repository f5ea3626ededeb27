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
//!   ([`PendingAuthorization`]), through a [`RedirectHandler`] ([`LoopbackRedirect`] for
//!   native applications).
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
//! use ferry_oauth::{AuthError, FileTokenStore, LoopbackRedirect, OAuthAuthorizer};
//! use std::sync::Arc;
//!
//! # async fn run() -> Result<(), AuthError> {
//! // A CLI: the browser comes back to http://127.0.0.1:<free port>/callback.
//! let redirect = LoopbackRedirect::bind()?.on_open(|url| {
//!     eprintln!("Open this page to sign in: {url}");
//!     Ok(())
//! });
//! let oauth = OAuthAuthorizer::builder()
//!     .client_name("my-tool")
//!     .redirect_handler(redirect)
//!     .store(Arc::new(FileTokenStore::new("/home/me/.config/my-tool/tokens")?))
//!     .build()?;
//! oauth.authorize(&"https://mcp.example.com/mcp".parse().unwrap()).await?;
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
mod loopback;
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
pub use loopback::LoopbackRedirect;
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
