//! In-process, bounded replay ledger.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::{self, BoxFuture};

use super::{DEFAULT_RETENTION_MARGIN, LedgerError, Redemption, ReplayLedger, check_jti};
use crate::clock::{Clock, SystemClock, duration_millis};

/// Default capacity of a [`MemoryLedger`]: 2,000,000 unexpired entries, about 80 MB at
/// most (a record takes about 40 bytes). With the default token lifetime (5 minutes) and
/// retention margin (1 minute), that holds a steady 5,500 redemptions a second.
pub const DEFAULT_MEMORY_CAPACITY: usize = 2_000_000;

/// A [`ReplayLedger`] held in this process's memory.
///
/// Suitable for a single server process. Records vanish on restart, which is
/// harmless when the key ring is [ephemeral](crate::KeyRing::is_ephemeral)
/// (tokens die with the process too) but lets tokens be replayed after a
/// restart otherwise; use [`RedbLedger`](crate::RedbLedger) or a shared store then.
///
/// Size it for the traffic: a steady rate of redemptions holds rate × (token lifetime +
/// retention margin) records.
///
/// Each record is kept until its token's expiry plus a
/// [retention margin](MemoryLedger::with_retention_margin), then purged
/// (lazily, on the next redemption, with the others of the same second). The
/// number of unexpired records is capped: when the ledger is full, new ids are
/// refused with [`LedgerError::Full`] rather than growing without bound or
/// forgetting records early.
///
/// ```
/// use ferry_state::{MemoryLedger, Redemption, ReplayLedger};
///
/// let ledger = MemoryLedger::new(10_000);
/// let expires = u64::MAX;
/// futures::executor::block_on(async {
///     assert_eq!(ledger.redeem("id-1", expires).await?, Redemption::First);
///     assert_eq!(ledger.redeem("id-1", expires).await?, Redemption::Replayed);
///     Ok::<_, ferry_state::LedgerError>(())
/// })?;
/// # Ok::<(), ferry_state::LedgerError>(())
/// ```
pub struct MemoryLedger {
    state: Mutex<State>,
    capacity: usize,
    margin_ms: u64,
    clock: Arc<dyn Clock>,
}

/// Records are purged a group at a time: those whose purge times fall in the same second.
const GROUP_MS: u64 = 1_000;

#[derive(Default)]
struct State {
    /// The ids (compacted) of the records held.
    live: HashSet<u128, BuildHasherDefault<RandomKeyHasher>>,
    /// The same ids, grouped by the end of the second in which their records may be
    /// purged (their purge time rounded up to a whole second). A record costs about
    /// half of what an id-to-time map and a heap ordered by purge time cost, and
    /// purging walks a list instead of popping a heap.
    groups: BTreeMap<u64, Vec<u128>>,
}

/// A token id as 128 bits: the id's own bytes when it is the 16 random bytes
/// [`crate::StateGuard`] issues (22 base64url characters), else the first 128 bits of its
/// SHA-256. Keeps each record small (about 60 bytes with the purge queue).
fn compact(jti: &str) -> u128 {
    use base64::Engine as _;
    // The decoder wants room for its conservative estimate (18 bytes for 22 characters).
    let mut buf = [0u8; 18];
    let mut raw = [0u8; 16];
    if jti.len() == 22
        && base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode_slice(jti, &mut buf)
            .is_ok_and(|n| n == 16)
    {
        raw.copy_from_slice(&buf[..16]);
        return u128::from_be_bytes(raw);
    }
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(jti.as_bytes());
    raw.copy_from_slice(&digest[..16]);
    u128::from_be_bytes(raw)
}

/// Hashes a [`compact`] id by folding its halves and multiplying by an odd constant (so the
/// high bits, which the table's tags use, depend on every bit): the ids Ferry issues are
/// already random and travel inside sealed state, so a keyed hash (SipHash) would add cost
/// and no protection.
#[derive(Default)]
struct RandomKeyHasher(u64);

/// 2^64 divided by the golden ratio, odd: multiplying by it spreads low bits upwards.
const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for RandomKeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // The map's keys are `u128`s (`write_u128`); this only completes the trait.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(SPREAD);
        }
    }

    fn write_u128(&mut self, id: u128) {
        // Truncation intended: the two halves of the id, folded.
        self.0 = (self.0 ^ (id as u64) ^ ((id >> 64) as u64)).wrapping_mul(SPREAD);
    }
}

/// The group of a record that may be purged at `purge_at_ms`: the end of that second.
fn group_of(purge_at_ms: u64) -> u64 {
    purge_at_ms.div_ceil(GROUP_MS).saturating_mul(GROUP_MS)
}

