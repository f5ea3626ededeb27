//! PKCE (RFC 7636) with `S256`, and the random values of the flows.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::error::AuthError;
use crate::secret::Secret;

/// `n` random bytes, base64url without padding.
pub(crate) fn random_b64(n: usize) -> Result<String, AuthError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| AuthError::Key(format!("no randomness: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A PKCE code verifier and its `S256` challenge.
#[derive(Clone, Debug)]
pub struct Pkce {
    verifier: Secret,
    challenge: String,
}

impl Pkce {
    /// A fresh verifier: 32 random bytes, 43 base64url characters (RFC 7636 section 4.1).
    pub fn generate() -> Result<Self, AuthError> {
        Ok(Pkce::from_verifier(random_b64(32)?))
    }

    /// The pair for a given verifier.
    pub fn from_verifier(verifier: impl Into<String>) -> Self {
        let verifier = verifier.into();
        let challenge = s256(&verifier);
        Pkce {
            verifier: Secret::new(verifier),
            challenge,
        }
    }

    /// The `code_verifier`, sent with the token request.
    pub fn verifier(&self) -> &Secret {
        &self.verifier
    }

    /// The `code_challenge`, sent with the authorization request.
    pub fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// `BASE64URL(SHA256(ASCII(value)))`.
pub(crate) fn s256(value: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(value.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let p = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
        assert_eq!(p.challenge(), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }

    #[test]
    fn fresh_verifiers_differ_and_are_long_enough() {
        let a = Pkce::generate().unwrap();
        let b = Pkce::generate().unwrap();
        assert_ne!(a.verifier(), b.verifier());
        assert_eq!(a.verifier().expose().len(), 43);
        assert!(
            a.verifier()
                .expose()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
    }
}
