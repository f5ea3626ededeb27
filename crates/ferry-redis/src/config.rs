//! How to reach Redis: the URL, the key prefix and the time limits.

use std::fmt;
use std::time::Duration;

/// Default time limit of one Redis operation: 2 seconds.
pub const DEFAULT_OP_TIMEOUT: Duration = Duration::from_secs(2);

/// Default number of change events held for publishing while Redis is unreachable: 1024.
pub const DEFAULT_BUFFER: usize = 1024;

/// Default key prefix: `ferry:`.
pub const DEFAULT_PREFIX: &str = "ferry:";

/// Where Redis is and how to use it.
///
/// The URL follows the `redis` crate's scheme:
///
/// - `redis://127.0.0.1:6379/0`: plain TCP, database 0;
/// - `redis://:PASSWORD@host:6379` or `redis://USER:PASSWORD@host:6379`: `AUTH` (ACL user);
/// - `rediss://host:6380`: TLS, the server's certificate checked against the system's
///   roots (`rediss://host:6380/#insecure` skips the check; for tests only);
/// - `redis+unix:///run/redis.sock`: a Unix socket.
///
/// `Debug` output never shows the password.
///
/// ```
/// use std::time::Duration;
/// use ferry_redis::RedisConfig;
///
/// let config = RedisConfig::new("redis://:s3cret@127.0.0.1:6379/0")
///     .key_prefix("notes-app:")
///     .op_timeout(Duration::from_millis(500));
/// assert!(!format!("{config:?}").contains("s3cret"));
/// ```
#[derive(Clone)]
pub struct RedisConfig {
    pub(crate) url: String,
    pub(crate) prefix: String,
    pub(crate) op_timeout: Duration,
    pub(crate) buffer: usize,
}

impl RedisConfig {
    /// Redis at `url`, with the default prefix ([`DEFAULT_PREFIX`]), time limit
    /// ([`DEFAULT_OP_TIMEOUT`]) and buffer ([`DEFAULT_BUFFER`]).
    pub fn new(url: impl Into<String>) -> Self {
        RedisConfig {
            url: url.into(),
            prefix: DEFAULT_PREFIX.to_owned(),
            op_timeout: DEFAULT_OP_TIMEOUT,
            buffer: DEFAULT_BUFFER,
        }
    }

    /// The prefix of every key and channel name. Instances of one deployment share it;
    /// separate deployments on one Redis use different ones.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The time limit of every operation (a command, a connection attempt, a
    /// subscription); past it the operation fails.
    pub fn op_timeout(mut self, timeout: Duration) -> Self {
        self.op_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How many change events are held for publishing while Redis is unreachable
    /// (the oldest are dropped beyond it).
    pub fn buffer(mut self, events: usize) -> Self {
        self.buffer = events.max(1);
        self
    }

    /// The URL with its password replaced by `***`, for logs.
    pub fn redacted_url(&self) -> String {
        redact(&self.url)
    }
}

fn redact(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "<unparsable URL>".to_owned(),
    }
}

impl fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisConfig")
            .field("url", &self.redacted_url())
            .field("prefix", &self.prefix)
            .field("op_timeout", &self.op_timeout)
            .field("buffer", &self.buffer)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        let c = RedisConfig::new("rediss://app:hunter2@cache.example:6380/1");
        let shown = format!("{c:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("app:***@cache.example:6380/1"), "{shown}");
        assert_eq!(
            RedisConfig::new("not a url").redacted_url(),
            "<unparsable URL>"
        );
    }
}