impl State {
    fn purge(&mut self, now_ms: u64) -> usize {
        let mut purged = 0;
        while let Some(group) = self.groups.first_entry() {
            if *group.key() > now_ms {
                break;
            }
            for id in group.remove() {
                self.live.remove(&id);
                purged += 1;
            }
        }
        purged
    }
}

impl MemoryLedger {
    /// A ledger holding at most `capacity` unexpired records.
    pub fn new(capacity: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            capacity,
            margin_ms: duration_millis(DEFAULT_RETENTION_MARGIN),
            clock: Arc::new(SystemClock),
        }
    }

    /// Replaces the clock used to purge expired records, for tests.
    pub fn with_clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Sets how long a record is kept after its token's expiry
    /// (default [`DEFAULT_RETENTION_MARGIN`]).
    pub fn with_retention_margin(mut self, margin: Duration) -> Self {
        self.margin_ms = duration_millis(margin);
        self
    }

    /// The maximum number of records.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of records currently held, including expired ones not yet purged.
    pub fn len(&self) -> usize {
        self.lock().live.len()
    }

    /// `true` if no record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every record whose retention has ended, returning how many.
    /// Redemptions do this on their own; calling it is never required.
    pub fn purge_expired(&self) -> usize {
        let now = self.clock.now_ms();
        self.lock().purge(now)
    }

    /// The synchronous form of [`ReplayLedger::redeem`].
    pub fn redeem_now(&self, jti: &str, expires_at_ms: u64) -> Result<Redemption, LedgerError> {
        check_jti(jti)?;
        let now = self.clock.now_ms();
        let purge_at = expires_at_ms.saturating_add(self.margin_ms);
        let key = compact(jti);
        let mut state = self.lock();
        state.purge(now);
        if state.live.len() >= self.capacity {
            if state.live.contains(&key) {
                return Ok(Redemption::Replayed);
            }
            // The caller reports it (`LedgerError::Full`): a line per refused request
            // here would let a full ledger flood the log.
            return Err(LedgerError::Full {
                capacity: u64::try_from(self.capacity).unwrap_or(u64::MAX),
            });
        }
        if !state.live.insert(key) {
            return Ok(Redemption::Replayed);
        }
        state
            .groups
            .entry(group_of(purge_at))
            .or_default()
            .push(key);
        Ok(Redemption::First)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent after any panic in a critical section
        // (records are inserted into both collections with no failure between).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryLedger {
    /// A ledger with [`DEFAULT_MEMORY_CAPACITY`].
    fn default() -> Self {
        Self::new(DEFAULT_MEMORY_CAPACITY)
    }
}

impl fmt::Debug for MemoryLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryLedger")
            .field("len", &self.len())
            .field("capacity", &self.capacity)
            .field("margin_ms", &self.margin_ms)
            .finish_non_exhaustive()
    }
}

impl ReplayLedger for MemoryLedger {
    fn redeem<'a>(
        &'a self,
        jti: &'a str,
        expires_at_ms: u64,
    ) -> BoxFuture<'a, Result<Redemption, LedgerError>> {
        Box::pin(future::lazy(move |_| self.redeem_now(jti, expires_at_ms)))
    }
}

#[cfg(test)]
mod tests {
    use super::{MemoryLedger, Redemption, compact};

    #[test]
    fn issued_ids_keep_their_bytes_and_others_are_hashed() {
        // 16 bytes 0x00..0x0f in base64url.
        assert_eq!(
            compact("AAECAwQFBgcICQoLDA0ODw"),
            0x000102030405060708090a0b0c0d0e0f
        );
        assert_ne!(compact("short"), compact("shorT"));
        assert_ne!(
            compact("AAECAwQFBgcICQoLDA0ODw"),
            compact("AAECAwQFBgcICQoLDA0ODx")
        );
    }

    #[test]
    fn many_issued_and_other_ids_are_each_redeemed_once() {
        use base64::Engine as _;
        let ledger = MemoryLedger::new(100_000);
        let ids: Vec<String> = (0..20_000u128)
            .map(|n| {
                // Issued-looking ids (16 bytes, 22 characters) that differ in one half
                // only, and ids of other shapes, which are hashed first.
                let bytes = (n * 0x9e37_79b9).to_be_bytes();
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
            })
            .chain((0..5_000).map(|n| format!("custom-{n}")))
            .collect();
        for id in &ids {
            assert_eq!(ledger.redeem_now(id, u64::MAX).unwrap(), Redemption::First);
        }
        for id in &ids {
            assert_eq!(
                ledger.redeem_now(id, u64::MAX).unwrap(),
                Redemption::Replayed
            );
        }
        assert_eq!(ledger.len(), ids.len());
    }
}
