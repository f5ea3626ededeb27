//! The one table from the server's answers to HTTP statuses (transports/streamable-http.mdx:
//! 400 for malformed `_meta`, header and version errors, 404 for unknown methods, 200 for
//! results and for errors about a request's content; 429 with `Retry-After` for a rate
//! limit, RFC 6585 section 4).

use std::time::Duration;

use bytes::Bytes;
use ferry_protocol::{ErrorCode, ErrorObject};
use ferry_server::{InsufficientScope, Refusal, Reply, ReplyKind};
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Response, StatusCode};

use crate::body::McpBody;

const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// The HTTP status of a refusal.
pub fn status_of(refusal: &Refusal) -> StatusCode {
    match refusal {
        Refusal::MethodNotFound | Refusal::SessionNotFound => StatusCode::NOT_FOUND,
        Refusal::Unauthenticated => StatusCode::UNAUTHORIZED,
        Refusal::InsufficientScope(_) => StatusCode::FORBIDDEN,
        Refusal::TooManySessions | Refusal::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Refusal::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        Refusal::Parse
        | Refusal::InvalidMessage
        | Refusal::InvalidParams
        | Refusal::MissingMeta
        | Refusal::UnsupportedVersion
        | Refusal::HeaderMismatch
        | Refusal::MissingCapability
        | Refusal::NoSession
        | Refusal::AlreadyInitialized
        | Refusal::UnexpectedResponse => StatusCode::BAD_REQUEST,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// The HTTP status a reply is answered with.
pub fn reply_status(reply: &Reply) -> StatusCode {
    match &reply.kind {
        ReplyKind::Result | ReplyKind::Error => StatusCode::OK,
        ReplyKind::Refused(r) => status_of(r),
    }
}

/// A JSON response with this status.
pub(crate) fn json_response(status: StatusCode, body: Bytes) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, JSON);
    r
}

/// The response for a reply: its status from the table above. A refusal for missing
/// scopes also carries [`InsufficientScope`] in the response's extensions, for an
/// authorization layer to write its challenge; a rate-limit refusal carries
/// `Retry-After`.
pub(crate) fn reply_response(reply: Reply) -> Response<McpBody> {
    let status = reply_status(&reply);
    let mut response = json_response(status, reply.body);
    match reply.kind {
        ReplyKind::Refused(Refusal::InsufficientScope(required)) => {
            response.extensions_mut().insert(InsufficientScope {
                required: required.to_vec(),
            });
        }
        ReplyKind::Refused(Refusal::RateLimited { retry_after }) => {
            response.headers_mut().insert(
                RETRY_AFTER,
                HeaderValue::from(retry_after_secs(retry_after)),
            );
        }
        _ => {}
    }
    response
}

/// `Retry-After` in whole seconds (RFC 9110 section 10.2.3): rounded up, so a client
/// that waits as long is admitted, and at least 1.
fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

/// A JSON-RPC error (with no id) for a refusal of the transport itself: an origin not
/// allowed, a method other than POST, a body too large or too slow.
pub(crate) fn error_response(
    status: StatusCode,
    code: ErrorCode,
    message: &str,
) -> Response<McpBody> {
    let reply = Reply::error(None, &ErrorObject::new(code, message));
    json_response(status, reply.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        assert_eq!(status_of(&Refusal::MethodNotFound), StatusCode::NOT_FOUND);
        assert_eq!(status_of(&Refusal::HeaderMismatch), StatusCode::BAD_REQUEST);
        assert_eq!(
            status_of(&Refusal::InsufficientScope(vec!["a".to_owned()].into())),
            StatusCode::FORBIDDEN
        );
        let r = reply_response(Reply::refused(
            None,
            &ErrorObject::invalid_params("x"),
            Refusal::InsufficientScope(vec!["files:delete".to_owned()].into()),
        ));
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            r.extensions().get::<InsufficientScope>().unwrap().required,
            ["files:delete"]
        );
        let ok = reply_response(Reply::error(None, &ErrorObject::invalid_params("x")));
        assert_eq!(ok.status(), StatusCode::OK);
        assert!(ok.headers().get(RETRY_AFTER).is_none());
    }

    #[test]
    fn rate_limited_is_429_with_retry_after_in_whole_seconds_rounded_up() {
        let limited = |retry_after| Refusal::RateLimited { retry_after };
        assert_eq!(
            status_of(&limited(Duration::from_millis(1))),
            StatusCode::TOO_MANY_REQUESTS
        );
        for (wait, header) in [
            (Duration::from_millis(1), "1"),
            (Duration::from_millis(1_200), "2"),
            (Duration::from_secs(1), "1"),
            (Duration::from_secs(3), "3"),
            (Duration::from_nanos(3_000_000_001), "4"),
            (Duration::ZERO, "1"),
        ] {
            let error = ferry_server::rate_limited_error("Rate limited", wait);
            let r = reply_response(Reply::refused(None, &error, limited(wait)));
            assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS, "{wait:?}");
            assert_eq!(r.headers()[RETRY_AFTER], header, "{wait:?}");
        }
        // Other refusals carry no Retry-After, 503 included.
        let r = reply_response(Reply::refused(
            None,
            &ErrorObject::internal("x"),
            Refusal::Unavailable,
        ));
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(r.headers().get(RETRY_AFTER).is_none());
    }
}
