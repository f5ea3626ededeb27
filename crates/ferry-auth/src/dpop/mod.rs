//! DPoP on the resource side (RFC 9449 §4.3, §7, §9): proof-of-possession of the key an
//! access token is bound to.

mod nonce;
mod replay;

use std::time::Duration;

use http::HeaderValue;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::challenge::Refusal;
use crate::credentials::Scheme;
use crate::error::{ConfigError, InvalidToken};
use crate::jose::{self, DEFAULT_ALGORITHMS, b64url};
use crate::resource::normalise_htu;
use crate::token::now_secs;

use nonce::{NonceCheck, Nonces};
use replay::{NotRecorded, ReplayStore};

/// The `DPoP` request header.
pub const DPOP_HEADER: &str = "dpop";
/// The `DPoP-Nonce` response header.
pub const DPOP_NONCE_HEADER: &str = "dpop-nonce";

/// Largest proof accepted, in bytes.
const MAX_PROOF_BYTES: usize = 8 * 1024;

/// How the resource treats DPoP (RFC 9449).
///
/// With [`Dpop::allowed`], bearer tokens keep working and DPoP-bound tokens (those with
/// `cnf.jkt`) must come with `Authorization: DPoP` and a valid proof; with
/// [`Dpop::required`], only DPoP-bound tokens are accepted.
///
/// ```
/// use std::time::Duration;
/// use ferry_auth::Dpop;
///
/// let dpop = Dpop::required()
///     .proof_max_age(Duration::from_secs(60))
///     .nonce(Duration::from_secs(300));
/// assert!(dpop.is_required());
/// ```
pub struct Dpop {
    required: bool,
    algorithms: Vec<Algorithm>,
    max_age: Duration,
    leeway: Duration,
    nonce_interval: Option<Duration>,
    replay_capacity: usize,
}

impl Dpop {
    /// Accept DPoP alongside bearer tokens.
    pub fn allowed() -> Self {
        Dpop {
            required: false,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            max_age: Duration::from_secs(60),
            leeway: Duration::from_secs(5),
            nonce_interval: None,
            replay_capacity: 100_000,
        }
    }

    /// Accept DPoP-bound tokens only.
    pub fn required() -> Self {
        Dpop {
            required: true,
            ..Dpop::allowed()
        }
    }

    /// Whether only DPoP is accepted.
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// The proof algorithms accepted (asymmetric only; default RS256, PS256, ES256,
    /// EdDSA).
    pub fn algorithms(mut self, algs: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algs.into_iter().collect();
        self
    }

    /// How old a proof's `iat` may be (default 60 s).
    pub fn proof_max_age(mut self, age: Duration) -> Self {
        self.max_age = age;
        self
    }

    /// Clock skew tolerated on a proof's `iat` (default 5 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Require server-provided nonces, rotated every `interval` (RFC 9449 §9). A
    /// proof without the current (or previous) nonce gets `use_dpop_nonce`.
    pub fn nonce(mut self, interval: Duration) -> Self {
        self.nonce_interval = Some(interval);
        self
    }

    /// How many proofs the replay store holds (default 100,000). When it is full of live
    /// proofs, new ones are refused with `503` until some expire.
    pub fn replay_capacity(mut self, n: usize) -> Self {
        self.replay_capacity = n;
        self
    }

    pub(crate) fn build(self) -> Result<DpopChecker, ConfigError> {
        jose::check_algorithms(&self.algorithms)?;
        if self.replay_capacity == 0 {
            return Err(ConfigError::Setting(
                "the DPoP replay store needs room".into(),
            ));
        }
        Ok(DpopChecker {
            required: self.required,
            alg_names: self.algorithms.iter().map(|a| jose::alg_name(*a)).collect(),
            algorithms: self.algorithms,
            max_age: self.max_age.as_secs(),
            leeway: self.leeway.as_secs(),
            nonces: self.nonce_interval.map(Nonces::new),
            replay: ReplayStore::new(self.replay_capacity),
        })
    }
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop")
            .field("required", &self.required)
            .field("algorithms", &self.algorithms)
            .field("max_age", &self.max_age)
            .field("nonce_interval", &self.nonce_interval)
            .finish()
    }
}

/// The configured checks, ready for requests.
pub(crate) struct DpopChecker {
    pub(crate) required: bool,
    pub(crate) alg_names: Vec<String>,
    algorithms: Vec<Algorithm>,
    max_age: u64,
    leeway: u64,
    nonces: Option<Nonces>,
    replay: ReplayStore,
}

#[derive(Deserialize)]
struct ProofClaims {
    jti: Option<String>,
    htm: Option<String>,
    htu: Option<String>,
    iat: Option<serde_json::Number>,
    ath: Option<String>,
    nonce: Option<String>,
}

fn invalid(why: &str) -> Refusal {
    Refusal::InvalidProof(why.to_owned())
}

impl DpopChecker {
    /// The `algs` parameter of a `DPoP` challenge.
    pub(crate) fn algs_param(&self) -> String {
        self.alg_names.join(" ")
    }

