//! Serialized responses, and what kind of answer each is.

use std::fmt::Write as _;

use bytes::{BufMut, Bytes, BytesMut};
use ferry_protocol::ErrorObject;
use ferry_protocol::jsonrpc::RequestId;
use serde::Serialize;

use crate::refusal::{Failure, Refusal};

/// One serialized JSON-RPC response, ready to write, and what kind of answer it is.
///
/// A transport that has a status of its own (Streamable HTTP) takes it from
/// [`Reply::kind`]: results and errors answered in the body are `200`, a
/// [`Refusal`] has the status its table gives.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The JSON text of the response, without a trailing newline.
    pub body: Bytes,
    /// What the response is.
    pub kind: ReplyKind,
}

/// What a [`Reply`] answers with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyKind {
    /// A result.
    Result,
    /// A JSON-RPC error about the request's content, answered like a result (an unknown
    /// tool, invalid arguments, a handler's protocol error, a failed ask).
    Error,
    /// The request was refused for a reason a transport reports in its own terms.
    Refused(Refusal),
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
            kind: ReplyKind::Result,
        }
    }

    /// A successful response, serializing `result`. `server_meta` is spliced into the
    /// result's `_meta` when the result has none of its own (see [`crate::Server`]).
    pub(crate) fn result<R: Serialize>(
        id: &RequestId,
        result: &R,
        server_meta: Option<&[u8]>,
    ) -> Reply {
        // Room for a small result, so the common reply is written without growing.
        Reply::result_sized(id, result, server_meta, 256)
    }

    /// [`Reply::result`] for a result of about `result_len` bytes of JSON, so that a large
    /// one is written into a buffer of the right size instead of one grown several times.
    pub(crate) fn result_sized<R: Serialize>(
        id: &RequestId,
        result: &R,
        server_meta: Option<&[u8]>,
        result_len: usize,
    ) -> Reply {
        // The envelope (`{"jsonrpc":"2.0","id":…,"result":` and `}`) and the spliced `_meta`.
        let room = result_len + 64 + server_meta.map_or(0, |m| m.len() + 16);
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
            kind: ReplyKind::Result,
        }
    }

    /// An error response. Codes that the transports' rules single out (-32700, -32600,
    /// -32601, -32020, -32021, -32022) are refusals of that kind; any other is answered
    /// in the body.
    pub fn error(id: Option<&RequestId>, error: &ErrorObject) -> Reply {
        let kind = match Refusal::for_code(error.code) {
            Some(r) => ReplyKind::Refused(r),
            None => ReplyKind::Error,
        };
        Reply::with_kind(id, error, kind)
    }

    /// A refusal for `reason`, with this error.
    pub fn refused(id: Option<&RequestId>, error: &ErrorObject, reason: Refusal) -> Reply {
        Reply::with_kind(id, error, ReplyKind::Refused(reason))
    }

    pub(crate) fn failure(id: Option<&RequestId>, failure: &Failure) -> Reply {
        Reply::with_kind(id, &failure.error, failure.kind.clone())
    }

    fn with_kind(id: Option<&RequestId>, error: &ErrorObject, kind: ReplyKind) -> Reply {
        let mut buf = BytesMut::with_capacity(128).writer();
        write_prefix(buf.get_mut(), id);
        buf.get_mut().put_slice(b"\"error\":");
        // An ErrorObject always serializes.
        let _ = serde_json::to_writer(&mut buf, error);
        let mut buf = buf.into_inner();
        buf.put_u8(b'}');
        Reply {
            body: buf.freeze(),
            kind,
        }
    }

    /// The refusal, when this reply is one.
    pub fn refusal(&self) -> Option<&Refusal> {
        match &self.kind {
            ReplyKind::Refused(r) => Some(r),
            _ => None,
        }
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
    fn error_kinds() {
        assert_eq!(
            Reply::error(None, &ErrorObject::method_not_found("x")).kind,
            ReplyKind::Refused(Refusal::MethodNotFound)
        );
        assert_eq!(
            Reply::error(None, &ErrorObject::unsupported_version(&["a"], "b")).kind,
            ReplyKind::Refused(Refusal::UnsupportedVersion)
        );
        assert_eq!(
            Reply::error(None, &ErrorObject::invalid_params("x")).kind,
            ReplyKind::Error
        );
    }
}
