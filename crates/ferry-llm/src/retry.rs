//! Retries: exponential backoff with full jitter, and the provider's `Retry-After`.

use std::time::{Duration, SystemTime};

use rand::Rng;
use reqwest::header::{HeaderMap, RETRY_AFTER};

/// How often and how patiently one model is retried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per model, the first included (at least 1).
    pub max_attempts: u32,
    /// The backoff ceiling of the first retry; it doubles with each retry.
    pub base_delay: Duration,
    /// The highest backoff ceiling.
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured; a longer one is cut to this.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries: one attempt per model.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` (1 for the first retry): `Retry-After` when the
    /// provider sent one (capped at [`max_retry_after`](Self::max_retry_after)), else a
    /// uniformly random time between zero and `min(max_delay, base_delay * 2^(retry-1))`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let ceiling = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(20))
            .min(self.max_delay);
        if ceiling.is_zero() {
            return ceiling;
        }
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rand::rng().random_range(0..=nanos))
    }
}

/// The provider's wait hint: `retry-after-ms` (OpenAI), else `Retry-After` as seconds or as
/// an HTTP date (RFC 9110 §10.2.3). A date in the past means no wait.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(86_400.0)));
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs.min(86_400)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(name: &'static str, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn parses_seconds_dates_and_ms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(&headers("retry-after", "7"), now),
            Some(Duration::from_secs(7))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            retry_after(&headers("retry-after", &later), now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(
            retry_after(&headers("retry-after", &earlier), now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after(&headers("retry-after-ms", "1500"), now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(retry_after(&headers("retry-after", "soon"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn full_jitter_stays_under_the_ceiling() {
        let p = RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            max_retry_after: Duration::from_secs(5),
        };
        for _ in 0..200 {
            assert!(p.delay(1, None) <= Duration::from_millis(100));
            assert!(p.delay(2, None) <= Duration::from_millis(200));
            assert!(p.delay(9, None) <= Duration::from_millis(300));
        }
        // Jitter spreads the waits: 200 draws are not all equal.
        let draws: std::collections::BTreeSet<_> = (0..200).map(|_| p.delay(3, None)).collect();
        assert!(draws.len() > 100);
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(600))),
            Duration::from_secs(5)
        );
    }
}
