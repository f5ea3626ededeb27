//! OTLP trace export requests (`ExportTraceServiceRequest`, opentelemetry-proto's
//! `collector/trace/v1`), encoded as protobuf straight from Ferry's span records: no
//! intermediate message structs, one buffer per batch.
//!
//! Each span is encoded on its own ([`encode_span`]) and appended to its batch; a nested
//! message is written in place after room for its length (one byte for an attribute, two
//! for a span, the lengths they mostly need, moved along only when a body turns out
//! otherwise). The messages around a batch's spans are written last ([`finish`]), into
//! room left in front of them, so no body is moved.

use crate::spans::{AttrValue, SpanKind, SpanRecord, StatusCode};

/// Protobuf wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// A protobuf writer over one growing buffer.
pub(crate) struct Encoder {
    buf: Vec<u8>,
}

impl Encoder {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Encoder {
            buf: Vec::with_capacity(capacity),
        }
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint(u64::from(field << 3 | u32::from(wire)));
    }

    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, LEN);
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// A string field; empty strings are the default and are left out.
    fn string(&mut self, field: u32, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }

    fn fixed64(&mut self, field: u32, v: u64) {
        self.key(field, FIXED64);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn fixed32(&mut self, field: u32, v: u32) {
        self.key(field, FIXED32);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn uint(&mut self, field: u32, v: u64) {
        if v != 0 {
            self.key(field, VARINT);
            self.varint(v);
        }
    }

    /// Opens a nested message in `field` with one byte for its length;
    /// [`Encoder::close`] writes it.
    fn open(&mut self, field: u32) -> Open {
        self.open_with(field, 1)
    }

    /// Opens a nested message in `field` with `room` bytes (1 or 2) for its length.
    fn open_with(&mut self, field: u32, room: usize) -> Open {
        self.key(field, LEN);
        self.buf.extend_from_slice(&[0, 0][..room]);
        Open {
            body: self.buf.len(),
            room,
        }
    }

    /// Writes the length of the message `open` began, moving its body when the length
    /// takes other than the bytes left for it.
    fn close(&mut self, open: Open) {
        let Open { body, room } = open;
        let mut prefix = [0u8; 10];
        let n = put_varint(&mut prefix, (self.buf.len() - body) as u64);
        if n == room {
            self.buf[body - room..body].copy_from_slice(&prefix[..n]);
        } else {
            self.buf
                .splice(body - room..body, prefix[..n].iter().copied());
        }
    }

    /// A `KeyValue` in `field`.
    fn attribute(&mut self, field: u32, key: &str, value: Value<'_>) {
        // Most attributes are short text: every length then fits one byte, known up
        // front, and the attribute is written in four copies.
        if let Value::Str(s) = value
            && field < 16
            && !key.is_empty()
            && key.len() + s.len() < 120
        {
            let (k, v) = (key.len() as u8, s.len() as u8);
            self.buf.reserve(8 + key.len() + s.len());
            self.buf
                .extend_from_slice(&[(field << 3) as u8 | LEN, 6 + k + v, 1 << 3 | LEN, k]);
            self.buf.extend_from_slice(key.as_bytes());
            self.buf
                .extend_from_slice(&[2 << 3 | LEN, 2 + v, 1 << 3 | LEN, v]);
            self.buf.extend_from_slice(s.as_bytes());
            return;
        }
        self.attribute_nested(field, key, value);
    }

    /// A `KeyValue` in `field`, each nested message written in place.
    fn attribute_nested(&mut self, field: u32, key: &str, value: Value<'_>) {
        let kv = self.open(field);
        self.string(1, key);
        let any = self.open(2);
        match value {
            Value::Str(s) => self.bytes(1, s.as_bytes()),
            Value::Bool(b) => {
                self.key(2, VARINT);
                self.varint(u64::from(b));
            }
            Value::I64(i) => {
                self.key(3, VARINT);
                self.varint(i as u64);
            }
            Value::F64(f) => self.fixed64(4, f.to_bits()),
        }
        self.close(any);
        self.close(kv);
    }
}

/// A nested message being written: where its body starts, and the bytes left for its
/// length in front of it.
#[derive(Clone, Copy)]
struct Open {
    body: usize,
    room: usize,
}

/// Writes `v` as a varint at the start of `out` (room for ten bytes); returns its length.
fn put_varint(out: &mut [u8; 10], mut v: u64) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        out[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    n + 1
}

/// The bytes of `v` as a varint.
fn varint_len(v: u64) -> usize {
    put_varint(&mut [0; 10], v)
}

/// How an export request's body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// The protobuf message alone (OTLP/HTTP).
    Plain,
    /// One uncompressed gRPC message: flag, big-endian length, the message.
    Grpc,
}

