//! Calls that become tasks (the Tasks extension, ext-tasks/tasks.md): the client
//! declares `io.modelcontextprotocol/tasks`, and when a `tools/call` answers with a
//! `CreateTaskResult` it follows the task: it polls `tasks/get` at the server's
//! `pollIntervalMs`, answers `input_required` through the same input handler as MRTR
//! (with `tasks/update`) and returns the final result. Dropping the call, or its
//! [`task_timeout`](crate::CallOptions::task_timeout) expiring, cancels the task unless
//! the call was [detached](crate::CallOptions::detach).
//!
//! [`Client::task`](crate::Client::task) gives a [`TaskHandle`] to get, answer, cancel
//! or follow a task by id.

use std::sync::Arc;
use std::time::Duration;

use ferry_protocol::methods;
use ferry_protocol::mrtr::InputRequests;
use ferry_protocol::tasks::{DetailedTask, GetTaskResult, TaskStatus};
use ferry_protocol::tools::CallToolResult;
use serde_json::{Map, Value, json};

use crate::answer;
use crate::client::{Inner, Req};
use crate::error::{Error, Result, RpcError};
use crate::handler::AskOrigin;
use crate::options::{CallOptions, Progress};

/// Polling interval when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// Bounds on the server's suggestion: never busier, never sleepier.
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(30);

/// Whether a `tools/call` result is a task handle.
pub(crate) fn is_task(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("task")
}

fn poll_interval(ms: Option<u64>) -> Duration {
    ms.map(Duration::from_millis)
        .unwrap_or(DEFAULT_POLL)
        .clamp(MIN_POLL, MAX_POLL)
}

/// Reads Ferry's own progress form in a `statusMessage` ("40% (2/5): label"), so a
/// progress callback hears a task's progress as it would a plain call's.
pub(crate) fn progress_of(message: &str) -> Option<Progress> {
    let (_, rest) = message.split_once("% (")?;
    let (amount, tail) = rest.split_once(')')?;
    let (done, total) = amount.split_once('/')?;
    let progress = done.trim().parse::<f64>().ok()?;
    let total = total.trim().parse::<f64>().ok()?;
    let text = tail.strip_prefix(": ").map(str::to_owned);
    Some(Progress {
        progress,
        total: Some(total),
        message: text,
    })
}

/// A task by id on this client's server: its state, answers to its questions,
/// cancelling it, and following it to its end.
///
/// ```no_run
/// # async fn run(client: ferry_client::Client) -> ferry_client::Result<()> {
/// let task = client.task("H1p_vl_JWzakJLmP2FYHgvLr");
/// let state = task.get().await?;
/// println!("{}: {:?}", state.id(), state.status());
/// let result = task.wait(&Default::default()).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct TaskHandle {
    pub(crate) inner: Arc<Inner>,
    pub(crate) id: String,
    pub(crate) origin: AskOrigin,
}

impl std::fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskHandle").field("id", &self.id).finish()
    }
}

impl TaskHandle {
    /// The task id.
    pub fn id(&self) -> &str {
        &self.id
    }

    async fn request(&self, method: &'static str, params: Value) -> Result<Value> {
        let params = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let opts = CallOptions::new();
        self.inner.call(&Req::new(method, params, &opts)).await
    }

    /// The task's state now (`tasks/get`): status, message and, by status, its
    /// questions, result or error.
    pub async fn get(&self) -> Result<DetailedTask> {
        let v = self
            .request(methods::TASKS_GET, json!({"taskId": self.id}))
            .await?;
        let r: GetTaskResult = serde_json::from_value(v)
            .map_err(|e| Error::protocol(format!("invalid tasks/get result: {e}")))?;
        Ok(r.task)
    }

    /// Asks the server to cancel the task (`tasks/cancel`).
    pub async fn cancel(&self) -> Result<()> {
        self.request(methods::TASKS_CANCEL, json!({"taskId": self.id}))
            .await
            .map(drop)
    }

    /// Answers some of the task's outstanding questions (`tasks/update`), keyed like its
    /// `inputRequests`.
    pub async fn update(&self, responses: ferry_protocol::mrtr::InputResponses) -> Result<()> {
        self.request(
            methods::TASKS_UPDATE,
            json!({"taskId": self.id, "inputResponses": responses}),
        )
        .await
        .map(drop)
    }

