//! Validated tokens, kept by digest until they expire, so the request path does not
//! verify a signature (or call an introspection endpoint) on every request.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferry_server::Principal;
use sha2::{Digest, Sha256};

use crate::token::now_secs;

/// The SHA-256 digest of a token: the only form in which a token is used as a key.
pub(crate) type TokenDigest = [u8; 32];

/// The digest of `token`.
pub(crate) fn digest(token: &str) -> TokenDigest {
    Sha256::digest(token.as_bytes()).into()
}

/// What the layer keeps about a valid token.
pub(crate) struct CachedToken {
    pub(crate) principal: Principal,
    /// The DPoP key thumbprint the token is bound to.
    pub(crate) jkt: Option<Box<str>>,
    /// The moment the entry stops being valid: the token's expiry, or earlier.
    pub(crate) until: Instant,
}

/// A bounded map from token digests to verdicts, each valid until a deadline.
pub(crate) struct TokenCache {
    entries: Option<quick_cache::sync::Cache<TokenDigest, Arc<CachedToken>>>,
    max_ttl: Duration,
}

impl TokenCache {
    /// A cache of at most `capacity` tokens (0 disables it), none kept longer than
    /// `max_ttl`.
    pub(crate) fn new(capacity: usize, max_ttl: Duration) -> Self {
        TokenCache {
            entries: (capacity > 0).then(|| quick_cache::sync::Cache::new(capacity)),
            max_ttl,
        }
    }

    /// The live entry for `key`; an expired one is removed.
    pub(crate) fn get(&self, key: &TokenDigest) -> Option<Arc<CachedToken>> {
        let entries = self.entries.as_ref()?;
        let entry = entries.get(key)?;
        if Instant::now() < entry.until {
            Some(entry)
        } else {
            entries.remove(key);
            None
        }
    }

    /// Keeps a verdict until the earliest of the token's expiry `exp` (seconds since the
    /// epoch), `cache_for` and the cache's own maximum. Tokens without an expiry are
    /// kept for the maximum only.
    pub(crate) fn deadline(&self, exp: Option<u64>, cache_for: Option<Duration>) -> Instant {
        let now = Instant::now();
        let mut ttl = self.max_ttl;
        if let Some(exp) = exp {
            ttl = ttl.min(Duration::from_secs(exp.saturating_sub(now_secs())));
        }
        if let Some(c) = cache_for {
            ttl = ttl.min(c);
        }
        now + ttl
    }

    /// Stores `entry` under `key`, unless it is already past its deadline.
    pub(crate) fn insert(&self, key: TokenDigest, entry: Arc<CachedToken>) {
        if let Some(entries) = &self.entries
            && entry.until > Instant::now()
        {
            entries.insert(key, entry);
        }
    }

    /// How many entries are held (expired ones included until they are looked up or
    /// pushed out).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.as_ref().map_or(0, |e| e.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(until: Instant) -> Arc<CachedToken> {
        Arc::new(CachedToken {
            principal: Principal::new("p"),
            jkt: None,
            until,
        })
    }

    #[test]
    fn bounded_and_expiring() {
        let cache = TokenCache::new(100, Duration::from_secs(300));
        for i in 0..1000 {
            cache.insert(
                digest(&format!("t{i}")),
                entry(Instant::now() + Duration::from_secs(60)),
            );
        }
        assert!(cache.len() <= 100, "{}", cache.len());
        let k = digest("fresh");
        cache.insert(k, entry(Instant::now() + Duration::from_secs(60)));
        assert!(cache.get(&k).is_some());
        let old = digest("old");
        cache.insert(old, entry(Instant::now() - Duration::from_secs(1)));
        assert!(cache.get(&old).is_none(), "an expired verdict is not kept");
    }

    #[test]
    fn deadlines() {
        let cache = TokenCache::new(10, Duration::from_secs(300));
        let now = Instant::now();
        let d = cache.deadline(Some(now_secs() + 30), None);
        assert!(d <= now + Duration::from_secs(31) && d >= now + Duration::from_secs(28));
        let d = cache.deadline(Some(now_secs() + 3000), Some(Duration::from_secs(5)));
        assert!(d <= now + Duration::from_secs(6));
        let d = cache.deadline(None, None);
        assert!(d <= now + Duration::from_secs(301));
        let d = cache.deadline(Some(now_secs().saturating_sub(10)), None);
        assert!(d <= Instant::now(), "an expired token gets no time");
    }
}
