//! `notifications/tasks` on `subscriptions/listen` (ext-tasks/tasks.md, "Task Status
//! Notifications"): a stream follows the requested tasks that are the caller's, sends
//! each one's current state once, then every change.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use ferry_protocol::jsonrpc::{RequestId, encode_notification};
use ferry_protocol::meta::{Meta, SUBSCRIPTION_ID};
use ferry_protocol::notifications;
use ferry_protocol::tasks::DetailedTask;
use ferry_protocol::tasks::TaskStatusNotificationParams;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use futures::stream::{BoxStream, SelectAll, StreamExt as _};
use serde_json::Value;

use super::feed::TaskFeed;
use super::service::Tasks;
use super::store::TaskSignal;

/// Most tasks one listen stream follows; ids beyond are not honoured.
pub(crate) const MAX_TASK_IDS: usize = 64;

/// The tasks a listen stream asked to follow, and who asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TaskFilter {
    pub(crate) ids: Vec<String>,
    pub(crate) owner: Option<String>,
}

/// Reads `notifications.taskIds`: an array of strings, deduplicated and bounded.
pub(crate) fn parse_ids(value: &Value) -> Option<Vec<String>> {
    let list = value.as_array()?;
    let mut ids: Vec<String> = Vec::new();
    for v in list {
        let id = v.as_str()?;
        if !ids.iter().any(|i| i == id) && ids.len() < MAX_TASK_IDS {
            ids.push(id.to_owned());
        }
    }
    Some(ids)
}

/// Each followed task's states, from this server's store or from a [`TaskFeed`].
type Updates = BoxStream<'static, DetailedTask>;

struct Ready {
    honoured: Vec<String>,
    current: Vec<DetailedTask>,
    streams: Vec<Updates>,
}

enum State {
    Setup(BoxFuture<'static, Ready>),
    Live {
        queued: VecDeque<Bytes>,
        streams: SelectAll<Updates>,
    },
}

/// One `notifications/tasks`, tagged with the listen stream's subscription id.
fn encode(subscription: &RequestId, task: DetailedTask) -> Bytes {
    let mut meta = Meta::new();
    meta.insert(SUBSCRIPTION_ID.to_owned(), subscription.to_value());
    let params = TaskStatusNotificationParams {
        meta: Some(meta),
        task,
    };
    Bytes::from(encode_notification(notifications::TASKS, &params))
}

/// The task part of one listen stream.
pub(crate) struct TaskEvents {
    state: State,
    subscription: RequestId,
}

impl TaskEvents {
    pub(crate) fn new(tasks: Arc<Tasks>, filter: TaskFilter, subscription: RequestId) -> Self {
        let setup = async move {
            let mut ready = Ready {
                honoured: Vec::new(),
                current: Vec::new(),
                streams: Vec::new(),
            };
            for id in filter.ids {
                // Subscribe first, then read: no change between the two is missed.
                let Ok(signals) = tasks.bus.subscribe(&id).await else {
                    continue;
                };
                match tasks.owned(&id, filter.owner.as_deref()).await {
                    Ok(Some(stored)) => {
                        ready.honoured.push(id);
                        ready.current.push(stored.record.to_detailed());
                        ready.streams.push(
                            signals
                                .filter_map(|signal| async move {
                                    match signal {
                                        TaskSignal::Changed(record) => Some(record.to_detailed()),
                                        _ => None,
                                    }
                                })
                                .boxed(),
                        );
                    }
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "could not look up a task to follow"),
                }
            }
            ready
        };
        TaskEvents {
            state: State::Setup(Box::pin(setup)),
            subscription,
        }
    }

    /// Follows the tasks of `filter` through `feed` (tasks this server does not store).
    pub(crate) fn from_feed(
        feed: &dyn TaskFeed,
        filter: TaskFilter,
        subscription: RequestId,
    ) -> Self {
        let followed = feed.follow(filter.ids, filter.owner.as_deref());
        let setup = async move {
            let followed = followed.await;
            Ready {
                honoured: followed.honoured,
                current: Vec::new(),
                streams: vec![followed.updates],
            }
        };
        TaskEvents {
            state: State::Setup(Box::pin(setup)),
            subscription,
        }
    }

    /// Completes with the ids honoured, once the caller's tasks among them are known.
    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Vec<String>> {
        let State::Setup(setup) = &mut self.state else {
            return Poll::Ready(Vec::new());
        };
        let ready = match setup.poll_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(r) => r,
        };
        let queued = ready
            .current
            .into_iter()
            .map(|task| encode(&self.subscription, task))
            .collect();
        let mut streams = SelectAll::new();
        for s in ready.streams {
            streams.push(s);
        }
        self.state = State::Live { queued, streams };
        Poll::Ready(ready.honoured)
    }

    /// The next notification; pending when there is none (it never ends the stream).
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let State::Live { queued, streams } = &mut self.state else {
            return Poll::Pending;
        };
        if let Some(b) = queued.pop_front() {
            return Poll::Ready(Some(b));
        }
        if streams.is_empty() {
            return Poll::Pending;
        }
        match streams.poll_next_unpin(cx) {
            Poll::Ready(Some(task)) => Poll::Ready(Some(encode(&self.subscription, task))),
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }
}
