//! `subscriptions/listen`: acknowledgement first, then only the notifications the client
//! asked for, each tagged with the subscription id; a completion result when the server
//! ends the stream (subscriptions.mdx).

use bytes::Bytes;
use ferry_protocol::ClientCapabilities;
use ferry_protocol::capabilities::ServerCapabilities;
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::jsonrpc::encode_notification;
use ferry_protocol::meta::{Meta, SUBSCRIPTION_ID};
use ferry_protocol::notifications::{self, NotificationParams, ResourceUpdatedNotificationParams};
use ferry_protocol::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenResult,
};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use futures::{Stream, StreamExt};
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::{ReusableBoxFuture, WaitForCancellationFutureOwned};

use crate::hub::{Event, uri_covers};
use crate::outbound::Outbound;
use crate::principal::Principal;
use crate::refusal::{Attempt, Failure, Refusal};
use crate::reply::Reply;
use crate::server::Server;
use crate::tasks::listen::{TaskEvents, TaskFilter};
use ferry_protocol::tasks::{EXTENSION as TASKS_EXTENSION, missing_extension};

/// The notifications a listen stream honours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
    /// The tasks to follow (Tasks extension), when asked for on a server with tasks.
    tasks: Option<Box<TaskFilter>>,
}

impl Filter {
    /// The filter as honoured, for the acknowledgement (with the task ids followed).
    fn honoured(&self, task_ids: Option<Vec<String>>) -> SubscriptionFilter {
        SubscriptionFilter {
            tools_list_changed: self.tools.then_some(true),
            prompts_list_changed: self.prompts.then_some(true),
            resources_list_changed: self.resources.then_some(true),
            resource_subscriptions: (!self.uris.is_empty()).then(|| self.uris.clone()),
            task_ids,
        }
    }

    fn wants(&self, event: &Event) -> bool {
        match event {
            Event::ToolsChanged => self.tools,
            Event::PromptsChanged => self.prompts,
            Event::ResourcesChanged => self.resources,
            Event::ResourceUpdated(uri) => self.uris.iter().any(|s| uri_covers(s, uri)),
        }
    }
}

/// Reads the requested filter and keeps only what this server honours. `tasks` is the
/// caller, when the server offers tasks (whose ids it may follow).
pub(crate) fn parse_filter(
    notifications: Option<Value>,
    client: &ClientCapabilities,
    server: &ServerCapabilities,
    tasks: Option<Option<&Principal>>,
) -> Attempt<Filter> {
    let bad = |m: &str| Failure::invalid_params(format!("Invalid params: {m}"));
    let n = match notifications {
        None => return Err(bad("notifications is required")),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(bad("notifications must be an object")),
    };
    let flag = |k: &str| -> Attempt<bool> {
        match n.get(k) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad(&format!("notifications.{k} must be a boolean"))),
        }
    };
    let uris = match n.get("resourceSubscriptions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|u| u.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("notifications.resourceSubscriptions must be an array of URIs"))?,
        Some(_) => {
            return Err(bad(
                "notifications.resourceSubscriptions must be an array of URIs",
            ));
        }
    };
    let task_ids = match n.get("taskIds") {
        None | Some(Value::Null) => None,
        Some(_) if !client.has_extension(TASKS_EXTENSION) => {
            return Err(Failure::refused(
                Refusal::MissingCapability,
                missing_extension(
                    "Task notifications need the io.modelcontextprotocol/tasks extension",
                ),
            ));
        }
        Some(v) => Some(
            crate::tasks::listen::parse_ids(v)
                .ok_or_else(|| bad("notifications.taskIds must be an array of task ids"))?,
        ),
    };
    let tasks = match (task_ids, tasks) {
        (Some(ids), Some(owner)) => Some(Box::new(TaskFilter {
            ids,
            owner: owner.map(|p| p.id().to_owned()),
        })),
        _ => None,
    };
    let res = server.resources.as_ref();
    Ok(Filter {
        tools: flag("toolsListChanged")?
            && server
                .tools
                .as_ref()
                .is_some_and(|t| t.list_changed == Some(true)),
        prompts: flag("promptsListChanged")?
            && server
                .prompts
                .as_ref()
                .is_some_and(|p| p.list_changed == Some(true)),
        resources: flag("resourcesListChanged")?
            && res.is_some_and(|r| r.list_changed == Some(true)),
        uris: if res.is_some_and(|r| r.subscribe == Some(true)) {
            uris
        } else {
            Vec::new()
        },
        tasks,
    })
}

/// The `_meta` that ties a notification to its listen request.
fn subscription_meta(id: &RequestId) -> Meta {
    let mut meta = Meta::new();
    meta.insert(SUBSCRIPTION_ID.to_owned(), id.to_value());
    meta
}

/// One `subscriptions/listen` stream as a [`Stream`] of serialized messages: the
/// acknowledgement, then each notification the filter lets through, then (when the server
/// shuts down) the graceful completion result. It ends after the completion result; a
/// transport that loses its client just drops it.
///
/// Transports drive it directly (an SSE body, the stdio writer), so an idle stream holds
/// only its receiver and filter: no task, no channel.
pub struct ListenStream {
    server: Server,
    id: RequestId,
    filter: Filter,
    phase: Phase,
    events: ReusableBoxFuture<'static, (Result<Event, RecvError>, Receiver<Event>)>,
    shutdown: Pin<Box<WaitForCancellationFutureOwned>>,
    /// The tasks it follows, if any.
    tasks: Option<Box<TaskEvents>>,
    /// Its resource subscriptions, counted among the server's while it is open.
    _interest: Option<crate::interest::InterestLease>,
    _count: crate::telemetry::ListenCount,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Ack,
    Live,
    Done,
}

