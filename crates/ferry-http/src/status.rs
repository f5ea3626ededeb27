//! The one table from the server's answers to HTTP statuses (transports/streamable-http.mdx:
//! 400 for malformed `_meta`, header and version errors, 404 for unknown methods, 200 for
//! results and for errors about a request's content).

use bytes::Bytes;
use ferry_protocol::{ErrorCode, ErrorObject};
use ferry_server::{InsufficientScope, Refusal, Reply, ReplyKind};
use http::header::CONTENT_TYPE;
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
/// authorization layer to write its challenge.
pub(crate) fn reply_response(reply: Reply) -> Response<McpBody> {
    let status = reply_status(&reply);
    let mut response = json_response(status, reply.body);
    if let ReplyKind::Refused(Refusal::InsufficientScope(required)) = reply.kind {
        response.extensions_mut().insert(InsufficientScope {
            required: required.to_vec(),
        });
    }
    response
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
    }
}
