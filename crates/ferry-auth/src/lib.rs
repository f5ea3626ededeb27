//! OAuth 2.1 resource server for Ferry MCP servers (MCP authorization spec, 2026-07-28
//! `basic/authorization`): a tower layer that validates access tokens and sets the
//! request's [`ferry_server::Principal`], and the Protected Resource Metadata that tells
//! clients where to get tokens.
#![forbid(unsafe_code)]

mod cache;
mod challenge;
mod credentials;
mod discovery;
mod dpop;
mod error;
mod fetch;
mod introspection;
mod jose;
mod jwt;
mod layer;
mod metadata;
mod resource;
mod scopes;
mod static_tokens;
#[cfg(feature = "test-issuer")]
pub mod testing;
mod token;
mod validator;

pub use challenge::codes;
pub use dpop::{DPOP_HEADER, DPOP_NONCE_HEADER, Dpop};
pub use error::{ConfigError, InvalidToken, TokenError};
pub use jose::DEFAULT_ALGORITHMS;
pub use jsonwebtoken::Algorithm;
pub use jsonwebtoken::jwk::{Jwk, JwkSet};
pub use introspection::{ClientAuth, IntrospectionValidator, IntrospectionValidatorBuilder};
pub use jwt::{JwtValidator, JwtValidatorBuilder};
pub use layer::{AuthLayer, AuthLayerBuilder, AuthService, ResponseFuture};
pub use metadata::{MetadataService, ResourceMetadata, WELL_KNOWN};
pub use resource::canonical_resource;
pub use static_tokens::StaticTokens;
pub use token::VerifiedToken;
pub use validator::{TokenValidator, ValidateFuture};
