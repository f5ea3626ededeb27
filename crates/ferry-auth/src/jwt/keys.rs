//! The issuer's signing keys: a JWKS fetched, cached within bounds of its
//! `Cache-Control: max-age`, refreshed on demand when stale or when a token names an
//! unknown `kid` — at most once per interval, so forged key ids cannot make the server
//! hammer the authorization server.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use parking_lot::{Mutex, RwLock};
use url::Url;

use crate::discovery;
use crate::error::{InvalidToken, TokenError};
use crate::fetch::Fetcher;
use crate::jose;

/// Most keys used from one JWKS.
const MAX_KEYS: usize = 64;

/// Where the keys come from.
pub(crate) enum KeySource {
    /// The issuer's metadata names the JWKS (`jwks_uri`).
    Discover { issuer: String },
    /// A JWKS URL given directly.
    Url(Url),
    /// Fixed keys; never fetched.
    Fixed(JwkSet),
}

/// Bounds on how long a fetched JWKS is used before it is refetched.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Freshness {
    pub(crate) default_ttl: Duration,
    pub(crate) min_ttl: Duration,
    pub(crate) max_ttl: Duration,
    /// The least time between two fetches, whatever triggers them.
    pub(crate) min_interval: Duration,
}

/// One usable verification key.
pub(crate) struct Key {
    pub(crate) kid: Option<String>,
    pub(crate) jwk: Jwk,
    pub(crate) decoding: DecodingKey,
}

pub(crate) struct KeySet {
    pub(crate) keys: Vec<Key>,
    fresh_until: Instant,
}

impl KeySet {
    fn from_jwks(set: &JwkSet, ttl: Duration) -> KeySet {
        let keys = set
            .keys
            .iter()
            .filter(|k| {
                k.common
                    .public_key_use
                    .as_ref()
                    .is_none_or(|u| *u == PublicKeyUse::Signature)
            })
            .filter_map(|jwk| {
                // Symmetric keys never verify tokens: a published "secret" is no secret.
                if matches!(
                    jwk.algorithm,
                    jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
                ) {
                    return None;
                }
                let decoding = DecodingKey::from_jwk(jwk).ok()?;
                Some(Key {
                    kid: jwk.common.key_id.clone(),
                    jwk: jwk.clone(),
                    decoding,
                })
            })
            .take(MAX_KEYS)
            .collect();
        KeySet {
            keys,
            fresh_until: Instant::now() + ttl,
        }
    }

    /// The key for a token with `kid` and `alg`: the key with that id, or without an id
    /// the only key that fits `alg`.
    pub(crate) fn find(&self, kid: Option<&str>, alg: Algorithm) -> Result<&Key, InvalidToken> {
        let key = match kid {
            Some(kid) => self
                .keys
                .iter()
                .find(|k| k.kid.as_deref() == Some(kid))
                .ok_or(InvalidToken::UnknownKey)?,
            None => {
                let mut fitting = self
                    .keys
                    .iter()
                    .filter(|k| jose::check_key_fits(alg, &k.jwk).is_ok());
                match (fitting.next(), fitting.next()) {
                    (Some(k), None) => k,
                    _ => return Err(InvalidToken::UnknownKey),
                }
            }
        };
        jose::check_key_fits(alg, &key.jwk)?;
        Ok(key)
    }

    fn has_kid(&self, kid: Option<&str>) -> bool {
        match kid {
            Some(kid) => self.keys.iter().any(|k| k.kid.as_deref() == Some(kid)),
            None => !self.keys.is_empty(),
        }
    }
}

pub(crate) struct Jwks {
    source: KeySource,
    fetcher: Fetcher,
    freshness: Freshness,
    current: RwLock<Option<Arc<KeySet>>>,
    jwks_uri: Mutex<Option<Url>>,
    /// Held while fetching, so concurrent triggers share one fetch.
    refreshing: tokio::sync::Mutex<()>,
    last_attempt: Mutex<Option<Instant>>,
    fetches: AtomicU64,
}

