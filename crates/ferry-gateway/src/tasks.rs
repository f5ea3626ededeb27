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

use std::time::Duration;

use ferry_protocol::ErrorObject;
use ferry_state::{Binding, KeyRing, StateClaims, StateGuard};
use serde::{Deserialize, Serialize};

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
