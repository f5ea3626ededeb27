//! Client-side rate limits: requests per minute and tokens per minute (GCRA, `governor`).
//!
//! A call's token cost is not known until the provider answers, so each attempt is charged
//! an estimate (the request's `maxTokens` plus the prompt's size, [`estimate_tokens`]) and
//! the difference from the usage the provider reports is carried into the next charge.

use std::num::NonZeroU32;
use std::time::Duration;

use ferry_protocol::content::{ContentBlock, SamplingMessageContentBlock};
use ferry_protocol::sampling::CreateMessageRequestParams;
use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::error::{LlmError, RateLimitScope};

/// Tokens an image or audio block is charged in the estimate, whatever its size.
pub const MEDIA_TOKEN_ESTIMATE: u64 = 1_000;

/// Limits on how fast this process calls the provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimits {
    /// Requests per minute (every attempt counts), or `None` for no limit.
    pub requests_per_minute: Option<NonZeroU32>,
    /// Tokens per minute (estimated, then corrected by reported usage), or `None`.
    pub tokens_per_minute: Option<NonZeroU32>,
    /// The longest a call waits for room; a call that would wait longer (or past its
    /// deadline) fails at once with a client-side [`LlmError::RateLimited`].
    pub max_wait: Duration,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            requests_per_minute: None,
            tokens_per_minute: None,
            max_wait: Duration::from_secs(30),
        }
    }
}

/// Governor's clock on tokio's time, so limits follow a paused test clock too.
#[derive(Clone, Debug)]
struct TokioClock {
    origin: Instant,
}

impl Clock for TokioClock {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        Nanos::from(self.origin.elapsed())
    }
}

type Limiter = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<Nanos>>;

/// The limiters of one provider.
#[derive(Debug)]
pub(crate) struct Limits {
    clock: TokioClock,
    requests: Option<Limiter>,
    tokens: Option<(Limiter, u32)>,
    /// Tokens to add to (or, negative, take off) the next charge.
    carry: Mutex<i64>,
    max_wait: Duration,
}

impl Limits {
    pub(crate) fn new(config: &RateLimits) -> Self {
        let clock = TokioClock {
            origin: Instant::now(),
        };
        let make = |n: NonZeroU32| Limiter::direct_with_clock(Quota::per_minute(n), clock.clone());
        Limits {
            requests: config.requests_per_minute.map(make),
            tokens: config.tokens_per_minute.map(|n| (make(n), n.get())),
            carry: Mutex::new(0),
            max_wait: config.max_wait,
            clock,
        }
    }

    /// Waits for room for one request costing `estimate` tokens, and returns the tokens
    /// charged. Fails without waiting when room would come after `deadline` or `max_wait`.
    pub(crate) async fn acquire(
        &self,
        estimate: u64,
        deadline: Option<Instant>,
    ) -> Result<u64, LlmError> {
        let start = Instant::now();
        let mut limit = start + self.max_wait;
        if let Some(d) = deadline {
            limit = limit.min(d);
        }
        if let Some(requests) = &self.requests {
            self.wait_for(|| requests.check().map_err(Some), limit)
                .await?;
        }
        let Some((tokens, burst)) = &self.tokens else {
            return Ok(estimate);
        };
        let charge = {
            let mut carry = self.carry.lock();
            let wanted = i64::try_from(estimate)
                .unwrap_or(i64::MAX)
                .saturating_add(*carry);
            let charge = wanted.clamp(1, i64::from(*burst));
            *carry = wanted - charge;
            charge
        };
        let n = NonZeroU32::new(u32::try_from(charge).unwrap_or(*burst)).unwrap_or(NonZeroU32::MIN);
        let result = self
            .wait_for(
                || match tokens.check_n(n) {
                    Ok(r) => r.map_err(Some),
                    Err(_) => Err(None),
                },
                limit,
            )
            .await;
        if result.is_err() {
            self.settle(charge as u64, 0);
        }
        result.map(|()| charge as u64)
    }

    /// Corrects the charge of an attempt by what it really cost.
    pub(crate) fn settle(&self, charged: u64, actual: u64) {
        if self.tokens.is_none() {
            return;
        }
        let diff = i64::try_from(actual)
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(charged).unwrap_or(i64::MAX));
        let mut carry = self.carry.lock();
        *carry = carry.saturating_add(diff);
    }

    async fn wait_for(
        &self,
        mut check: impl FnMut() -> Result<(), Option<governor::NotUntil<Nanos>>>,
        limit: Instant,
    ) -> Result<(), LlmError> {
        loop {
            let wait = match check() {
                Ok(()) => return Ok(()),
                Err(Some(not_until)) => not_until.wait_time_from(self.clock.now()),
                Err(None) => {
                    return Err(LlmError::RateLimited {
                        scope: RateLimitScope::Client,
                        retry_after: None,
                    });
                }
            };
            let now = Instant::now();
            if now + wait > limit {
                return Err(LlmError::RateLimited {
                    scope: RateLimitScope::Client,
                    retry_after: Some(wait),
                });
            }
            tracing::debug!(wait_ms = wait.as_millis() as u64, "client-side rate limit");
            tokio::time::sleep(wait).await;
        }
    }
}

