//! Proofs already seen (RFC 9449 §11.1): a bounded in-memory store of `jti` digests,
//! each kept until its proof would be refused as too old anyway.

use std::collections::{HashMap, VecDeque};

use parking_lot::Mutex;

/// Why a proof was not recorded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotRecorded {
    /// The same proof was seen before.
    Replayed,
    /// The store is full of live entries: refuse rather than forget (fail closed).
    Full,
}

pub(crate) struct ReplayStore {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    seen: HashMap<[u8; 32], u64>,
    order: VecDeque<([u8; 32], u64)>,
}

impl ReplayStore {
    pub(crate) fn new(capacity: usize) -> Self {
        ReplayStore {
            capacity,
            inner: Mutex::default(),
        }
    }

    /// Records `key` until `expires` (seconds since the epoch), unless it is live already.
    pub(crate) fn record(&self, key: [u8; 32], expires: u64, now: u64) -> Result<(), NotRecorded> {
        let mut inner = self.inner.lock();
        let Inner { seen, order } = &mut *inner;
        while let Some((k, e)) = order.front() {
            if *e > now && seen.len() < self.capacity {
                break;
            }
            if *e > now {
                // Full of live entries; the oldest live one is not dropped.
                break;
            }
            if seen.get(k) == Some(e) {
                seen.remove(k);
            }
            order.pop_front();
        }
        if seen.get(&key).is_some_and(|e| *e > now) {
            return Err(NotRecorded::Replayed);
        }
        if seen.len() >= self.capacity {
            return Err(NotRecorded::Full);
        }
        seen.insert(key, expires);
        order.push_back((key, expires));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_and_bounds() {
        let s = ReplayStore::new(3);
        assert_eq!(s.record([1; 32], 100, 10), Ok(()));
        assert_eq!(s.record([1; 32], 100, 11), Err(NotRecorded::Replayed));
        assert_eq!(s.record([2; 32], 100, 11), Ok(()));
        assert_eq!(s.record([3; 32], 50, 11), Ok(()));
        assert_eq!(s.record([4; 32], 100, 12), Err(NotRecorded::Full));
        // Once the entries expire they make room.
        assert_eq!(s.record([4; 32], 200, 101), Ok(()));
        assert_eq!(
            s.record([1; 32], 200, 101),
            Ok(()),
            "expired entries are forgotten"
        );
        assert_eq!(s.record([1; 32], 200, 102), Err(NotRecorded::Replayed));
    }
}
