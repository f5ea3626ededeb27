//! The connections that could be closed to make room: a list of the open HTTP/1.1
//! connections, each with its [`Presence`] and a token that closes it between requests.
//!
//! When the server is at its connection cap, a silent connection (one that never sent a
//! byte, or a kept-alive one idle between requests) is worth less than a new client: the
//! accept loop closes the one that has waited longest, preferring those that never sent a
//! request, and serves the new connection in its slot. Only when every connection is busy
//! is a new one answered `503`. So a peer that opens connections and sends nothing cannot
//! lock clients out, even for the idle timeout.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::h1::Presence;

/// The open HTTP/1.1 connections, oldest first.
#[derive(Default)]
pub(super) struct Standby {
    inner: Mutex<Listing>,
}

#[derive(Default)]
struct Listing {
    next: u64,
    open: BTreeMap<u64, Entry>,
}

struct Entry {
    presence: Arc<Presence>,
    close: CancellationToken,
}

/// A connection's place in the list, given up when it is dropped (the connection ended).
pub(super) struct Listed {
    standby: Arc<Standby>,
    id: u64,
}

impl Drop for Listed {
    fn drop(&mut self) {
        self.standby.inner.lock().open.remove(&self.id);
    }
}

impl Standby {
    /// Lists a new connection, which `close` stops between requests.
    pub(super) fn enlist(
        self: &Arc<Self>,
        presence: Arc<Presence>,
        close: CancellationToken,
    ) -> Listed {
        let mut inner = self.inner.lock();
        let id = inner.next;
        inner.next += 1;
        inner.open.insert(id, Entry { presence, close });
        Listed {
            standby: self.clone(),
            id,
        }
    }

    /// Closes the connection that has been open longest among those waiting for a
    /// request, preferring one that never sent any: `true` if there was one. Its slot is
    /// free once its task has seen the token (at its next poll).
    pub(super) fn close_one_waiting(&self) -> bool {
        let inner = self.inner.lock();
        let waiting = || {
            inner
                .open
                .values()
                .filter(|e| e.presence.waiting() && !e.close.is_cancelled())
        };
        let victim = waiting()
            .find(|e| !e.presence.served())
            .or_else(|| waiting().next());
        match victim {
            Some(e) => {
                e.close.cancel();
                true
            }
            None => false,
        }
    }

    /// How many connections are listed.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_silent_connection_goes_first_then_idle_ones_never_busy_ones() {
        let standby = Arc::new(Standby::default());
        let make = || (Arc::new(Presence::default()), CancellationToken::new());
        let (busy, busy_close) = make();
        let (idle, idle_close) = make();
        let (silent, silent_close) = make();
        let _b = standby.enlist(busy.clone(), busy_close.clone());
        let _i = standby.enlist(idle.clone(), idle_close.clone());
        let s = standby.enlist(silent.clone(), silent_close.clone());
        // `idle` served a request and waits for the next; `silent` never sent a byte.
        idle.set_for_test(true, true);
        silent.set_for_test(true, false);

        assert!(standby.close_one_waiting());
        assert!(silent_close.is_cancelled(), "the silent one first");
        assert!(!idle_close.is_cancelled());
        assert!(standby.close_one_waiting());
        assert!(idle_close.is_cancelled(), "then the idle one");
        assert!(!standby.close_one_waiting(), "a busy one is never closed");
        assert!(!busy_close.is_cancelled());

        drop(s);
        assert_eq!(standby.len(), 2, "an ended connection leaves the list");
    }
}