/// An attribute value as written.
#[derive(Clone, Copy)]
pub(crate) enum Value<'a> {
    Str(&'a str),
    Bool(bool),
    I64(i64),
    F64(f64),
}

/// The resource and scope every span of a process shares, encoded once.
pub(crate) struct Preamble {
    /// The `Resource` message's body.
    resource: Vec<u8>,
    /// The `InstrumentationScope` message's body.
    scope: Vec<u8>,
}

impl Preamble {
    /// `resource` as key and value pairs, and the instrumentation scope `scope_name`.
    pub(crate) fn new<'a>(
        resource: impl IntoIterator<Item = (&'a str, Value<'a>)>,
        scope_name: &str,
        scope_version: &str,
    ) -> Self {
        let mut r = Encoder::with_capacity(256);
        for (k, v) in resource {
            r.attribute(1, k, v);
        }
        let mut s = Encoder::with_capacity(32);
        s.string(1, scope_name);
        s.string(2, scope_version);
        Preamble {
            resource: r.into_bytes(),
            scope: s.into_bytes(),
        }
    }
}

/// Appends `span` to `out`, encoded as a `Span` field of `ScopeSpans`: the spans of a
/// batch, one after another, are the body [`finish`] wraps.
pub(crate) fn encode_span(out: &mut Vec<u8>, span: &SpanRecord) {
    let mut e = Encoder {
        buf: std::mem::take(out),
    };
    write_span(&mut e, span);
    *out = e.buf;
}

/// The `ExportTraceServiceRequest` for the spans in `batch` after its first `room`
/// bytes, framed.
///
/// What goes in front of the spans (the `ResourceSpans` and `ScopeSpans` messages that
/// hold them, with the resource and the scope, and the gRPC frame) is written into the
/// end of that room once the spans' length is known, and the body starts where it
/// does; a resource too large for the room is copied in front instead.
pub(crate) fn finish(
    preamble: &Preamble,
    mut batch: Vec<u8>,
    room: usize,
    framing: Framing,
) -> bytes::Bytes {
    let spans_len = (batch.len() - room) as u64;
    let field = |len: usize| (1 + varint_len(len as u64) + len) as u64;
    let scope_spans = field(preamble.scope.len()) + spans_len;
    let resource_spans =
        field(preamble.resource.len()) + 1 + varint_len(scope_spans) as u64 + scope_spans;
    let request = 1 + varint_len(resource_spans) as u64 + resource_spans;
    let mut head = Encoder::with_capacity(64 + preamble.resource.len() + preamble.scope.len());
    if framing == Framing::Grpc {
        head.buf.push(0);
        head.buf
            .extend_from_slice(&u32::try_from(request).unwrap_or(u32::MAX).to_be_bytes());
    }
    head.key(1, LEN);
    head.varint(resource_spans);
    head.bytes(1, &preamble.resource);
    head.key(2, LEN);
    head.varint(scope_spans);
    head.bytes(1, &preamble.scope);
    match room.checked_sub(head.buf.len()) {
        Some(start) => {
            batch[start..room].copy_from_slice(&head.buf);
            bytes::Bytes::from(batch).slice(start..)
        }
        None => {
            head.buf.extend_from_slice(&batch[room..]);
            bytes::Bytes::from(head.buf)
        }
    }
}

