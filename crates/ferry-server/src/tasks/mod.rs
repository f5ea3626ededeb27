//! The Tasks extension (`io.modelcontextprotocol/tasks`, ext-tasks/tasks.md): a
//! `tools/call` answered with a task handle, its work running on in the background, and
//! `tasks/get`, `tasks/update`, `tasks/cancel` and `notifications/tasks` to follow it.
//!
//! A tool declares that it can run as a task:
//!
//! - [`ToolBuilder::task`](crate::ToolBuilder::task): the call becomes a task at once
//!   when the client declared the extension ([`TaskMode::Optional`] runs it as a plain
//!   call otherwise; [`TaskMode::Required`] refuses such a client with -32021);
//! - [`ToolBuilder::task_when_ready`](crate::ToolBuilder::task_when_ready): the handler
//!   first gathers its input through MRTR rounds, then calls
//!   [`Context::into_task`](crate::Context::into_task) and goes on in the background.
//!
//! Inside a task, asks (`ctx.elicit(..).await`) wait for the answer: the task turns
//! `input_required`, lists the ask in `inputRequests`, and the same call returns when
//! `tasks/update` delivers the answer. `ctx.progress` updates the `statusMessage`;
//! `tasks/cancel` drops the work's future.
//!
//! Tasks live in a [`TaskStore`] and changes travel on a [`TaskBus`]; both are traits, so a
//! durable or shared implementation plugs in ([`MemoryTaskStore`] and [`MemoryTaskBus`]
//! are the defaults; `ferry-tasks` has a durable redb store). Every task belongs to the
//! principal that created it: another principal (or an anonymous caller) gets the same
//! `-32602` for it as for an id that never existed.
//!
//! ```
//! use std::time::Duration;
//! use ferry_server::{tool, Context, Server, TaskMode};
//!
//! let server = Server::builder("reports", "1.0.0")
//!     .tool(tool("build_report").task(TaskMode::Optional).handler(|ctx: Context| async move {
//!         for step in 1..=3 {
//!             ctx.progress(step as f64, Some(3.0), Some("building")).await;
//!             tokio::time::sleep(Duration::from_millis(10)).await;
//!         }
//!         Ok("report ready")
//!     }))
//!     .build()
//!     .unwrap();
//! assert!(server.capabilities().extensions.as_ref().unwrap().contains_key("io.modelcontextprotocol/tasks"));
//! ```

mod ask;
mod begin;
mod config;
mod edit;
mod feed;
mod id;
pub(crate) mod listen;
mod memory;
mod record;
mod run;
mod service;
mod store;
#[cfg(feature = "task-store-testing")]
pub mod testing;

pub(crate) use ask::resolve as resolve_ask;
pub(crate) use begin::{Created, Watch, Watched, begin, into_task, start};
pub(crate) use config::TaskSupport;
pub use config::{TaskConfig, TaskMode, TaskOptions};
pub use feed::{FollowedTasks, TaskFeed};
pub use memory::{MemoryTaskBus, MemoryTaskStore};
pub use record::TaskRecord;
pub(crate) use run::{TaskSlot, progress, spawn_detached};
pub(crate) use service::{TaskOp, Tasks, serve};
pub use store::{Revision, Stored, TaskBus, TaskSignal, TaskSignals, TaskStore, TaskStoreError};

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
