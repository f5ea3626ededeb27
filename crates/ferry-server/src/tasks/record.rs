//! A task as a store keeps it: its state, who owns it and when it expires.

use std::collections::BTreeMap;

use ferry_protocol::ErrorObject;
use ferry_protocol::tasks::{DetailedTask, Task, TaskStatus, timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// One task, as stored. Stores treat it as a serializable value with a few facts they
/// need: its [`id`](TaskRecord::id), its [`owner`](TaskRecord::owner) (for the bound per
/// principal), its [expiry](TaskRecord::expires_at_ms) and whether it
/// [is terminal](TaskRecord::is_terminal).
///
/// ```
/// use ferry_server::TaskRecord;
///
/// let record = TaskRecord::new("t-1", Some("alice".into()), 1_000, 60_000);
/// assert_eq!(record.expires_at_ms(), 61_000);
/// assert!(!record.is_terminal());
/// assert!(record.is_owned_by(Some("alice")));
/// assert!(!record.is_owned_by(None));
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task id (at least 128 random bits).
    pub id: String,
    /// The principal that created it ([`Principal::id`](crate::Principal::id)); `None`
    /// for an anonymous caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Its status.
    pub status: TaskStatus,
    /// Its `statusMessage`.
    #[serde(rename = "message", default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Created, in milliseconds since the Unix epoch.
    #[serde(rename = "created")]
    pub created_at_ms: u64,
    /// Last changed, in milliseconds since the Unix epoch.
    #[serde(rename = "updated")]
    pub updated_at_ms: u64,
    /// How long after its creation it is kept, in milliseconds.
    #[serde(rename = "ttl")]
    pub ttl_ms: u64,
    /// The polling interval suggested to clients, in milliseconds.
    #[serde(rename = "poll", default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// Outstanding requests to the client, by key, each an `InputRequest` as sent.
    #[serde(rename = "asks", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, Box<RawValue>>,
    /// Answers delivered by `tasks/update` that the work has not taken yet, by key.
    #[serde(
        rename = "answers",
        default,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub input_responses: BTreeMap<String, Value>,
    /// The final result (`completed`), shaped like the original request's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<RawValue>>,
    /// The JSON-RPC error the request ended with (`failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// The server instance running the work, while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
}

impl TaskRecord {
    /// A `working` task created at `now_ms`, kept for `ttl_ms`.
    pub fn new(id: impl Into<String>, owner: Option<String>, now_ms: u64, ttl_ms: u64) -> Self {
        TaskRecord {
            id: id.into(),
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            ttl_ms,
            poll_interval_ms: None,
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
            result: None,
            error: None,
            runner: None,
        }
    }

    /// The task id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The principal that owns it (`None`: anonymous).
    pub fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// When it may be discarded, in milliseconds since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.created_at_ms.saturating_add(self.ttl_ms)
    }

    /// Whether it has expired at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        now_ms >= self.expires_at_ms()
    }

    /// Whether it can change no more (completed, failed or cancelled).
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }

    /// Whether `owner` (a principal id, or `None` for anonymous) owns it.
    pub fn is_owned_by(&self, owner: Option<&str>) -> bool {
        self.owner.as_deref() == owner
    }

    /// Marks a task whose work can no longer finish (its process stopped) as `failed`
    /// at `now_ms`, with a -32603 error saying why. Terminal tasks are left alone.
    pub fn interrupt(&mut self, now_ms: u64, why: &str) {
        if self.is_terminal() {
            return;
        }
        let error = ErrorObject::internal(format!("Internal error: {why}"));
        self.status = TaskStatus::Failed;
        self.status_message = Some(why.to_owned());
        self.error = Some(error);
        self.input_requests.clear();
        self.input_responses.clear();
        self.runner = None;
        self.updated_at_ms = now_ms.max(self.updated_at_ms);
    }

    /// The task's metadata, as sent.
    pub fn to_task(&self) -> Task {
        Task {
            task_id: self.id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: timestamp(self.created_at_ms),
            last_updated_at: timestamp(self.updated_at_ms),
            ttl_ms: Some(self.ttl_ms),
            poll_interval_ms: self.poll_interval_ms,
        }
    }

    /// The task with its status's payload, as `tasks/get` and `notifications/tasks` send
    /// it.
    pub fn to_detailed(&self) -> DetailedTask {
        let task = self.to_task();
        let raw = |r: &RawValue| serde_json::from_str::<Value>(r.get()).unwrap_or(Value::Null);
        match self.status {
            TaskStatus::InputRequired => DetailedTask::input_required(
                task,
                self.input_requests
                    .iter()
                    .map(|(k, v)| (k.clone(), raw(v)))
                    .collect(),
            ),
            TaskStatus::Completed => DetailedTask::completed(
                task,
                self.result
                    .as_deref()
                    .map(raw)
                    .unwrap_or_else(|| Value::Object(Default::default())),
            ),
            TaskStatus::Failed => DetailedTask::failed(
                task,
                self.error
                    .clone()
                    .unwrap_or_else(|| ErrorObject::internal("Internal error")),
            ),
            TaskStatus::Working | TaskStatus::Cancelled => DetailedTask::plain(task),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_form_round_trips() {
        let mut r = TaskRecord::new("abc", None, 5, 10);
        r.input_requests.insert(
            "confirm".into(),
            serde_json::value::to_raw_value(
                &serde_json::json!({"method": "elicitation/create", "params": {"b": 1, "a": 2}}),
            )
            .unwrap(),
        );
        r.status = TaskStatus::InputRequired;
        let bytes = serde_json::to_vec(&r).unwrap();
        let back: TaskRecord = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(serde_json::to_vec(&back).unwrap(), bytes);
        let detailed = serde_json::to_value(back.to_detailed()).unwrap();
        assert_eq!(detailed["inputRequests"]["confirm"]["params"]["a"], 2);
        assert_eq!(detailed["ttlMs"], 10);
    }

    #[test]
    fn interrupted_tasks_fail_with_a_reason() {
        let mut r = TaskRecord::new("abc", None, 5, 10);
        r.interrupt(7, "the server stopped while the task was running");
        assert_eq!(r.status, TaskStatus::Failed);
        let d = serde_json::to_value(r.to_detailed()).unwrap();
        assert_eq!(d["error"]["code"], -32603);
        assert!(d.get("result").is_none());
        let mut done = TaskRecord::new("x", None, 5, 10);
        done.status = TaskStatus::Completed;
        done.interrupt(7, "x");
        assert_eq!(done.status, TaskStatus::Completed);
    }
}
