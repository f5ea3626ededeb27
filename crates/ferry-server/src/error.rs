//! What a handler can return instead of a result.

use std::fmt;

use ferry_protocol::ErrorObject;

use crate::ask::Interrupt;

/// The error type of tool, prompt, resource and completion handlers.
///
/// Three things can stop a handler:
/// - an **execution error** (anything implementing `std::error::Error`, or a message):
///   a tool answers it as a result with `isError: true`, so the model can see it; a
///   prompt or resource read answers it as a JSON-RPC internal error (-32603);
/// - a **protocol error** ([`ErrorObject`]), sent as a JSON-RPC error as is;
/// - an **interrupt** from an ask (`ctx.elicit(..).await?`) that has no answer yet: the
///   server answers with an `InputRequiredResult` and the client retries. Handlers only
///   pass it on with `?`.
pub struct Error {
    pub(crate) kind: ErrorKind,
}

pub(crate) enum ErrorKind {
    Execution(String),
    Protocol(ErrorObject),
    /// The resource does not exist; its error depends on the request's era.
    ResourceNotFound(String),
    Interrupt(Interrupt),
}

/// `Result` with Ferry's handler [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An execution error with this message. Tools report it as `isError: true`.
    pub fn execution(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Execution(message.into()),
        }
    }

    /// A JSON-RPC error sent to the client as is.
    pub fn protocol(error: ErrorObject) -> Self {
        Error {
            kind: ErrorKind::Protocol(error),
        }
    }

    /// `-32602 Invalid params` with this message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Error::protocol(ErrorObject::invalid_params(message))
    }

    /// Whether this error is an interrupt waiting for the client's input.
    pub fn is_input_required(&self) -> bool {
        matches!(self.kind, ErrorKind::Interrupt(_))
    }

    /// The error for a resource that does not exist: -32602 with the URI in `data` on
    /// 2026-07-28 (resources.mdx), -32002 on 2025-11-25.
    pub fn resource_not_found(uri: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::ResourceNotFound(uri.into()),
        }
    }

    /// The JSON-RPC error, when this is a protocol error.
    pub fn as_protocol(&self) -> Option<&ErrorObject> {
        match &self.kind {
            ErrorKind::Protocol(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Execution(m) => f.debug_tuple("Execution").field(m).finish(),
            ErrorKind::Protocol(e) => f.debug_tuple("Protocol").field(e).finish(),
            ErrorKind::ResourceNotFound(uri) => {
                f.debug_tuple("ResourceNotFound").field(uri).finish()
            }
            ErrorKind::Interrupt(_) => f.write_str("InputRequired"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Execution(m) => f.write_str(m),
            ErrorKind::Protocol(e) => write!(f, "{} ({})", e.message, e.code),
            ErrorKind::ResourceNotFound(uri) => write!(f, "resource not found: {uri}"),
            ErrorKind::Interrupt(_) => f.write_str("waiting for the client's input"),
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for Error {
    fn from(e: E) -> Self {
        Error::execution(e.to_string())
    }
}

impl From<Interrupt> for Error {
    fn from(i: Interrupt) -> Self {
        Error {
            kind: ErrorKind::Interrupt(i),
        }
    }
}

/// The JSON-RPC error for a missing resource in the request's era.
pub(crate) fn resource_not_found(uri: &str, legacy: bool) -> ErrorObject {
    let mut e = ErrorObject::resource_not_found(uri);
    if legacy {
        e.code = ferry_protocol::ErrorCode::LEGACY_RESOURCE_NOT_FOUND;
    }
    e
}
