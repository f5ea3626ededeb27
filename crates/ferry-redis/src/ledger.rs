//! The replay ledger in Redis: one `SET NX PXAT` per redemption.

use std::time::Duration;

use ferry_state::{DEFAULT_RETENTION_MARGIN, LedgerError, MAX_JTI_LEN, Redemption, ReplayLedger};
use futures::future::BoxFuture;

use crate::Redis;

/// Single-use redemption shared by every instance on one Redis: a `requestState`
/// redeemed on one instance is refused on all.
///
/// Each redemption is `SET <prefix>ledger:<jti> 1 NX PXAT <expires_at_ms + margin>`: `OK`
/// is the first redemption, a nil reply a replay. Records expire on their own. When
/// Redis does not answer within the time limit the redemption fails with a
/// [`LedgerError`], and the server refuses the request (fail closed).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use ferry_redis::{Redis, RedisConfig};
/// use ferry_state::{Redemption, ReplayLedger};
///
/// let redis = Redis::connect(RedisConfig::new("redis://127.0.0.1:6379")).await?;
/// let ledger = redis.ledger();
/// let expires = 4_102_444_800_000; // 2100-01-01
/// assert_eq!(ledger.redeem("jti-1", expires).await?, Redemption::First);
/// assert_eq!(ledger.redeem("jti-1", expires).await?, Redemption::Replayed);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct RedisLedger {
    redis: Redis,
    margin: Duration,
}

impl RedisLedger {
    pub(crate) fn new(redis: Redis) -> Self {
        RedisLedger {
            redis,
            margin: DEFAULT_RETENTION_MARGIN,
        }
    }

    /// How long a record is kept past its token's expiry (default
    /// [`DEFAULT_RETENTION_MARGIN`]), for clock differences between instances.
    pub fn retention_margin(mut self, margin: Duration) -> Self {
        self.margin = margin;
        self
    }
}

impl ReplayLedger for RedisLedger {
    fn redeem<'a>(
        &'a self,
        jti: &'a str,
        expires_at_ms: u64,
    ) -> BoxFuture<'a, Result<Redemption, LedgerError>> {
        Box::pin(async move {
            if jti.is_empty() || jti.len() > MAX_JTI_LEN {
                return Err(LedgerError::InvalidId);
            }
            let keep_until = expires_at_ms
                .saturating_add(u64::try_from(self.margin.as_millis()).unwrap_or(u64::MAX));
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.redis.key(&format!("ledger:{jti}")))
                .arg(1)
                .arg("NX")
                .arg("PXAT")
                .arg(keep_until);
            let reply: Option<String> =
                self.redis.query(&cmd).await.map_err(LedgerError::storage)?;
            Ok(match reply {
                Some(_) => Redemption::First,
                None => Redemption::Replayed,
            })
        })
    }
}
