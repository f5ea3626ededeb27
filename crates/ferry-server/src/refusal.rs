//! Why a request was refused: typed reasons that transports map to their own statuses.

use std::sync::Arc;
use std::time::Duration;

use ferry_protocol::{ErrorCode, ErrorObject};

use crate::reply::ReplyKind;

/// Why a request was refused before or instead of running its handler.
///
/// The server decides *that* a request is refused and why; a transport decides how to
/// say so (Streamable HTTP maps each reason to a status in one table; stdio has none).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The body is not JSON (-32700).
    Parse,
    /// The body is not a valid JSON-RPC message (-32600).
    InvalidMessage,
    /// The params do not fit the method (-32602).
    InvalidParams,
    /// A 2026-07-28 request without the `_meta` every request must carry (-32602).
    MissingMeta,
    /// A protocol version the server does not speak (-32022).
    UnsupportedVersion,
    /// An HTTP header disagrees with the body or is missing (-32020).
    HeaderMismatch,
    /// The request needs a client capability it did not declare (-32021).
    MissingCapability,
    /// No such method, or not in this era (-32601).
    MethodNotFound,
    /// A 2025-11-25 session that is unknown or expired.
    SessionNotFound,
    /// A request that is neither 2026-07-28 nor part of a 2025-11-25 session.
    NoSession,
    /// `initialize` on a connection whose session is already initialized.
    AlreadyInitialized,
    /// No room for another 2025-11-25 session.
    TooManySessions,
    /// A JSON-RPC response sent to a server that asked nothing.
    UnexpectedResponse,
    /// The operation needs an authenticated principal and the request has none.
    Unauthenticated,
    /// The principal lacks scopes the operation needs: every scope it needs, so that a
    /// client can ask for all of them at once.
    InsufficientScope(Arc<[String]>),
    /// The server could not serve the request (a resource it depends on failed).
    Unavailable,
    /// The client sent more requests than a rate limit allows; it may try again after
    /// `retry_after`.
    RateLimited {
        /// How long the client should wait before trying again.
        retry_after: Duration,
    },
}

impl Refusal {
    /// The refusal a JSON-RPC error code always stands for, if any.
    pub fn for_code(code: ErrorCode) -> Option<Refusal> {
        Some(match code {
            ErrorCode::PARSE_ERROR => Refusal::Parse,
            ErrorCode::INVALID_REQUEST => Refusal::InvalidMessage,
            ErrorCode::METHOD_NOT_FOUND => Refusal::MethodNotFound,
            ErrorCode::HEADER_MISMATCH => Refusal::HeaderMismatch,
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY => Refusal::MissingCapability,
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => Refusal::UnsupportedVersion,
            _ => return None,
        })
    }
}

/// The JSON-RPC error code of a rate-limited request: -32000, the first of JSON-RPC's
/// codes left to implementations. Its `data` holds `retryAfterMs`.
pub const RATE_LIMITED: ErrorCode = ErrorCode(-32000);

/// The JSON-RPC error of a rate-limited request: [`RATE_LIMITED`] with this message and
/// `data.retryAfterMs`, the wait in whole milliseconds, rounded up, at least 1.
pub fn rate_limited_error(message: impl Into<String>, retry_after: Duration) -> ErrorObject {
    ErrorObject::new(RATE_LIMITED, message).with_data(serde_json::json!({
        "retryAfterMs": retry_after_ms(retry_after),
    }))
}

/// `wait` in whole milliseconds, rounded up, at least 1.
fn retry_after_ms(wait: Duration) -> u64 {
    let ms = wait.as_nanos().div_ceil(1_000_000);
    u64::try_from(ms).unwrap_or(u64::MAX).max(1)
}

/// An error answer on its way out: the JSON-RPC error and what kind of answer it is.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) error: ErrorObject,
    pub(crate) kind: ReplyKind,
}

impl Failure {
    /// Refused for `reason`.
    pub(crate) fn refused(reason: Refusal, error: ErrorObject) -> Box<Failure> {
        Box::new(Failure {
            error,
            kind: ReplyKind::Refused(reason),
        })
    }

    /// An error answered in the body.
    pub(crate) fn answered(error: ErrorObject) -> Box<Failure> {
        Box::new(Failure {
            error,
            kind: ReplyKind::Error,
        })
    }

    /// `-32602` in the body with this message.
    pub(crate) fn invalid_params(message: impl Into<String>) -> Box<Failure> {
        Failure::answered(ErrorObject::invalid_params(message))
    }
}

/// A step of dispatch that may fail with an answer.
pub(crate) type Attempt<T> = Result<T, Box<Failure>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limited_errors_carry_the_wait_in_whole_milliseconds() {
        let e = rate_limited_error("slow down", Duration::from_micros(1_200));
        assert_eq!(e.code, RATE_LIMITED);
        assert_eq!(e.message, "slow down");
        assert_eq!(e.data.unwrap()["retryAfterMs"], 2);
        let e = rate_limited_error("slow down", Duration::ZERO);
        assert_eq!(e.data.unwrap()["retryAfterMs"], 1);
        assert_eq!(retry_after_ms(Duration::from_secs(3)), 3_000);
    }
}
