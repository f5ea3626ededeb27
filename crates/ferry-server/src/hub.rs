//! The in-process fan-out of change events to `subscriptions/listen` streams.

use std::sync::Arc;

use tokio::sync::broadcast;

/// A change a listen stream may care about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    ToolsChanged,
    PromptsChanged,
    ResourcesChanged,
    ResourceUpdated(Arc<str>),
}

pub(crate) struct Hub {
    tx: broadcast::Sender<Event>,
}

impl Hub {
    pub(crate) fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity);
        Hub { tx }
    }

    pub(crate) fn publish(&self, event: Event) {
        // No listener is not an error.
        let _ = self.tx.send(event);
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }

    pub(crate) fn listeners(&self) -> usize {
        self.tx.receiver_count()
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
