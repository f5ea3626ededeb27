//! A fixed table of tokens, for development and tests.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{InvalidToken, TokenError};
use crate::token::VerifiedToken;
use crate::validator::{TokenValidator, ValidateFuture};

/// Development tokens: each fixed token authenticates as a fixed principal
/// (`--dev-token NAME=TOKEN`).
///
/// Only SHA-256 digests of the tokens are kept, and a presented token is compared with
/// every entry in constant time, so neither memory dumps nor timing reveal them. Not for
/// production: the tokens never expire and carry no audience.
///
/// ```
/// use ferry_auth::StaticTokens;
///
/// let tokens = StaticTokens::new()
///     .with("alice", "alice-secret")
///     .with_scoped("bot", "bot-secret", ["files:read"]);
/// assert_eq!(tokens.len(), 2);
/// assert!(!format!("{tokens:?}").contains("secret"));
/// ```
#[derive(Clone, Default)]
pub struct StaticTokens {
    entries: Vec<([u8; 32], VerifiedToken)>,
}

impl StaticTokens {
    /// An empty table.
    pub fn new() -> Self {
        StaticTokens::default()
    }

    /// Adds `token`, authenticating as the local principal `name`, with no scopes.
    pub fn with(self, name: impl Into<String>, token: impl AsRef<[u8]>) -> Self {
        self.with_token(token, VerifiedToken::new(name))
    }

    /// Adds `token`, authenticating as `name` with `scopes`.
    pub fn with_scoped<I, S>(
        self,
        name: impl Into<String>,
        token: impl AsRef<[u8]>,
        scopes: I,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.with_token(token, VerifiedToken::new(name).with_scopes(scopes))
    }

    /// Adds `token`, standing for `verified` (any subject, issuer, client and scopes).
    pub fn with_token(mut self, token: impl AsRef<[u8]>, verified: VerifiedToken) -> Self {
        let digest: [u8; 32] = Sha256::digest(token.as_ref()).into();
        self.entries.retain(|(d, _)| d != &digest);
        self.entries.push((digest, verified));
        self
    }

    /// How many tokens the table holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry for `token`, comparing its digest with every entry in constant time.
    pub fn lookup(&self, token: &str) -> Option<&VerifiedToken> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for (d, v) in &self.entries {
            if bool::from(d.ct_eq(&digest)) {
                found = Some(v);
            }
        }
        found
    }

    /// These tokens first, then `validator` for any other: development tokens beside a
    /// real issuer.
    ///
    /// ```
    /// use ferry_auth::{JwtValidator, StaticTokens};
    ///
    /// let jwt = JwtValidator::builder("https://auth.example.com", "https://mcp.example.com/mcp")
    ///     .build()
    ///     .unwrap();
    /// let validator = StaticTokens::new().with("ops", "ops-token").or(jwt);
    /// # let _ = validator;
    /// ```
    pub fn or<V: TokenValidator>(self, validator: V) -> StaticTokensOr<V> {
        StaticTokensOr {
            tokens: self,
            validator,
        }
    }
}

/// [`StaticTokens`] first, then another validator ([`StaticTokens::or`]).
#[derive(Debug, Clone)]
pub struct StaticTokensOr<V> {
    tokens: StaticTokens,
    validator: V,
}

impl<V: TokenValidator> TokenValidator for StaticTokensOr<V> {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        match self.tokens.lookup(token) {
            Some(verified) => Box::pin(std::future::ready(Ok(verified.clone()))),
            None => self.validator.validate(token),
        }
    }
}

impl std::fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Subjects only: never the tokens, nor their digests.
        f.debug_struct("StaticTokens")
            .field(
                "subjects",
                &self
                    .entries
                    .iter()
                    .map(|(_, v)| v.subject())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl TokenValidator for StaticTokens {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        let verdict = self
            .lookup(token)
            .cloned()
            .ok_or(TokenError::Invalid(InvalidToken::Unknown));
        Box::pin(std::future::ready(verdict))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn known_tokens_only() {
        let t = StaticTokens::new()
            .with("alice", "a-token")
            .with("bob", "b-token")
            .with("carol", "a-token");
        assert_eq!(t.len(), 2, "a token added again replaces its entry");
        assert_eq!(t.validate("a-token").await.unwrap().subject(), "carol");
        assert_eq!(t.validate("b-token").await.unwrap().subject(), "bob");
        for bad in ["", "a-token ", "A-TOKEN", "b-toke", "b-tokenx"] {
            assert_eq!(
                t.validate(bad).await,
                Err(TokenError::Invalid(InvalidToken::Unknown)),
                "{bad:?}"
            );
        }
        let debug = format!("{t:?}");
        assert!(!debug.contains("token"), "{debug}");
        assert!(debug.contains("bob"), "{debug}");
    }

    #[tokio::test]
    async fn or_asks_the_other_validator_only_for_unknown_tokens() {
        let both = StaticTokens::new()
            .with("ops", "ops-token")
            .or(StaticTokens::new()
                .with("bob", "b-token")
                .with("eve", "ops-token"));
        assert_eq!(both.validate("ops-token").await.unwrap().subject(), "ops");
        assert_eq!(both.validate("b-token").await.unwrap().subject(), "bob");
        assert!(both.validate("nobody").await.is_err());
    }
}
