//! Request heads (RFC 9112 §2 to §6): the request line, the fields, and how the body is
//! framed, parsed by `httparse` and copied once.

use std::mem::MaybeUninit;

use bytes::Bytes;
use http::header::CONNECTION;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, Uri, Version};

use super::{Fail, Limits, bad_request, head_too_large, reject};
use crate::request_body::RequestBody;

/// Most header fields in a request.
const MAX_HEADERS: usize = 100;
/// Requests up to this size (head and body) are copied into one allocation.
const COPY_LIMIT: usize = 16 * 1024;

/// A parsed request head.
pub(super) struct Head {
    /// The request, fields included, without its body.
    pub request: Request<()>,
    /// Bytes of the input taken: the head, and the body when `body` is set.
    pub consumed: usize,
    pub framing: Framing,
    /// The client waits for `100 Continue` before it sends the body.
    pub expect_continue: bool,
    /// The whole body, when it came with the head.
    pub body: Option<Bytes>,
}

/// How a request's body is framed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Framing {
    Length(usize),
    Chunked,
}

/// Parses a complete request head at the start of `buf`, copying it (and its body, when
/// the whole body is in `buf` and small) into one allocation that the fields' values then
/// share. `None` when the head is incomplete.
pub(super) fn parse_head(buf: &[u8], limits: &Limits) -> Result<Option<Head>, Fail> {
    // Left uninitialised: httparse writes only the fields it finds, so a request does not
    // pay for writing 100 empty fields (3.2 KiB of stack) before it is parsed.
    let mut fields = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut []);
    let head_len = match parsed.parse_with_uninit_headers(buf, &mut fields) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(reject(
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "Request header fields too large: too many fields",
            ));
        }
        Err(httparse::Error::Version) => {
            return Err(reject(
                StatusCode::HTTP_VERSION_NOT_SUPPORTED,
                "HTTP version not supported: speak HTTP/1.1",
            ));
        }
        Err(_) => return Err(bad_request("Bad request: malformed HTTP request")),
    };
    if head_len > limits.max_head_bytes {
        return Err(head_too_large());
    }
    let version = match parsed.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };

    // Body framing (RFC 9112 §6): chunked, a length, or nothing.
    let mut length: Option<usize> = None;
    let mut transfer_encoding = false;
    let mut has_host = false;
    let mut expect_continue = false;
    for field in parsed.headers.iter() {
        if field.name.eq_ignore_ascii_case("content-length") {
            let n = parse_length(field.value)
                .ok_or_else(|| bad_request("Bad request: malformed Content-Length"))?;
            if length.is_some_and(|m| m != n) {
                return Err(bad_request(
                    "Bad request: conflicting Content-Length fields",
                ));
            }
            length = Some(n);
        } else if field.name.eq_ignore_ascii_case("transfer-encoding") {
            if transfer_encoding || !field.value.eq_ignore_ascii_case(b"chunked") {
                return Err(reject(
                    StatusCode::NOT_IMPLEMENTED,
                    "Not implemented: the only transfer coding accepted is chunked",
                ));
            }
            transfer_encoding = true;
        } else if field.name.eq_ignore_ascii_case("host") {
            has_host = true;
        } else if field.name.eq_ignore_ascii_case("expect") {
            // RFC 9110 §10.1.1: 100-continue is the only expectation defined; refuse others.
            if !field.value.eq_ignore_ascii_case(b"100-continue") {
                return Err(reject(
                    StatusCode::EXPECTATION_FAILED,
                    "Expectation failed: only 100-continue is supported",
                ));
            }
            expect_continue = version == Version::HTTP_11;
        }
    }
    if version == Version::HTTP_11 && !has_host {
        return Err(bad_request(
            "Bad request: HTTP/1.1 requests need a Host field",
        ));
    }
    let framing = match (transfer_encoding, length) {
        (true, Some(_)) => {
            return Err(bad_request(
                "Bad request: both Transfer-Encoding and Content-Length",
            ));
        }
        (true, None) if version == Version::HTTP_10 => {
            return Err(bad_request(
                "Bad request: chunked body from an HTTP/1.0 client",
            ));
        }
        (true, None) => Framing::Chunked,
        (false, n) => Framing::Length(n.unwrap_or(0)),
    };

    // One copy: the head, with the body behind it when it is all here and small.
    let with_body = match framing {
        Framing::Length(n) => {
            n <= limits.max_body_bytes
                && head_len + n <= buf.len()
                && head_len + n <= COPY_LIMIT.max(head_len)
        }
        Framing::Chunked => false,
    };
    let consumed = match framing {
        Framing::Length(n) if with_body => head_len + n,
        _ => head_len,
    };
    let copy = Bytes::copy_from_slice(&buf[..consumed]);
    let at = |part: &[u8]| {
        let start = part.as_ptr() as usize - buf.as_ptr() as usize;
        copy.slice(start..start + part.len())
    };

    let method = Method::from_bytes(parsed.method.unwrap_or_default().as_bytes())
        .map_err(|_| bad_request("Bad request: malformed method"))?;
    let uri = Uri::from_maybe_shared(at(parsed.path.unwrap_or_default().as_bytes()))
        .map_err(|_| bad_request("Bad request: malformed request target"))?;
    let mut request = Request::new(());
    *request.method_mut() = method;
    *request.uri_mut() = uri;
    *request.version_mut() = version;
    let headers: &mut HeaderMap = request.headers_mut();
    headers.reserve(parsed.headers.len());
    for field in parsed.headers.iter() {
        let name =
            field_name(field.name).map_err(|_| bad_request("Bad request: malformed field name"))?;
        let value = HeaderValue::from_maybe_shared(at(field.value))
            .map_err(|_| bad_request("Bad request: malformed field value"))?;
        headers.append(name, value);
    }
    Ok(Some(Head {
        request,
        consumed,
        framing,
        expect_continue,
        body: with_body.then(|| copy.slice(head_len..)),
    }))
}

