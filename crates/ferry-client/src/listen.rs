//! `subscriptions/listen`: change notifications as an async [`Stream`].
//!
//! On a modern server each subscription is its own long-lived request (its own SSE
//! stream on HTTP, demultiplexed by `subscriptionId` on stdio); dropping the
//! [`Subscription`] cancels it. On a legacy server the client filters the notifications
//! of the session (the standalone GET stream on HTTP, stdout on stdio) and uses
//! `resources/subscribe` for resource subscriptions.

use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use ferry_protocol::jsonrpc::{JsonRpcNotification, RequestId};
use ferry_protocol::legacy;
use ferry_protocol::notifications;
use ferry_protocol::subscriptions::SubscriptionFilter;
use futures::Stream;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};
use tokio::task::AbortHandle;

use crate::client::{Inner, Req};
use crate::era::Era;
use crate::error::{Error, Result};
use crate::options::CallOptions;
use crate::transport::{Exchange, Incoming, Outgoing};

/// How many notifications may wait to be read.
const QUEUE: usize = 256;

/// A notification delivered on a subscription.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A subscribed resource (or one under it) changed.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
    /// Any other notification, as received.
    Other {
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
    },
}

impl ServerNotification {
    fn from_notification(n: JsonRpcNotification) -> Self {
        match n.method.as_str() {
            notifications::TOOLS_LIST_CHANGED => ServerNotification::ToolsListChanged,
            notifications::PROMPTS_LIST_CHANGED => ServerNotification::PromptsListChanged,
            notifications::RESOURCES_LIST_CHANGED => ServerNotification::ResourcesListChanged,
            notifications::RESOURCES_UPDATED => {
                match n
                    .params
                    .as_ref()
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str)
                {
                    Some(uri) => ServerNotification::ResourceUpdated {
                        uri: uri.to_owned(),
                    },
                    None => ServerNotification::Other {
                        method: n.method,
                        params: n.params,
                    },
                }
            }
            _ => ServerNotification::Other {
                method: n.method,
                params: n.params,
            },
        }
    }
}

/// A live subscription: a [`Stream`] of notifications. It ends when the server closes
/// it; an error item means it broke. Drop it to unsubscribe.
pub struct Subscription {
    rx: mpsc::Receiver<Result<ServerNotification>>,
    granted: SubscriptionFilter,
    id: Option<RequestId>,
    task: AbortHandle,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("granted", &self.granted)
            .finish()
    }
}

impl Subscription {
    /// What the server agreed to send (its acknowledgement); compare with what you asked.
    pub fn granted(&self) -> &SubscriptionFilter {
        &self.granted
    }

    /// The subscription id (the listen request's id); `None` on legacy servers.
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// The next notification; `None` once the subscription has ended.
    pub async fn recv(&mut self) -> Option<Result<ServerNotification>> {
        self.rx.recv().await
    }
}

impl Stream for Subscription {
    type Item = Result<ServerNotification>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

impl Inner {
    /// Opens a subscription.
    pub(crate) async fn listen(
        self: &Arc<Self>,
        filter: SubscriptionFilter,
    ) -> Result<Subscription> {
        match self.era() {
            Era::Modern => self.listen_modern(filter).await,
            Era::Legacy => self.listen_legacy(filter).await,
        }
    }

