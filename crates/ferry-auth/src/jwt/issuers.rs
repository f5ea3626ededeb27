//! Several authorization servers for one resource (RFC 9728 `authorization_servers` may
//! list more than one): each token goes to the validator of the issuer it names.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::JwtValidator;
use crate::error::{InvalidToken, TokenError};
use crate::validator::{TokenValidator, ValidateFuture};

/// JWT validators for several issuers: a token is validated by the one whose issuer its
/// (not yet verified) `iss` names, and refused if none does. Every check of
/// [`JwtValidator`] still applies, `iss` included.
///
/// ```
/// use ferry_auth::{Issuers, JwtValidator};
///
/// let resource = "https://mcp.example.com/mcp";
/// let issuers = Issuers::new([
///     JwtValidator::builder("https://login.example.com", resource).build().unwrap(),
///     JwtValidator::builder("https://partners.example.net", resource).build().unwrap(),
/// ]);
/// assert_eq!(issuers.len(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct Issuers {
    validators: Vec<JwtValidator>,
}

impl Issuers {
    /// The validators, one per issuer.
    pub fn new(validators: impl IntoIterator<Item = JwtValidator>) -> Self {
        Issuers {
            validators: validators.into_iter().collect(),
        }
    }

    /// How many issuers are trusted.
    pub fn len(&self) -> usize {
        self.validators.len()
    }

    /// Whether no issuer is trusted.
    pub fn is_empty(&self) -> bool {
        self.validators.is_empty()
    }
}

/// The `iss` a JWT claims, read without verifying anything.
fn claimed_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    #[derive(serde::Deserialize)]
    struct Iss {
        iss: Option<String>,
    }
    serde_json::from_slice::<Iss>(&bytes).ok()?.iss
}

impl TokenValidator for Issuers {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        let chosen = claimed_issuer(token)
            .and_then(|iss| self.validators.iter().find(|v| v.issuer() == iss));
        match chosen {
            Some(v) => v.validate(token),
            None => Box::pin(std::future::ready(Err(TokenError::Invalid(
                InvalidToken::Issuer,
            )))),
        }
    }
}