fn write_span(e: &mut Encoder, span: &SpanRecord) {
    // Most spans take from 128 bytes to 16 KiB: a two-byte length.
    let s = e.open_with(2, 2);
    e.bytes(1, &span.trace_id);
    e.bytes(2, &span.span_id);
    if let Some(state) = &span.trace_state {
        e.string(3, state);
    }
    if let Some(parent) = &span.parent_id {
        e.bytes(4, parent);
    }
    e.string(5, span.name());
    e.uint(6, span_kind(span.kind));
    e.fixed64(7, span.start);
    e.fixed64(8, span.end);
    for a in &span.attributes {
        e.attribute(9, a.key, span.value(&a.value));
    }
    for ev in &span.events {
        let m = e.open(11);
        e.fixed64(1, ev.time);
        e.string(2, span.event_name(ev));
        for a in &ev.attributes {
            e.attribute(3, a.key, span.value(&a.value));
        }
        e.close(m);
    }
    for link in &span.links {
        let m = e.open(13);
        e.bytes(1, &link.trace_id);
        e.bytes(2, &link.span_id);
        // Bits 8 and 9 (SpanFlags): a link names a span of another request, so remote.
        e.fixed32(6, 0x300 | u32::from(link.flags));
        e.close(m);
    }
    // Always present, as the OpenTelemetry SDK sends it (an unset code is empty).
    let m = e.open(15);
    e.string(2, &span.status_message);
    e.uint(3, status_code(span.status));
    e.close(m);
    // Bits 8 and 9 (SpanFlags): whether the parent is known, and whether it is remote.
    let parent_bits = if span.parent_id.is_some() && span.remote_parent {
        0x300
    } else {
        0x100
    };
    e.fixed32(16, parent_bits | u32::from(span.flags));
    e.close(s);
}

