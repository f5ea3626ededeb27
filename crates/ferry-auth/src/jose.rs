//! JOSE details shared by access-token and DPoP-proof checks: which algorithms are
//! allowed, and whether an algorithm fits a key (no algorithm confusion).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm};

use crate::error::{ConfigError, InvalidToken};

/// The asymmetric algorithms accepted by default: RS256, PS256, ES256 and EdDSA.
pub const DEFAULT_ALGORITHMS: [Algorithm; 4] = [
    Algorithm::RS256,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::EdDSA,
];

/// Checks a configured list of algorithms: not empty, asymmetric only (an HMAC
/// algorithm would let anyone holding the public key forge tokens).
pub(crate) fn check_algorithms(algs: &[Algorithm]) -> Result<(), ConfigError> {
    if algs.is_empty() {
        return Err(ConfigError::Setting("no algorithm allowed".into()));
    }
    for a in algs {
        if matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) {
            return Err(ConfigError::Setting(format!(
                "{a:?} is symmetric: only asymmetric algorithms can be verified with published keys"
            )));
        }
    }
    Ok(())
}

/// The name of an algorithm as JOSE writes it.
pub(crate) fn alg_name(a: Algorithm) -> String {
    serde_json::to_value(a)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{a:?}"))
}

/// The header of a compact JWS, parsed as JSON (without trusting it yet).
pub(crate) fn raw_header(
    token: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, InvalidToken> {
    let mut parts = token.split('.');
    let (Some(h), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(InvalidToken::Malformed(
            "not a compact JWS (three parts)".into(),
        ));
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(h)
        .map_err(|_| InvalidToken::Malformed("header is not base64url".into()))?;
    match serde_json::from_slice(&bytes) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        _ => Err(InvalidToken::Malformed(
            "header is not a JSON object".into(),
        )),
    }
}

/// The header's `alg`, if it is one of `allowed` (`none` and unknown names never are).
pub(crate) fn header_alg(
    header: &serde_json::Map<String, serde_json::Value>,
    allowed: &[Algorithm],
) -> Result<Algorithm, InvalidToken> {
    let name = header
        .get("alg")
        .and_then(|v| v.as_str())
        .ok_or(InvalidToken::Malformed("no alg in the header".into()))?;
    let alg: Algorithm = serde_json::from_value(serde_json::Value::String(name.to_owned()))
        .map_err(|_| InvalidToken::Algorithm(name.to_owned()))?;
    if !allowed.contains(&alg) {
        return Err(InvalidToken::Algorithm(name.to_owned()));
    }
    Ok(alg)
}

/// Checks that `alg` fits `jwk`: the key type and curve of the algorithm's family, and
/// the key's own `alg` if it names one.
pub(crate) fn check_key_fits(alg: Algorithm, jwk: &Jwk) -> Result<(), InvalidToken> {
    let fits = match (&jwk.algorithm, alg) {
        (
            AlgorithmParameters::RSA(_),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512,
        ) => true,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES256) => p.curve == EllipticCurve::P256,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES384) => p.curve == EllipticCurve::P384,
        (AlgorithmParameters::OctetKeyPair(p), Algorithm::EdDSA) => {
            p.curve == EllipticCurve::Ed25519
        }
        _ => false,
    };
    if !fits {
        return Err(InvalidToken::KeyMismatch(format!(
            "{} with a key of another type or curve",
            alg_name(alg)
        )));
    }
    if let Some(key_alg) = jwk.common.key_algorithm
        && key_alg_matches(key_alg, alg) == Some(false)
    {
        return Err(InvalidToken::KeyMismatch(format!(
            "the key is for {key_alg:?}, the token uses {}",
            alg_name(alg)
        )));
    }
    Ok(())
}

/// Whether a JWK's `alg` is the token's algorithm; `None` for values with no JWS meaning.
fn key_alg_matches(key_alg: KeyAlgorithm, alg: Algorithm) -> Option<bool> {
    let as_alg: Result<Algorithm, _> =
        serde_json::to_value(key_alg).and_then(serde_json::from_value);
    as_alg.ok().map(|a| a == alg)
}

/// Whether a JWK (as raw JSON) holds private or symmetric key material.
pub(crate) fn has_private_parts(jwk: &serde_json::Value) -> bool {
    let Some(obj) = jwk.as_object() else {
        return true;
    };
    ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
        .iter()
        .any(|k| obj.contains_key(*k))
        || obj.get("kty").and_then(|v| v.as_str()) == Some("oct")
}

/// base64url without padding.
pub(crate) fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwk(v: serde_json::Value) -> Jwk {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn keys_and_algorithms() {
        let ec = jwk(serde_json::json!({"kty":"EC","crv":"P-256","x":"AA","y":"AA"}));
        let ec_rs =
            jwk(serde_json::json!({"kty":"EC","crv":"P-256","x":"AA","y":"AA","alg":"ES384"}));
        let rsa = jwk(serde_json::json!({"kty":"RSA","n":"AQAB","e":"AQAB","alg":"RS256"}));
        let ed = jwk(serde_json::json!({"kty":"OKP","crv":"Ed25519","x":"AA"}));
        assert!(check_key_fits(Algorithm::ES256, &ec).is_ok());
        assert!(
            check_key_fits(Algorithm::ES384, &ec).is_err(),
            "curve mismatch"
        );
        assert!(
            check_key_fits(Algorithm::RS256, &ec).is_err(),
            "family mismatch"
        );
        assert!(
            check_key_fits(Algorithm::ES256, &ec_rs).is_err(),
            "the key's own alg"
        );
        assert!(check_key_fits(Algorithm::RS256, &rsa).is_ok());
        assert!(
            check_key_fits(Algorithm::PS256, &rsa).is_err(),
            "the key says RS256"
        );
        assert!(check_key_fits(Algorithm::HS256, &rsa).is_err());
        assert!(check_key_fits(Algorithm::EdDSA, &ed).is_ok());
        assert!(check_key_fits(Algorithm::ES256, &ed).is_err());
    }

    #[test]
    fn header_algorithms() {
        let h = |alg: &str| {
            let m: serde_json::Map<_, _> =
                serde_json::from_value(serde_json::json!({ "alg": alg })).unwrap();
            header_alg(&m, &DEFAULT_ALGORITHMS)
        };
        assert_eq!(h("ES256"), Ok(Algorithm::ES256));
        for bad in ["none", "None", "HS256", "ES384", "foo", ""] {
            assert!(matches!(h(bad), Err(InvalidToken::Algorithm(_))), "{bad}");
        }
        assert!(check_algorithms(&[Algorithm::HS256]).is_err());
        assert!(check_algorithms(&[]).is_err());
        assert!(check_algorithms(&DEFAULT_ALGORITHMS).is_ok());
        assert_eq!(alg_name(Algorithm::EdDSA), "EdDSA");
    }

    #[test]
    fn private_material() {
        assert!(has_private_parts(&serde_json::json!({"kty":"EC","d":"x"})));
        assert!(has_private_parts(&serde_json::json!({"kty":"oct"})));
        assert!(has_private_parts(&serde_json::json!("x")));
        assert!(!has_private_parts(
            &serde_json::json!({"kty":"EC","x":"a","y":"b"})
        ));
    }
}
