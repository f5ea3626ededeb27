#![doc = include_str!("../README.md")]
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
pub use introspection::{ClientAuth, IntrospectionValidator, IntrospectionValidatorBuilder};
pub use jose::DEFAULT_ALGORITHMS;
pub use jsonwebtoken::Algorithm;
pub use jsonwebtoken::jwk::{Jwk, JwkSet};
pub use jwt::{Issuers, JwtValidator, JwtValidatorBuilder};
pub use layer::{AuthLayer, AuthLayerBuilder, AuthService, ResponseFuture};
pub use metadata::{MetadataService, ResourceMetadata, WELL_KNOWN};
pub use resource::canonical_resource;
pub use static_tokens::{StaticTokens, StaticTokensOr};
pub use token::VerifiedToken;
pub use validator::{TokenValidator, ValidateFuture};

/// ferry-http's README shows this crate in front of its endpoint; its examples are
/// compiled here, where both crates are available.
#[cfg(doctest)]
#[doc = include_str!("../../ferry-http/README.md")]
struct FerryHttpReadme;
