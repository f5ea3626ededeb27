//! Tasks through the gateway (the Tasks extension, ext-tasks/tasks.md).
//!
//! An upstream that offers the extension may answer a `tools/call` with a
//! `CreateTaskResult`; its clients then follow the task with `tasks/get`, answer its
//! questions with `tasks/update` and stop it with `tasks/cancel`, all by `taskId`. The
//! gateway hands its client a task id of its own: the upstream's name and task id sealed
//! with the gateway's state keys (XChaCha20-Poly1305) and bound to the principal. So any
//! instance with the same keys routes a task request to its upstream with no shared
//! table, another principal's request for the task is refused as if the task did not
//! exist (the spec's auth binding), and the upstream's ids never reach the client.
//!
//! A `subscriptions/listen` stream that names gateway task ids in `notifications.taskIds`
//! is served by [`Feed`]: the ids are opened the same way, grouped by upstream, and each
//! upstream is listened to for its own ids; its `notifications/tasks` come back under
//! the gateway's ids. Any instance can serve the stream, as any can route `tasks/get`.
//! An upstream stream that breaks is listened to again, with a growing delay, until its
//! tasks have ended.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ferry_client::ServerNotification;
use ferry_protocol::ErrorObject;
use ferry_protocol::notifications;
use ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_protocol::tasks::{DetailedTask, TaskStatusNotificationParams};
use ferry_server::{FollowedTasks, TaskFeed};
use ferry_state::{Binding, KeyRing, StateClaims, StateGuard};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt as _, StreamExt as _};
use serde::{Deserialize, Serialize};

use crate::gateway::Core;
use crate::upstream::Upstream;

/// How long a task id the gateway hands out stays valid.
pub const TASK_ID_TTL: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// What a gateway task id holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TaskRoute {
    /// The upstream running the task.
    #[serde(rename = "u")]
    pub(crate) upstream: String,
    /// The upstream's own task id.
    #[serde(rename = "t")]
    pub(crate) task_id: String,
}

/// Seals and opens gateway task ids.
pub(crate) struct TaskIds {
    guard: StateGuard,
}

/// What a task id is bound to besides its principal.
const METHOD: &str = "tasks";
const TARGET: &str = "task";

impl TaskIds {
    /// Task ids sealed with `keys`.
    pub(crate) fn new(keys: KeyRing) -> Self {
        TaskIds {
            guard: StateGuard::new(keys).with_ttl(TASK_ID_TTL),
        }
    }

    /// The gateway's id for `route`, for `principal`'s requests only.
    pub(crate) fn seal(
        &self,
        route: &TaskRoute,
        principal: Option<&str>,
    ) -> Result<String, ErrorObject> {
        let binding = Binding::new(METHOD, TARGET, "").with_principal(principal);
        let mut claims = StateClaims::new(&binding);
        claims.app = Some(serde_json::to_value(route).unwrap_or_default());
        self.guard.issue(claims).map_err(|e| {
            tracing::warn!(error = %e, "a gateway task id could not be issued");
            ErrorObject::internal("Internal error: the task's id could not be issued")
        })
    }

    /// The route in `id`, if it is a task id this gateway gave `principal`.
    pub(crate) fn open(&self, id: &str, principal: Option<&str>) -> Result<TaskRoute, ErrorObject> {
        let binding = Binding::new(METHOD, TARGET, "").with_principal(principal);
        self.guard
            .verify(id, &binding)
            .ok()
            .and_then(|claims| claims.app)
            .and_then(|app| serde_json::from_value(app).ok())
            .ok_or_else(not_found)
    }
}

/// Follows gateway task ids for the gateway's listen streams, on their upstreams.
pub(crate) struct Feed(pub(crate) Arc<Core>);

impl TaskFeed for Feed {
    fn follow(
        &self,
        ids: Vec<String>,
        principal: Option<&str>,
    ) -> BoxFuture<'static, FollowedTasks> {
        let core = self.0.clone();
        // Upstream index -> (upstream task id -> gateway task id).
        let mut by_upstream: BTreeMap<usize, HashMap<String, String>> = BTreeMap::new();
        for id in ids.iter().cloned() {
            let Ok(route) = core.tasks.open(&id, principal) else {
                continue;
            };
            if let Some(index) = core
                .upstreams
                .iter()
                .position(|u| u.name() == route.upstream)
            {
                by_upstream
                    .entry(index)
                    .or_default()
                    .insert(route.task_id, id);
            }
        }
        async move {
            // Every upstream is listened to at once; the acknowledgement waits for them all.
            let listened = futures::future::join_all(
                by_upstream
                    .into_iter()
                    .map(|(index, names)| follow_on(&core.upstreams[index], names)),
            )
            .await;
            let mut followed = HashSet::new();
            let mut streams = Vec::new();
            for (gateway_ids, updates) in listened.into_iter().flatten() {
                followed.extend(gateway_ids);
                streams.push(updates);
            }
            FollowedTasks::new(
                // In the order the client gave them.
                ids.into_iter().filter(|id| followed.contains(id)).collect(),
                futures::stream::select_all(streams).boxed(),
            )
        }
        .boxed()
    }
}

/// How long the feed waits before listening again to an upstream whose stream broke;
/// doubled after each failed attempt, up to [`RELISTEN_MAX_DELAY`].
const RELISTEN_FIRST_DELAY: Duration = Duration::from_millis(100);

/// The longest wait between two attempts to listen again.
const RELISTEN_MAX_DELAY: Duration = Duration::from_secs(5);

/// How many attempts in a row to listen again fail before the feed gives up on an
/// upstream (its tasks then go quiet on the client's stream).
const RELISTEN_ATTEMPTS: u32 = 8;

