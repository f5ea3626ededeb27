//! A DPoP client key: proofs (RFC 9449 §4.2) for tests of the resource side.

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::keys::{KeyKind, SigningKey};
use crate::jose::b64url;

/// A client's DPoP key pair.
///
/// ```
/// use ferry_auth::testing::DpopKey;
///
/// let key = DpopKey::generate();
/// let proof = key.proof("POST", "https://mcp.example.com/mcp", "access-token", None);
/// assert_eq!(proof.split('.').count(), 3);
/// assert_eq!(key.jkt().len(), 43);
/// ```
#[derive(Debug)]
pub struct DpopKey {
    key: SigningKey,
}

impl DpopKey {
    /// A fresh ES256 key.
    pub fn generate() -> DpopKey {
        DpopKey::generate_kind(KeyKind::Es256)
    }

    /// A fresh key of `kind`.
    pub fn generate_kind(kind: KeyKind) -> DpopKey {
        DpopKey {
            key: SigningKey::generate(kind, "dpop"),
        }
    }

    /// The public JWK as it goes into a proof's header (`kty` and key parameters only).
    pub fn public_jwk(&self) -> Value {
        let mut jwk = self.key.public_jwk().clone();
        if let Some(o) = jwk.as_object_mut() {
            o.remove("kid");
            o.remove("alg");
            o.remove("use");
        }
        jwk
    }

    /// The JWK SHA-256 thumbprint (RFC 7638), the value of a bound token's `cnf.jkt`.
    pub fn jkt(&self) -> String {
        let jwk: jsonwebtoken::jwk::Jwk =
            serde_json::from_value(self.public_jwk()).expect("a public JWK");
        jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
            .expect("a thumbprint")
    }

    /// The default header of a proof: `typ: dpop+jwt`, `alg` and the public `jwk`.
    pub fn proof_header(&self) -> Value {
        json!({
            "typ": "dpop+jwt",
            "alg": crate::jose::alg_name(self.key.algorithm()),
            "jwk": self.public_jwk(),
        })
    }

    /// The claims of a valid proof for `method` on `url`, carrying `access_token`'s hash
    /// (`ath`) and `nonce` if given; `jti` is random and `iat` is now.
    pub fn proof_claims(
        &self,
        method: &str,
        url: &str,
        access_token: &str,
        nonce: Option<&str>,
    ) -> Value {
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).expect("the OS RNG");
        let mut c = json!({
            "jti": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": url,
            "iat": crate::token::now_secs(),
            "ath": b64url(&Sha256::digest(access_token.as_bytes())),
        });
        if let Some(n) = nonce {
            c["nonce"] = json!(n);
        }
        c
    }

    /// A valid proof.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: &str,
        nonce: Option<&str>,
    ) -> String {
        self.sign(
            &self.proof_header(),
            &self.proof_claims(method, url, access_token, nonce),
        )
    }

    /// A proof of `claims` under `header`, exactly as given (for broken proofs).
    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        self.key.sign_raw(header, claims)
    }
}
