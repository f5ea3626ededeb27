//! Single-use redemption of token ids.
//!
//! Sealing, expiry and request binding limit where and for how long a token is
//! accepted, but a token can still be presented several times before it
//! expires. A [`ReplayLedger`] records each token id the first time it is
//! redeemed, and reports any later attempt as [`Redemption::Replayed`], until
//! the token has expired and the record can be dropped.

use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;

#[cfg(feature = "redb")]
mod durable;
mod memory;

#[cfg(feature = "redb")]
pub use durable::{DEFAULT_REDB_CAPACITY, RedbLedger, RedbLedgerBuilder};
pub use memory::{DEFAULT_MEMORY_CAPACITY, MemoryLedger};

/// Longest token id, in bytes, a ledger accepts. Ids made by
/// [`StateGuard::issue`](crate::StateGuard::issue) are 22 bytes.
pub const MAX_JTI_LEN: usize = 128;

/// How long ledgers keep a record after the token's expiry, by default: 60
/// seconds. This covers a token verified just before it expired and redeemed
/// just after, and small clock differences between processes sharing a ledger.
pub const DEFAULT_RETENTION_MARGIN: Duration = Duration::from_secs(60);

/// Paces the log lines of a failure that can repeat for every request: the first is
/// logged, then at most one per period, with the number left out since. A store that is
/// down, or a full ledger, fails every redemption, and a client can send refused states
/// as fast as it likes; a line for each would flood the log.
///
/// ```
/// use std::time::Duration;
/// use ferry_state::FailureLog;
///
/// static FAILURES: FailureLog = FailureLog::new(Duration::from_secs(10));
/// assert_eq!(FAILURES.due(), Some(0));
/// assert_eq!(FAILURES.due(), None);
/// ```
#[derive(Debug)]
pub struct FailureLog {
    period_ms: u64,
    /// When the last line was logged (Unix milliseconds; 0: never).
    last_ms: AtomicU64,
    /// Failures not logged since.
    skipped: AtomicU64,
}

impl FailureLog {
    /// Logs at most one line per `period`.
    pub const fn new(period: Duration) -> Self {
        FailureLog {
            period_ms: period.as_millis() as u64,
            last_ms: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
        }
    }

    /// Counts a failure. `Some(n)`: log it now, saying `n` failures went unlogged
    /// since the last line; `None`: leave it out.
    pub fn due(&self) -> Option<u64> {
        let now = crate::clock::unix_millis_now().max(1);
        let last = self.last_ms.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= self.period_ms;
        if due
            && self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return Some(self.skipped.swap(0, Ordering::Relaxed));
        }
        self.skipped.fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// Outcome of [`ReplayLedger::redeem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Redemption {
    /// The id had not been redeemed: it is now recorded, and the request may proceed.
    First,
    /// The id was already redeemed: the request must be refused.
    Replayed,
}

impl Redemption {
    /// `true` for [`Redemption::First`].
    pub fn is_first(self) -> bool {
        self == Self::First
    }
}

/// A ledger could not answer. Callers must treat this as a refusal (fail closed).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The ledger holds as many unexpired records as it may; new ids are
    /// refused rather than forgetting old ones.
    #[error("replay ledger is full ({capacity} unexpired entries)")]
    Full {
        /// The ledger's capacity.
        capacity: u64,
    },
    /// Too many redemptions are waiting to be written.
    #[error("replay ledger is overloaded")]
    Overloaded,
    /// The id was empty or longer than [`MAX_JTI_LEN`].
    #[error("invalid token id for the replay ledger")]
    InvalidId,
    /// The ledger was shut down or its worker stopped.
    #[error("replay ledger is closed")]
    Closed,
    /// The underlying store failed.
    #[error("replay ledger storage failed")]
    Storage(#[source] Arc<dyn StdError + Send + Sync>),
}

impl LedgerError {
    /// Wraps an error of the underlying store (for ledger implementations).
    pub fn storage(err: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self::Storage(Arc::from(err.into()))
    }
}

/// A record of redeemed token ids, making tokens single-use.
///
/// [`redeem`](ReplayLedger::redeem) must be atomic: of any number of concurrent
/// calls with the same id, from any thread or process sharing the ledger,
/// exactly one returns [`Redemption::First`]. A record must be kept at least
/// until `expires_at_ms`; it may be dropped after that, since the token itself
/// is refused from then on. A ledger that cannot record an id must return an
/// error, never [`Redemption::First`].
///
/// The trait is object safe (`Arc<dyn ReplayLedger>` works) and returns boxed
/// futures so that network-backed stores fit. For example, a Redis ledger maps
/// onto one command, `SET <prefix><jti> 1 NX PXAT <expires_at_ms + margin>`:
/// a reply of `OK` is [`Redemption::First`] and a nil reply is
/// [`Redemption::Replayed`].
///
/// Implementations in this crate: [`MemoryLedger`] (one process, bounded) and, with
/// the `redb` feature, `RedbLedger` (durable file, survives restarts).
pub trait ReplayLedger: Send + Sync + 'static {
    /// Records `jti`, valid until `expires_at_ms` (milliseconds since the Unix
    /// epoch), and tells whether it had been recorded before.
    fn redeem<'a>(
        &'a self,
        jti: &'a str,
        expires_at_ms: u64,
    ) -> BoxFuture<'a, Result<Redemption, LedgerError>>;
}

impl<T: ReplayLedger + ?Sized> ReplayLedger for Arc<T> {
    fn redeem<'a>(
        &'a self,
        jti: &'a str,
        expires_at_ms: u64,
    ) -> BoxFuture<'a, Result<Redemption, LedgerError>> {
        (**self).redeem(jti, expires_at_ms)
    }
}

impl<T: ReplayLedger + ?Sized> ReplayLedger for Box<T> {
    fn redeem<'a>(
        &'a self,
        jti: &'a str,
        expires_at_ms: u64,
    ) -> BoxFuture<'a, Result<Redemption, LedgerError>> {
        (**self).redeem(jti, expires_at_ms)
    }
}

/// Checks a token id's length.
pub(crate) fn check_jti(jti: &str) -> Result<(), LedgerError> {
    if jti.is_empty() || jti.len() > MAX_JTI_LEN {
        return Err(LedgerError::InvalidId);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_logged_first_then_once_a_period_with_the_count_left_out() {
        let every_time = FailureLog::new(Duration::ZERO);
        assert_eq!(every_time.due(), Some(0));
        assert_eq!(every_time.due(), Some(0));

        let paced = FailureLog::new(Duration::from_secs(3600));
        assert_eq!(paced.due(), Some(0));
        for _ in 0..5 {
            assert_eq!(paced.due(), None);
        }
        // The period has passed (the last line is made an hour and more older).
        paced.last_ms.store(1, Ordering::Relaxed);
        assert_eq!(paced.due(), Some(5));
        assert_eq!(paced.due(), None);
    }
}
