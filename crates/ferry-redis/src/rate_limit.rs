//! Rate limits shared by every instance on one Redis: the generic cell rate algorithm
//! (GCRA) in one Lua script.

use std::num::NonZeroU32;
use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use crate::{Redis, RedisError};

/// One check of a key: reads its theoretical arrival time (TAT, in microseconds of Redis's
/// own clock), admits the request when it is no later than `burst` emission intervals
/// ahead of now, and then moves it one interval on. The key expires by itself once it
/// could no longer refuse anything (one interval times the burst).
///
/// KEYS[1]: the key; ARGV[1]: the emission interval in microseconds; ARGV[2]: the burst.
/// Returns `{1, 0}` when admitted, `{0, microseconds to wait}` when refused.
const GCRA: &str = r"
redis.replicate_commands()
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat or tat < now then
  tat = now
end
local next_tat = tat + interval
local allowed_at = next_tat - interval * burst
if now < allowed_at then
  return {0, allowed_at - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', next_tat),
  'PX', math.ceil(interval * burst / 1000))
return {1, 0}
";

static SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(GCRA));

/// Whether a request is within its rate limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admission {
    /// Within the limit: counted, go ahead.
    Admitted,
    /// Over the limit (and not counted): try again after `retry_after`.
    Limited {
        /// How long until a request of this key would be admitted.
        retry_after: Duration,
    },
}

impl Admission {
    /// Whether the request was admitted.
    pub fn is_admitted(self) -> bool {
        matches!(self, Admission::Admitted)
    }
}

/// A rate limit of so many requests a second per key (bursts of as many), counted in
/// Redis so that every instance on it enforces one budget.
///
/// It is the generic cell rate algorithm (the one the `governor` crate runs in memory)
/// as one Lua script (`EVALSHA`, falling back to `EVAL`): one key per limited key,
/// `<prefix>rl:<name>:<key>`, holding its theoretical arrival time, with an expiry of one
/// emission interval times the burst, so idle keys vanish by themselves. Time is Redis's
/// own (`TIME`), so the instances' clocks do not matter.
///
/// Every check has the handle's time limit ([`RedisConfig::op_timeout`]); when Redis
/// does not answer, [`check`](RedisRateLimiter::check) fails with a [`RedisError`] and
/// the caller should refuse the request (fail closed), never admit it.
///
/// [`RedisConfig::op_timeout`]: crate::RedisConfig::op_timeout
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::num::NonZeroU32;
/// use ferry_redis::{Admission, Redis, RedisConfig};
///
/// let redis = Redis::connect(RedisConfig::new("redis://127.0.0.1:6379")).await?;
/// let limit = redis.rate_limiter("requests", NonZeroU32::new(2).unwrap());
/// assert!(limit.check("alice").await?.is_admitted());
/// assert!(limit.check("alice").await?.is_admitted());
/// match limit.check("alice").await? {
///     Admission::Limited { retry_after } => println!("again in {retry_after:?}"),
///     _ => unreachable!("a third request within the second is over the limit"),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct RedisRateLimiter {
    redis: Redis,
    key_prefix: String,
    per_second: NonZeroU32,
    interval_us: u64,
}

impl RedisRateLimiter {
    pub(crate) fn new(redis: Redis, name: &str, per_second: NonZeroU32) -> Self {
        let key_prefix = redis.key(&format!("rl:{name}:"));
        RedisRateLimiter {
            redis,
            key_prefix,
            per_second,
            // At least a microsecond, the script's unit.
            interval_us: (1_000_000 / u64::from(per_second.get())).max(1),
        }
    }

    /// The requests a second (and the burst) it admits per key.
    pub fn per_second(&self) -> NonZeroU32 {
        self.per_second
    }

    /// Counts one request of `key` if it is within the limit.
    pub async fn check(&self, key: &str) -> Result<Admission, RedisError> {
        let mut full_key = String::with_capacity(self.key_prefix.len() + key.len());
        full_key.push_str(&self.key_prefix);
        full_key.push_str(key);
        let mut call = SCRIPT.prepare_invoke();
        call.key(full_key)
            .arg(self.interval_us)
            .arg(self.per_second.get());
        let (admitted, wait_us): (i64, i64) = self.redis.run_script(&call).await?;
        Ok(if admitted == 1 {
            Admission::Admitted
        } else {
            Admission::Limited {
                retry_after: Duration::from_micros(u64::try_from(wait_us).unwrap_or(0).max(1)),
            }
        })
    }
}
