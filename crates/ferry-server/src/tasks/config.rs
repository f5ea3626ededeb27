//! How tasks are kept: their lifetime, polling hint and the bound per principal; how a
//! tool runs as one; what a handler asks for when it turns its call into one.

use std::time::Duration;

/// Whether a tool's calls may or must run as tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskMode {
    /// A task when the request declares the extension; a plain call otherwise.
    Optional,
    /// Only as a task: a request that does not declare the extension is refused with
    /// -32021 before the handler runs (ext-tasks/tasks.md, "Capability Negotiation").
    Required,
}

/// A tool's task support, as registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TaskSupport {
    pub(crate) mode: TaskMode,
    /// The handler decides when (`ctx.into_task`), after its MRTR rounds; otherwise the
    /// call is a task from the start.
    pub(crate) when_ready: bool,
}

impl TaskSupport {
    pub(crate) fn required(&self) -> bool {
        self.mode == TaskMode::Required
    }
}

/// How the server keeps tasks.
///
/// ```
/// use std::time::Duration;
/// use ferry_server::TaskConfig;
///
/// let config = TaskConfig::new()
///     .default_ttl(Duration::from_secs(600))
///     .max_ttl(Duration::from_secs(3600))
///     .max_per_principal(100);
/// assert_eq!(config.max_per_principal_value(), 100);
/// ```
#[derive(Clone, Debug)]
pub struct TaskConfig {
    pub(crate) default_ttl: Duration,
    pub(crate) max_ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) max_per_principal: u64,
    pub(crate) sweep_interval: Duration,
    pub(crate) recheck_interval: Duration,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            default_ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_millis(500),
            max_per_principal: 10_000,
            sweep_interval: Duration::from_secs(60),
            recheck_interval: Duration::from_secs(5),
        }
    }
}

impl TaskConfig {
    /// The defaults: tasks kept 1 hour (at most 24 hours), polled every 500 ms, at most
    /// 10,000 tasks per principal, expired tasks swept every minute.
    pub fn new() -> Self {
        TaskConfig::default()
    }

    /// How long a task is kept after its creation when its handler does not say
    /// (its `ttlMs`).
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// The longest a task may be kept, whatever its handler asks.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// The polling interval suggested to clients (`pollIntervalMs`) when a handler does
    /// not say.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// The most unexpired tasks one principal (or the anonymous caller) may hold; a call
    /// beyond it is refused until older tasks expire.
    pub fn max_per_principal(mut self, n: u64) -> Self {
        self.max_per_principal = n.max(1);
        self
    }

    /// The configured bound per principal.
    pub fn max_per_principal_value(&self) -> u64 {
        self.max_per_principal
    }

    /// How often expired tasks are removed from the store.
    pub fn sweep_interval(mut self, interval: Duration) -> Self {
        self.sweep_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// How often running work re-reads its task, to notice a cancellation or an answer
    /// whose signal was lost (a bus that does not guarantee delivery).
    pub fn recheck_interval(mut self, interval: Duration) -> Self {
        self.recheck_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// The TTL a task gets when its handler asks for `requested`.
    pub(crate) fn ttl(&self, requested: Option<Duration>) -> Duration {
        requested
            .unwrap_or(self.default_ttl)
            .clamp(Duration::from_secs(1), self.max_ttl)
    }
}

/// What a handler asks for when it turns its call into a task
/// ([`Context::into_task`](crate::Context::into_task)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskOptions {
    pub(crate) ttl: Option<Duration>,
    pub(crate) poll_interval: Option<Duration>,
    pub(crate) status_message: Option<String>,
}

impl TaskOptions {
    /// The server's defaults.
    pub fn new() -> Self {
        TaskOptions::default()
    }

    /// How long the task is kept (bounded by [`TaskConfig::max_ttl`]).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The polling interval suggested to the client.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = Some(interval.max(Duration::from_millis(1)));
        self
    }

    /// The task's first `statusMessage`.
    pub fn status_message(mut self, message: impl Into<String>) -> Self {
        self.status_message = Some(message.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_is_bounded() {
        let c = TaskConfig::new().max_ttl(Duration::from_secs(60));
        assert_eq!(c.ttl(None), Duration::from_secs(60));
        assert_eq!(
            c.ttl(Some(Duration::from_secs(10))),
            Duration::from_secs(10)
        );
        assert_eq!(
            c.ttl(Some(Duration::from_secs(1000))),
            Duration::from_secs(60)
        );
        assert_eq!(c.ttl(Some(Duration::ZERO)), Duration::from_secs(1));
    }
}