/// The tokens a request is charged before its usage is known: `maxTokens`, plus a quarter
/// of the prompt's characters (system prompt, text, tool definitions and results), plus
/// [`MEDIA_TOKEN_ESTIMATE`] per image or audio block, plus 4 per message.
pub fn estimate_tokens(params: &CreateMessageRequestParams) -> u64 {
    let mut chars = params.system_prompt.as_deref().map_or(0, str::len) as u64;
    let mut media = 0u64;
    let mut messages = params.messages.len() as u64 + u64::from(params.system_prompt.is_some());
    for message in &params.messages {
        for block in message.content.blocks() {
            match block {
                SamplingMessageContentBlock::Text(t) => chars += t.text.len() as u64,
                SamplingMessageContentBlock::Image(_) | SamplingMessageContentBlock::Audio(_) => {
                    media += 1
                }
                SamplingMessageContentBlock::ToolUse(u) => {
                    chars += (u.name.len() + json_len(&u.input)) as u64
                }
                SamplingMessageContentBlock::ToolResult(r) => {
                    messages += 1;
                    for c in &r.content {
                        match c {
                            ContentBlock::Text(t) => chars += t.text.len() as u64,
                            ContentBlock::Image(_) | ContentBlock::Audio(_) => media += 1,
                            other => chars += json_len(other) as u64,
                        }
                    }
                    if let Some(s) = &r.structured_content {
                        chars += json_len(s) as u64;
                    }
                }
            }
        }
    }
    for tool in params.tools.iter().flatten() {
        chars += (tool.name.len()
            + tool.description.as_deref().map_or(0, str::len)
            + json_len(&tool.input_schema)) as u64;
    }
    params
        .max_tokens
        .saturating_add(chars.div_ceil(4))
        .saturating_add(media.saturating_mul(MEDIA_TOKEN_ESTIMATE))
        .saturating_add(messages.saturating_mul(4))
}

fn json_len(v: &impl serde::Serialize) -> usize {
    serde_json::to_vec(v).map_or(0, |b| b.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_protocol::sampling::SamplingMessage;

    #[test]
    fn estimate_counts_prompt_and_max_tokens() {
        let p = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("abcdefgh")], 100)
            .with_system_prompt("abcd");
        // 100 + ceil(12 / 4) + 2 messages * 4
        assert_eq!(estimate_tokens(&p), 111);
    }

    #[tokio::test(start_paused = true)]
    async fn requests_per_minute_wait_then_refuse() {
        let limits = Limits::new(&RateLimits {
            requests_per_minute: NonZeroU32::new(2),
            tokens_per_minute: None,
            max_wait: Duration::from_secs(45),
        });
        let t0 = Instant::now();
        limits.acquire(1, None).await.unwrap();
        limits.acquire(1, None).await.unwrap();
        assert_eq!(t0.elapsed(), Duration::ZERO);
        // The third request waits for a cell: 30 s at 2 per minute.
        limits.acquire(1, None).await.unwrap();
        assert_eq!(t0.elapsed(), Duration::from_secs(30));
        // The fourth would have to wait 30 s more, past this deadline: refused at once.
        let err = limits
            .acquire(1, Some(Instant::now() + Duration::from_secs(10)))
            .await
            .unwrap_err();
        assert!(matches!(
            err,
            LlmError::RateLimited {
                scope: RateLimitScope::Client,
                retry_after: Some(_)
            }
        ));
        assert_eq!(t0.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_per_minute_corrected_by_usage() {
        let limits = Limits::new(&RateLimits {
            requests_per_minute: None,
            tokens_per_minute: NonZeroU32::new(1_000),
            max_wait: Duration::from_secs(120),
        });
        let t0 = Instant::now();
        let charged = limits.acquire(600, None).await.unwrap();
        assert_eq!(charged, 600);
        // The answer cost only 100: 500 come back as credit on the next charge.
        limits.settle(charged, 100);
        let charged = limits.acquire(800, None).await.unwrap();
        assert_eq!(charged, 300);
        assert_eq!(t0.elapsed(), Duration::ZERO);
        // 900 of 1000 used; another 400 needs 300 tokens to replenish: 18 s at 1000/min.
        limits.acquire(400, None).await.unwrap();
        assert_eq!(t0.elapsed(), Duration::from_secs(18));
        // A charge larger than the whole budget is clamped to it (waits a full minute).
        let charged = limits.acquire(5_000, None).await.unwrap();
        assert_eq!(charged, 1_000);
    }
}
