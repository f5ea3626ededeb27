//! Signing keys for the test issuer and DPoP clients, and compact JWS signing with full
//! control over the header (for deliberately broken tokens too).

use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};

use crate::jose::{alg_name, b64url};

/// The kinds of key the test issuer can sign with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyKind {
    /// ECDSA P-256 with SHA-256.
    Es256,
    /// RSA 2048 PKCS#1 v1.5 with SHA-256.
    Rs256,
    /// RSA 2048 PSS with SHA-256.
    Ps256,
    /// Ed25519.
    EdDsa,
}

impl KeyKind {
    /// The JWS algorithm.
    pub fn algorithm(self) -> Algorithm {
        match self {
            KeyKind::Es256 => Algorithm::ES256,
            KeyKind::Rs256 => Algorithm::RS256,
            KeyKind::Ps256 => Algorithm::PS256,
            KeyKind::EdDsa => Algorithm::EdDSA,
        }
    }
}

/// The operating system's RNG for `rsa`'s key generation.
struct OsRng;

impl rsa::rand_core::TryRng for OsRng {
    type Error = std::io::Error;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        getrandom::u32().map_err(|e| std::io::Error::other(e.to_string()))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        getrandom::u64().map_err(|e| std::io::Error::other(e.to_string()))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        getrandom::fill(dst).map_err(|e| std::io::Error::other(e.to_string()))
    }
}

impl rsa::rand_core::TryCryptoRng for OsRng {}

/// A private key with its public JWK.
pub struct SigningKey {
    kid: String,
    alg: Algorithm,
    encoding: EncodingKey,
    public: Value,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

fn random32() -> [u8; 32] {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).expect("the OS RNG");
    b
}

impl SigningKey {
    /// A fresh key of `kind` with key id `kid`.
    pub fn generate(kind: KeyKind, kid: impl Into<String>) -> SigningKey {
        use p256::pkcs8::EncodePrivateKey as _;
        let alg = kind.algorithm();
        let (encoding, public) = match kind {
            KeyKind::Es256 => {
                let secret = loop {
                    if let Ok(s) = p256::SecretKey::from_slice(&random32()) {
                        break s;
                    }
                };
                let der = secret.to_pkcs8_der().expect("PKCS#8 encoding");
                let enc = EncodingKey::from_ec_der(der.as_bytes());
                let jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&enc, alg).expect("EC JWK");
                (enc, serde_json::to_value(jwk).expect("JWK JSON"))
            }
            KeyKind::Rs256 | KeyKind::Ps256 => {
                use rsa::pkcs1::EncodeRsaPrivateKey as _;
                let key = rsa::PrivateKey::new(&mut OsRng, 2048).expect("RSA key generation");
                let der = key.to_pkcs1_der().expect("PKCS#1 encoding");
                let enc = EncodingKey::from_rsa_der(der.as_bytes());
                let jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&enc, alg).expect("RSA JWK");
                (enc, serde_json::to_value(jwk).expect("JWK JSON"))
            }
            KeyKind::EdDsa => {
                let key = ed25519_dalek::SigningKey::from_bytes(&random32());
                let der = ed25519_dalek::pkcs8::EncodePrivateKey::to_pkcs8_der(&key)
                    .expect("PKCS#8 encoding");
                let enc = EncodingKey::from_ed_der(der.as_bytes());
                let x = b64url(&key.verifying_key().to_bytes());
                (enc, json!({"kty": "OKP", "crv": "Ed25519", "x": x}))
            }
        };
        let kid = kid.into();
        let mut public = public;
        if let Some(obj) = public.as_object_mut() {
            obj.insert("kid".into(), json!(kid));
            obj.insert("alg".into(), json!(alg_name(alg)));
            obj.insert("use".into(), json!("sig"));
        }
        SigningKey {
            kid,
            alg,
            encoding,
            public,
        }
    }

    /// The key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The public key as a JWK (with `kid`, `alg` and `use`).
    pub fn public_jwk(&self) -> &Value {
        &self.public
    }

    /// Signs `claims` under `header` (used exactly as given) as a compact JWS.
    pub fn sign_raw(&self, header: &Value, claims: &Value) -> String {
        sign_with(&self.encoding, self.alg, header, claims)
    }
}

/// A compact JWS of `claims` under `header`, signed with `key` and `alg`.
pub(crate) fn sign_with(
    key: &EncodingKey,
    alg: Algorithm,
    header: &Value,
    claims: &Value,
) -> String {
    let message = format!(
        "{}.{}",
        b64url(&serde_json::to_vec(header).expect("JSON")),
        b64url(&serde_json::to_vec(claims).expect("JSON"))
    );
    let signature = jsonwebtoken::crypto::sign(message.as_bytes(), key, alg).expect("signing");
    format!("{message}.{signature}")
}

/// A JWS with `alg: none` and an empty signature.
pub(crate) fn unsigned(claims: &Value) -> String {
    format!(
        "{}.{}.",
        b64url(br#"{"alg":"none","typ":"at+jwt"}"#),
        b64url(&serde_json::to_vec(claims).expect("JSON"))
    )
}