    async fn listen_modern(self: &Arc<Self>, filter: SubscriptionFilter) -> Result<Subscription> {
        let session = self.state.read().clone();
        let id = self.next_id();
        let mut meta = Map::new();
        meta.insert(
            ferry_protocol::meta::PROTOCOL_VERSION.into(),
            Value::from(session.version.as_str()),
        );
        meta.insert(
            ferry_protocol::meta::CLIENT_CAPABILITIES.into(),
            self.wire.capabilities.clone(),
        );
        meta.insert(
            ferry_protocol::meta::CLIENT_INFO.into(),
            self.wire.client_info.clone(),
        );
        let body = json!({
            "jsonrpc": "2.0",
            "id": id.to_value(),
            "method": ferry_protocol::methods::SUBSCRIPTIONS_LISTEN,
            "params": {"notifications": filter, "_meta": meta},
        });
        let headers = if self.transport.is_http() {
            vec![
                (
                    ferry_protocol::headers::PROTOCOL_VERSION.to_owned(),
                    session.version.clone(),
                ),
                (
                    ferry_protocol::headers::METHOD.to_owned(),
                    ferry_protocol::methods::SUBSCRIPTIONS_LISTEN.to_owned(),
                ),
            ]
        } else {
            Vec::new()
        };
        let mut exchange = self
            .transport
            .start(Outgoing {
                id: id.clone(),
                method: ferry_protocol::methods::SUBSCRIPTIONS_LISTEN.to_owned(),
                body: body.to_string().into_bytes(),
                headers,
                progress_token: None,
                legacy: false,
            })
            .await?;
        let granted = tokio::time::timeout(self.config.timeout, wait_for_ack(&mut exchange))
            .await
            .map_err(|_| Error::Timeout {
                method: ferry_protocol::methods::SUBSCRIPTIONS_LISTEN.to_owned(),
                after: self.config.timeout,
            })??;
        let (tx, rx) = mpsc::channel(QUEUE);
        let task = tokio::spawn(forward_modern(exchange, tx, Arc::downgrade(self)));
        Ok(Subscription {
            rx,
            granted,
            id: Some(id),
            task: task.abort_handle(),
            on_drop: None,
        })
    }