    /// Checks `req`, presenting `token` with `scheme`, bound to `jkt` or not; `origin` is
    /// the resource's scheme and authority, to which the request path is joined for
    /// `htu`. Returns a nonce to send with the response, if a newer one exists.
    pub(crate) fn check<B>(
        &self,
        scheme: Scheme,
        token: &str,
        jkt: Option<&str>,
        req: &http::Request<B>,
        origin: &str,
    ) -> Result<Option<HeaderValue>, Refusal> {
        match (scheme, jkt) {
            (Scheme::Bearer, Some(_)) => {
                return Err(Refusal::Invalid(InvalidToken::Dpop(
                    "a DPoP-bound token was presented as a bearer token".into(),
                )));
            }
            (Scheme::Bearer, None) if self.required => {
                return Err(Refusal::Invalid(InvalidToken::Dpop(
                    "this resource accepts DPoP-bound tokens only".into(),
                )));
            }
            (Scheme::Bearer, None) => return Ok(None),
            (Scheme::Dpop, None) => {
                return Err(Refusal::Invalid(InvalidToken::Dpop(
                    "the token is not DPoP-bound (no cnf.jkt)".into(),
                )));
            }
            (Scheme::Dpop, Some(_)) => {}
        }
        let jkt = jkt.unwrap_or_default();
        let (method, path) = (req.method(), req.uri().path());
        let mut proofs = req.headers().get_all(DPOP_HEADER).iter();
        let (Some(proof), None) = (proofs.next(), proofs.next()) else {
            return Err(invalid("exactly one DPoP header is required"));
        };
        let proof = proof
            .to_str()
            .map_err(|_| invalid("the DPoP header is not ASCII"))?;
        if proof.len() > MAX_PROOF_BYTES {
            return Err(invalid("the proof is too large"));
        }
        let header = jose::raw_header(proof).map_err(|e| invalid(&e.to_string()))?;
        if header.get("typ").and_then(|v| v.as_str()) != Some("dpop+jwt") {
            return Err(invalid("typ must be dpop+jwt"));
        }
        let alg =
            jose::header_alg(&header, &self.algorithms).map_err(|e| invalid(&e.to_string()))?;
        let raw_jwk = header
            .get("jwk")
            .ok_or_else(|| invalid("no jwk in the header"))?;
        if jose::has_private_parts(raw_jwk) {
            return Err(invalid("the jwk must be a public asymmetric key"));
        }
        let jwk: Jwk = serde_json::from_value(raw_jwk.clone())
            .map_err(|_| invalid("the jwk is not a valid key"))?;
        jose::check_key_fits(alg, &jwk).map_err(|e| invalid(&e.to_string()))?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| invalid("the jwk is not a valid key"))?;
        let mut validation = Validation::new(alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<ProofClaims>(proof, &key, &validation)
            .map_err(|_| invalid("the proof's signature does not verify"))?
            .claims;

        let jti = claims.jti.filter(|j| !j.is_empty() && j.len() <= 256);
        let jti = jti.ok_or_else(|| invalid("jti is missing"))?;
        if claims.htm.as_deref() != Some(method.as_str()) {
            return Err(invalid("htm does not match the request method"));
        }
        let expected = normalise_htu(&format!("{origin}{path}"));
        let presented = claims.htu.as_deref().and_then(normalise_htu);
        if presented.is_none() || presented != expected {
            return Err(invalid("htu does not match the request URL"));
        }
        let now = now_secs();
        let iat = claims
            .iat
            .and_then(|n| n.as_u64().or_else(|| n.as_f64().map(|f| f as u64)))
            .ok_or_else(|| invalid("iat is missing"))?;
        if iat > now + self.leeway || iat + self.max_age + self.leeway < now {
            return Err(invalid("iat is outside the accepted window"));
        }
        let ath = b64url(&Sha256::digest(token.as_bytes()));
        if claims.ath.as_deref() != Some(ath.as_str()) {
            return Err(invalid("ath does not match the access token"));
        }
        let thumbprint = jwk
            .thumbprint(ThumbprintHash::SHA256)
            .map_err(|_| invalid("the jwk has no thumbprint"))?;
        if thumbprint.as_bytes() != jkt.as_bytes() {
            return Err(Refusal::Invalid(InvalidToken::Dpop(
                "the proof's key is not the one the token is bound to".into(),
            )));
        }
        let mut fresh_nonce = None;
        if let Some(nonces) = &self.nonces {
            match nonces.check(claims.nonce.as_deref()) {
                NonceCheck::Current => {}
                NonceCheck::Stale(n) => fresh_nonce = Some(n),
                NonceCheck::Refused(n) => return Err(Refusal::UseNonce(n)),
            }
        }
        let mut h = Sha256::new();
        h.update(thumbprint.as_bytes());
        h.update([0]);
        h.update(jti.as_bytes());
        match self.replay.record(
            h.finalize().into(),
            iat + self.max_age + self.leeway + 1,
            now,
        ) {
            Ok(()) => Ok(fresh_nonce),
            Err(NotRecorded::Replayed) => Err(invalid("the proof was used before")),
            Err(NotRecorded::Full) => {
                Err(Refusal::Unavailable("the DPoP replay store is full".into()))
            }
        }
    }

    /// The current nonce, for `401` responses of a resource that requires nonces.
    pub(crate) fn current_nonce(&self) -> Option<HeaderValue> {
        self.nonces.as_ref().map(Nonces::current)
    }
}
