//! Single-use redemption of token ids.
//!
//! Sealing, expiry and request binding limit where and for how long a token is
//! accepted, but a token can still be presented several times before it
//! expires. A [`ReplayLedger`] records each token id the first time it is
//! redeemed, and reports any later attempt as [`Redemption::Replayed`], until
//! the token has expired and the record can be dropped.

use std::error::Error as StdError;
use std::sync::Arc;
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