    async fn listen_legacy(self: &Arc<Self>, filter: SubscriptionFilter) -> Result<Subscription> {
        let caps = self.state.read().capabilities.clone().unwrap_or_default();
        let list_changed =
            |c: Option<bool>, asked: bool| (asked && c == Some(true)).then_some(true);
        let resources = caps.resources.clone().unwrap_or_default();
        let mut granted = SubscriptionFilter {
            tools_list_changed: list_changed(
                caps.tools.as_ref().and_then(|t| t.list_changed),
                filter.wants_tools_list_changed(),
            ),
            prompts_list_changed: list_changed(
                caps.prompts.as_ref().and_then(|t| t.list_changed),
                filter.wants_prompts_list_changed(),
            ),
            resources_list_changed: list_changed(
                resources.list_changed,
                filter.wants_resources_list_changed(),
            ),
            resource_subscriptions: None,
            task_ids: None,
        };
        let events = self.events.subscribe();
        let mut subscribed = Vec::new();
        if resources.subscribe == Some(true) {
            // A session has one subscription per URI: the first of this client's
            // subscriptions to follow a URI subscribes, the last to drop unsubscribes.
            let mut counts = self.legacy_subscriptions.lock().await;
            let opts = CallOptions::new();
            for uri in filter.resource_subscriptions.iter().flatten() {
                if subscribed.contains(uri) {
                    continue;
                }
                if counts.get(uri).is_none_or(|n| *n == 0) {
                    let mut params = Map::new();
                    params.insert("uri".into(), Value::from(uri.as_str()));
                    let sent = self
                        .call(&Req::new(legacy::RESOURCES_SUBSCRIBE, params, &opts))
                        .await;
                    if let Err(e) = sent {
                        drop(counts);
                        unsubscribe_legacy(Arc::downgrade(self), subscribed);
                        return Err(e);
                    }
                }
                *counts.entry(uri.clone()).or_insert(0) += 1;
                subscribed.push(uri.clone());
            }
            granted.resource_subscriptions = Some(subscribed.clone());
        }
        let (tx, rx) = mpsc::channel(QUEUE);
        let task = tokio::spawn(forward_legacy(events, tx, granted.clone()));
        let weak = Arc::downgrade(self);
        let on_drop = move || unsubscribe_legacy(weak, subscribed);
        Ok(Subscription {
            rx,
            granted,
            id: None,
            task: task.abort_handle(),
            on_drop: Some(Box::new(on_drop)),
        })
    }
}

async fn wait_for_ack(exchange: &mut Exchange) -> Result<SubscriptionFilter> {
    loop {
        match exchange.recv().await {
            Some(Incoming::Notification(n))
                if n.method == notifications::SUBSCRIPTIONS_ACKNOWLEDGED =>
            {
                let granted = n
                    .params
                    .as_ref()
                    .and_then(|p| p.get("notifications"))
                    .and_then(|f| serde_json::from_value(f.clone()).ok())
                    .unwrap_or_default();
                return Ok(granted);
            }
            Some(Incoming::Notification(n)) => {
                tracing::warn!(method = %n.method, "ignoring a notification sent before the subscription's acknowledgement");
            }
            Some(Incoming::Request(_)) => {}
            Some(Incoming::Result(_)) => {
                return Err(Error::protocol(
                    "the subscription ended before it was acknowledged",
                ));
            }
            Some(Incoming::Error(e)) => return Err(Error::Rpc(Box::new(e))),
            Some(Incoming::Failed(e)) => return Err(e),
            None => return Err(Error::transport("the connection closed")),
        }
    }
}

async fn forward_modern(
    mut exchange: Exchange,
    tx: mpsc::Sender<Result<ServerNotification>>,
    inner: Weak<Inner>,
) {
    loop {
        let m = tokio::select! {
            m = exchange.recv() => m,
            _ = tx.closed() => return,
        };
        let item = match m {
            Some(Incoming::Notification(n)) if n.method == notifications::CANCELLED => return,
            Some(Incoming::Notification(n)) => {
                if let Some(inner) = inner.upgrade() {
                    inner.cache.invalidate_for(&n.method, n.params.as_ref());
                }
                Ok(ServerNotification::from_notification(n))
            }
            Some(Incoming::Request(_)) => continue,
            Some(Incoming::Result(_)) => return,
            Some(Incoming::Error(e)) => Err(Error::Rpc(Box::new(e))),
            Some(Incoming::Failed(e)) => Err(e),
            None => Err(Error::transport("the connection closed")),
        };
        let last = item.is_err();
        if tx.send(item).await.is_err() || last {
            return;
        }
    }
}

fn wanted(filter: &SubscriptionFilter, n: &JsonRpcNotification) -> bool {
    match n.method.as_str() {
        notifications::TOOLS_LIST_CHANGED => filter.wants_tools_list_changed(),
        notifications::PROMPTS_LIST_CHANGED => filter.wants_prompts_list_changed(),
        notifications::RESOURCES_LIST_CHANGED => filter.wants_resources_list_changed(),
        notifications::RESOURCES_UPDATED => {
            let uri = n
                .params
                .as_ref()
                .and_then(|p| p.get("uri"))
                .and_then(Value::as_str);
            uri.is_some_and(|u| {
                filter
                    .resource_subscriptions
                    .iter()
                    .flatten()
                    .any(|s| u == s || u.starts_with(s.as_str()))
            })
        }
        _ => false,
    }
}

async fn forward_legacy(
    mut events: broadcast::Receiver<JsonRpcNotification>,
    tx: mpsc::Sender<Result<ServerNotification>>,
    filter: SubscriptionFilter,
) {
    loop {
        let n = tokio::select! {
            n = events.recv() => n,
            _ = tx.closed() => return,
        };
        match n {
            Ok(n) if wanted(&filter, &n) => {
                if tx
                    .send(Ok(ServerNotification::from_notification(n)))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(k)) => {
                tracing::warn!(
                    missed = k,
                    "a subscription fell behind and missed notifications"
                );
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

fn unsubscribe_legacy(inner: Weak<Inner>, uris: Vec<String>) {
    if uris.is_empty() {
        return;
    }
    let (Some(inner), Ok(rt)) = (inner.upgrade(), tokio::runtime::Handle::try_current()) else {
        return;
    };
    rt.spawn(async move {
        let mut counts = inner.legacy_subscriptions.lock().await;
        let opts = CallOptions::new();
        for uri in uris {
            match counts.get_mut(&uri) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    continue;
                }
                _ => {
                    counts.remove(&uri);
                }
            }
            let mut params = Map::new();
            params.insert("uri".into(), Value::from(uri));
            if let Err(e) = inner
                .call(&Req::new(legacy::RESOURCES_UNSUBSCRIBE, params, &opts))
                .await
            {
                tracing::debug!(error = %e, "resources/unsubscribe failed");
            }
        }
    });
}
