//! Build Model Context Protocol servers that speak revision 2026-07-28.
//!
//! `ferry-server` holds everything about serving MCP that is not I/O: the registry of
//! tools, prompts and resources, the per-request rules of the stateless protocol, the
//! handler [`Context`], the Multi Round-Trip Request engine with sealed, bound and
//! optionally single-use `requestState`, and `subscriptions/listen`. Transports
//! (`ferry-stdio`, `ferry-http`) feed it bytes and write what it returns.
//!
//! ```
//! use ferry_server::{tool, Context, Elicitation, Result, Server};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct DeleteArgs { path: String }
//!
//! #[derive(Deserialize, ferry_form::Form)]
//! struct Confirm { confirm: bool }
//!
//! let server = Server::builder("files", "1.0.0")
//!     .tool(tool("delete").single_use().handler(|ctx: Context, args: DeleteArgs| async move {
//!         let answer = ctx.elicit::<Confirm>(format!("Delete {}?", args.path)).await?;
//!         Ok(match answer {
//!             Elicitation::Accept(Confirm { confirm: true }) => format!("Deleted {}", args.path),
//!             _ => format!("Kept {}", args.path),
//!         })
//!     }))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
#![forbid(unsafe_code)]

mod ask;
mod bus;
mod cancel;
mod catalog;
mod completion;
mod context;
pub mod deprecation;
mod dispatch;
mod error;
mod fast_schema;
mod forward;
mod handler;
mod header_check;
mod hub;
mod interest;
mod legacy;
mod listen;
#[cfg(feature = "llm")]
mod llm;
mod mrtr;
mod outbound;
mod panic;
mod params;
mod principal;
mod prompt;
mod refusal;
mod reply;
mod resource;
mod run;
mod sampling;
mod schema;
mod server;
mod session;
mod session_share;
mod session_store;
pub mod tasks;
pub mod telemetry;
mod tool;
pub mod uri_template;

pub use ask::{Ask, AskKind, AskOutput, AskSet, Elicitation, FormAnswers, Interrupt, UrlConsent};
pub use bus::{ChangeBus, ChangeEvent};
pub use completion::{CompletionRequest, MAX_COMPLETION_VALUES, complete_from};
pub use context::Context;
// Transport-facing items live in [`transport`]; these root paths stay for existing code.
#[doc(hidden)]
pub use dispatch::{Handled, RequestEnv, Transport};
pub use error::{Error, Result};
pub use forward::{
    Forward, ForwardError, ForwardFuture, ForwardProgress, ForwardRequest, ForwardResult,
    MAX_FORWARDED_LEGACY_ROUNDS,
};
pub use handler::{FromContext, FromInput, Handler, HandlerFuture, State, StateType, marker};
#[doc(hidden)]
pub use listen::ListenStream;
#[cfg(feature = "llm")]
pub use llm::SamplingPolicy;
#[doc(hidden)]
pub use outbound::Outbound;
pub use principal::{InsufficientScope, Principal, Scopes};
pub use prompt::{IntoPromptResult, PromptArguments, PromptBuilder, prompt};
#[doc(hidden)]
pub use refusal::Refusal;
pub use refusal::{RATE_LIMITED, rate_limited_error};
#[doc(hidden)]
pub use reply::{Reply, ReplyKind};
pub use resource::{
    CacheHint, IntoContents, ResourceBuilder, ResourceRequest, TemplateBuilder, not_found,
    resource, resource_template,
};
#[doc(hidden)]
pub use run::{Outcome, PendingCall, Streaming};
pub use schema::DEFAULT_DIALECT;
pub use server::{BuildError, Server, ServerBuilder};
#[doc(hidden)]
pub use session::{LEGACY_VERSIONS, Session};
pub use session_store::{
    DEFAULT_SESSION_REFRESH, MAX_SESSION_RECORD_BYTES, MemorySessionStore, SessionKey,
    SessionStore, SessionStoreError, check_record_size,
};
pub use tasks::{
    FollowedTasks, MemoryTaskBus, MemoryTaskStore, Revision, Stored, TaskBus, TaskConfig, TaskFeed,
    TaskMode, TaskOptions, TaskRecord, TaskSignal, TaskSignals, TaskStore, TaskStoreError,
};
pub use tool::{DefinitionError, IntoToolResult, Json, ToolBuilder, fail, tool};

/// What a transport needs: feed [`Server::handle`] the bytes of a message with its
/// [`RequestEnv`](transport::RequestEnv), and write what it returns. Handler authors do
/// not need this module; `ferry-stdio` and `ferry-http` are built on it.
///
/// ```
/// use ferry_server::transport::{Handled, RequestEnv};
/// use ferry_server::Server;
///
/// let server = Server::builder("s", "1").build().unwrap();
/// let ping = br#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
/// match server.handle(ping, RequestEnv::stdio()) {
///     Handled::Reply(reply) => assert!(reply.body.starts_with(b"{")),
///     _ => unreachable!("discovery answers at once"),
/// }
/// ```
pub mod transport {
    pub use crate::dispatch::{Handled, RequestEnv, Transport};
    pub use crate::listen::ListenStream;
    pub use crate::outbound::Outbound;
    pub use crate::refusal::Refusal;
    pub use crate::reply::{Reply, ReplyKind};
    pub use crate::run::{Outcome, PendingCall, Streaming};
    pub use crate::session::{LEGACY_VERSIONS, Session};
}

pub use ferry_form as form;
pub use ferry_form::{Form, FormEnum};
pub use ferry_protocol as protocol;
pub use ferry_state as state;
