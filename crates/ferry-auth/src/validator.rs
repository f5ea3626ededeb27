//! The trait every token validator implements.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::TokenError;
use crate::token::VerifiedToken;

/// A boxed future of a validation, as [`TokenValidator::validate`] returns it.
pub type ValidateFuture<'a> =
    Pin<Box<dyn Future<Output = Result<VerifiedToken, TokenError>> + Send + 'a>>;

/// Decides whether an access token is valid for this resource, and what it grants.
///
/// The trait is object safe (`Arc<dyn TokenValidator>`), so any source of truth fits:
/// the built-in [`crate::JwtValidator`], [`crate::IntrospectionValidator`] and
/// [`crate::StaticTokens`], or your own. Implementations must check the audience: a
/// token issued for another resource must be refused (authorization spec, "Token
/// Handling"). They should never log the token.
///
/// ```
/// use ferry_auth::{InvalidToken, TokenError, TokenValidator, ValidateFuture, VerifiedToken};
///
/// /// Accepts tokens that are the reverse of a user name (a toy rule).
/// struct Reversed;
///
/// impl TokenValidator for Reversed {
///     fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
///         Box::pin(async move {
///             match token.strip_prefix("user-") {
///                 Some(name) => Ok(VerifiedToken::new(name.chars().rev().collect::<String>())),
///                 None => Err(TokenError::Invalid(InvalidToken::Unknown)),
///             }
///         })
///     }
/// }
/// ```
pub trait TokenValidator: Send + Sync + 'static {
    /// Validates `token` (the credential of an `Authorization: Bearer` or `DPoP` header).
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a>;
}

impl<T: TokenValidator + ?Sized> TokenValidator for Arc<T> {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        (**self).validate(token)
    }
}

impl<T: TokenValidator + ?Sized> TokenValidator for Box<T> {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        (**self).validate(token)
    }
}
