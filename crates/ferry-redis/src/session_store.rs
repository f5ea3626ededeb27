//! 2025-11-25 sessions in Redis: one string per session, under a hash of its id, expiring
//! after the session idle timeout.

use std::time::Duration;

use ferry_server::{
    MAX_SESSION_RECORD_BYTES, SessionKey, SessionStore, SessionStoreError, check_record_size,
};
use futures::future::BoxFuture;

use crate::{Redis, RedisError};

/// The [`SessionStore`] in Redis: 2025-11-25 sessions opened on one instance are served by
/// every other.
///
/// Each session is a string `<prefix>session:<SHA-256 of the id, hex>` holding the
/// server's record of it (negotiated version, client capabilities and info, principal,
/// log level, subscriptions; JSON, at most [`MAX_SESSION_RECORD_BYTES`]), with a TTL of
/// the session idle timeout: `SET .. PX` at `initialize`, `SET .. XX PX` for a change
/// (never bringing back a deleted session), `GETEX .. PX` for the bounded-rate check
/// that extends it, `DEL` for `DELETE`. A dump of Redis holds no usable session id.
///
/// Every command has the time limit of [`RedisConfig::op_timeout`](crate::RedisConfig::op_timeout).
/// While Redis is unreachable, sessions held by an instance keep working there, a request
/// naming one it does not hold gets HTTP 503 (the session may exist), and `initialize`
/// opens sessions served by that instance only (written once Redis is back).
///
/// Make one with [`Redis::session_store`].
#[derive(Clone, Debug)]
pub struct RedisSessionStore {
    redis: Redis,
}

impl RedisSessionStore {
    pub(crate) fn new(redis: Redis) -> Self {
        RedisSessionStore { redis }
    }

    fn key(&self, key: &SessionKey) -> String {
        self.redis.key(&format!("session:{}", key.as_str()))
    }
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn storage(e: RedisError) -> SessionStoreError {
    SessionStoreError::storage(e)
}

/// A record read back, refused when over the bound.
fn read_back(value: Option<Vec<u8>>) -> Result<Option<Vec<u8>>, SessionStoreError> {
    match value {
        Some(v) if v.len() > MAX_SESSION_RECORD_BYTES => Err(SessionStoreError::storage(
            RedisError::Corrupt(format!("a session record of {} bytes", v.len())),
        )),
        v => Ok(v),
    }
}

impl SessionStore for RedisSessionStore {
    fn save<'a>(
        &'a self,
        key: &'a SessionKey,
        record: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            check_record_size(record)?;
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.key(key))
                .arg(record)
                .arg("PX")
                .arg(millis(ttl));
            let _: Option<String> = self.redis.query(&cmd).await.map_err(storage)?;
            Ok(())
        })
    }

    fn update<'a>(
        &'a self,
        key: &'a SessionKey,
        record: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, SessionStoreError>> {
        Box::pin(async move {
            check_record_size(record)?;
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.key(key))
                .arg(record)
                .arg("XX")
                .arg("PX")
                .arg(millis(ttl));
            let reply: Option<String> = self.redis.query(&cmd).await.map_err(storage)?;
            Ok(reply.is_some())
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, SessionStoreError>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("GET");
            cmd.arg(self.key(key));
            read_back(self.redis.query(&cmd).await.map_err(storage)?)
        })
    }

    fn touch<'a>(
        &'a self,
        key: &'a SessionKey,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, SessionStoreError>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("GETEX");
            cmd.arg(self.key(key)).arg("PX").arg(millis(ttl));
            read_back(self.redis.query(&cmd).await.map_err(storage)?)
        })
    }

    fn remove<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<bool, SessionStoreError>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("DEL");
            cmd.arg(self.key(key));
            let removed: u64 = self.redis.query(&cmd).await.map_err(storage)?;
            Ok(removed > 0)
        })
    }
}
