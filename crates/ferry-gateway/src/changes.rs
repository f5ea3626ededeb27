//! `subscriptions/listen` through the gateway: each upstream that says its lists change
//! (`listChanged` in its capabilities), or that takes resource subscriptions, is listened
//! to, and what it reports is raised on the gateway's own server, which tells every client
//! stream that asked for it.
//!
//! One subscription per upstream and instance, whatever the number of clients: the
//! upstream sees one listener, and each instance behind a load balancer tells its own
//! streams. The resources it follows are those this instance's clients follow
//! ([`Server::subscribed_resources`]) that the upstream serves: when they change, the
//! subscription is opened again with the new set. A subscription that fails or ends is
//! opened again after a pause that grows from [`FIRST_RETRY`] to [`LAST_RETRY`], so an
//! upstream that restarts is heard again.

use std::sync::Arc;
use std::time::Duration;

use ferry_client::ServerNotification;
use ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_server::{ChangeEvent, Server};
use futures::StreamExt;
use tokio::task::JoinSet;

use crate::gateway::Core;
use crate::upstream::Upstream;

/// The pause before a failed subscription is opened again the first time.
pub(crate) const FIRST_RETRY: Duration = Duration::from_millis(250);
/// The longest pause between attempts.
pub(crate) const LAST_RETRY: Duration = Duration::from_secs(30);

/// What the gateway listens for on `upstream`: the list changes it offers; `None` when
/// it offers none.
pub(crate) fn filter_for(upstream: &Upstream) -> Option<SubscriptionFilter> {
    let caps = &upstream.capabilities;
    let offers = |changed: Option<bool>| changed == Some(true);
    let mut filter = SubscriptionFilter::new();
    if caps.tools.as_ref().is_some_and(|t| offers(t.list_changed)) {
        filter = filter.with_tools_list_changed();
    }
    if caps
        .prompts
        .as_ref()
        .is_some_and(|p| offers(p.list_changed))
    {
        filter = filter.with_prompts_list_changed();
    }
    if caps
        .resources
        .as_ref()
        .is_some_and(|r| offers(r.list_changed))
    {
        filter = filter.with_resources_list_changed();
    }
    (filter != SubscriptionFilter::new()).then_some(filter)
}

/// Listens to every upstream that offers list changes or resource subscriptions, raising
/// what it hears on `server`, until the returned set is dropped (or aborted).
pub(crate) fn relay(core: &Arc<Core>, server: &Server) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    for (index, upstream) in core.upstreams.iter().enumerate() {
        let lists = filter_for(upstream);
        if lists.is_some() || takes_subscriptions(upstream) {
            tasks.spawn(listen(core.clone(), index, lists, server.clone()));
        }
    }
    tasks
}

/// Whether `upstream` takes resource subscriptions (`resources.subscribe`).
fn takes_subscriptions(upstream: &Upstream) -> bool {
    let resources = upstream.capabilities.resources.as_ref();
    resources.is_some_and(|r| r.subscribe == Some(true))
}

/// The resources this instance's clients follow that `index` serves.
async fn followed(core: &Core, index: usize, server: &Server) -> Vec<String> {
    if !takes_subscriptions(&core.upstreams[index]) {
        return Vec::new();
    }
    let mut mine = Vec::new();
    for uri in server.subscribed_resources() {
        if core.route_uri(&uri).await == Some(index) {
            mine.push(uri);
        }
    }
    mine
}

/// One upstream's subscription: its list changes (`lists`) and the resources followed,
/// opened again whenever it fails or ends, and at once when the resources followed change.
async fn listen(core: Arc<Core>, index: usize, lists: Option<SubscriptionFilter>, server: Server) {
    let upstream = &core.upstreams[index];
    let name = upstream.config.name.as_str();
    let mut changes = server.subscriptions_changed();
    let mut pause = FIRST_RETRY;
    loop {
        changes.mark_unchanged();
        let uris = followed(&core, index, &server).await;
        let mut filter = lists.clone().unwrap_or_default();
        for uri in &uris {
            filter = filter.with_resource(uri.clone());
        }
        if filter == SubscriptionFilter::new() {
            // Nothing to listen for until a client follows one of its resources.
            if changes.changed().await.is_err() {
                return;
            }
            continue;
        }
        match upstream.client.listen(filter).await {
            Ok(mut subscription) => {
                tracing::debug!(
                    upstream = name,
                    resources = uris.len(),
                    "listening to the upstream"
                );
                // Changes made while no subscription was open went unheard: clients
                // should list again.
                if pause > FIRST_RETRY {
                    raise_all(&server, lists.as_ref());
                }
                pause = FIRST_RETRY;
                // Ends when the subscription does (`false`: open it again after a pause)
                // or when the resources followed change (`true`: open it again now).
                let followed_changed = loop {
                    tokio::select! {
                        notification = subscription.next() => match notification {
                            Some(Ok(n)) => {
                                if let Some(event) = change_of(n) {
                                    server.notify_changed(event);
                                }
                            }
                            Some(Err(e)) => {
                                tracing::warn!(upstream = name, error = %e, "the upstream's listen stream failed");
                                break false;
                            }
                            None => break false,
                        },
                        changed = changes.changed() => {
                            if changed.is_err() {
                                return;
                            }
                            if followed(&core, index, &server).await != uris {
                                break true;
                            }
                            changes.mark_unchanged();
                        }
                    }
                };
                if followed_changed {
                    continue;
                }
            }
            Err(e) => {
                tracing::warn!(upstream = name, error = %e, retry_in = ?pause, "cannot listen to the upstream");
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LAST_RETRY);
    }
}

/// The gateway's event for an upstream's notification (list changes and resource
/// updates; task notifications are not listened for).
fn change_of(notification: ServerNotification) -> Option<ChangeEvent> {
    match notification {
        ServerNotification::ToolsListChanged => Some(ChangeEvent::ToolsChanged),
        ServerNotification::PromptsListChanged => Some(ChangeEvent::PromptsChanged),
        ServerNotification::ResourcesListChanged => Some(ChangeEvent::ResourcesChanged),
        ServerNotification::ResourceUpdated { uri } => {
            Some(ChangeEvent::ResourceUpdated(Arc::from(uri)))
        }
        _ => None,
    }
}

/// Raises every list change `filter` listens for.
fn raise_all(server: &Server, filter: Option<&SubscriptionFilter>) {
    let Some(filter) = filter else {
        return;
    };
    if filter.tools_list_changed == Some(true) {
        server.notify_changed(ChangeEvent::ToolsChanged);
    }
    if filter.prompts_list_changed == Some(true) {
        server.notify_changed(ChangeEvent::PromptsChanged);
    }
    if filter.resources_list_changed == Some(true) {
        server.notify_changed(ChangeEvent::ResourcesChanged);
    }
}
