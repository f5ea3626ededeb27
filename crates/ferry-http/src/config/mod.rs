//! Settings of the Streamable HTTP transport: one [`HttpConfig`] holds every limit, checked
//! once when it is built.

mod origins;

use std::time::Duration;

pub use origins::OriginPolicy;

/// Every setting and limit of an MCP endpoint and of the connections that carry it.
///
/// An [`McpService`](crate::McpService) is built with one and [`serve`](crate::serve)
/// reads its connection limits from the same value, so each limit is set in one place.
/// Build it with [`HttpConfig::builder`]; [`HttpConfig::default`] is a valid config with
/// every default below.
///
/// ```
/// use std::time::Duration;
/// use ferry_http::HttpConfig;
///
/// let config = HttpConfig::builder()
///     .max_body_bytes(1 << 20)
///     .idle_timeout(Duration::from_secs(30))
///     .max_connections(5_000)
///     .build()?;
/// assert_eq!(config.max_body_bytes(), 1 << 20);
/// # Ok::<(), ferry_http::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpConfig {
    origins: OriginPolicy,
    max_body_bytes: usize,
    body_timeout: Duration,
    max_head_bytes: usize,
    head_timeout: Duration,
    request_timeout: Duration,
    sse_keep_alive: Duration,
    idle_timeout: Duration,
    max_connections: Option<usize>,
    stream_buffer: usize,
    http2: bool,
    drain_grace: Duration,
    drain_timeout: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            origins: OriginPolicy::default(),
            max_body_bytes: 4 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            max_head_bytes: 64 * 1024,
            head_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(300),
            sse_keep_alive: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(60),
            max_connections: None,
            stream_buffer: 32,
            http2: false,
            drain_grace: Duration::from_secs(5),
            drain_timeout: Duration::from_secs(30),
        }
    }
}

impl HttpConfig {
    /// A builder starting from the defaults.
    pub fn builder() -> HttpConfigBuilder {
        HttpConfigBuilder {
            config: HttpConfig::default(),
        }
    }

    /// A builder starting from this config, to change some of its settings.
    pub fn to_builder(&self) -> HttpConfigBuilder {
        HttpConfigBuilder {
            config: self.clone(),
        }
    }

    /// Origin and Host checks. Default: local only ([`OriginPolicy::localhost`]).
    pub fn origins(&self) -> &OriginPolicy {
        &self.origins
    }

    /// Largest request body, in bytes (413 above). Default 4 MiB.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// How long a request body may take once its head is in (408 after). Default 30 s.
    pub fn body_timeout(&self) -> Duration {
        self.body_timeout
    }

    /// Largest request head (request line and header fields), in bytes (431 above).
    /// Default 64 KiB. Applies to connections [`serve`](crate::serve) accepts.
    pub fn max_head_bytes(&self) -> usize {
        self.max_head_bytes
    }

    /// How long a request head may take from its first byte (408 after). Default 30 s.
    pub fn head_timeout(&self) -> Duration {
        self.head_timeout
    }

    /// How long a request's handler may run before it is cancelled with an error.
    /// `subscriptions/listen` streams are not limited. Default 5 minutes.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Interval of SSE keep-alive comments on quiet streams. Default 15 s.
    pub fn sse_keep_alive(&self) -> Duration {
        self.sse_keep_alive
    }

    /// How long a connection may wait for the first byte of a request, on a new
    /// connection and between requests on a kept-alive one; it is closed after. A
    /// connection streaming a response is not idle. Default 60 s.
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// The most connections [`serve`](crate::serve) keeps open at once, if set. Unset
    /// (the default), the limit comes from the process's open-file limit when serving
    /// starts: [`default_max_connections`]. Above it, a new connection is answered `503
    /// Service Unavailable` with a JSON-RPC error and closed.
    pub fn max_connections(&self) -> Option<usize> {
        self.max_connections
    }

    /// How many notifications may wait for a slow SSE reader before the handler waits.
    /// Default 32.
    pub fn stream_buffer(&self) -> usize {
        self.stream_buffer
    }

    /// Whether [`serve`](crate::serve) also accepts HTTP/2 with prior knowledge (h2c).
    /// Off by default: MCP clients speak HTTP/1.1 to `http://` endpoints, and sniffing for
    /// HTTP/2 costs every connection a larger read buffer (HTTP/2 over TLS is negotiated
    /// by the TLS terminator in front of the server). With it, connections are served by
    /// hyper instead of Ferry's HTTP/1.1 connection.
    pub fn http2(&self) -> bool {
        self.http2
    }

    /// How long [`serve`](crate::serve) keeps accepting connections once its shutdown
    /// signal has come, with readiness already false, so that load balancers notice
    /// before the listener closes. Zero closes the listener at once. Default 5 s.
    pub fn drain_grace(&self) -> Duration {
        self.drain_grace
    }

