//! Rate limits per principal (`governor`): each principal (anonymous requests share one
//! key) may send so many requests per second to the gateway, with bursts of as many, and
//! start so many calls per second of any one tool.

use std::num::NonZeroU32;

use ferry_protocol::{ErrorCode, ErrorObject};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// The error code of a rate-limited request (JSON-RPC's implementation-defined range).
pub const RATE_LIMITED: ErrorCode = ErrorCode(-32000);

/// Principals the limiter remembers before forgetting those that are back to full.
const MAX_TRACKED: usize = 100_000;

/// A rate limit per principal.
pub(crate) struct PrincipalLimit {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
    per_second: u32,
}

impl PrincipalLimit {
    /// `per_second` requests a second per principal; `None` for 0 (no limit).
    pub(crate) fn new(per_second: u32) -> Option<Self> {
        let n = NonZeroU32::new(per_second)?;
        Some(PrincipalLimit {
            limiter: RateLimiter::keyed(Quota::per_second(n)),
            clock: DefaultClock::default(),
            per_second,
        })
    }

    /// Admits one request of `principal`, or says when to come back.
    pub(crate) fn check(&self, principal: Option<&str>) -> Result<(), ErrorObject> {
        let key = principal.unwrap_or_default().to_owned();
        self.check_key(key, || {
            format!(
                "Rate limited: at most {} requests a second per user",
                self.per_second
            )
        })
    }

    /// Admits one new call of `tool` by `principal`, or says when to come back.
    pub(crate) fn check_tool(
        &self,
        principal: Option<&str>,
        tool: &str,
    ) -> Result<(), ErrorObject> {
        // A NUL cannot appear in a principal id from a token, so keys never collide.
        let key = format!("{}\0{tool}", principal.unwrap_or_default());
        self.check_key(key, || {
            format!(
                "Rate limited: at most {} calls a second of {tool} per user",
                self.per_second
            )
        })
    }

    fn check_key(&self, key: String, message: impl FnOnce() -> String) -> Result<(), ErrorObject> {
        if self.limiter.len() > MAX_TRACKED {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            ErrorObject::new(RATE_LIMITED, message()).with_data(serde_json::json!({
                "retryAfterMs": u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1)
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_principal_has_its_own_budget() {
        let limit = PrincipalLimit::new(2).unwrap();
        assert!(limit.check(Some("alice")).is_ok());
        assert!(limit.check(Some("alice")).is_ok());
        let refused = limit.check(Some("alice")).unwrap_err();
        assert_eq!(refused.code, RATE_LIMITED);
        assert!(refused.data.unwrap()["retryAfterMs"].as_u64().unwrap() >= 1);
        assert!(limit.check(Some("bob")).is_ok());
        assert!(limit.check(None).is_ok());
        assert!(PrincipalLimit::new(0).is_none());
    }

    #[test]
    fn each_principal_has_its_own_budget_per_tool() {
        let limit = PrincipalLimit::new(1).unwrap();
        assert!(limit.check_tool(Some("alice"), "delete").is_ok());
        let refused = limit.check_tool(Some("alice"), "delete").unwrap_err();
        assert_eq!(refused.code, RATE_LIMITED);
        assert!(
            refused.message.contains("calls a second of delete"),
            "{}",
            refused.message
        );
        assert!(limit.check_tool(Some("alice"), "echo").is_ok());
        assert!(limit.check_tool(Some("bob"), "delete").is_ok());
    }
}
