//! Redis backends for Ferry MCP servers that run as many stateless instances behind a
//! load balancer.
//!
//! One [`Redis`] handle (a connection manager plus one pub/sub connection, both
//! reconnecting on their own) gives every piece an instance shares with the others:
//!
//! - [`RedisLedger`]: the [`ReplayLedger`](ferry_state::ReplayLedger), so a single-use
//!   `requestState` redeemed on one instance is refused on every other
//!   (`SET <prefix>ledger:<jti> 1 NX PXAT <expiry>`);
//! - [`RedisChangeBus`]: the [`ChangeBus`](ferry_server::ChangeBus), so a change raised on
//!   one instance reaches the `subscriptions/listen` streams of all;
//! - [`RedisTaskStore`] and [`RedisTaskBus`]: the [`TaskStore`](ferry_server::TaskStore) and
//!   [`TaskBus`](ferry_server::TaskBus) of the Tasks extension;
//! - [`RedisSessionStore`]: the [`SessionStore`](ferry_server::SessionStore) of
//!   2025-11-25 sessions, so a session opened on one instance is served by every other
//!   (`<prefix>session:<hash of the id>`, expiring with the session);
//! - [`RedisRateLimiter`]: a rate limit per key counted in Redis (GCRA in one Lua script,
//!   `<prefix>rl:<name>:<key>`), so every instance enforces one budget;
//! - [`Redis::is_ready`] and [`Redis::readiness_probe`], for a readiness endpoint.
//!
//! Every operation has a time limit ([`RedisConfig::op_timeout`]). When Redis cannot be
//! reached, what needs it fails closed: a single-use state is refused with an error, a
//! task is not created, a rate limit cannot be checked (and its caller refuses the
//! request); nothing is taken as done that was not written.
//!
//! ```no_run
//! use std::sync::Arc;
//! use ferry_redis::{Redis, RedisConfig};
//! use ferry_server::Server;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let redis = Redis::connect(RedisConfig::new("redis://127.0.0.1:6379")).await?;
//! let server = Server::builder("notes", "1.0.0")
//!     .enable_resources()
//!     .replay_ledger(Arc::new(redis.ledger()))
//!     .change_bus(Arc::new(redis.change_bus().await))
//!     .task_store(Arc::new(redis.task_store()))
//!     .task_bus(Arc::new(redis.task_bus()))
//!     .session_store(Arc::new(redis.session_store()))
//!     .build()?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod change_bus;
mod config;
mod ledger;
mod rate_limit;
mod session_store;
mod subscriber;
mod task_bus;
mod task_store;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio_util::sync::{CancellationToken, DropGuard};

pub use change_bus::RedisChangeBus;
pub use config::{DEFAULT_BUFFER, DEFAULT_OP_TIMEOUT, DEFAULT_PREFIX, RedisConfig};
pub use ledger::RedisLedger;
pub use rate_limit::{Admission, RedisRateLimiter};
pub use session_store::RedisSessionStore;
pub use task_bus::RedisTaskBus;
pub use task_store::RedisTaskStore;

/// The `redis` crate, for code that keeps its own data next to Ferry's
/// (see [`Redis::connection`]).
pub use redis;

use subscriber::Subscriber;

/// Redis could not be reached or did not answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RedisError {
    /// The URL could not be used (the URL itself is not repeated: it may hold a password).
    #[error("invalid Redis URL: {0}")]
    InvalidUrl(String),
    /// The operation took longer than the configured time limit.
    #[error("Redis did not answer within {0:?}")]
    Timeout(Duration),
    /// Redis answered with an error, or the connection failed.
    #[error("Redis failed: {0}")]
    Redis(Arc<redis::RedisError>),
    /// A stored value could not be read back.
    #[error("unreadable value in Redis: {0}")]
    Corrupt(String),
}

impl From<redis::RedisError> for RedisError {
    fn from(e: redis::RedisError) -> Self {
        RedisError::Redis(Arc::new(e))
    }
}

/// A readiness check: resolves to `true` while the backend works.
pub type ReadinessProbe = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = bool> + Send>> + Send + Sync>;

/// A connection to Redis shared by every backend of one server instance. Cheap to clone.
#[derive(Clone)]
pub struct Redis {
    inner: Arc<Inner>,
}

struct Inner {
    config: RedisConfig,
    conn: ConnectionManager,
    subscriber: Subscriber,
    _stop: DropGuard,
}

