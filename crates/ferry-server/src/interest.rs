//! Which resources this instance's clients follow: the URIs of every open listen stream's
//! `resourceSubscriptions`, counted so that a URI two streams follow stays until both
//! close, and a signal whenever the set (or a 2025-11-25 session's `resources/subscribe`)
//! changes. A server that answers resources from elsewhere (a [`Forward`](crate::Forward)
//! hook, such as a gateway) follows the same URIs there ([`Server::subscribed_resources`]).
//!
//! [`Server::subscribed_resources`]: crate::Server::subscribed_resources

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;

/// The URIs open listen streams follow, and the change signal.
pub(crate) struct Interest {
    streams: Mutex<BTreeMap<String, usize>>,
    changed: watch::Sender<()>,
}

impl Interest {
    pub(crate) fn new() -> Arc<Interest> {
        Arc::new(Interest {
            streams: Mutex::new(BTreeMap::new()),
            changed: watch::Sender::new(()),
        })
    }

    /// Counts `uris` as followed until the returned lease is dropped; `None` for none.
    pub(crate) fn hold(self: &Arc<Self>, uris: &[String]) -> Option<InterestLease> {
        if uris.is_empty() {
            return None;
        }
        let mut added = false;
        {
            let mut streams = self.streams.lock();
            for uri in uris {
                let count = streams.entry(uri.clone()).or_insert(0);
                added |= *count == 0;
                *count += 1;
            }
        }
        if added {
            self.touch();
        }
        Some(InterestLease {
            interest: self.clone(),
            uris: uris.to_vec(),
        })
    }

    /// The URIs open listen streams follow, sorted.
    pub(crate) fn streams(&self) -> Vec<String> {
        self.streams.lock().keys().cloned().collect()
    }

    /// Says the followed set may have changed.
    pub(crate) fn touch(&self) {
        self.changed.send_replace(());
    }

    /// A receiver that sees each [`touch`](Interest::touch) from now on.
    pub(crate) fn watch(&self) -> watch::Receiver<()> {
        self.changed.subscribe()
    }
}

/// One listen stream's URIs, followed until it is dropped.
pub(crate) struct InterestLease {
    interest: Arc<Interest>,
    uris: Vec<String>,
}

impl Drop for InterestLease {
    fn drop(&mut self) {
        let mut removed = false;
        {
            let mut streams = self.interest.streams.lock();
            for uri in &self.uris {
                if let Some(count) = streams.get_mut(uri) {
                    *count -= 1;
                    if *count == 0 {
                        streams.remove(uri);
                        removed = true;
                    }
                }
            }
        }
        if removed {
            self.interest.touch();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_stays_followed_until_its_last_stream_closes() {
        let interest = Interest::new();
        let mut changes = interest.watch();
        assert!(interest.hold(&[]).is_none());
        assert!(!changes.has_changed().unwrap());

        let a = interest.hold(&["r://a".into(), "r://b".into()]);
        assert!(changes.has_changed().unwrap());
        changes.mark_unchanged();
        let b = interest.hold(&["r://a".into()]);
        assert!(!changes.has_changed().unwrap(), "nothing new is followed");
        assert_eq!(interest.streams(), ["r://a", "r://b"]);

        drop(a);
        assert!(
            changes.has_changed().unwrap(),
            "r://b is no longer followed"
        );
        changes.mark_unchanged();
        assert_eq!(interest.streams(), ["r://a"]);
        drop(b);
        assert!(changes.has_changed().unwrap());
        assert!(interest.streams().is_empty());
    }
}
