//! Serialized responses, and the HTTP status that goes with each.

use std::fmt::Write as _;

use bytes::{BufMut, Bytes, BytesMut};
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::{ErrorCode, ErrorObject};
use serde::Serialize;

/// One serialized JSON-RPC response, ready to write, and the HTTP status a Streamable
/// HTTP transport answers it with (DIGEST §2.3: 400 for malformed `_meta`, header and
/// version errors; 404 for unknown methods; 200 otherwise).
#[derive(Clone, Debug)]
pub struct Reply {
    /// The JSON text of the response, without a trailing newline.
    pub body: Bytes,
    /// The HTTP status for this response.
    pub status: u16,
}

impl Reply {
    /// A successful response with a pre-serialized `result` object.
    pub(crate) fn result_raw(id: &RequestId, result: &[u8]) -> Reply {
        let mut buf = BytesMut::with_capacity(result.len() + 48);
        write_prefix(&mut buf, Some(id));
        buf.put_slice(b"\"result\":");
        buf.put_slice(result);
        buf.put_u8(b'}');
        Reply {
            body: buf.freeze(),
            status: 200,
        }
    }

    /// A successful response, serializing `result`. `server_meta` is spliced into the
    /// result's `_meta` when the result has none of its own (see [`crate::Server`]).
    pub(crate) fn result<R: Serialize>(
        id: &RequestId,
        result: &R,
        server_meta: Option<&[u8]>,
    ) -> Reply {
        // Room for a small result and the spliced `_meta`, so the common reply is written
        // without growing.
        let room = 256 + server_meta.map_or(0, |m| m.len() + 16);
        let mut buf = BytesMut::with_capacity(room).writer();
        write_prefix(buf.get_mut(), Some(id));
        buf.get_mut().put_slice(b"\"result\":");
        let start = buf.get_ref().len();
        if serde_json::to_writer(&mut buf, result).is_err() {
            return Reply::error(
                Some(id),
                &ErrorObject::internal("Internal error: the result could not be serialized"),
            );
        }
        let mut buf = buf.into_inner();
        if let Some(meta) = server_meta {
            splice_meta(&mut buf, start, meta);
        }
        buf.put_u8(b'}');
        Reply {
            body: buf.freeze(),
            status: 200,
        }
    }

    /// The status of a reply that must not be sent: the client cancelled the request
    /// (`notifications/cancelled`), and the receiver sends nothing more for it.
    pub const CANCELLED: u16 = 499;

    /// A reply for a cancelled request: transports drop it (see [`Reply::is_cancelled`]).
    pub(crate) fn cancelled(id: &RequestId) -> Reply {
        Reply::error_with_status(
            Some(id),
            &ErrorObject::new(ErrorCode::INTERNAL_ERROR, "Request cancelled"),
            Reply::CANCELLED,
        )
    }

    /// Whether the request was cancelled and this reply must not be sent.
    pub fn is_cancelled(&self) -> bool {
        self.status == Reply::CANCELLED
    }

    /// An error response, with the status the spec gives its code.
    pub fn error(id: Option<&RequestId>, error: &ErrorObject) -> Reply {
        Reply::error_with_status(id, error, status_for(error))
    }

    /// An error response with an explicit HTTP status.
    pub fn error_with_status(id: Option<&RequestId>, error: &ErrorObject, status: u16) -> Reply {
        let mut buf = BytesMut::with_capacity(128).writer();
        write_prefix(buf.get_mut(), id);
        buf.get_mut().put_slice(b"\"error\":");
        // An ErrorObject always serializes.
        let _ = serde_json::to_writer(&mut buf, error);
        let mut buf = buf.into_inner();
        buf.put_u8(b'}');
        Reply {
            body: buf.freeze(),
            status,
        }
    }
}

/// The HTTP status for a JSON-RPC error code.
pub fn status_for(error: &ErrorObject) -> u16 {
    match error.code {
        ErrorCode::METHOD_NOT_FOUND => 404,
        ErrorCode::PARSE_ERROR | ErrorCode::INVALID_REQUEST => 400,
        ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => 400,
        _ => 200,
    }
}

fn write_prefix(buf: &mut BytesMut, id: Option<&RequestId>) {
    buf.put_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        buf.put_slice(b"\"id\":");
        match id {
            RequestId::Number(n) => {
                let _ = write!(buf, "{n}");
            }
            RequestId::String(s) => {
                let mut w = buf.writer();
                let _ = serde_json::to_writer(&mut w, s);
            }
        }
        buf.put_u8(b',');
    }
}

/// Adds `"_meta":{<meta>}` to the object serialized at `buf[start..]`, unless it already
/// has a top-level `_meta` (a handler's own; left as is).
fn splice_meta(buf: &mut BytesMut, start: usize, meta: &[u8]) {
    let obj = &buf[start..];
    if obj.len() < 2 || obj[obj.len() - 1] != b'}' || has_top_level_meta(obj) {
        return;
    }
    buf.truncate(buf.len() - 1);
    if buf[buf.len() - 1] != b'{' {
        buf.put_u8(b',');
    }
    buf.put_slice(b"\"_meta\":{");
    buf.put_slice(meta);
    buf.put_slice(b"}}");
}

/// Scans a serialized object for a top-level `"_meta"` key, skipping strings and nesting.
fn has_top_level_meta(obj: &[u8]) -> bool {
    // Most results hold no `"_meta"` anywhere: one vectorized search settles those.
    if memchr::memmem::find(obj, b"\"_meta\"").is_none() {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while i < obj.len() {
        match obj[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < obj.len() && obj[i] != b'"' {
                    if obj[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if depth == 1 && &obj[start..i.min(obj.len())] == b"_meta" {
                    let rest = &obj[(i + 1).min(obj.len())..];
                    if rest.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b':') {
                        return true;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn splices_server_meta() {
        let r = Reply::result(
            &RequestId::Number(1),
            &json!({"resultType":"complete"}),
            Some(br#""io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}"#),
        );
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",
                "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}})
        );
    }

    #[test]
    fn keeps_handler_meta() {
        let r = Reply::result(
            &RequestId::String("a\"b".into()),
            &json!({"x":{"_meta":1},"_meta":{"k":1},"s":"\"_meta\""}),
            Some(b"\"q\":1"),
        );
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["result"]["_meta"], json!({"k":1}));
        assert_eq!(v["id"], json!("a\"b"));
    }

    #[test]
    fn nested_meta_is_not_top_level() {
        let r = Reply::result(
            &RequestId::Number(2),
            &json!({"x":{"_meta":1}}),
            Some(b"\"q\":1"),
        );
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["result"]["_meta"], json!({"q":1}));
    }

    #[test]
    fn error_statuses() {
        assert_eq!(
            Reply::error(None, &ErrorObject::method_not_found("x")).status,
            404
        );
        assert_eq!(
            Reply::error(None, &ErrorObject::unsupported_version(&["a"], "b")).status,
            400
        );
        assert_eq!(
            Reply::error(None, &ErrorObject::invalid_params("x")).status,
            200
        );
    }
}
