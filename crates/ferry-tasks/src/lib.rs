//! Durable task stores for Ferry MCP servers (the Tasks extension,
//! `io.modelcontextprotocol/tasks`).
//!
//! [`RedbTaskStore`] keeps tasks in one [redb](https://docs.rs/redb) file: a task and its
//! result survive a restart, and a task whose work was running when the process stopped
//! is marked `failed` when the file is opened again, with a message saying so (its work
//! cannot resume). It implements [`ferry_server::TaskStore`] and passes the same parity
//! suite as the in-memory store.
//!
//! ```
//! use std::sync::Arc;
//! use ferry_server::{Server, TaskConfig};
//! use ferry_tasks::RedbTaskStore;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store = RedbTaskStore::open(dir.path().join("tasks.redb"))?;
//! let server = Server::builder("reports", "1.0.0")
//!     .tasks(TaskConfig::new())
//!     .task_store(Arc::new(store))
//!     .build()?;
//! # drop(server);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod durable;
mod tables;

pub use durable::{
    DEFAULT_REDB_TASK_CAPACITY, INTERRUPTED_MESSAGE, RedbTaskStore, RedbTaskStoreBuilder,
};
