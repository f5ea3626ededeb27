//! What a handler can return instead of a result.

use std::fmt;
use std::time::Duration;

use ferry_protocol::ErrorObject;

use crate::ask::Interrupt;
use crate::refusal::Refusal;

/// The error type of tool, prompt, resource and completion handlers.
///
/// Three things can stop a handler:
/// - an **execution error** (anything implementing `std::error::Error`, or a message):
///   a tool answers it as a result with `isError: true`, so the model can see it; a
///   prompt or resource read answers it as a JSON-RPC internal error (-32603);
/// - a **protocol error** ([`ErrorObject`]), sent as a JSON-RPC error as is; one made by
///   [`Error::rate_limited`] also tells the transport the request was refused for a rate
///   limit (Streamable HTTP answers 429 with `Retry-After`);
/// - an **interrupt** from an ask (`ctx.elicit(..).await?`) that has no answer yet: the
///   server answers with an `InputRequiredResult` and the client retries. Handlers only
///   pass it on with `?`.
pub struct Error {
    pub(crate) kind: ErrorKind,
}

pub(crate) enum ErrorKind {
    Execution(String),
    Protocol(ErrorObject),
    /// A protocol error that refuses the request for a reason the transport reports
    /// (boxed: rare, and it would make every handler's `Result` larger).
    Refused(Box<(ErrorObject, Refusal)>),
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

    /// The request is over a rate limit: [`RATE_LIMITED`](crate::RATE_LIMITED) with
    /// `message` and `data.retryAfterMs`, sent as a JSON-RPC error and reported by the
    /// transport as a rate-limit refusal (Streamable HTTP: 429 with `Retry-After`). In a
    /// task, where no transport status applies, the task fails with that error.
    pub fn rate_limited(message: impl Into<String>, retry_after: Duration) -> Self {
        Error {
            kind: ErrorKind::Refused(Box::new((
                crate::refusal::rate_limited_error(message, retry_after),
                Refusal::RateLimited { retry_after },
            ))),
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
            ErrorKind::Refused(refused) => Some(&refused.0),
            _ => None,
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Execution(m) => f.debug_tuple("Execution").field(m).finish(),
            ErrorKind::Protocol(e) => f.debug_tuple("Protocol").field(e).finish(),
            ErrorKind::Refused(refused) => f
                .debug_tuple("Refused")
                .field(&refused.0)
                .field(&refused.1)
                .finish(),
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
            ErrorKind::Refused(refused) => write!(f, "{} ({})", refused.0.message, refused.0.code),
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
