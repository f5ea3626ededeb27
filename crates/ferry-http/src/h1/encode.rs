//! Responses on the wire (RFC 9112 §4 to §7): how a body is framed, the status line and
//! fields, chunks, and the write buffer each thread lends to one response at a time.

use http::header::{CONNECTION, CONTENT_LENGTH, DATE, TRANSFER_ENCODING};
use http::{HeaderMap, StatusCode, Version};

/// Response bodies of known length up to this size go out in the head's write.
const COALESCE_LIMIT: usize = 64 * 1024;
/// Largest write buffer kept for the next response.
const OUT_KEEP: usize = 16 * 1024;
/// The end of a chunked body: the last chunk and an empty trailer section.
pub(super) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

thread_local! {
    /// The buffer each worker thread writes responses from, lent to one response at a
    /// time: a response written at once costs no allocation, and a connection between
    /// responses holds no write buffer.
    static OUT: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The thread's write buffer (or a new one if another response has it), empty, with room
/// for `capacity` bytes.
pub(super) fn borrow_out(capacity: usize) -> Vec<u8> {
    let mut out = OUT.take();
    out.clear();
    out.reserve(capacity);
    out
}

/// Gives a write buffer back for the next response, unless it grew large.
pub(super) fn return_out(out: Vec<u8>) {
    if out.capacity() <= OUT_KEEP {
        OUT.set(out);
    }
}

/// How a response's body follows its head.
pub(super) struct Plan {
    /// No body at all (a HEAD request, 1xx, 204, 304).
    pub bodiless: bool,
    /// The body goes in chunks: its length is unknown and the peer speaks HTTP/1.1.
    pub chunked: bool,
    /// The body's exact length, when known.
    pub exact: Option<u64>,
    /// The response declared its own `Content-Length`.
    declared_length: bool,
}

impl Plan {
    /// Decides how a response's body is framed. An HTTP/1.0 peer gets a body of unknown
    /// length delimited by the end of the connection, so `keep_alive` is cleared then.
    pub(super) fn new(
        status: StatusCode,
        headers: &HeaderMap,
        exact: Option<u64>,
        version: Version,
        head_only: bool,
        keep_alive: &mut bool,
    ) -> Plan {
        let bodiless = head_only
            || status.is_informational()
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::NOT_MODIFIED;
        let declared_length = headers.contains_key(CONTENT_LENGTH);
        let unknown = !bodiless && exact.is_none() && !declared_length;
        if unknown && version != Version::HTTP_11 {
            *keep_alive = false;
        }
        Plan {
            bodiless,
            chunked: unknown && version == Version::HTTP_11,
            exact,
            declared_length,
        }
    }

    /// Room for the head and, when the body goes in the same write, the body.
    pub(super) fn capacity(&self) -> usize {
        256 + self
            .exact
            .map_or(0, |n| n.min(COALESCE_LIMIT as u64) as usize)
    }

    /// Whether the body is small and of known length: gathered behind the head and sent
    /// with it in one write.
    pub(super) fn coalesce(&self) -> bool {
        !self.chunked && self.exact.is_some_and(|n| n <= COALESCE_LIMIT as u64)
    }
}

/// Writes a response head: the status line, the fields (but hop-by-hop framing fields,
/// which the connection writes itself), the length or chunked coding, `Connection` and a
/// `Date` when the response has none, then the empty line.
pub(super) fn put_head(
    out: &mut Vec<u8>,
    status: StatusCode,
    headers: &HeaderMap,
    plan: &Plan,
    version: Version,
    head_only: bool,
    keep_alive: bool,
) {
    put_status_line(out, status);
    for (name, value) in headers {
        if name == CONNECTION || name == TRANSFER_ENCODING {
            continue;
        }
        put_header(out, name.as_str(), value.as_bytes());
    }
    if !plan.declared_length
        && let Some(n) = plan.exact
        && (!plan.bodiless || head_only)
    {
        put_content_length(out, n as usize);
    }
    if plan.chunked {
        put_header(out, TRANSFER_ENCODING.as_str(), b"chunked");
    }
    if !keep_alive {
        put_header(out, CONNECTION.as_str(), b"close");
    } else if version == Version::HTTP_10 {
        put_header(out, CONNECTION.as_str(), b"keep-alive");
    }
    if !headers.contains_key(DATE) {
        put_date(out);
    }
    out.extend_from_slice(b"\r\n");
}

/// Writes `data` as one chunk (RFC 9112 §7.1).
pub(super) fn put_chunk(out: &mut Vec<u8>, data: &[u8]) {
    out.reserve(data.len() + 12);
    put_hex(out, data.len());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The status line. Always `HTTP/1.1`, the highest version this server speaks, also to
/// HTTP/1.0 peers (RFC 9110 §6.2).
fn put_status_line(out: &mut Vec<u8>, status: StatusCode) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("Unknown").as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn put_header(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

fn put_content_length(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(b"content-length: ");
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn put_hex(out: &mut Vec<u8>, n: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = HEX[n & 0xf];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Adds a `Date` field (RFC 9110 §6.6.1), formatted once a second per thread.
fn put_date(out: &mut Vec<u8>) {
    use std::cell::RefCell;
    use std::time::{SystemTime, UNIX_EPOCH};

    thread_local! {
        static CACHED: RefCell<(u64, [u8; 29])> = const { RefCell::new((u64::MAX, [0; 29])) };
    }
    let now = SystemTime::now();
    let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    CACHED.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != second {
            let text = httpdate::fmt_http_date(now);
            if text.len() == 29 {
                c.1.copy_from_slice(text.as_bytes());
                c.0 = second;
            } else {
                out.extend_from_slice(b"date: ");
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(b"\r\n");
                return;
            }
        }
        out.extend_from_slice(b"date: ");
        out.extend_from_slice(&c.1);
        out.extend_from_slice(b"\r\n");
    });
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn numbers_are_written_exactly() {
        let mut out = Vec::new();
        put_content_length(&mut out, 0);
        put_content_length(&mut out, 1234567);
        put_hex(&mut out, 0x1a2f);
        assert_eq!(out, b"content-length: 0\r\ncontent-length: 1234567\r\n1a2f");
        let mut date = Vec::new();
        put_date(&mut date);
        assert!(
            date.starts_with(b"date: ") && date.ends_with(b" GMT\r\n"),
            "{date:?}"
        );
        let mut chunk = Vec::new();
        put_chunk(&mut chunk, b"hello, world!!!!");
        assert_eq!(chunk, b"10\r\nhello, world!!!!\r\n");
    }

    #[test]
    fn bodies_are_framed_by_length_chunks_or_the_close() {
        let headers = HeaderMap::new();
        let mut keep = true;
        let known = Plan::new(
            StatusCode::OK,
            &headers,
            Some(5),
            Version::HTTP_11,
            false,
            &mut keep,
        );
        assert!(!known.chunked && known.coalesce() && keep);
        let stream = Plan::new(
            StatusCode::OK,
            &headers,
            None,
            Version::HTTP_11,
            false,
            &mut keep,
        );
        assert!(stream.chunked && !stream.coalesce() && keep);
        let old = Plan::new(
            StatusCode::OK,
            &headers,
            None,
            Version::HTTP_10,
            false,
            &mut keep,
        );
        assert!(
            !old.chunked && !keep,
            "an HTTP/1.0 stream ends with the close"
        );

        let mut keep = true;
        let mut fields = HeaderMap::new();
        fields.insert(CONNECTION, HeaderValue::from_static("upgrade"));
        fields.insert(DATE, HeaderValue::from_static("then"));
        let head = Plan::new(
            StatusCode::OK,
            &fields,
            Some(7),
            Version::HTTP_11,
            true,
            &mut keep,
        );
        let mut out = Vec::new();
        put_head(
            &mut out,
            StatusCode::OK,
            &fields,
            &head,
            Version::HTTP_11,
            true,
            false,
        );
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\ndate: then\r\ncontent-length: 7\r\nconnection: close\r\n\r\n"
        );
    }
}