    /// How long [`serve`](crate::serve) waits, once its listener has closed, for calls
    /// in flight to finish and their connections to close; connections still open
    /// after it are dropped. Default 30 s.
    pub fn drain_timeout(&self) -> Duration {
        self.drain_timeout
    }
}

/// Builds an [`HttpConfig`]; [`build`](HttpConfigBuilder::build) checks every value.
#[derive(Clone, Debug)]
#[must_use]
pub struct HttpConfigBuilder {
    config: HttpConfig,
}

impl HttpConfigBuilder {
    /// See [`HttpConfig::origins`].
    pub fn origins(mut self, origins: OriginPolicy) -> Self {
        self.config.origins = origins;
        self
    }

    /// See [`HttpConfig::max_body_bytes`].
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.config.max_body_bytes = bytes;
        self
    }

    /// See [`HttpConfig::body_timeout`].
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.config.body_timeout = timeout;
        self
    }

    /// See [`HttpConfig::max_head_bytes`].
    pub fn max_head_bytes(mut self, bytes: usize) -> Self {
        self.config.max_head_bytes = bytes;
        self
    }

    /// See [`HttpConfig::head_timeout`].
    pub fn head_timeout(mut self, timeout: Duration) -> Self {
        self.config.head_timeout = timeout;
        self
    }

    /// See [`HttpConfig::request_timeout`].
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// See [`HttpConfig::sse_keep_alive`].
    pub fn sse_keep_alive(mut self, interval: Duration) -> Self {
        self.config.sse_keep_alive = interval;
        self
    }

    /// See [`HttpConfig::idle_timeout`].
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.config.idle_timeout = timeout;
        self
    }

    /// See [`HttpConfig::max_connections`].
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.config.max_connections = Some(connections);
        self
    }

    /// See [`HttpConfig::stream_buffer`].
    pub fn stream_buffer(mut self, messages: usize) -> Self {
        self.config.stream_buffer = messages;
        self
    }

    /// See [`HttpConfig::http2`].
    pub fn http2(mut self, enabled: bool) -> Self {
        self.config.http2 = enabled;
        self
    }

    /// See [`HttpConfig::drain_grace`]; zero is allowed.
    pub fn drain_grace(mut self, grace: Duration) -> Self {
        self.config.drain_grace = grace;
        self
    }

    /// See [`HttpConfig::drain_timeout`].
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.config.drain_timeout = timeout;
        self
    }

    /// The config, once every value is checked: sizes, counts and durations (but the
    /// drain grace) must be above zero, durations at most [`MAX_DURATION`], the stream buffer at most
    /// [`MAX_STREAM_BUFFER`] and the connection limit at most [`MAX_CONNECTIONS`].
    pub fn build(self) -> Result<HttpConfig, ConfigError> {
        let c = &self.config;
        nonzero("max_body_bytes", c.max_body_bytes)?;
        nonzero("max_head_bytes", c.max_head_bytes)?;
        nonzero("stream_buffer", c.stream_buffer)?;
        at_most(
            "stream_buffer",
            c.stream_buffer,
            (MAX_STREAM_BUFFER, "65,536"),
        )?;
        if let Some(n) = c.max_connections {
            nonzero("max_connections", n)?;
            at_most("max_connections", n, (MAX_CONNECTIONS, "16,777,216"))?;
        }
        for (setting, d) in [
            ("body_timeout", c.body_timeout),
            ("head_timeout", c.head_timeout),
            ("request_timeout", c.request_timeout),
            ("sse_keep_alive", c.sse_keep_alive),
            ("idle_timeout", c.idle_timeout),
            ("drain_timeout", c.drain_timeout),
        ] {
            if d.is_zero() {
                return Err(ConfigError::Zero { setting });
            }
            if d > MAX_DURATION {
                return Err(ConfigError::TooLarge {
                    setting,
                    max: "365 days",
                });
            }
        }
        if c.drain_grace > MAX_DURATION {
            return Err(ConfigError::TooLarge {
                setting: "drain_grace",
                max: "365 days",
            });
        }
        Ok(self.config)
    }
}

/// The longest duration any setting takes: a year.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);
/// The largest [`HttpConfig::stream_buffer`].
pub const MAX_STREAM_BUFFER: usize = 65_536;
/// The largest [`HttpConfig::max_connections`].
pub const MAX_CONNECTIONS: usize = 16_777_216;

fn nonzero(setting: &'static str, n: usize) -> Result<(), ConfigError> {
    if n == 0 {
        return Err(ConfigError::Zero { setting });
    }
    Ok(())
}

