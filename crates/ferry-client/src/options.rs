//! Per-request options and progress reports.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ferry_protocol::Meta;

use crate::handler::InputHandler;

/// One `notifications/progress` report for a request.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Progress so far (grows with every report).
    pub progress: f64,
    /// The total, if the server knows it.
    pub total: Option<f64>,
    /// What is happening.
    pub message: Option<String>,
}

impl Progress {
    /// The fraction done (0 to 1), when the total is known and positive.
    pub fn fraction(&self) -> Option<f64> {
        self.total
            .filter(|t| *t > 0.0)
            .map(|t| (self.progress / t).clamp(0.0, 1.0))
    }
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Options for one call: timeout, progress, extra `_meta`, caching.
///
/// ```
/// use std::time::Duration;
/// use ferry_client::CallOptions;
///
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(5))
///     .on_progress(|p| println!("{:?} of {:?}", p.progress, p.total));
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) meta: Option<Meta>,
    pub(crate) bypass_cache: bool,
    pub(crate) detach: bool,
    pub(crate) task_timeout: Option<Duration>,
    pub(crate) task_status: Option<TaskStatusFn>,
    pub(crate) input_handler: Option<Arc<dyn InputHandler>>,
}

/// Called with a task's state each time a followed task is polled.
pub type TaskStatusFn = Arc<dyn Fn(&ferry_protocol::tasks::Task) + Send + Sync>;

impl CallOptions {
    /// The client's defaults.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// How long each JSON-RPC request of this call may take (each round of a multi
    /// round-trip request gets the full time). On expiry the request is cancelled.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Receives the server's progress reports (sends `_meta.progressToken`).
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Adds a key to the request's `_meta` (e.g. `traceparent`). The protocol's own keys
    /// are set by the client and cannot be overridden.
    pub fn meta(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.meta
            .get_or_insert_with(Meta::new)
            .insert(key.into(), value);
        self
    }

    /// Skips the result cache for this call (the fresh result is still stored).
    pub fn bypass_cache(mut self) -> Self {
        self.bypass_cache = true;
        self
    }

    /// Leaves a task running when the call following it is dropped or times out (by
    /// default the client cancels it with `tasks/cancel`, so no work runs on unobserved).
    pub fn detach(mut self) -> Self {
        self.detach = true;
        self
    }

    /// How long to follow a call that became a task before giving up with
    /// [`Error::Timeout`](crate::Error::Timeout) (and cancelling the task unless
    /// [detached](CallOptions::detach)). By default the call follows the task until it
    /// ends.
    pub fn task_timeout(mut self, timeout: Duration) -> Self {
        self.task_timeout = Some(timeout);
        self
    }

    /// Calls `f` with the task's state each time a call that became a task polls it
    /// (status, `statusMessage`); for status lines.
    pub fn on_task_status(
        mut self,
        f: impl Fn(&ferry_protocol::tasks::Task) + Send + Sync + 'static,
    ) -> Self {
        self.task_status = Some(Arc::new(f));
        self
    }
}

impl CallOptions {
    /// Answers the questions that belong to this call with `handler` instead of the
    /// client's: the input requests of a multi round-trip call the client drives itself,
    /// and a 2025-11-25 server's requests on this call's stream. On a 2026-07-28 server
    /// the call declares `handler`'s capabilities; a 2025-11-25 session keeps those it
    /// declared when it began, and a question `handler` does not answer is declined.
    /// Questions a server sends outside any call (on stdio, every 2025-11-25 server
    /// request) still go to the client's handler.
    ///
    /// ```
    /// use ferry_client::{CallOptions, FnHandler};
    /// use ferry_protocol::elicitation::ElicitResult;
    ///
    /// let options = CallOptions::new()
    ///     .input_handler(FnHandler::new().on_form(|_| async { ElicitResult::decline() }));
    /// # let _ = options;
    /// ```
    pub fn input_handler(self, handler: impl InputHandler) -> Self {
        self.shared_input_handler(Arc::new(handler))
    }

    /// [`input_handler`](CallOptions::input_handler) with a handler already shared.
    pub fn shared_input_handler(mut self, handler: Arc<dyn InputHandler>) -> Self {
        self.input_handler = Some(handler);
        self
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("meta", &self.meta)
            .field("bypass_cache", &self.bypass_cache)
            .field("detach", &self.detach)
            .field("task_timeout", &self.task_timeout)
            .field("task_status", &self.task_status.is_some())
            .field("input_handler", &self.input_handler.is_some())
            .finish()
    }
}

/// How the client drives multi round-trip requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MrtrPolicy {
    /// The most requests one call may send (the first plus retries). Default 16.
    pub max_rounds: u32,
    /// The wait before the second of several retries in a row that carry only
    /// `requestState` (the first goes at once); it doubles after each. Default 100 ms.
    pub initial_backoff: Duration,
    /// The longest such wait. Default 5 s.
    pub max_backoff: Duration,
}

impl Default for MrtrPolicy {
    fn default() -> Self {
        MrtrPolicy {
            max_rounds: 16,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl MrtrPolicy {
    /// The wait before the `streak`-th state-only retry in a row (0-based).
    pub(crate) fn backoff(&self, streak: u32) -> Duration {
        if streak == 0 {
            return Duration::ZERO;
        }
        let factor = 1u32.checked_shl(streak - 1).unwrap_or(u32::MAX);
        self.initial_backoff
            .checked_mul(factor)
            .unwrap_or(self.max_backoff)
            .min(self.max_backoff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_immediate_then_doubles_to_a_cap() {
        let p = MrtrPolicy::default();
        let waits: Vec<u128> = (0..9).map(|s| p.backoff(s).as_millis()).collect();
        assert_eq!(waits, [0, 100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        assert_eq!(p.backoff(60), Duration::from_secs(5));
    }

    #[test]
    fn fraction() {
        let p = Progress {
            progress: 50.0,
            total: Some(100.0),
            message: None,
        };
        assert_eq!(p.fraction(), Some(0.5));
    }
}