/// Listens to `upstream` for the tasks of `names` (upstream task id to gateway task id):
/// the gateway ids it granted, and their notifications under those ids; `None` when the
/// upstream cannot be listened to.
async fn follow_on(
    upstream: &Upstream,
    names: HashMap<String, String>,
) -> Option<(Vec<String>, BoxStream<'static, DetailedTask>)> {
    let subscription = match upstream.client.listen(filter_for(&names)).await {
        Ok(s) => s,
        Err(e) => {
            let name = upstream.name();
            tracing::warn!(upstream = name, error = %e, "cannot follow tasks on the upstream");
            return None;
        }
    };
    let mut follow = Follow {
        client: upstream.client.clone(),
        upstream: upstream.name().to_owned(),
        names,
        subscription: None,
        failures: 0,
    };
    follow.listening(subscription);
    let gateway_ids = follow.names.values().cloned().collect();
    let updates = futures::stream::unfold(follow, |mut follow| async move {
        let task = follow.next().await?;
        Some((task, follow))
    })
    .boxed();
    Some((gateway_ids, updates))
}

/// A filter for the tasks of `names`.
fn filter_for(names: &HashMap<String, String>) -> SubscriptionFilter {
    names
        .keys()
        .fold(SubscriptionFilter::new(), |f, t| f.with_task(t.clone()))
}

/// The tasks followed on one upstream: its stream, listened to again when it breaks
/// (the upstream sends each task's current state first, so nothing is missed but the
/// steps in between), until every task has ended.
struct Follow {
    client: ferry_client::Client,
    upstream: String,
    /// Upstream task id to gateway task id, for the tasks not yet ended.
    names: HashMap<String, String>,
    subscription: Option<ferry_client::Subscription>,
    /// Attempts to listen again that failed since the last notification.
    failures: u32,
}

impl Follow {
    /// Follows on `subscription` the tasks it granted.
    fn listening(&mut self, subscription: ferry_client::Subscription) {
        let granted = subscription.granted().task_ids.clone().unwrap_or_default();
        self.names.retain(|task, _| granted.contains(task));
        self.subscription = Some(subscription);
    }

    /// The next notification of a followed task, under the gateway's id; `None` once
    /// every task has ended, or the upstream cannot be listened to again.
    async fn next(&mut self) -> Option<DetailedTask> {
        loop {
            if self.names.is_empty() {
                return None;
            }
            let Some(subscription) = self.subscription.as_mut() else {
                self.listen_again().await?;
                continue;
            };
            match subscription.next().await {
                Some(notification) => {
                    let Some((task_id, mut task)) = followed(&self.upstream, notification) else {
                        continue;
                    };
                    let Some(gateway_id) = self.names.get(&task_id).cloned() else {
                        continue;
                    };
                    self.failures = 0;
                    if task.task.status.is_terminal() {
                        self.names.remove(&task_id);
                    }
                    task.task.task_id = gateway_id;
                    return Some(task);
                }
                None => {
                    tracing::warn!(
                        upstream = self.upstream,
                        "an upstream's task stream ended; listening again"
                    );
                    self.subscription = None;
                }
            }
        }
    }

    /// Listens again for the tasks not yet ended, after a delay that grows with each
    /// failed attempt; `None` when it gave up.
    async fn listen_again(&mut self) -> Option<()> {
        loop {
            if self.failures >= RELISTEN_ATTEMPTS {
                tracing::warn!(
                    upstream = self.upstream,
                    attempts = self.failures,
                    "gave up listening again for tasks on the upstream"
                );
                return None;
            }
            let delay = RELISTEN_FIRST_DELAY
                .saturating_mul(1 << self.failures.min(16))
                .min(RELISTEN_MAX_DELAY);
            self.failures += 1;
            tokio::time::sleep(delay).await;
            match self.client.listen(filter_for(&self.names)).await {
                Ok(subscription) => {
                    self.listening(subscription);
                    return Some(());
                }
                Err(e) => tracing::warn!(
                    upstream = self.upstream,
                    error = %e,
                    "cannot listen again for tasks on the upstream"
                ),
            }
        }
    }
}

/// An upstream's `notifications/tasks`, with the task's upstream id.
fn followed(
    upstream: &str,
    notification: ferry_client::Result<ServerNotification>,
) -> Option<(String, DetailedTask)> {
    let params = match notification {
        Ok(ServerNotification::Other { method, params }) if method == notifications::TASKS => {
            params?
        }
        Ok(_) => return None,
        Err(e) => {
            tracing::warn!(upstream, error = %e, "an upstream's task stream failed");
            return None;
        }
    };
    let task = serde_json::from_value::<TaskStatusNotificationParams>(params)
        .ok()?
        .task;
    Some((task.task.task_id.clone(), task))
}

/// The one answer for a task the caller may not see: unknown, expired, or another's
/// (the same as ferry-server's own task store gives).
pub(crate) fn not_found() -> ErrorObject {
    ErrorObject::invalid_params("Failed to retrieve task: Task not found")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_id_opens_for_its_principal_only() {
        let ids = TaskIds::new(KeyRing::random());
        let route = TaskRoute {
            upstream: "ev".into(),
            task_id: "t-1".into(),
        };
        let id = ids.seal(&route, Some("alice")).unwrap();
        assert!(!id.contains("t-1"));
        assert_eq!(ids.open(&id, Some("alice")).unwrap(), route);
        for (other, principal) in [(&id, Some("bob")), (&id, None)] {
            let err = ids.open(other, principal).unwrap_err();
            assert_eq!(err.message, "Failed to retrieve task: Task not found");
        }
        assert!(ids.open("not-a-task", Some("alice")).is_err());
        let elsewhere = TaskIds::new(KeyRing::random());
        assert!(elsewhere.open(&id, Some("alice")).is_err());
    }
}