fn at_most(
    setting: &'static str,
    n: usize,
    (max, written): (usize, &'static str),
) -> Result<(), ConfigError> {
    if n > max {
        return Err(ConfigError::TooLarge {
            setting,
            max: written,
        });
    }
    Ok(())
}

/// A setting of [`HttpConfig`] that makes no sense.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A size, count or duration of zero.
    #[error("HttpConfig: {setting} must be greater than zero")]
    Zero {
        /// The setting's name, as its builder method spells it.
        setting: &'static str,
    },
    /// A value above the largest the setting takes.
    #[error("HttpConfig: {setting} must be at most {max}")]
    TooLarge {
        /// The setting's name, as its builder method spells it.
        setting: &'static str,
        /// The largest value accepted.
        max: &'static str,
    },
}

/// The connection limit [`serve`](crate::serve) uses when [`HttpConfig::max_connections`]
/// is unset: the process's soft open-file limit (`RLIMIT_NOFILE`) less a reserve of an
/// eighth (at least 32 descriptors) for the listener, files, logs and outgoing
/// connections, so that the limit is reached before the descriptors run out. 10,000 where
/// the limit is unknown or unlimited.
pub fn default_max_connections() -> usize {
    connections_for_open_files(open_file_limit())
}

/// The connection limit for a soft open-file limit of `limit` (`None`: unknown or
/// unlimited).
fn connections_for_open_files(limit: Option<u64>) -> usize {
    const FALLBACK: usize = 10_000;
    match limit {
        Some(n) if n < MAX_CONNECTIONS as u64 => {
            let n = n as usize;
            n.saturating_sub((n / 8).max(32)).max(1)
        }
        Some(_) => MAX_CONNECTIONS,
        None => FALLBACK,
    }
}

#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_documented() {
        let c = HttpConfig::default();
        assert_eq!(c.max_body_bytes(), 4 * 1024 * 1024);
        assert_eq!(c.max_head_bytes(), 64 * 1024);
        assert_eq!(c.idle_timeout(), Duration::from_secs(60));
        assert_eq!(c.max_connections(), None);
        assert!(!c.http2());
        assert!(c.to_builder().build().is_ok());
        assert!(HttpConfig::builder().build().is_ok());
    }

    #[test]
    fn nonsense_is_refused_by_name() {
        let zero = |b: HttpConfigBuilder| b.build().err();
        let cases = [
            (
                zero(HttpConfig::builder().max_body_bytes(0)),
                "max_body_bytes",
            ),
            (
                zero(HttpConfig::builder().max_head_bytes(0)),
                "max_head_bytes",
            ),
            (
                zero(HttpConfig::builder().stream_buffer(0)),
                "stream_buffer",
            ),
            (
                zero(HttpConfig::builder().max_connections(0)),
                "max_connections",
            ),
            (
                zero(HttpConfig::builder().idle_timeout(Duration::ZERO)),
                "idle_timeout",
            ),
            (
                zero(HttpConfig::builder().sse_keep_alive(Duration::ZERO)),
                "sse_keep_alive",
            ),
            (
                zero(HttpConfig::builder().head_timeout(Duration::ZERO)),
                "head_timeout",
            ),
            (
                zero(HttpConfig::builder().body_timeout(Duration::ZERO)),
                "body_timeout",
            ),
            (
                zero(HttpConfig::builder().request_timeout(Duration::ZERO)),
                "request_timeout",
            ),
        ];
        for (err, setting) in cases {
            assert_eq!(err, Some(ConfigError::Zero { setting }));
        }
        let long = HttpConfig::builder()
            .request_timeout(Duration::MAX)
            .build()
            .unwrap_err();
        assert_eq!(
            long.to_string(),
            "HttpConfig: request_timeout must be at most 365 days"
        );
        assert!(matches!(
            HttpConfig::builder().stream_buffer(1 << 20).build(),
            Err(ConfigError::TooLarge {
                setting: "stream_buffer",
                ..
            })
        ));
        assert!(matches!(
            HttpConfig::builder().max_connections(usize::MAX).build(),
            Err(ConfigError::TooLarge {
                setting: "max_connections",
                ..
            })
        ));
    }

    #[test]
    fn the_connection_limit_leaves_descriptors_in_reserve() {
        assert_eq!(connections_for_open_files(Some(1024)), 896);
        assert_eq!(connections_for_open_files(Some(64)), 32);
        assert_eq!(connections_for_open_files(Some(10)), 1);
        assert_eq!(connections_for_open_files(Some(1 << 20)), 917_504);
        assert_eq!(connections_for_open_files(Some(u64::MAX)), MAX_CONNECTIONS);
        assert_eq!(connections_for_open_files(None), 10_000);
        assert!(default_max_connections() >= 1);
    }
}