impl Redis {
    /// Connects, and checks that Redis answers `PING` within the time limit (and waits,
    /// as long again at most, for the pub/sub connection).
    ///
    /// Once connected, the handle reconnects on its own after Redis goes away; operations
    /// fail (within the time limit) until it is back.
    pub async fn connect(config: RedisConfig) -> Result<Redis, RedisError> {
        let client = redis::Client::open(config.url.as_str())
            .map_err(|e| RedisError::InvalidUrl(e.to_string()))?;
        let limit = config.op_timeout;
        let manager_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(limit))
            .set_response_timeout(Some(limit))
            .set_number_of_retries(1)
            .set_max_delay(limit);
        let conn = within(
            limit,
            ConnectionManager::new_with_config(client.clone(), manager_config),
        )
        .await??;
        let stop = CancellationToken::new();
        let subscriber = Subscriber::start(client, limit, stop.clone());
        let redis = Redis {
            inner: Arc::new(Inner {
                config,
                conn,
                subscriber,
                _stop: stop.drop_guard(),
            }),
        };
        redis.ping().await?;
        // The pub/sub connection comes up beside it.
        let deadline = tokio::time::Instant::now() + limit;
        while !redis.inner.subscriber.is_connected() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tracing::info!(url = %redis.inner.config.redacted_url(), "connected to Redis");
        Ok(redis)
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &RedisConfig {
        &self.inner.config
    }

    /// A replay ledger in this Redis.
    pub fn ledger(&self) -> RedisLedger {
        RedisLedger::new(self.clone())
    }

    /// A rate limit of `per_second` requests a second per key (bursts of as many),
    /// counted in this Redis under `<prefix>rl:<name>:`; `name` tells limits apart.
    pub fn rate_limiter(&self, name: &str, per_second: std::num::NonZeroU32) -> RedisRateLimiter {
        RedisRateLimiter::new(self.clone(), name, per_second)
    }

    /// A change bus over this Redis's pub/sub (channel `<prefix>changes`). Waits (within
    /// the time limit) until its subscription is in place, so events raised elsewhere
    /// from then on are heard; if Redis is unreachable it starts anyway and subscribes
    /// once Redis is back.
    pub async fn change_bus(&self) -> RedisChangeBus {
        RedisChangeBus::start(self.clone()).await
    }

    /// A task store in this Redis.
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore::new(self.clone())
    }

    /// A store of 2025-11-25 sessions in this Redis, so any instance serves a session
    /// another opened.
    pub fn session_store(&self) -> RedisSessionStore {
        RedisSessionStore::new(self.clone())
    }

    /// A task bus over this Redis's pub/sub (one channel per task).
    pub fn task_bus(&self) -> RedisTaskBus {
        RedisTaskBus::new(self.clone())
    }

    /// Whether Redis answers `PING` within the time limit and the pub/sub connection is
    /// up. While `false`, single-use tools fail closed and events from other instances
    /// are not heard: take the instance out of rotation.
    pub async fn is_ready(&self) -> bool {
        self.inner.subscriber.is_connected() && self.ping().await.is_ok()
    }

    /// [`Redis::is_ready`] as a function, for a readiness endpoint.
    ///
    /// ```no_run
    /// # async fn run(redis: ferry_redis::Redis) {
    /// let probe = redis.readiness_probe();
    /// let ready: bool = probe().await;
    /// # }
    /// ```
    pub fn readiness_probe(&self) -> ReadinessProbe {
        let redis = self.clone();
        Arc::new(move || {
            let redis = redis.clone();
            Box::pin(async move { redis.is_ready().await })
        })
    }

    /// A connection for commands of your own (it reconnects by itself). Wrap each call
    /// in a time limit, as Ferry's backends do with [`Redis::query`].
    pub fn connection(&self) -> ConnectionManager {
        self.inner.conn.clone()
    }

    /// `suffix` under this configuration's key prefix.
    pub fn key(&self, suffix: &str) -> String {
        let mut k = String::with_capacity(self.inner.config.prefix.len() + suffix.len());
        k.push_str(&self.inner.config.prefix);
        k.push_str(suffix);
        k
    }

    /// Runs `cmd` within the time limit.
    pub async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, RedisError> {
        let mut conn = self.inner.conn.clone();
        Ok(within(self.inner.config.op_timeout, cmd.query_async(&mut conn)).await??)
    }

    /// Runs `script` within the time limit.
    pub(crate) async fn run_script<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, RedisError> {
        let mut conn = self.inner.conn.clone();
        Ok(within(
            self.inner.config.op_timeout,
            invocation.invoke_async(&mut conn),
        )
        .await??)
    }

    async fn ping(&self) -> Result<(), RedisError> {
        let _: String = self.query(&redis::cmd("PING")).await?;
        Ok(())
    }

    pub(crate) fn subscriber(&self) -> &Subscriber {
        &self.inner.subscriber
    }
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// `future`, or [`RedisError::Timeout`] past `limit`.
pub(crate) async fn within<T>(
    limit: Duration,
    future: impl Future<Output = T>,
) -> Result<T, RedisError> {
    tokio::time::timeout(limit, future)
        .await
        .map_err(|_| RedisError::Timeout(limit))
}

/// 16 random bytes, hex: instance ids.
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // A clock-based id still tells instances apart in practice.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        bytes = nanos.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
