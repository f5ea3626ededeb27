//! Why a token or a request was refused, and configuration errors.

use std::fmt;

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The resource URI is not an absolute `http(s)` URI without fragment and query.
    #[error("invalid resource URI: {0}")]
    Resource(String),
    /// A URL (issuer, JWKS, introspection endpoint) is malformed or not `https`.
    #[error("invalid URL: {0}")]
    Url(String),
    /// Another setting is out of range or inconsistent.
    #[error("invalid setting: {0}")]
    Setting(String),
}

/// A validator's verdict on a token it could not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is not valid here: expired, forged, for another audience, revoked…
    /// The client gets `401` with `error="invalid_token"`.
    #[error("invalid token: {0}")]
    Invalid(InvalidToken),
    /// The token could not be checked (the authorization server or its keys are out of
    /// reach). The request is refused (fail closed) with `503`.
    #[error("token validation unavailable: {0}")]
    Unavailable(String),
}

impl From<InvalidToken> for TokenError {
    fn from(reason: InvalidToken) -> Self {
        TokenError::Invalid(reason)
    }
}

/// Why a token was found invalid. Reasons never contain the token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidToken {
    /// Not a well-formed token of the expected kind (not a JWT, bad base64, bad JSON).
    Malformed(String),
    /// The header's `alg` is not allowed (`none`, HMAC, or outside the configured list).
    Algorithm(String),
    /// The header's `alg` does not fit the key (`kty`, curve or the key's own `alg`).
    KeyMismatch(String),
    /// No key of the issuer has the token's `kid`.
    UnknownKey,
    /// The signature does not verify.
    Signature,
    /// The header's `typ` is neither `at+jwt` nor `JWT`.
    Type(String),
    /// `iss` is not the expected issuer.
    Issuer,
    /// `aud` does not contain this resource.
    Audience,
    /// The token has expired.
    Expired,
    /// The token is not valid yet (`nbf`), or was issued in the future (`iat`).
    NotYetValid,
    /// A required claim is missing or has the wrong type.
    MissingClaim(&'static str),
    /// The authorization server says the token is not active (introspection).
    Inactive,
    /// The token is unknown (static tokens).
    Unknown,
    /// A DPoP-bound token was presented without its proof, or a proof is invalid.
    Dpop(String),
    /// Another reason, described.
    Other(String),
}

impl fmt::Display for InvalidToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidToken::Malformed(why) => write!(f, "malformed token: {why}"),
            InvalidToken::Algorithm(alg) => write!(f, "algorithm not allowed: {alg}"),
            InvalidToken::KeyMismatch(why) => write!(f, "algorithm does not fit the key: {why}"),
            InvalidToken::UnknownKey => f.write_str("no key with this key id"),
            InvalidToken::Signature => f.write_str("signature does not verify"),
            InvalidToken::Type(t) => write!(f, "unexpected token type {t:?}"),
            InvalidToken::Issuer => f.write_str("unexpected issuer"),
            InvalidToken::Audience => f.write_str("not issued for this resource"),
            InvalidToken::Expired => f.write_str("expired"),
            InvalidToken::NotYetValid => f.write_str("not valid yet"),
            InvalidToken::MissingClaim(c) => write!(f, "missing or invalid claim {c:?}"),
            InvalidToken::Inactive => f.write_str("not active"),
            InvalidToken::Unknown => f.write_str("unknown token"),
            InvalidToken::Dpop(why) => write!(f, "DPoP: {why}"),
            InvalidToken::Other(why) => f.write_str(why),
        }
    }
}