fn span_kind(kind: SpanKind) -> u64 {
    match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

fn status_code(code: StatusCode) -> u64 {
    match code {
        StatusCode::Unset => 0,
        StatusCode::Ok => 1,
        StatusCode::Error => 2,
    }
}

impl SpanRecord {
    /// An attribute value of this span, its text borrowed from the span's own buffer.
    fn value<'a>(&'a self, v: &AttrValue) -> Value<'a> {
        match *v {
            AttrValue::Text(ref range) => {
                Value::Str(&self.text[range.start as usize..range.end as usize])
            }
            AttrValue::Bool(b) => Value::Bool(b),
            AttrValue::I64(i) => Value::I64(i),
            AttrValue::F64(f) => Value::F64(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::collector::Collector;
    use crate::export::{Batcher, HEAD_ROOM};
    use crate::spans::{SpanRecorder, hooks};
    use ferry_protocol::trace::TraceContext;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use prost::Message as _;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const EARLIER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    /// Spans made through `tracing`, recorded by the subscriber and encoded here, decode with
    /// opentelemetry-proto's own message types into what was recorded.
    #[test]
    fn short_text_attributes_encode_as_nested_ones_do() {
        for (key_len, value_len) in [(1, 0), (5, 20), (60, 59), (60, 60), (61, 60), (3, 200)] {
            for field in [1, 9, 15, 16] {
                let key = "k".repeat(key_len);
                let value = "v".repeat(value_len);
                let mut quick = Encoder::with_capacity(0);
                quick.attribute(field, &key, Value::Str(&value));
                let mut nested = Encoder::with_capacity(0);
                nested.attribute_nested(field, &key, Value::Str(&value));
                assert_eq!(quick.buf, nested.buf, "key {key_len}, value {value_len}");
            }
        }
    }

    #[test]
    fn recorded_spans_decode_as_an_otlp_request() {
        let batcher = Arc::new(Batcher::new(64, 64));
        let recorder = SpanRecorder::exporting_to(&batcher);
        let h = hooks();
        let long = "é".repeat(100);
        tracing::subscriber::with_default(Collector::new(None, Some(recorder)), || {
            let outer = tracing::info_span!(
                "outer",
                otel.kind = "server",
                count = 3u64,
                ok = true,
                ratio = 0.5,
                note = %long,
            );
            (h.set_parent)(
                &outer,
                &TraceContext {
                    traceparent: PARENT.into(),
                    tracestate: Some("k=v".into()),
                },
            );
            let cx = (h.context_of)(&outer).expect("a context");
            assert!(
                cx.traceparent
                    .starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-")
            );
            assert!(cx.traceparent.ends_with("-01"));
            let _entered = outer.enter();
            let inner = tracing::info_span!(
                "inner",
                otel.name = %format_args!("tools/call {}", "echo"),
                error.type = tracing::field::Empty,
                otel.status_code = tracing::field::Empty,
            );
            inner.record("error.type", "tool_error");
            inner.record("otel.status_code", "ERROR");
            (h.add_link)(&inner, EARLIER);
            inner.in_scope(|| tracing::info!(reason = "expired", "requestState refused"));
        });
        let preamble = Preamble::new(
            [("service.name", Value::Str("svc")), ("pid", Value::I64(7))],
            "ferry",
            "0.1.0",
        );
        let body = batcher.take_request(&preamble, Framing::Plain);
        let req = ExportTraceServiceRequest::decode(body.as_ref()).expect("decodes");
        assert_eq!(req.resource_spans[0].scope_spans[0].spans.len(), 2);
        let rs = &req.resource_spans[0];
        let resource = rs.resource.as_ref().expect("a resource");
        assert_eq!(resource.attributes[0].key, "service.name");
        assert_eq!(
            resource.attributes[1]
                .value
                .as_ref()
                .and_then(|v| v.value.clone()),
            Some(Any::IntValue(7))
        );
        let ss = &rs.scope_spans[0];
        assert_eq!(ss.scope.as_ref().map(|s| s.name.as_str()), Some("ferry"));
        let (inner, outer) = (&ss.spans[0], &ss.spans[1]);
        let attr = |s: &opentelemetry_proto::tonic::trace::v1::Span, k: &str| {
            s.attributes
                .iter()
                .find(|a| a.key == k)
                .and_then(|a| a.value.clone())
                .and_then(|v| v.value)
        };

        assert_eq!(outer.name, "outer");
        assert_eq!(outer.kind, 2, "server");
        assert_eq!(hex(&outer.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(hex(&outer.parent_span_id), "00f067aa0ba902b7");
        assert_eq!(outer.trace_state, "k=v");
        assert_eq!(outer.flags, 0x301, "sampled, with a remote parent");
        assert_eq!(attr(outer, "count"), Some(Any::IntValue(3)));
        assert_eq!(attr(outer, "ok"), Some(Any::BoolValue(true)));
        assert_eq!(attr(outer, "ratio"), Some(Any::DoubleValue(0.5)));
        assert_eq!(attr(outer, "note"), Some(Any::StringValue(long.clone())));
        assert!(outer.end_time_unix_nano >= outer.start_time_unix_nano);
        assert!(outer.start_time_unix_nano > 0);

        assert_eq!(inner.name, "tools/call echo");
        assert_eq!(inner.kind, 1, "internal");
        assert_eq!(inner.trace_id, outer.trace_id);
        assert_eq!(inner.parent_span_id, outer.span_id);
        assert_eq!(inner.flags, 0x101, "sampled, with a local parent");
        assert_eq!(
            attr(inner, "error.type"),
            Some(Any::StringValue("tool_error".into()))
        );
        assert_eq!(inner.status.as_ref().map(|s| s.code), Some(2));
        assert_eq!(inner.links.len(), 1);
        assert_eq!(hex(&inner.links[0].span_id), "b7ad6b7169203331");
        assert_eq!(inner.events.len(), 1);
        assert_eq!(inner.events[0].name, "requestState refused");
        assert_eq!(inner.events[0].attributes[0].key, "reason");
    }

    /// A message past 127 bytes needs a longer length prefix: the body moves along.
    #[test]
    fn long_nested_messages_get_their_full_length() {
        let mut e = Encoder::with_capacity(8);
        let outer = e.open(1);
        e.bytes(2, &[7u8; 300]);
        e.close(outer);
        let b = e.into_bytes();
        assert_eq!(&b[..4], &[0x0a, 0xaf, 0x02, 0x12]);
        assert_eq!(b.len(), 1 + 2 + 1 + 2 + 300);
    }

    /// Two bytes left for a length: a short body moves back, a long one along, and one
    /// in between stays where it is.
    #[test]
    fn two_byte_lengths_fit_every_body() {
        for (size, prefix) in [
            (10usize, vec![0x0a, 12]),
            (300, vec![0x0a, 0xaf, 0x02]),
            (20_000, vec![0x0a, 0xa4, 0x9c, 0x01]),
        ] {
            let mut e = Encoder::with_capacity(8);
            let outer = e.open_with(1, 2);
            e.bytes(2, &vec![7u8; size]);
            e.close(outer);
            let b = e.into_bytes();
            let inner = 1 + varint_len(size as u64) + size;
            assert_eq!(b.len(), prefix.len() + inner, "{size}");
            assert_eq!(&b[..prefix.len()], prefix.as_slice(), "{size}");
            assert_eq!(b[prefix.len()], 0x12, "{size}");
        }
    }

    /// `otel.*` fields given as `Debug` values: the name as written, kind and status
    /// read unquoted, any other kept as an attribute.
    #[test]
    fn otel_fields_given_as_debug_values() {
        let batcher = Arc::new(Batcher::new(8, 8));
        let recorder = SpanRecorder::exporting_to(&batcher);
        tracing::subscriber::with_default(Collector::new(None, Some(recorder)), || {
            let _a = tracing::info_span!(
                "a",
                otel.name = %"named",
                otel.kind = ?"client",
                otel.status_code = ?"ERROR",
                otel.other = ?7,
            )
            .entered();
        });
        let spans = batcher.take();
        assert_eq!(spans[0].name, "named");
        assert_eq!(spans[0].kind, 3, "client");
        assert_eq!(spans[0].status.as_ref().map(|s| s.code), Some(2));
        assert_eq!(spans[0].attributes.len(), 1);
        assert_eq!(spans[0].attributes[0].key, "otel.other");
        assert_eq!(
            spans[0].attributes[0]
                .value
                .as_ref()
                .and_then(|v| v.value.clone()),
            Some(Any::StringValue("7".into()))
        );
    }

    /// A gRPC frame is the flag byte and the message's big-endian length, then the
    /// message, which decodes as the plain body does.
    #[test]
    fn grpc_framing_wraps_the_plain_body() {
        let batcher = Arc::new(Batcher::new(8, 8));
        let recorder = SpanRecorder::exporting_to(&batcher);
        tracing::subscriber::with_default(Collector::new(None, Some(recorder)), || {
            let _a = tracing::info_span!("a", note = "x").entered();
        });
        let preamble = Preamble::new([("service.name", Value::Str("svc"))], "ferry", "0.1.0");
        let spans = batcher.take_encoded();
        let batch = |room: usize| [vec![0; room], spans.clone()].concat();
        let plain = finish(&preamble, batch(HEAD_ROOM), HEAD_ROOM, Framing::Plain);
        let framed = finish(&preamble, batch(HEAD_ROOM), HEAD_ROOM, Framing::Grpc);
        // A resource larger than the room: copied in front, the same bytes.
        assert_eq!(finish(&preamble, batch(3), 3, Framing::Grpc), framed);
        assert_eq!(framed[0], 0);
        assert_eq!(
            u32::from_be_bytes([framed[1], framed[2], framed[3], framed[4]]) as usize,
            plain.len()
        );
        assert_eq!(&framed[5..], &plain[..]);
        let req = ExportTraceServiceRequest::decode(plain.as_ref()).expect("decodes");
        assert_eq!(req.resource_spans[0].scope_spans[0].spans[0].name, "a");
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}
