//! Carrying change events between server instances: the [`ChangeBus`] extension point.
//!
//! A server fans out its change events (tools, prompts or resources changed, a resource
//! updated) to its own `subscriptions/listen` streams and 2025-11-25 sessions in process.
//! Behind a load balancer a change raised on one instance must also reach the streams
//! open on every other; a [`ChangeBus`] given to
//! [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus) carries them.
//!
//! Local streams always get an event straight from the in-process fan-out, so a bus
//! [`publish`](ChangeBus::publish)es only to the *other* instances and its
//! [`subscribe`](ChangeBus::subscribe) stream yields only events raised elsewhere: no
//! stream sees an event twice. Without a bus (the default) the fan-out stays in process.

use std::sync::Arc;

use futures::stream::BoxStream;

/// A change a listen stream may care about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChangeEvent {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsChanged,
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsChanged,
    /// The resource list changed (`notifications/resources/list_changed`).
    ResourcesChanged,
    /// The resource with this URI changed (`notifications/resources/updated`).
    ResourceUpdated(Arc<str>),
}

/// Carries [`ChangeEvent`]s between the instances of one server.
///
/// - [`publish`](ChangeBus::publish) is called with every event raised on this instance,
///   in the order raised, from the thread that raised it: it must not block (queue the
///   event, bounded, and send it in the background), and must keep the order of one
///   instance's events.
/// - [`subscribe`](ChangeBus::subscribe) is called once per server, from a Tokio runtime;
///   the stream yields the events raised on *other* instances (never this instance's
///   own, which local streams already got). It should survive a lost connection to the
///   backing service and resume when it returns; when it ends, the server stops hearing
///   from other instances.
///
/// ```
/// use std::sync::Arc;
/// use ferry_server::{ChangeBus, ChangeEvent, Server};
/// use futures::stream::BoxStream;
///
/// /// A bus that only logs what this instance raises (a stand-in for a real one).
/// struct Logged;
///
/// impl ChangeBus for Logged {
///     fn publish(&self, event: &ChangeEvent) {
///         println!("raised {event:?}");
///     }
///     fn subscribe(&self) -> BoxStream<'static, ChangeEvent> {
///         Box::pin(futures::stream::pending())
///     }
/// }
///
/// let server = Server::builder("notes", "1.0.0")
///     .enable_resources()
///     .change_bus(Arc::new(Logged))
///     .build()
///     .unwrap();
/// server.notify_resource_updated("note://a");
/// ```
pub trait ChangeBus: Send + Sync + 'static {
    /// Sends an event raised on this instance to the other instances.
    fn publish(&self, event: &ChangeEvent);

    /// The events raised on the other instances, from now on.
    fn subscribe(&self) -> BoxStream<'static, ChangeEvent>;
}