impl Jwks {
    pub(crate) fn new(source: KeySource, fetcher: Fetcher, freshness: Freshness) -> Self {
        let current = match &source {
            KeySource::Fixed(set) => Some(Arc::new(KeySet::from_jwks(
                set,
                Duration::from_secs(100 * 365 * 86_400),
            ))),
            _ => None,
        };
        let jwks_uri = match &source {
            KeySource::Url(u) => Some(u.clone()),
            _ => None,
        };
        Jwks {
            source,
            fetcher,
            freshness,
            current: RwLock::new(current),
            jwks_uri: Mutex::new(jwks_uri),
            refreshing: tokio::sync::Mutex::new(()),
            last_attempt: Mutex::new(None),
            fetches: AtomicU64::new(0),
        }
    }

    /// How many times the JWKS was requested.
    pub(crate) fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// The keys to verify a token with `kid`: the cached set if it is fresh and knows
    /// `kid`, else a refreshed one (when the last fetch is old enough).
    pub(crate) async fn keys_for(&self, kid: Option<&str>) -> Result<Arc<KeySet>, TokenError> {
        let cached = self.current.read().clone();
        if let Some(set) = &cached
            && set.has_kid(kid)
            && (Instant::now() < set.fresh_until || matches!(self.source, KeySource::Fixed(_)))
        {
            return Ok(set.clone());
        }
        if matches!(self.source, KeySource::Fixed(_)) {
            return cached.ok_or(TokenError::Unavailable("no keys".into()));
        }
        match self.refresh().await {
            Ok(set) => Ok(set),
            // Keys we still hold remain usable while the issuer is out of reach.
            Err(e) => match self.current.read().clone() {
                Some(set) => {
                    tracing::warn!(error = %e, "JWKS refresh failed; using the keys held");
                    Ok(set)
                }
                None => Err(TokenError::Unavailable(e)),
            },
        }
    }

    /// Fetches the keys now unless a fetch started less than the minimum interval ago
    /// (then the current keys are returned), sharing one fetch among concurrent callers.
    pub(crate) async fn refresh(&self) -> Result<Arc<KeySet>, String> {
        let started_waiting = Instant::now();
        let _guard = self.refreshing.lock().await;
        {
            let mut last = self.last_attempt.lock();
            let recent = last
                .is_some_and(|t| t >= started_waiting || t.elapsed() < self.freshness.min_interval);
            if recent {
                return self.current.read().clone().ok_or_else(|| {
                    "the keys could not be fetched recently; not retrying yet".to_owned()
                });
            }
            *last = Some(Instant::now());
        }
        let uri = self.jwks_uri().await?;
        self.fetches.fetch_add(1, Ordering::Relaxed);
        let fetched = self.fetcher.get_json(&uri).await.map_err(|e| e.0)?;
        let set: JwkSet =
            serde_json::from_value(fetched.json).map_err(|_| format!("{uri}: not a JWK set"))?;
        let f = self.freshness;
        let ttl = if fetched.no_store {
            f.min_ttl
        } else {
            fetched
                .max_age
                .unwrap_or(f.default_ttl)
                .clamp(f.min_ttl, f.max_ttl)
        };
        let keys = Arc::new(KeySet::from_jwks(&set, ttl));
        if keys.keys.is_empty() {
            return Err(format!("{uri}: no usable signing key"));
        }
        *self.current.write() = Some(keys.clone());
        Ok(keys)
    }

    async fn jwks_uri(&self) -> Result<Url, String> {
        if let Some(u) = self.jwks_uri.lock().clone() {
            return Ok(u);
        }
        let KeySource::Discover { issuer } = &self.source else {
            return Err("no JWKS URL".into());
        };
        let meta = discovery::discover(&self.fetcher, issuer).await?;
        let uri = meta
            .jwks_uri
            .ok_or_else(|| format!("the metadata of {issuer} names no jwks_uri"))?;
        *self.jwks_uri.lock() = Some(uri.clone());
        Ok(uri)
    }
}
