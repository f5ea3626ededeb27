//! Access-token validation (ferry-auth `JwtValidator`) on arbitrary token strings, with a
//! fixed ES256 key set: what every request's `Authorization: Bearer` header reaches.
//!
//! The first input byte picks the mode:
//! - even: the rest, as text, is the token. It must be refused, never panic: no token
//!   the fuzzer can write is signed by the key.
//! - odd: a real token is signed (subject and scopes from the input), checked to validate
//!   to that subject and those scopes, and then altered at the positions the rest of the
//!   input names: any altered token is refused.
#![no_main]

use std::sync::LazyLock;
use std::time::{SystemTime, UNIX_EPOCH};

use ferry_auth::{Algorithm, JwkSet, JwtValidator, TokenValidator};
use jsonwebtoken::{EncodingKey, Header};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

const ISSUER: &str = "https://as.example.com";
const RESOURCE: &str = "https://mcp.example.com/mcp";

/// A P-256 key made for this target alone; it signs nothing but the target's tokens.
const TEST_KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg6ic/7pI+ld0JpkxG
zlgGdZ88D+o1RFpOY4JaF8QGYnWhRANCAARZFpKkM73onYzYGpl/wFgh/q3QsdmG
CKCj6bSB9QVoSBy5bBwHZvq/By9kZ6G5Zk6PzNEYfPWf9XTMUa61TKqF
-----END PRIVATE KEY-----
";
const TEST_KEY_X: &str = "WRaSpDO96J2M2BqZf8BYIf6t0LHZhgigo-m0gfUFaEg";
const TEST_KEY_Y: &str = "HLlsHAdm-r8HL2RnoblmTo_M0Rh89Z_1dMxRrrVMqoU";
const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static VALIDATOR: LazyLock<JwtValidator> = LazyLock::new(|| {
    let keys: JwkSet = serde_json::from_value(json!({"keys": [{
        "kty": "EC", "crv": "P-256", "x": TEST_KEY_X, "y": TEST_KEY_Y,
        "kid": "k1", "alg": "ES256", "use": "sig"
    }]}))
    .expect("a valid JWK set");
    JwtValidator::builder(ISSUER, RESOURCE)
        .jwks(keys)
        .algorithms([Algorithm::ES256])
        .build()
        .expect("a valid validator")
});
static SIGNING: LazyLock<EncodingKey> =
    LazyLock::new(|| EncodingKey::from_ec_pem(TEST_KEY_PEM.as_bytes()).expect("a valid key"));

fn validate(token: &str) -> Result<ferry_auth::VerifiedToken, ferry_auth::TokenError> {
    futures::executor::block_on(VALIDATOR.validate(token))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let token = String::from_utf8_lossy(rest);
        assert!(validate(&token).is_err(), "a forged token validated");
        return;
    }

    let (words, edits) = rest.split_at(rest.len().min(48));
    let words = String::from_utf8_lossy(words);
    let (subject, scope) = words.split_once(' ').unwrap_or((&words, ""));
    let subject = if subject.is_empty() { "user" } else { subject };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let mut header = Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some("k1".into());
    header.typ = Some("at+jwt".into());
    let claims = json!({
        "iss": ISSUER, "aud": RESOURCE, "sub": subject, "scope": scope,
        "iat": now, "exp": now + 3600, "client_id": "fuzz",
    });
    let token = jsonwebtoken::encode(&header, &claims, &SIGNING).expect("the token signs");
    let verified = validate(&token).expect("a well-signed token validates");
    assert_eq!(verified.subject(), subject);
    let scopes: Vec<&str> = scope.split(' ').filter(|s| !s.is_empty()).collect();
    assert_eq!(verified.scopes(), scopes.as_slice());
    assert_eq!(verified.client_id(), Some("fuzz"));

    let mut altered = token.clone().into_bytes();
    for edit in edits.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % altered.len();
        if altered[at] != b'.' {
            altered[at] = BASE64URL[usize::from(edit[2]) % BASE64URL.len()];
        }
    }
    let altered = String::from_utf8(altered).expect("a JWT is ASCII");
    if altered != token {
        assert!(
            validate(&altered).is_err(),
            "an altered token validated: {altered}"
        );
    }
});
