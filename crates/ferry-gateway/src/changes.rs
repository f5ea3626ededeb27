//! `subscriptions/listen` through the gateway: each upstream that says its lists change
//! (`listChanged` in its capabilities) is listened to, and what it reports is raised on
//! the gateway's own server, which tells every client stream that asked for it.
//!
//! One subscription per upstream and instance, whatever the number of clients: the
//! upstream sees one listener, and each instance behind a load balancer tells its own
//! streams. A subscription that fails or ends is opened again after a pause that grows
//! from [`FIRST_RETRY`] to [`LAST_RETRY`], so an upstream that restarts is heard again.

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

/// Listens to every upstream that offers list changes, raising them on `server`, until
/// the returned set is dropped (or aborted).
pub(crate) fn relay(core: &Arc<Core>, server: &Server) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    for (index, upstream) in core.upstreams.iter().enumerate() {
        if let Some(filter) = filter_for(upstream) {
            tasks.spawn(listen(core.clone(), index, filter, server.clone()));
        }
    }
    tasks
}

/// One upstream's subscription, opened again whenever it fails or ends.
async fn listen(core: Arc<Core>, index: usize, filter: SubscriptionFilter, server: Server) {
    let upstream = &core.upstreams[index];
    let name = upstream.config.name.as_str();
    let mut pause = FIRST_RETRY;
    loop {
        match upstream.client.listen(filter.clone()).await {
            Ok(mut subscription) => {
                tracing::debug!(upstream = name, "listening for the upstream's list changes");
                // Changes made while no subscription was open went unheard: clients
                // should list again.
                if pause > FIRST_RETRY {
                    raise_all(&server, &filter);
                }
                pause = FIRST_RETRY;
                while let Some(notification) = subscription.next().await {
                    match notification {
                        Ok(n) => {
                            if let Some(event) = change_of(n) {
                                server.notify_changed(event);
                            }
                        }
                        Err(e) => {
                            tracing::warn!(upstream = name, error = %e, "the upstream's listen stream failed");
                            break;
                        }
                    }
                }
            }
            Err(e) => {
                tracing::warn!(upstream = name, error = %e, retry_in = ?pause, "cannot listen to the upstream's list changes");
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LAST_RETRY);
    }
}

/// The gateway's event for an upstream's notification (list changes only: resource
/// updates and task notifications are not listened for).
fn change_of(notification: ServerNotification) -> Option<ChangeEvent> {
    match notification {
        ServerNotification::ToolsListChanged => Some(ChangeEvent::ToolsChanged),
        ServerNotification::PromptsListChanged => Some(ChangeEvent::PromptsChanged),
        ServerNotification::ResourcesListChanged => Some(ChangeEvent::ResourcesChanged),
        _ => None,
    }
}

/// Raises every change `filter` listens for.
fn raise_all(server: &Server, filter: &SubscriptionFilter) {
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
