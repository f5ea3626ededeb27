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
#![forbid(unsafe_code)]

pub mod capabilities;
pub mod common;
pub mod error;
pub mod headers;
pub mod jsonrpc;
pub mod meta;
pub mod version;

pub mod completion;
pub mod content;
pub mod discover;
pub mod elicitation;
pub mod legacy;
pub mod logging;
pub mod mrtr;
pub mod notifications;
pub mod pagination;
pub mod prompts;
pub mod resources;
pub mod result;
pub mod roots;
pub mod sampling;
pub mod subscriptions;
pub mod tools;

pub use capabilities::{ClientCapabilities, ServerCapabilities};
pub use error::{ErrorCode, ErrorObject};
pub use jsonrpc::{JsonRpcMessage, RequestId};
pub use meta::{Meta, RequestMeta};
pub use version::ProtocolVersion;

/// Re-exported so users name the same `serde_json` as Ferry's types.
pub use serde_json;
