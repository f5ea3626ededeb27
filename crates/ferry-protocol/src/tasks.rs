//! The Tasks extension (`io.modelcontextprotocol/tasks`, ext-tasks/tasks.md): a server may
//! answer `tools/call` with a task handle instead of the result, and the client polls
//! `tasks/get` until the task is terminal, answering its `inputRequests` with
//! `tasks/update` and stopping it with `tasks/cancel`.
//!
//! ```
//! use ferry_protocol::tasks::{CreateTaskResult, DetailedTask, GetTaskResult, Task, TaskStatus};
//!
//! let task = Task::new("786512e2", TaskStatus::Working, "2025-11-25T10:30:00Z")
//!     .with_ttl_ms(Some(60_000))
//!     .with_poll_interval_ms(5_000);
//! let created = serde_json::to_value(CreateTaskResult::new(task.clone())).unwrap();
//! assert_eq!(created["resultType"], "task");
//! assert_eq!(created["taskId"], "786512e2");
//!
//! let done = DetailedTask::completed(task, serde_json::json!({"content": []}));
//! let got = serde_json::to_value(GetTaskResult::new(done)).unwrap();
//! assert_eq!(got["resultType"], "complete");
//! assert_eq!(got["status"], "completed");
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::ErrorObject;
use crate::meta::Meta;
use crate::result::ResultType;

/// The extension's identifier, as declared in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The status of a task (ext-tasks/tasks.md, "Task Status").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The server waits for the client's answers to `inputRequests`.
    InputRequired,
    /// Finished with a result (tool errors with `isError: true` included).
    Completed,
    /// Ended by a JSON-RPC error.
    Failed,
    /// Cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the task can change no more: completed, failed or cancelled.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The metadata every task carries (schema `Task`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's identifier, for `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// A message about the current state, which may be shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long after creation the server keeps it, in milliseconds; `None` (sent as
    /// `null`) for unlimited.
    pub ttl_ms: Option<u64>,
    /// How often the client should poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

impl Task {
    /// A task created at `created_at` (also its last update), with no TTL.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
    ) -> Self {
        let created_at = created_at.into();
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            last_updated_at: created_at.clone(),
            created_at,
            ttl_ms: None,
            poll_interval_ms: None,
        }
    }

    /// The same task with this TTL.
    pub fn with_ttl_ms(mut self, ttl_ms: Option<u64>) -> Self {
        self.ttl_ms = ttl_ms;
        self
    }

    /// The same task with this suggested polling interval.
    pub fn with_poll_interval_ms(mut self, ms: u64) -> Self {
        self.poll_interval_ms = Some(ms);
        self
    }

    /// The same task with this status message.
    pub fn with_status_message(mut self, message: impl Into<String>) -> Self {
        self.status_message = Some(message.into());
        self
    }
}

/// A task with the payload of its status inlined (schema `DetailedTask`): the
/// outstanding `inputRequests` when `input_required`, the `result` when `completed`, the
/// `error` when `failed`. Used by `tasks/get` and `notifications/tasks`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// The outstanding requests to the client, by key (`input_required` only). Kept raw:
    /// each is an `InputRequest` (see [`crate::mrtr::InputRequest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, Value>>,
    /// The final result, shaped like the original request's result (`completed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error the request ended with (`failed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl DetailedTask {
    /// A task with nothing inlined (`working` or `cancelled`).
    pub fn plain(task: Task) -> Self {
        DetailedTask {
            task,
            input_requests: None,
            result: None,
            error: None,
        }
    }

    /// A completed task with its result.
    pub fn completed(mut task: Task, result: Value) -> Self {
        task.status = TaskStatus::Completed;
        DetailedTask {
            result: Some(result),
            ..DetailedTask::plain(task)
        }
    }

    /// A failed task with its error.
    pub fn failed(mut task: Task, error: ErrorObject) -> Self {
        task.status = TaskStatus::Failed;
        DetailedTask {
            error: Some(error),
            ..DetailedTask::plain(task)
        }
    }

    /// A task waiting for the client's answers to `requests`.
    pub fn input_required(mut task: Task, requests: BTreeMap<String, Value>) -> Self {
        task.status = TaskStatus::InputRequired;
        DetailedTask {
            input_requests: Some(requests),
            ..DetailedTask::plain(task)
        }
    }

    /// The task id.
    pub fn id(&self) -> &str {
        &self.task.task_id
    }

    /// The status.
    pub fn status(&self) -> TaskStatus {
        self.task.status
    }
}

/// The answer to a request the server chose to run as a task (schema `CreateTaskResult`):
/// `resultType: "task"` and the task's metadata, flat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Always `"task"`.
    pub result_type: ResultType,
    /// The task's seed state.
    #[serde(flatten)]
    pub task: Task,
}

impl CreateTaskResult {
    /// The result for `task`.
    pub fn new(task: Task) -> Self {
        CreateTaskResult {
            meta: None,
            result_type: ResultType::Task,
            task,
        }
    }
}

/// The answer to `tasks/get` (schema `GetTaskResult`): `resultType: "complete"` and the
/// detailed task, flat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskResult {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `"complete"`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

impl GetTaskResult {
    /// The result for `task`.
    pub fn new(task: DetailedTask) -> Self {
        GetTaskResult {
            meta: None,
            result_type: ResultType::Complete,
            task,
        }
    }
}

/// Params of `tasks/get` and `tasks/cancel`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
}

/// Params of `tasks/update`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskRequestParams {
    /// The task.
    pub task_id: String,
    /// Answers to outstanding `inputRequests`, by key (shape per MRTR).
    pub input_responses: BTreeMap<String, Value>,
}

/// Params of `notifications/tasks`: the detailed task, as `tasks/get` would return it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskStatusNotificationParams {
    /// `_meta` (the listen stream's subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

/// The `-32021` error for a client that did not declare the extension, naming it in
/// `data.requiredCapabilities.extensions` (ext-tasks/tasks.md, "Capability Negotiation").
pub fn missing_extension(message: impl Into<String>) -> ErrorObject {
    ErrorObject::missing_capability(message, json!({ "extensions": { EXTENSION: {} } }))
}

/// Formats milliseconds since the Unix epoch as an ISO 8601 UTC timestamp with
/// millisecond precision, e.g. `2025-11-25T10:30:00.000Z`.
///
/// ```
/// assert_eq!(ferry_protocol::tasks::timestamp(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(ferry_protocol::tasks::timestamp(1_764_066_600_123), "2025-11-25T10:30:00.123Z");
/// ```
pub fn timestamp(unix_ms: u64) -> String {
    let mut out = String::with_capacity(24);
    crate::time::push_timestamp(&mut out, std::time::Duration::from_millis(unix_ms), 3);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(timestamp(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
        assert_eq!(timestamp(1_709_251_199_000), "2024-02-29T23:59:59.000Z");
    }

    #[test]
    fn ttl_is_always_present() {
        let t = Task::new("t", TaskStatus::Working, "2025-11-25T10:30:00Z");
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["ttlMs"], Value::Null);
        assert!(v.get("pollIntervalMs").is_none());
        let back: Task = serde_json::from_value(v).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn statuses() {
        assert!(TaskStatus::Cancelled.is_terminal());
        assert!(!TaskStatus::InputRequired.is_terminal());
        assert_eq!(
            serde_json::to_value(TaskStatus::InputRequired).unwrap(),
            "input_required"
        );
    }
}