    /// Follows the task to its end as [`Client::call_tool`](crate::Client::call_tool)
    /// does: polls, answers questions through the input handler, returns the result.
    /// Honours `opts`' task timeout, status and progress callbacks and
    /// [`detach`](CallOptions::detach) (dropping this future cancels the task unless
    /// detached).
    pub async fn wait(&self, opts: &CallOptions) -> Result<CallToolResult> {
        let mut guard = CancelOnDrop {
            handle: Some(self.clone()),
        };
        if opts.detach {
            guard.handle = None;
        }
        let followed = match opts.task_timeout {
            Some(limit) => match tokio::time::timeout(limit, self.follow(opts)).await {
                Ok(r) => r,
                Err(_) => Err(Error::Timeout {
                    method: methods::TOOLS_CALL.to_owned(),
                    after: limit,
                }),
            },
            None => self.follow(opts).await,
        };
        if followed.is_ok() || matches!(followed, Err(Error::TaskCancelled { .. })) {
            guard.handle = None;
        }
        followed
    }

    async fn follow(&self, opts: &CallOptions) -> Result<CallToolResult> {
        let mut answered = std::collections::BTreeSet::new();
        loop {
            let task = self.get().await?;
            if let Some(f) = &opts.task_status {
                f(&task.task);
            }
            if let (Some(f), Some(progress)) = (
                &opts.progress,
                task.task.status_message.as_deref().and_then(progress_of),
            ) {
                f(progress);
            }
            match task.task.status {
                TaskStatus::Completed => {
                    let result = task.result.unwrap_or_else(|| json!({"content": []}));
                    return crate::client::parse(methods::TOOLS_CALL, result);
                }
                TaskStatus::Failed => {
                    let error = task.error.unwrap_or_else(|| {
                        ferry_protocol::ErrorObject::internal("the task failed")
                    });
                    return Err(Error::Rpc(Box::new(RpcError::new(error, None))));
                }
                TaskStatus::Cancelled => {
                    return Err(Error::TaskCancelled {
                        task_id: self.id.clone(),
                    });
                }
                TaskStatus::InputRequired => {
                    let asked = task.input_requests.unwrap_or_default();
                    // A question already answered may still be listed until the work
                    // takes the answer: ask the user only once.
                    let fresh: Map<String, Value> = asked
                        .into_iter()
                        .filter(|(k, _)| !answered.contains(k))
                        .collect();
                    if !fresh.is_empty() {
                        let requests: InputRequests = serde_json::from_value(Value::Object(fresh))
                            .map_err(|e| Error::protocol(format!("invalid inputRequests: {e}")))?;
                        let answers = answer::input_requests(
                            &answer::Asker::client(&self.inner),
                            &requests,
                            Some(self.origin.clone()),
                        )
                        .await;
                        if let Some((key, method)) = answers.unanswered.into_iter().next() {
                            return Err(Error::InputRefused {
                                key,
                                method: method.to_owned(),
                            });
                        }
                        answered.extend(answers.responses.keys().cloned());
                        self.update(answers.responses).await?;
                        continue;
                    }
                }
                TaskStatus::Working => answered.clear(),
            }
            tokio::time::sleep(poll_interval(task.task.poll_interval_ms)).await;
        }
    }
}

/// Cancels the task when a follow ends early (dropped, timed out, failed locally).
struct CancelOnDrop {
    handle: Option<TaskHandle>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = handle.cancel().await {
                    tracing::debug!(task = %handle.id, error = %e, "cancelling an abandoned task failed");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ferry_progress_messages() {
        let p = progress_of("40% (2/5): building").unwrap();
        assert_eq!((p.progress, p.total), (2.0, Some(5.0)));
        assert_eq!(p.message.as_deref(), Some("building"));
        assert!(progress_of("downloading").is_none());
        assert!(progress_of("100% (x/5)").is_none());
        assert_eq!(poll_interval(Some(1)), MIN_POLL);
        assert_eq!(poll_interval(None), DEFAULT_POLL);
    }
}