async fn next_event(mut rx: Receiver<Event>) -> (Result<Event, RecvError>, Receiver<Event>) {
    let e = rx.recv().await;
    (e, rx)
}

impl ListenStream {
    pub(crate) fn new(server: Server, id: RequestId, filter: Filter) -> Self {
        let rx = server.inner.hub.subscribe();
        let shutdown = Box::pin(server.inner.shutdown.clone().cancelled_owned());
        let tasks = match (&filter.tasks, &server.inner.tasks, &server.inner.task_feed) {
            (Some(f), Some(tasks), _) => Some(Box::new(TaskEvents::new(
                tasks.clone(),
                (**f).clone(),
                id.clone(),
            ))),
            (Some(f), None, Some(feed)) => Some(Box::new(TaskEvents::from_feed(
                &**feed,
                (**f).clone(),
                id.clone(),
            ))),
            _ => None,
        };
        let interest = server.inner.hub.interest.hold(&filter.uris);
        ListenStream {
            server,
            id,
            filter,
            phase: Phase::Ack,
            events: ReusableBoxFuture::new(next_event(rx)),
            shutdown,
            tasks,
            _interest: interest,
            _count: crate::telemetry::ListenCount::open(),
        }
    }

    /// The id of the listen request (the subscription id).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    fn notification(&self, event: &Event) -> Bytes {
        let meta = Some(subscription_meta(&self.id));
        let changed =
            |method| encode_notification(method, &NotificationParams { meta: meta.clone() });
        Bytes::from(match event {
            Event::ToolsChanged => changed(notifications::TOOLS_LIST_CHANGED),
            Event::PromptsChanged => changed(notifications::PROMPTS_LIST_CHANGED),
            Event::ResourcesChanged => changed(notifications::RESOURCES_LIST_CHANGED),
            Event::ResourceUpdated(uri) => encode_notification(
                notifications::RESOURCES_UPDATED,
                &ResourceUpdatedNotificationParams {
                    meta,
                    uri: uri.to_string(),
                },
            ),
        })
    }
}

impl Stream for ListenStream {
    type Item = Bytes;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Option<Bytes>> {
        let this = &mut *self;
        match this.phase {
            Phase::Done => return Poll::Ready(None),
            Phase::Ack => {
                // The tasks followed are known once the caller's are told apart.
                let task_ids = match this.tasks.as_mut() {
                    Some(t) => match t.poll_ready(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(ids) => Some(ids),
                    },
                    None => None,
                };
                this.phase = Phase::Live;
                let ack = SubscriptionsAcknowledgedNotificationParams::new(
                    &this.id,
                    this.filter.honoured(task_ids),
                );
                return Poll::Ready(Some(Bytes::from(encode_notification(
                    notifications::SUBSCRIPTIONS_ACKNOWLEDGED,
                    &ack,
                ))));
            }
            Phase::Live => {}
        }
        if this.shutdown.as_mut().poll(cx).is_ready() {
            this.phase = Phase::Done;
            return Poll::Ready(Some(completion(&this.server, &this.id).body));
        }
        if let Some(t) = this.tasks.as_mut()
            && let Poll::Ready(Some(n)) = t.poll_next(cx)
        {
            return Poll::Ready(Some(n));
        }
        loop {
            let (event, rx) = match this.events.poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(out) => out,
            };
            this.events.set(next_event(rx));
            match event {
                Ok(e) if this.filter.wants(&e) => return Poll::Ready(Some(this.notification(&e))),
                Ok(_) => continue,
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(
                        skipped = n,
                        "listen stream fell behind; some notifications were dropped"
                    );
                    continue;
                }
                Err(RecvError::Closed) => {
                    this.phase = Phase::Done;
                    return Poll::Ready(Some(completion(&this.server, &this.id).body));
                }
            }
        }
    }
}

/// Serves one listen stream through an outbound channel, for transports that drive calls
/// as futures: every message but the last goes to `outbound`, the last is the reply.
pub(crate) async fn run(
    server: &Server,
    id: RequestId,
    filter: Filter,
    outbound: Outbound,
) -> Reply {
    let mut stream = ListenStream::new(server.clone(), id.clone(), filter);
    while let Some(msg) = stream.next().await {
        if stream.phase == Phase::Done {
            return Reply {
                body: msg,
                kind: crate::reply::ReplyKind::Result,
            };
        }
        if !outbound.send(msg).await {
            break;
        }
    }
    completion(server, &id)
}

/// The graceful completion result: `{resultType: complete, _meta: {subscriptionId}}`.
fn completion(server: &Server, id: &RequestId) -> Reply {
    let mut result = SubscriptionsListenResult::closed(id);
    if let Some(meta) = result.meta.as_mut() {
        meta.insert(
            ferry_protocol::meta::SERVER_INFO.into(),
            serde_json::to_value(&server.inner.info).unwrap_or(Value::Null),
        );
    }
    Reply::result(id, &result, None)
}
