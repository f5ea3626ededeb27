//! Time sources, injectable so that expiry can be tested without sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Current time as milliseconds since the Unix epoch, from the system clock.
///
/// Returns 0 if the system clock is set before 1970.
pub fn unix_millis_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Converts a duration to whole milliseconds, saturating at `u64::MAX`.
pub(crate) fn duration_millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A source of the current time, in milliseconds since the Unix epoch.
///
/// [`SystemClock`] is the default everywhere; tests use [`ManualClock`].
pub trait Clock: Send + Sync + 'static {
    /// Current time in milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        unix_millis_now()
    }
}

/// A clock that only moves when told to. Share it through an `Arc` to control
/// time from a test while a [`StateGuard`](crate::StateGuard) or a ledger reads it.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ferry_state::{Clock, ManualClock};
///
/// let clock = Arc::new(ManualClock::new(1_000));
/// clock.advance(Duration::from_secs(2));
/// assert_eq!(clock.now_ms(), 3_000);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicU64,
}

impl ManualClock {
    /// A clock showing `now_ms` milliseconds since the Unix epoch.
    pub fn new(now_ms: u64) -> Self {
        Self {
            now_ms: AtomicU64::new(now_ms),
        }
    }

    /// Sets the time.
    pub fn set(&self, now_ms: u64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        let by = duration_millis(by);
        // `fetch_update` with a closure that always returns `Some` cannot fail.
        let _ = self
            .now_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_add(by))
            });
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

impl<C: Clock + ?Sized> Clock for Box<C> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_clock_is_recent() {
        // After 2020-01-01.
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }

    #[test]
    fn manual_clock_saturates() {
        let c = ManualClock::new(u64::MAX - 1);
        c.advance(Duration::from_secs(1));
        assert_eq!(c.now_ms(), u64::MAX);
        c.set(5);
        assert_eq!(Arc::new(c).now_ms(), 5);
    }
}
