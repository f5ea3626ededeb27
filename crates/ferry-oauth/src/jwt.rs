//! Signing keys and the JWTs the client makes: `private_key_jwt` client assertions
//! (RFC 7523 section 2.2) and DPoP proofs (RFC 9449 section 4.2).

use std::collections::HashMap;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use parking_lot::Mutex;
use serde_json::{Value, json};
use url::Url;

use crate::error::AuthError;
use crate::pkce::{random_b64, s256};
use crate::secret::Secret;

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A private key for `private_key_jwt` client authentication, from PEM (PKCS#8 EC, RSA
/// or Ed25519 key).
#[derive(Clone)]
pub struct ClientKey {
    alg: Algorithm,
    key: EncodingKey,
    kid: Option<String>,
}

impl fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl ClientKey {
    /// Reads a PEM private key for `alg` (`ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`, ...).
    pub fn from_pem(pem: &str, alg: &str) -> Result<Self, AuthError> {
        let alg: Algorithm = alg
            .parse()
            .map_err(|_| AuthError::Key(format!("unknown signing algorithm {alg}")))?;
        let bytes = pem.as_bytes();
        let key = match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(bytes),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(bytes),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(bytes),
            _ => {
                return Err(AuthError::Key(format!(
                    "{alg:?} is not an asymmetric algorithm"
                )));
            }
        }
        .map_err(|e| AuthError::Key(format!("cannot read the private key: {e}")))?;
        Ok(ClientKey {
            alg,
            key,
            kid: None,
        })
    }

    /// With a key id (`kid` header), to pick the key out of a published JWKS.
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// The algorithm name, e.g. `ES256`.
    pub fn alg_name(&self) -> String {
        format!("{:?}", self.alg)
    }

    /// A client assertion for `client_id` at the authorization server `audience` (its
    /// issuer identifier), valid for five minutes.
    pub fn client_assertion(&self, client_id: &str, audience: &str) -> Result<Secret, AuthError> {
        let mut header = Header::new(self.alg);
        header.typ = Some("JWT".into());
        header.kid = self.kid.clone();
        let iat = now();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": iat,
            "exp": iat + 300,
            "jti": random_b64(16)?,
        });
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map(Secret::new)
            .map_err(|e| AuthError::Key(format!("signing the client assertion: {e}")))
    }
}

/// A DPoP key pair (P-256, `ES256`) and the proofs it signs (RFC 9449).
#[derive(Clone)]
pub struct DpopKey {
    key: EncodingKey,
    jwk: Jwk,
    pkcs8: Secret,
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.thumbprint().ok())
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A fresh P-256 key.
    pub fn generate() -> Result<Self, AuthError> {
        use p256::pkcs8::EncodePrivateKey;
        let secret = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| AuthError::Key(format!("no randomness: {e}")))?;
            if let Ok(k) = p256::SecretKey::from_bytes(&bytes.into()) {
                break k;
            }
        };
        let der = secret
            .to_pkcs8_der()
            .map_err(|e| AuthError::Key(format!("encoding the DPoP key: {e}")))?;
        Self::from_pkcs8_der(der.as_bytes())
    }

    /// The key from its PKCS#8 DER encoding, base64 (as [`DpopKey::to_pkcs8_base64`]
    /// writes it).
    pub fn from_pkcs8_base64(b64: &str) -> Result<Self, AuthError> {
        let der = STANDARD
            .decode(b64)
            .map_err(|e| AuthError::Key(format!("DPoP key: {e}")))?;
        Self::from_pkcs8_der(&der)
    }

    fn from_pkcs8_der(der: &[u8]) -> Result<Self, AuthError> {
        use p256::pkcs8::DecodePrivateKey;
        p256::SecretKey::from_pkcs8_der(der)
            .map_err(|e| AuthError::Key(format!("DPoP key: {e}")))?;
        let key = EncodingKey::from_ec_der(der);
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .map_err(|e| AuthError::Key(format!("DPoP key: {e}")))?;
        // The proof's `jwk` carries the public key alone.
        jwk.common = Default::default();
        Ok(DpopKey {
            key,
            jwk,
            pkcs8: Secret::new(STANDARD.encode(der)),
        })
    }

    /// The PKCS#8 DER encoding, base64: a secret, for token stores.
    pub fn to_pkcs8_base64(&self) -> &Secret {
        &self.pkcs8
    }

    /// The JWK SHA-256 thumbprint (RFC 7638), the `jkt` tokens are bound to.
    pub fn thumbprint(&self) -> Result<String, AuthError> {
        self.jwk
            .thumbprint(ThumbprintHash::SHA256)
            .map_err(|e| AuthError::Key(format!("DPoP key thumbprint: {e}")))
    }

    /// The public key as a JWK.
    pub fn public_jwk(&self) -> Value {
        serde_json::to_value(&self.jwk).unwrap_or(Value::Null)
    }

    /// A proof for `method` on `url` (query and fragment dropped), binding
    /// `access_token` (`ath`) and echoing the server's `nonce` when given. Every proof
    /// has a fresh `jti`.
    pub fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        let mut claims = json!({
            "jti": random_b64(16)?,
            "htm": method,
            "htu": htu(url),
            "iat": now(),
        });
        if let Some(t) = access_token {
            claims["ath"] = json!(s256(t));
        }
        if let Some(n) = nonce {
            claims["nonce"] = json!(n);
        }
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| AuthError::Key(format!("signing a DPoP proof: {e}")))
    }
}

/// The `htu` of a request: its URL without query and fragment (RFC 9449 section 4.2).
pub(crate) fn htu(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// The latest `DPoP-Nonce` of each server, by origin (RFC 9449 sections 8 and 9).
#[derive(Debug, Default)]
pub(crate) struct Nonces(Mutex<HashMap<String, String>>);

impl Nonces {
    pub fn get(&self, url: &Url) -> Option<String> {
        self.0
            .lock()
            .get(&url.origin().ascii_serialization())
            .cloned()
    }

    /// Records a nonce; returns whether it is new.
    pub fn set(&self, url: &Url, nonce: &str) -> bool {
        // A nonce is an opaque short string; bound what is kept.
        if nonce.len() > 1024 || nonce.is_empty() {
            return false;
        }
        let prev = self
            .0
            .lock()
            .insert(url.origin().ascii_serialization(), nonce.to_owned());
        prev.as_deref() != Some(nonce)
    }
}
