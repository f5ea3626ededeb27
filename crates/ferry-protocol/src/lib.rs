//! Model Context Protocol message types, with no I/O.
//!
//! `ferry-protocol` holds the wire shapes of MCP revision **2026-07-28** (the current,
//! stateless revision) and the **2025-11-25** shapes that differ from it, so a dual-era
//! server or client can speak both. It also holds the JSON-RPC 2.0 envelope, the error
//! codes, the reserved `_meta` keys and the HTTP header value encoding.
//!
//! Every type here serializes to exactly what the spec's `schema.json` accepts; the tests
//! check the spec's own example messages round-trip and validate.
//!
//! ```
//! use ferry_protocol::jsonrpc::{JsonRpcMessage, RequestId};
//!
//! let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! let msg: JsonRpcMessage = serde_json::from_str(line).unwrap();
//! match msg {
//!     JsonRpcMessage::Request(req) => {
//!         assert_eq!(req.id, RequestId::Number(7));
//!         assert_eq!(req.method, "tools/list");
//!     }
//!     _ => unreachable!(),
//! }
//! ```
//!
//! # Map
//!
//! | Module | What |
//! | --- | --- |
//! | [`methods`] | request method names, and typed descriptors ([`methods::CallTool`], ...) |
//! | [`notifications`] | notification method names and params |
//! | [`tools`], [`prompts`], [`resources`], [`completion`], [`discover`] | server features |
//! | [`content`] | content blocks ([`content::ContentBlock`]) |
//! | [`request`] | incoming messages, decoded in one pass with params typed by method |
//! | [`mrtr`] | multi round-trip requests ([`mrtr::InputRequiredResult`]) |
//! | [`elicitation`], [`sampling`], [`roots`] | the input requests and their answers |
//! | [`subscriptions`] | `subscriptions/listen` |
//! | [`tasks`] | the Tasks extension (`io.modelcontextprotocol/tasks`) |
//! | [`result`] | `resultType`, cache hints, [`result::EmptyResult`] |
//! | [`logging`], [`pagination`] | utilities |
//! | [`legacy`] | the 2025-11-25 shapes that differ |
//! | `testing` | validation against the spec's JSON Schema (feature `schema-validation`) |
//!
//! ```
//! use ferry_protocol::content::ContentBlock;
//! use ferry_protocol::tools::CallToolResult;
//!
//! let result = CallToolResult::text("72°F and sunny");
//! assert_eq!(
//!     serde_json::to_value(&result).unwrap(),
//!     serde_json::json!({
//!         "resultType": "complete",
//!         "content": [{ "type": "text", "text": "72°F and sunny" }]
//!     })
//! );
//! assert_eq!(result.content[0], ContentBlock::text("72°F and sunny"));
//! ```
#![forbid(unsafe_code)]

pub mod borrowed;
pub mod capabilities;
pub mod common;
pub mod error;
pub mod headers;
pub mod jsonrpc;
pub mod meta;
pub mod quote;
pub mod time;
pub mod version;

pub mod completion;
pub mod content;
pub mod discover;
pub mod elicitation;
pub mod legacy;
pub mod logging;
pub mod methods;
pub mod mrtr;
pub mod notifications;
pub mod numbers;
pub mod pagination;
pub mod prompts;
pub mod request;
pub mod resources;
pub mod result;
pub mod roots;
pub mod sampling;
pub mod subscriptions;
pub mod tasks;
pub mod tools;
pub mod trace;

#[cfg(feature = "schema-validation")]
pub mod testing;

mod serde_util;

/// Compiles and runs the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use capabilities::{ClientCapabilities, ServerCapabilities};
pub use error::{ErrorCode, ErrorObject};
pub use jsonrpc::{JsonRpcMessage, LenientMessage, RequestId};
pub use meta::{Meta, RequestMeta};
pub use mrtr::{InputRequiredResult, MrtrResult};
pub use result::{CacheScope, McpResult, ResultType};
pub use version::ProtocolVersion;

/// Re-exported so users name the same `serde_json` as Ferry's types.
pub use serde_json;
