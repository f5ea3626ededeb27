//! Task status notifications for tasks kept elsewhere: a server that answers `tasks/*`
//! through a [`Forward`](crate::Forward) hook (a gateway, whose tasks run on its
//! upstreams) follows the tasks a `subscriptions/listen` stream names in
//! `notifications.taskIds` through a [`TaskFeed`] (ext-tasks/tasks.md, "Task Status
//! Notifications").

use futures::future::BoxFuture;
use futures::stream::BoxStream;

use ferry_protocol::tasks::DetailedTask;

/// Follows tasks this server does not store itself, for `subscriptions/listen`.
///
/// Give it to [`ServerBuilder::task_feed`](crate::ServerBuilder::task_feed). When a
/// listen stream asks for `taskIds`, the server calls [`follow`](TaskFeed::follow) once
/// with the ids (deduplicated, at most 64) and the caller; the stream's acknowledgement
/// names the ids the feed honoured, and each task the feed yields goes out as a
/// `notifications/tasks` tagged with the stream's subscription id. Dropping the stream
/// (the client went away) drops the feed's stream.
///
/// ```
/// use ferry_server::{FollowedTasks, TaskFeed};
/// use futures::FutureExt as _;
///
/// /// Follows nothing: every id is some other principal's, or unknown.
/// struct NoTasks;
///
/// impl TaskFeed for NoTasks {
///     fn follow(
///         &self,
///         _ids: Vec<String>,
///         _principal: Option<&str>,
///     ) -> futures::future::BoxFuture<'static, FollowedTasks> {
///         async { FollowedTasks::none() }.boxed()
///     }
/// }
/// ```
pub trait TaskFeed: Send + Sync + 'static {
    /// Follows those of `ids` that are the tasks of `principal` (the caller's
    /// [`Principal::id`](crate::Principal::id); `None` for an anonymous caller):
    /// resolves to the ids honoured, and a stream of their states, each task's current
    /// state first and then every change, with the ids the client knows them by. Ids that
    /// are unknown or another principal's are left out of `honoured`, as if they did not
    /// exist.
    fn follow(
        &self,
        ids: Vec<String>,
        principal: Option<&str>,
    ) -> BoxFuture<'static, FollowedTasks>;
}

/// What a [`TaskFeed`] follows for one listen stream.
#[non_exhaustive]
pub struct FollowedTasks {
    /// The task ids followed, as the client gave them.
    pub honoured: Vec<String>,
    /// Each followed task's state as it changes (`taskId` as the client knows it).
    pub updates: BoxStream<'static, DetailedTask>,
}

impl FollowedTasks {
    /// The ids `honoured` (as the client gave them), and the `updates` of those tasks.
    pub fn new(honoured: Vec<String>, updates: BoxStream<'static, DetailedTask>) -> Self {
        FollowedTasks { honoured, updates }
    }

    /// Nothing followed.
    pub fn none() -> Self {
        Self::new(Vec::new(), Box::pin(futures::stream::pending()))
    }
}

impl std::fmt::Debug for FollowedTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FollowedTasks")
            .field("honoured", &self.honoured)
            .finish_non_exhaustive()
    }
}