/// Field names MCP clients send on most requests that the `http` crate does not know.
/// Reading one of these costs no allocation (any other custom name is copied).
static MCP_FIELDS: [HeaderName; 5] = [
    HeaderName::from_static(ferry_protocol::headers::PROTOCOL_VERSION),
    HeaderName::from_static(ferry_protocol::headers::METHOD),
    HeaderName::from_static(ferry_protocol::headers::NAME),
    HeaderName::from_static(ferry_protocol::headers::SESSION_ID),
    HeaderName::from_static(ferry_protocol::headers::LAST_EVENT_ID),
];

/// A request field's name: a well-known one shared, anything else parsed and copied.
fn field_name(raw: &str) -> Result<HeaderName, http::header::InvalidHeaderName> {
    if raw.len() >= ferry_protocol::headers::NAME.len() {
        for known in MCP_FIELDS.iter() {
            if raw.eq_ignore_ascii_case(known.as_str()) {
                return Ok(known.clone());
            }
        }
    }
    HeaderName::from_bytes(raw.as_bytes())
}

fn parse_length(value: &[u8]) -> Option<usize> {
    if value.is_empty() || value.len() > 18 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// Whether the connection stays open after this request's response (RFC 9112 §9.3).
pub(super) fn wants_keep_alive(req: &Request<RequestBody>) -> bool {
    let connection = req.headers().get(CONNECTION).map(HeaderValue::as_bytes);
    match req.version() {
        Version::HTTP_11 => !connection.is_some_and(|c| has_token(c, b"close")),
        _ => connection.is_some_and(|c| has_token(c, b"keep-alive")),
    }
}

/// Whether a comma-separated field value holds `token` (case-insensitive).
pub(super) fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::h1::Rejection;

    fn limits() -> Limits {
        Limits {
            max_head_bytes: 1024,
            max_body_bytes: 64,
            head_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(1),
        }
    }

    fn refused_with(head: &[u8]) -> Option<StatusCode> {
        match parse_head(head, &limits()) {
            Err(Fail::Reject(Rejection { status, .. })) => Some(status),
            _ => None,
        }
    }

    #[test]
    fn mcp_field_names_are_shared_and_others_parsed() {
        for (raw, parsed) in [
            ("MCP-Protocol-Version", "mcp-protocol-version"),
            ("Mcp-Name", "mcp-name"),
            ("Content-Type", "content-type"),
            ("X-Custom-Field", "x-custom-field"),
            ("mcp-name-x", "mcp-name-x"),
        ] {
            let name = field_name(raw).ok();
            assert_eq!(name.as_ref().map(HeaderName::as_str), Some(parsed), "{raw}");
        }
        assert_eq!(
            field_name("Content-Type").ok(),
            Some(http::header::CONTENT_TYPE)
        );
        assert!(field_name("bad name").is_err());
    }

    #[test]
    fn heads_parse_with_their_framing() {
        let head = b"POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}";
        let Ok(Some(parsed)) = parse_head(head, &limits()) else {
            panic!("head not parsed");
        };
        assert_eq!(parsed.consumed, head.len(), "head and body taken together");
        assert_eq!(parsed.body.as_deref(), Some(&b"{}"[..]));
        assert!(!parsed.expect_continue);
        let req = parsed.request;
        assert_eq!(req.method(), Method::POST);
        assert_eq!(req.uri().path(), "/mcp");
        assert_eq!(req.headers()["host"], "a");
        assert_eq!(req.headers()["content-length"], "2");
        // A body still on its way: the head alone is taken.
        let Ok(Some(early)) = parse_head(&head[..head.len() - 1], &limits()) else {
            panic!("head not parsed");
        };
        assert_eq!(early.consumed, head.len() - 2);
        assert!(early.body.is_none());
        let partial = b"POST /mcp HTTP/1.1\r\nHost: a\r\n";
        assert!(matches!(parse_head(partial, &limits()), Ok(None)));
        let chunked = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(
            parse_head(chunked, &limits()),
            Ok(Some(Head {
                framing: Framing::Chunked,
                body: None,
                ..
            }))
        ));
    }

    #[test]
    fn expectations_are_read_from_the_head() {
        let head =
            b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 9\r\n\r\n";
        assert!(matches!(
            parse_head(head, &limits()),
            Ok(Some(Head {
                framing: Framing::Length(9),
                expect_continue: true,
                ..
            }))
        ));
        let old = b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n";
        assert!(matches!(
            parse_head(old, &limits()),
            Ok(Some(Head {
                expect_continue: false,
                ..
            }))
        ));
        let other = b"POST / HTTP/1.1\r\nHost: a\r\nExpect: something\r\n\r\n";
        assert_eq!(refused_with(other), Some(StatusCode::EXPECTATION_FAILED));
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection_field() {
        let req = |version, connection: Option<&'static str>| {
            let mut r = Request::new(RequestBody::empty());
            *r.version_mut() = version;
            if let Some(c) = connection {
                r.headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static(c));
            }
            r
        };
        assert!(wants_keep_alive(&req(Version::HTTP_11, None)));
        assert!(!wants_keep_alive(&req(
            Version::HTTP_11,
            Some("Upgrade, close")
        )));
        assert!(!wants_keep_alive(&req(Version::HTTP_10, None)));
        assert!(wants_keep_alive(&req(Version::HTTP_10, Some("Keep-Alive"))));
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        let cases: [(&[u8], StatusCode); 6] = [
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", StatusCode::BAD_REQUEST),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -2\r\n\r\n", StatusCode::BAD_REQUEST),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", StatusCode::BAD_REQUEST),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", StatusCode::NOT_IMPLEMENTED),
            (b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", StatusCode::BAD_REQUEST),
            (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", StatusCode::BAD_REQUEST),
        ];
        for (head, status) in cases {
            assert_eq!(
                refused_with(head),
                Some(status),
                "{}",
                String::from_utf8_lossy(head)
            );
        }
    }
}
