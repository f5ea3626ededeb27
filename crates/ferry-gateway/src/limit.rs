//! Rate limits per principal: each principal (anonymous requests share one key) may send
//! so many requests per second to the gateway, with bursts of as many, and start so many
//! calls per second of any one tool.
//!
//! They are counted in memory (`governor`), or, with Redis configured, in Redis
//! ([`RedisRateLimiter`], the same algorithm), so that every instance on it enforces one
//! budget. A limit that Redis cannot check refuses the request (503), never admits it.

use std::num::NonZeroU32;

use ferry_protocol::ErrorObject;
use ferry_redis::{Admission, Redis, RedisRateLimiter};
use ferry_server::ForwardError;
use ferry_server::transport::Refusal;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// The error code of a rate-limited request (JSON-RPC's implementation-defined range);
/// ferry-server's [`RATE_LIMITED`](ferry_server::RATE_LIMITED), kept at this path.
pub use ferry_server::RATE_LIMITED;

/// Principals the in-memory limiter remembers before forgetting those back to full.
const MAX_TRACKED: usize = 100_000;

/// Where a limit is counted.
enum Backend {
    /// In this process: each instance has a budget of its own.
    Memory {
        limiter: DefaultKeyedRateLimiter<String>,
        clock: DefaultClock,
    },
    /// In Redis: one budget for every instance on it.
    Redis(RedisRateLimiter),
}

/// Why a limit did not admit a request.
pub(crate) enum Denied {
    /// Over the limit: 429 with `Retry-After`.
    Limited(ForwardError),
    /// The limit could not be checked (Redis unreachable or slow): 503.
    Unchecked(ForwardError),
}

impl Denied {
    /// Whether the request was over its limit (rather than unchecked).
    pub(crate) fn is_limited(&self) -> bool {
        matches!(self, Denied::Limited(_))
    }
}

impl From<Denied> for ForwardError {
    fn from(d: Denied) -> Self {
        match d {
            Denied::Limited(e) | Denied::Unchecked(e) => e,
        }
    }
}

/// A rate limit per principal (or per principal and tool).
pub(crate) struct PrincipalLimit {
    backend: Backend,
    per_second: u32,
}

impl PrincipalLimit {
    /// `per_second` requests a second per key, counted in memory; `None` for 0 (no
    /// limit).
    pub(crate) fn memory(per_second: u32) -> Option<Self> {
        let n = NonZeroU32::new(per_second)?;
        Some(PrincipalLimit {
            backend: Backend::Memory {
                limiter: RateLimiter::keyed(Quota::per_second(n)),
                clock: DefaultClock::default(),
            },
            per_second,
        })
    }

    /// `per_second` requests a second per key, counted in `redis` under `name`; `None`
    /// for 0 (no limit).
    pub(crate) fn redis(redis: &Redis, name: &str, per_second: u32) -> Option<Self> {
        let n = NonZeroU32::new(per_second)?;
        Some(PrincipalLimit {
            backend: Backend::Redis(redis.rate_limiter(name, n)),
            per_second,
        })
    }

    /// Admits one request of `principal`, or says why not.
    pub(crate) async fn check(&self, principal: Option<&str>) -> Result<(), Denied> {
        let key = principal.unwrap_or_default();
        self.check_key(key, || {
            format!(
                "Rate limited: at most {} requests a second per user",
                self.per_second
            )
        })
        .await
    }

    /// Admits one new call of `tool` by `principal`, or says why not.
    pub(crate) async fn check_tool(
        &self,
        principal: Option<&str>,
        tool: &str,
    ) -> Result<(), Denied> {
        // A NUL cannot appear in a principal id from a token, so keys never collide.
        let key = format!("{}\0{tool}", principal.unwrap_or_default());
        self.check_key(&key, || {
            format!(
                "Rate limited: at most {} calls a second of {tool} per user",
                self.per_second
            )
        })
        .await
    }

    async fn check_key(&self, key: &str, message: impl FnOnce() -> String) -> Result<(), Denied> {
        let retry_after = match &self.backend {
            Backend::Memory { limiter, clock } => {
                if limiter.len() > MAX_TRACKED {
                    limiter.retain_recent();
                }
                match limiter.check_key(&key.to_owned()) {
                    Ok(()) => return Ok(()),
                    Err(not_until) => not_until.wait_time_from(clock.now()),
                }
            }
            Backend::Redis(limiter) => match limiter.check(key).await {
                Ok(Admission::Admitted) => return Ok(()),
                Ok(Admission::Limited { retry_after }) => retry_after,
                Ok(_) => return Err(unchecked()),
                Err(e) => {
                    tracing::warn!(error = %e, "the rate limit could not be checked in Redis; request refused");
                    return Err(unchecked());
                }
            },
        };
        Err(Denied::Limited(ForwardError::rate_limited(
            message(),
            retry_after,
        )))
    }
}

/// The refusal of a request whose limit could not be checked.
fn unchecked() -> Denied {
    Denied::Unchecked(ForwardError::refused(
        Refusal::Unavailable,
        ErrorObject::internal(
            "Internal error: the rate limit could not be checked (Redis is unavailable); try again later",
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(d: Denied) -> ForwardError {
        assert!(d.is_limited());
        d.into()
    }

    #[tokio::test]
    async fn each_principal_has_its_own_budget() {
        let limit = PrincipalLimit::memory(2).unwrap();
        assert!(limit.check(Some("alice")).await.is_ok());
        assert!(limit.check(Some("alice")).await.is_ok());
        let refused = limited(limit.check(Some("alice")).await.unwrap_err());
        assert_eq!(refused.error.code, RATE_LIMITED);
        assert!(
            refused.error.data.unwrap()["retryAfterMs"]
                .as_u64()
                .unwrap()
                >= 1
        );
        assert!(matches!(
            refused.refusal,
            Some(Refusal::RateLimited { retry_after }) if !retry_after.is_zero()
        ));
        assert!(limit.check(Some("bob")).await.is_ok());
        assert!(limit.check(None).await.is_ok());
        assert!(PrincipalLimit::memory(0).is_none());
    }

    #[tokio::test]
    async fn each_principal_has_its_own_budget_per_tool() {
        let limit = PrincipalLimit::memory(1).unwrap();
        assert!(limit.check_tool(Some("alice"), "delete").await.is_ok());
        let refused = limited(limit.check_tool(Some("alice"), "delete").await.unwrap_err());
        assert_eq!(refused.error.code, RATE_LIMITED);
        assert!(
            refused.error.message.contains("calls a second of delete"),
            "{}",
            refused.error.message
        );
        assert!(limit.check_tool(Some("alice"), "echo").await.is_ok());
        assert!(limit.check_tool(Some("bob"), "delete").await.is_ok());
    }
}
