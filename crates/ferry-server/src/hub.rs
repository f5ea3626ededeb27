//! The in-process fan-out of change events to `subscriptions/listen` streams.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use tokio::sync::broadcast;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::bus::ChangeBus;

/// A change a listen stream may care about.
pub(crate) use crate::bus::ChangeEvent as Event;

pub(crate) struct Hub {
    tx: broadcast::Sender<Event>,
    /// Carries events to and from other instances, when there are any.
    bus: Option<Arc<dyn ChangeBus>>,
    /// Whether the task forwarding the bus's events into `tx` runs.
    forwarding: AtomicBool,
    /// The resource URIs the open listen streams follow.
    pub(crate) interest: Arc<crate::interest::Interest>,
    /// Stops that task when the hub goes.
    stop: CancellationToken,
    _stop_on_drop: DropGuard,
}

impl Hub {
    pub(crate) fn new(capacity: usize, bus: Option<Arc<dyn ChangeBus>>) -> Self {
        let (tx, _) = broadcast::channel(capacity);
        let stop = CancellationToken::new();
        let hub = Hub {
            tx,
            bus,
            forwarding: AtomicBool::new(false),
            interest: crate::interest::Interest::new(),
            _stop_on_drop: stop.clone().drop_guard(),
            stop,
        };
        hub.forward();
        hub
    }

    pub(crate) fn publish(&self, event: Event) {
        if let Some(bus) = &self.bus {
            bus.publish(&event);
        }
        // No listener is not an error.
        let _ = self.tx.send(event);
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.forward();
        self.tx.subscribe()
    }

    pub(crate) fn listeners(&self) -> usize {
        self.tx.receiver_count()
    }

    /// Starts forwarding the bus's events (raised on other instances) to the local
    /// streams, once, as soon as a Tokio runtime is at hand.
    fn forward(&self) {
        let Some(bus) = &self.bus else {
            return;
        };
        if self.forwarding.load(Ordering::Acquire) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.forwarding.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut events = bus.subscribe();
        let tx = self.tx.downgrade();
        let stop = self.stop.clone();
        runtime.spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = stop.cancelled() => break,
                    e = events.next() => e,
                };
                let (Some(event), Some(tx)) = (event, tx.upgrade()) else {
                    break;
                };
                let _ = tx.send(event);
            }
        });
    }
}

/// Whether an update of `updated` concerns a subscription to `subscribed`: the same URI,
/// or a sub-resource of it (resources.mdx).
pub(crate) fn uri_covers(subscribed: &str, updated: &str) -> bool {
    if subscribed == updated {
        return true;
    }
    updated.strip_prefix(subscribed).is_some_and(|rest| {
        subscribed.ends_with('/') || rest.starts_with('/') || rest.starts_with('#')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_resources() {
        assert!(uri_covers("file:///p", "file:///p"));
        assert!(uri_covers("file:///p", "file:///p/a.txt"));
        assert!(uri_covers("file:///p/", "file:///p/a.txt"));
        assert!(!uri_covers("file:///p", "file:///pq"));
    }
}
