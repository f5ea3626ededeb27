//! Errors: what the server answered ([`Error::Rpc`]) is kept apart from what went wrong
//! locally (timeouts, transport failures, protocol violations).

use std::fmt;
use std::time::Duration;

use ferry_protocol::{ErrorCode, ErrorObject};
use serde_json::Value;

/// A `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A JSON-RPC error the server sent, exactly as received.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The error code.
    pub code: ErrorCode,
    /// The server's message.
    pub message: String,
    /// The server's `data`, if any.
    pub data: Option<Value>,
    /// The HTTP status it came with (Streamable HTTP only).
    pub http_status: Option<u16>,
}

impl RpcError {
    /// Wraps an error object received from the server.
    pub fn new(error: ErrorObject, http_status: Option<u16>) -> Self {
        RpcError {
            code: error.code,
            message: error.message,
            data: error.data,
            http_status,
        }
    }

    /// The error as a JSON-RPC error object.
    pub fn to_object(&self) -> ErrorObject {
        ErrorObject {
            code: self.code,
            message: self.message.clone(),
            data: self.data.clone(),
        }
    }

    /// Whether the message mentions `needle`, ignoring ASCII case.
    pub fn mentions(&self, needle: &str) -> bool {
        self.message
            .to_ascii_lowercase()
            .contains(&needle.to_ascii_lowercase())
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// Everything that can go wrong talking to a server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Rpc(Box<RpcError>),
    /// The server reported that the resource does not exist (-32602 with the URI in
    /// `data`, or the legacy code -32002).
    #[error("resource not found: {uri} ({error})")]
    ResourceNotFound {
        /// The URI that was read.
        uri: String,
        /// The server's error.
        error: Box<RpcError>,
    },
    /// No answer within the timeout; the request was cancelled.
    #[error("{method} timed out after {after:?}")]
    Timeout {
        /// The method of the request.
        method: String,
        /// The timeout that expired.
        after: Duration,
    },
    /// The connection failed (connect, read or write error, process exit).
    #[error("transport failure: {message}")]
    Transport {
        /// What failed.
        message: String,
        /// The underlying error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The server answered with an HTTP error status and no JSON-RPC error.
    #[error("HTTP {status}: {body}")]
    HttpStatus {
        /// The status code.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// The server wants authorization (HTTP 401).
    #[error("the server requires authorization (HTTP 401)")]
    Unauthorized {
        /// The `WWW-Authenticate` challenge, if the server sent one.
        www_authenticate: Option<String>,
    },
    /// Authorization failed: discovery, registration, the grant, or the server kept
    /// refusing the new credentials.
    #[error("authorization failed: {0}")]
    Authorization(#[source] ferry_oauth::AuthError),
    /// The server broke the protocol, e.g. with an unknown `resultType`; its answer is
    /// treated as invalid.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// A message was larger than the configured limit.
    #[error("a message from the server exceeded the limit of {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The input handler refused (or the client never declared) a sampling or roots
    /// request the call needed, so the call stops there.
    #[error("the call needs {method} ({key:?}), which was refused")]
    InputRefused {
        /// The key of the input request.
        key: String,
        /// Its method: `sampling/createMessage` or `roots/list`.
        method: String,
    },
    /// The server kept asking for input past the configured number of rounds.
    #[error("the server asked for input {rounds} times without finishing")]
    TooManyRounds {
        /// How many rounds were sent.
        rounds: u32,
    },
    /// The server and the client have no protocol version in common.
    #[error("no protocol version in common (the server supports {supported:?})")]
    UnsupportedVersion {
        /// The versions the server listed.
        supported: Vec<String>,
    },
    /// Pagination returned a cursor it had already returned.
    #[error("the server returned the cursor {cursor:?} twice")]
    CursorLoop {
        /// The repeated cursor.
        cursor: String,
    },
    /// The tool's definition is invalid, so the client does not call it.
    #[error("tool {tool} has an invalid definition: {reason}")]
    InvalidTool {
        /// The tool's name.
        tool: String,
        /// Why it is invalid.
        reason: String,
    },
    /// The arguments or options given to the client are unusable.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The server does not offer this.
    #[error("not supported by this server: {0}")]
    Unsupported(String),
    /// The client was closed.
    #[error("the client is closed")]
    Closed,
    /// The task running the request was cancelled (by `tasks/cancel`, from here or
    /// elsewhere) before it finished.
    #[error("task {task_id} was cancelled")]
    TaskCancelled {
        /// The task.
        task_id: String,
    },
}

impl Error {
    /// The server's JSON-RPC error, if this is one.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc(e) | Error::ResourceNotFound { error: e, .. } => Some(e),
            _ => None,
        }
    }

    /// Whether this came from the server (a JSON-RPC error) rather than from the client.
    pub fn is_from_server(&self) -> bool {
        self.rpc().is_some()
    }

    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    pub(crate) fn transport(message: impl Into<String>) -> Self {
        Error::Transport {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn transport_from(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::Transport {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        Error::Protocol(message.into())
    }
}

impl From<RpcError> for Error {
    fn from(e: RpcError) -> Self {
        Error::Rpc(Box::new(e))
    }
}
