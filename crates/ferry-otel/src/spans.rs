//! Ferry's span pipeline: the span side of the subscriber ([`crate::collector`]), which
//! gives every span it records a W3C trace context (trace id, span id, parent, flags,
//! `tracestate`) and records its name, kind, attributes, events, links and status into
//! one [`SpanRecord`], handed to the exporter when the span closes.
//!
//! A record keeps all of its text (attribute values, the name when it is computed, event
//! fields) in one buffer. When its span closes, the thread that closed it encodes it
//! straight into OTLP protobuf ([`crate::otlp`]) for the exporter's queue and keeps the
//! emptied record for its next span: a request span allocates nothing once the thread
//! has made one.
//!
//! The `otel.*` fields have the meaning `tracing-opentelemetry` gives them: `otel.name`
//! (the span's name), `otel.kind` (`server`, `client`, `internal`, `producer`,
//! `consumer`), `otel.status_code` (`ERROR`, `OK`) and `otel.status_description`. An
//! event inside a span becomes a span event named by its message, and an `ERROR` event
//! marks the span's status as an error.

use std::cell::Cell;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ferry_protocol::trace::{TraceContext, TraceHooks};
use rand::RngCore as _;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Record};
use tracing::{Event, Level};

use crate::collector::Collector;
use crate::export::Batcher;
use crate::filter::TargetFilter;
use crate::metrics::{Instruments, Side};

/// Attributes, events and links kept per span (the OpenTelemetry SDK's default limits);
/// more are counted out.
const MAX_ATTRIBUTES: usize = 128;
const MAX_EVENTS: usize = 128;
const MAX_LINKS: usize = 128;
/// Bytes of text (attribute values, event names) kept per span: past this, values are
/// cut at a character boundary.
const MAX_TEXT: usize = 64 * 1024;

/// The W3C `sampled` trace flag.
const SAMPLED: u8 = 0x01;

/// The span kinds of OpenTelemetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpanKind {
    Internal,
    Server,
    Client,
    Producer,
    Consumer,
}

/// A span's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusCode {
    Unset,
    Ok,
    Error,
}

/// An attribute's value; text lives in the span's buffer.
#[derive(Debug, Clone)]
pub(crate) enum AttrValue {
    Text(Range<u32>),
    Bool(bool),
    I64(i64),
    F64(f64),
}

/// One attribute: `tracing` field names are static.
#[derive(Debug, Clone)]
pub(crate) struct Attribute {
    pub(crate) key: &'static str,
    pub(crate) value: AttrValue,
}

/// A span event; its text (the message that names it, attribute values) lives in the
/// span's buffer.
#[derive(Debug)]
pub(crate) struct SpanEvent {
    pub(crate) time: u64,
    name: Name,
    pub(crate) attributes: Vec<Attribute>,
}

/// A link to another span.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) trace_id: [u8; 16],
    pub(crate) span_id: [u8; 8],
    pub(crate) flags: u8,
}

/// A name: the callsite's, or text recorded for this span or event (`otel.name`, an
/// event's message).
#[derive(Debug)]
enum Name {
    Static(&'static str),
    Text(Range<u32>),
}

/// Everything one span records, from creation to close.
#[derive(Debug)]
pub(crate) struct SpanRecord {
    pub(crate) trace_id: [u8; 16],
    pub(crate) span_id: [u8; 8],
    pub(crate) parent_id: Option<[u8; 8]>,
    /// Whether the parent came from another process (a `traceparent`).
    pub(crate) remote_parent: bool,
    /// W3C trace flags.
    pub(crate) flags: u8,
    pub(crate) trace_state: Option<String>,
    name: Name,
    pub(crate) kind: SpanKind,
    /// Unix nanoseconds.
    pub(crate) start: u64,
    /// When it started, for durations.
    pub(crate) started: Instant,
    /// Which side of a request it is, if it is a request span.
    side: Option<Side>,
    pub(crate) end: u64,
    pub(crate) attributes: Vec<Attribute>,
    pub(crate) events: Vec<SpanEvent>,
    pub(crate) links: Vec<Link>,
    pub(crate) status: StatusCode,
    pub(crate) status_message: String,
    /// The text of attribute values (and of the name when computed).
    pub(crate) text: String,
}

impl SpanRecord {
    /// The span's name.
    pub(crate) fn name(&self) -> &str {
        self.name_text(&self.name)
    }

    /// The name of `event`, one of this span's.
    pub(crate) fn event_name<'a>(&'a self, event: &'a SpanEvent) -> &'a str {
        self.name_text(&event.name)
    }

    fn name_text<'a>(&'a self, name: &'a Name) -> &'a str {
        match name {
            Name::Static(s) => s,
            Name::Text(r) => &self.text[r.start as usize..r.end as usize],
        }
    }

    fn sampled(&self) -> bool {
        self.flags & SAMPLED != 0
    }

    /// The text of `value`, one of this span's attribute values, if it is text.
    pub(crate) fn text_of(&self, value: &AttrValue) -> Option<&str> {
        match value {
            AttrValue::Text(r) => Some(&self.text[r.start as usize..r.end as usize]),
            _ => None,
        }
    }

    /// Appends `s` to the text buffer (cut to what the limit leaves).
    fn push_text(&mut self, s: &str) -> Range<u32> {
        let start = self.text.len();
        let room = MAX_TEXT.saturating_sub(start);
        self.text.push_str(cut(s, room));
        start as u32..self.text.len() as u32
    }

    /// Formats `value` into the text buffer (cut to what the limit leaves).
    fn push_debug(&mut self, value: &dyn std::fmt::Debug) -> Range<u32> {
        let start = self.text.len();
        let _ = write!(self.text, "{value:?}");
        if self.text.len() > MAX_TEXT {
            let keep = cut(&self.text[start..], MAX_TEXT.saturating_sub(start)).len();
            self.text.truncate(start + keep);
        }
        start as u32..self.text.len() as u32
    }

    /// Sets `key`: replacing an earlier value, unless `fresh` says the span was just
    /// made (a callsite names each field once).
    fn set(&mut self, key: &'static str, value: AttrValue, fresh: bool) {
        if !fresh && let Some(a) = self.attributes.iter_mut().find(|a| a.key == key) {
            a.value = value;
        } else if self.attributes.len() < MAX_ATTRIBUTES {
            self.attributes.push(Attribute { key, value });
        }
    }

    /// This span's context in W3C form.
    fn context(&self) -> TraceContext {
        let mut traceparent = String::with_capacity(55);
        traceparent.push_str("00-");
        push_hex(&mut traceparent, &self.trace_id);
        traceparent.push('-');
        push_hex(&mut traceparent, &self.span_id);
        traceparent.push('-');
        push_hex(&mut traceparent, &[self.flags]);
        TraceContext {
            traceparent,
            tracestate: self.trace_state.clone(),
        }
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Span times from one clock read: the monotonic clock, and the wall clock it stands
/// for, carried forward from a wall-clock reading the thread took at most a second
/// earlier (so a step of the system clock shows within a second).
mod clock {
    use std::cell::Cell;
    use std::time::{Duration, Instant};

    /// How long a thread's wall-clock reading is carried forward.
    const CARRIED: Duration = Duration::from_secs(1);

    thread_local! {
        /// (monotonic time, Unix nanoseconds) read together.
        static ANCHOR: Cell<Option<(Instant, u64)>> = const { Cell::new(None) };
    }

    /// Now, as Unix nanoseconds and as an `Instant`.
    pub(super) fn now() -> (u64, Instant) {
        let mono = Instant::now();
        ANCHOR.with(|anchor| {
            if let Some((at, wall)) = anchor.get()
                && let Some(since) = mono.checked_duration_since(at)
                && since < CARRIED
            {
                return (wall.saturating_add(since.as_nanos() as u64), mono);
            }
            let wall = super::now_nanos();
            anchor.set(Some((mono, wall)));
            (wall, mono)
        })
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn carried_wall_time_stays_with_the_wall_clock() {
            let (first, _) = super::now();
            std::thread::sleep(std::time::Duration::from_millis(20));
            let (second, _) = super::now();
            let wall = super::super::now_nanos();
            assert!(second >= first + 20_000_000, "{first} {second}");
            // Carried forward, it stays within a few milliseconds of a fresh reading.
            assert!(wall.abs_diff(second) < 5_000_000, "{wall} {second}");
        }
    }
}

/// A parsed `traceparent`: trace id, parent span id, flags. `None` when malformed, or
/// when either id is all zeros (W3C Trace Context, section 3.2).
pub(crate) fn parse_traceparent(s: &str) -> Option<([u8; 16], [u8; 8], u8)> {
    let s = s.trim();
    let mut parts = s.split('-');
    let version = parts.next()?;
    let trace = parts.next()?;
    let span = parts.next()?;
    let flags = parts.next()?;
    // Version 00 has exactly four parts; later versions may append more.
    if version.len() != 2 || version == "ff" || (version == "00" && parts.next().is_some()) {
        return None;
    }
    hex_byte(version)?;
    let mut trace_id = [0u8; 16];
    let mut span_id = [0u8; 8];
    if trace.len() != 32 || span.len() != 16 || flags.len() != 2 {
        return None;
    }
    for (i, b) in trace_id.iter_mut().enumerate() {
        *b = hex_byte(&trace[2 * i..2 * i + 2])?;
    }
    for (i, b) in span_id.iter_mut().enumerate() {
        *b = hex_byte(&span[2 * i..2 * i + 2])?;
    }
    let flags = hex_byte(flags)?;
    if trace_id == [0; 16] || span_id == [0; 8] {
        return None;
    }
    Some((trace_id, span_id, flags))
}

/// Two lowercase hex digits (W3C ids are lowercase).
fn hex_byte(s: &str) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let b = s.as_bytes();
    Some(digit(*b.first()?)? << 4 | digit(*b.get(1)?)?)
}

/// Which new traces are recorded: the standard `OTEL_TRACES_SAMPLER` (and
/// `OTEL_TRACES_SAMPLER_ARG` for the ratios). Parent-based samplers (the default,
/// `parentbased_always_on`) follow the parent's `sampled` flag when there is one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sampler {
    /// Whether a span with a parent follows the parent's decision.
    parent_based: bool,
    /// The share of new traces recorded, 0.0 to 1.0.
    ratio: f64,
}

impl Sampler {
    /// Reads the sampler through `var`; an unknown name keeps the default, with a
    /// message on stderr.
    pub(crate) fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Self {
        let arg = || {
            var("OTEL_TRACES_SAMPLER_ARG")
                .and_then(|a| a.trim().parse::<f64>().ok())
                .filter(|r| (0.0..=1.0).contains(r))
                .unwrap_or(1.0)
        };
        let (parent_based, ratio) = match var("OTEL_TRACES_SAMPLER").as_deref().map(str::trim) {
            None | Some("") | Some("parentbased_always_on") => (true, 1.0),
            Some("always_on") => (false, 1.0),
            Some("always_off") => (false, 0.0),
            Some("parentbased_always_off") => (true, 0.0),
            Some("traceidratio") => (false, arg()),
            Some("parentbased_traceidratio") => (true, arg()),
            Some(other) => {
                eprintln!("OTEL_TRACES_SAMPLER {other:?} is not supported; sampling every trace");
                (true, 1.0)
            }
        };
        Sampler {
            parent_based,
            ratio,
        }
    }

    /// Whether a new trace (no parent) with this id is recorded: the ratio compared
    /// against the id's last eight bytes, so every service decides alike.
    fn root(&self, trace_id: &[u8; 16]) -> bool {
        if self.ratio >= 1.0 {
            return true;
        }
        if self.ratio <= 0.0 {
            return false;
        }
        let mut low = [0u8; 8];
        low.copy_from_slice(&trace_id[8..]);
        let x = u64::from_be_bytes(low) >> 1;
        (x as f64) < self.ratio * (1u64 << 63) as f64
    }

    /// The decision for a span whose parent is `parent_sampled` (`None`: a root).
    fn decide(&self, trace_id: &[u8; 16], parent_sampled: Option<bool>) -> bool {
        match parent_sampled {
            Some(p) if self.parent_based => p,
            _ => self.root(trace_id),
        }
    }
}

thread_local! {
    /// The emptied record of a span this thread closed, for its next span.
    static SPARE: Cell<Option<Box<SpanRecord>>> = const { Cell::new(None) };
    /// The buffer this thread encodes the spans it closes in.
    static ENCODED: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

impl SpanRecord {
    /// An empty record, with room for a request span's text.
    fn empty() -> Self {
        SpanRecord {
            trace_id: [0; 16],
            span_id: [0; 8],
            parent_id: None,
            remote_parent: false,
            flags: 0,
            trace_state: None,
            name: Name::Static(""),
            kind: SpanKind::Internal,
            start: 0,
            started: Instant::now(),
            side: None,
            end: 0,
            attributes: Vec::new(),
            events: Vec::new(),
            links: Vec::new(),
            status: StatusCode::Unset,
            status_message: String::new(),
            text: String::with_capacity(128),
        }
    }

    /// Empties a closed span's record for another span, keeping its buffers; `false`
    /// when they grew past what is worth keeping.
    pub(crate) fn clear(&mut self) -> bool {
        /// Buffers above these capacities are not kept for another span.
        const TEXT_MAX: usize = 4096;
        const LIST_MAX: usize = 32;
        if self.text.capacity() > TEXT_MAX
            || self.attributes.capacity() > LIST_MAX
            || self.events.capacity() > LIST_MAX
            || self.links.capacity() > LIST_MAX
            || self.status_message.capacity() > TEXT_MAX
        {
            return false;
        }
        self.text.clear();
        self.attributes.clear();
        self.events.clear();
        self.links.clear();
        self.status_message.clear();
        self.trace_state = None;
        true
    }
}

/// What a new span inherits from the nearest recorded span above it: trace id, the
/// parent's span id, trace flags and `tracestate`.
pub(crate) type Inherited = ([u8; 16], [u8; 8], u8, Option<String>);

/// The span side of the subscriber: which spans and events it records, how new traces
/// are sampled, where closed spans go and what they are measured with.
pub(crate) struct SpanRecorder {
    filter: TargetFilter,
    sampler: Sampler,
    /// Where closed, sampled spans go; `None` when spans only carry ids (nothing is
    /// exported).
    sink: Option<Arc<Batcher>>,
    /// The instruments request spans and the counted events are measured with.
    metrics: Option<Instruments>,
}

impl SpanRecorder {
    /// Records what `filter` enables, sampling new traces with `sampler`, sending
    /// closed spans to `sink`.
    pub(crate) fn new(filter: TargetFilter, sampler: Sampler, sink: Option<Arc<Batcher>>) -> Self {
        SpanRecorder {
            filter,
            sampler,
            sink,
            metrics: None,
        }
    }

    /// Also measures request spans and counted events with `instruments`.
    pub(crate) fn with_metrics(mut self, instruments: Option<Instruments>) -> Self {
        self.metrics = instruments;
        self
    }

    /// Records what `info` enables, exporting to `batcher` (for tests).
    #[cfg(test)]
    pub(crate) fn exporting_to(batcher: &Arc<Batcher>) -> Self {
        SpanRecorder::new(
            TargetFilter::new("info".parse().expect("directives")),
            Sampler::from_lookup(|_| None),
            Some(batcher.clone()),
        )
    }

    /// Whether spans and events of `meta` are recorded.
    pub(crate) fn enables(&self, meta: &tracing::Metadata<'_>) -> bool {
        self.filter.enables(meta)
    }

    /// The most verbose level anything is recorded at.
    pub(crate) fn max_level(&self) -> Option<tracing::level_filters::LevelFilter> {
        self.filter.max_level()
    }
}

/// Where a [`Recorder`] writes fields.
enum Dest<'a> {
    /// The span's own attributes; `fresh` while the span is being made (a callsite
    /// names each field once, so nothing needs replacing).
    Span { fresh: bool },
    /// An event of the span.
    Event(&'a mut SpanEvent),
}

/// Writes fields into a span record, as its attributes or an event's; text goes to the
/// span's buffer either way.
struct Recorder<'a> {
    span: &'a mut SpanRecord,
    dest: Dest<'a>,
}

impl Recorder<'_> {
    /// Stores a field that is not text: an attribute of the span or of the event.
    fn put(&mut self, field: &Field, value: AttrValue) {
        let key = field.name();
        match &mut self.dest {
            Dest::Span { fresh } => self.span.set(key, value, *fresh),
            Dest::Event(ev) => {
                if ev.attributes.len() < MAX_ATTRIBUTES {
                    ev.attributes.push(Attribute { key, value });
                }
            }
        }
    }

    /// Stores a text field: the name field (`otel.name` of a span, `message` of an
    /// event) names it, the `otel.*` fields set a span's kind and status, any other is
    /// an attribute. The name is looked at once, and an attribute's (most fields are)
    /// only as far as its first byte.
    fn put_text(&mut self, field: &Field, text: &str) {
        let key = field.name();
        match &mut self.dest {
            Dest::Span { fresh } => {
                let fresh = *fresh;
                if key.as_bytes().first() == Some(&b'o')
                    && let Some(rest) = key.strip_prefix("otel.")
                    && self.otel(rest, text)
                {
                    return;
                }
                let range = self.span.push_text(text);
                self.span.set(key, AttrValue::Text(range), fresh);
            }
            Dest::Event(ev) => {
                let range = self.span.push_text(text);
                if key == "message" {
                    ev.name = Name::Text(range);
                } else if ev.attributes.len() < MAX_ATTRIBUTES {
                    ev.attributes.push(Attribute {
                        key,
                        value: AttrValue::Text(range),
                    });
                }
            }
        }
    }

    /// A span's `otel.{name}` field: its name, kind or status; `false` for any other.
    fn otel(&mut self, name: &str, text: &str) -> bool {
        let r = &mut *self.span;
        match name {
            "name" => {
                let range = r.push_text(text);
                r.name = Name::Text(range);
            }
            "kind" => {
                let is = |kind: &str| text.trim().eq_ignore_ascii_case(kind);
                r.kind = if is("server") {
                    SpanKind::Server
                } else if is("client") {
                    SpanKind::Client
                } else if is("producer") {
                    SpanKind::Producer
                } else if is("consumer") {
                    SpanKind::Consumer
                } else {
                    SpanKind::Internal
                };
            }
            "status_code" => {
                let is = |code: &str| text.trim().eq_ignore_ascii_case(code);
                r.status = if is("error") {
                    StatusCode::Error
                } else if is("ok") {
                    StatusCode::Ok
                } else {
                    StatusCode::Unset
                };
            }
            "status_description" | "status_message" => {
                r.status_message.clear();
                r.status_message.push_str(cut(text, 4096));
            }
            _ => return false,
        }
        true
    }
}

impl Visit for Recorder<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put_text(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        // A span's `otel.name` is formatted straight into its buffer, as written
        // (`otel.name = %name` has no quotes); its other `otel.*` fields are read as
        // text, unquoted, and kept as attributes when they are none of `otel`'s.
        if matches!(self.dest, Dest::Span { .. })
            && let Some(name) = field.name().strip_prefix("otel.")
            && name != "name"
        {
            let text = format!("{value:?}");
            if !self.otel(name, text.trim_matches('"')) {
                let range = self.span.push_text(&text);
                self.put(field, AttrValue::Text(range));
            }
            return;
        }
        let range = self.span.push_debug(value);
        match &mut self.dest {
            Dest::Event(ev) if field.name() == "message" => ev.name = Name::Text(range),
            Dest::Span { .. } if field.name() == "otel.name" => self.span.name = Name::Text(range),
            _ => self.put(field, AttrValue::Text(range)),
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, AttrValue::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.record_i64(field, v),
            Err(_) => self.record_debug(field, &value),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, AttrValue::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, AttrValue::Bool(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.record_debug(field, &format_args!("{value}"));
    }
}

impl SpanRecorder {
    /// The record of a new span, under the recorded span `inherited` describes (none: a
    /// new trace).
    pub(crate) fn open(
        &self,
        attrs: &Attributes<'_>,
        inherited: Option<Inherited>,
    ) -> Box<SpanRecord> {
        // Ids are filled from whole words of the generator's stream: sampling a byte array
        // element by element would draw a word per byte.
        let mut rng = rand::rng();
        let mut span_id = rng.next_u64().to_ne_bytes();
        if span_id == [0; 8] {
            span_id[7] = 1;
        }
        let (trace_id, parent_id, flags, trace_state) = match inherited {
            Some((trace, parent, flags, state)) => (
                trace,
                Some(parent),
                if self.sampler.decide(&trace, Some(flags & SAMPLED != 0)) {
                    SAMPLED
                } else {
                    0
                },
                state,
            ),
            None => {
                let mut trace = [0u8; 16];
                rng.fill_bytes(&mut trace);
                if trace == [0; 16] {
                    trace[15] = 1;
                }
                let flags = if self.sampler.decide(&trace, None) {
                    SAMPLED
                } else {
                    0
                };
                (trace, None, flags, None)
            }
        };
        // The record of a span this thread closed earlier, emptied, its buffers kept;
        // filled field by field, in place.
        let mut record = SPARE
            .with(Cell::take)
            .unwrap_or_else(|| Box::new(SpanRecord::empty()));
        let r = &mut *record;
        r.attributes.reserve(attrs.fields().len());
        r.trace_id = trace_id;
        r.span_id = span_id;
        r.parent_id = parent_id;
        r.remote_parent = false;
        r.flags = flags;
        r.trace_state = trace_state;
        r.name = Name::Static(attrs.metadata().name());
        r.kind = SpanKind::Internal;
        (r.start, r.started) = clock::now();
        r.side = Side::of(attrs.metadata().target());
        r.end = 0;
        r.status = StatusCode::Unset;
        // Recorded even when not sampled: a remote parent given after creation may
        // turn sampling on.
        attrs.record(&mut Recorder {
            span: &mut record,
            dest: Dest::Span { fresh: true },
        });
        record
    }

    /// Values recorded on a span after it was made.
    pub(crate) fn record(&self, record: &mut SpanRecord, values: &Record<'_>) {
        values.record(&mut Recorder {
            span: record,
            dest: Dest::Span { fresh: false },
        });
    }

    /// Links `record` to the span `other` follows from.
    pub(crate) fn follows(&self, record: &mut SpanRecord, other: Link) {
        if record.links.len() < MAX_LINKS {
            record.links.push(other);
        }
    }

    /// Counts `event` if it is one the metrics count.
    pub(crate) fn measure_event(&self, event: &Event<'_>) {
        if let Some(m) = &self.metrics {
            m.event(event);
        }
    }

    /// Adds `event` to the span it happened in, when that span is sampled.
    pub(crate) fn event(&self, record: &mut SpanRecord, event: &Event<'_>) {
        if !record.sampled() || record.events.len() >= MAX_EVENTS {
            return;
        }
        let mut ev = SpanEvent {
            time: clock::now().0,
            name: Name::Static(event.metadata().name()),
            attributes: Vec::new(),
        };
        event.record(&mut Recorder {
            span: record,
            dest: Dest::Event(&mut ev),
        });
        if *event.metadata().level() == Level::ERROR && record.status == StatusCode::Unset {
            record.status = StatusCode::Error;
        }
        record.events.push(ev);
    }

    /// A span closed: measures it and sends it for export when sampled.
    pub(crate) fn close(&self, mut record: Box<SpanRecord>) {
        // One clock read: the end is the start plus the monotonic time since, so a
        // span never ends before it starts and its duration is the measured one.
        let elapsed = record.started.elapsed();
        if let (Some(m), Some(side)) = (&self.metrics, record.side) {
            m.request_closed(side, &record, elapsed.as_secs_f64());
        }
        if let Some(sink) = &self.sink
            && record.sampled()
        {
            let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
            record.end = record.start.saturating_add(nanos);
            // Encoded here, while the record is in this core's cache.
            let mut encoded = ENCODED.with(Cell::take);
            encoded.clear();
            crate::otlp::encode_span(&mut encoded, &record);
            sink.push(&encoded);
            // A thread keeps a buffer for a usual span, not for the largest it closed.
            if encoded.capacity() <= 16 * 1024 {
                ENCODED.with(|slot| slot.set(encoded));
            }
        }
        // The record serves this thread's next span, unless it holds one already.
        if record.clear() {
            SPARE.with(|slot| {
                let held = slot.take();
                slot.set(held.or(Some(record)));
            });
        }
    }
}

impl SpanRecord {
    /// What a span made under this one inherits.
    pub(crate) fn inherited(&self) -> Inherited {
        (
            self.trace_id,
            self.span_id,
            self.flags,
            self.trace_state.clone(),
        )
    }

    /// A link to this span.
    pub(crate) fn link(&self) -> Link {
        Link {
            trace_id: self.trace_id,
            span_id: self.span_id,
            flags: self.flags,
        }
    }
}

/// Runs `f` on the record of `span`, when the global subscriber is Ferry's and the span
/// has one.
fn with_record<R>(span: &tracing::Span, f: impl FnOnce(&mut SpanRecord) -> R) -> Option<R> {
    let mut f = Some(f);
    span.with_subscriber(|(id, dispatch)| {
        let collector = dispatch.downcast_ref::<Collector>()?;
        collector.with_record(id, |record| f.take().map(|f| f(record)))?
    })
    .flatten()
}

/// The hooks through which Ferry's libraries parent, link and read their spans.
pub(crate) fn hooks() -> TraceHooks {
    TraceHooks {
        set_parent,
        add_link,
        context_of,
    }
}

/// The sampler the hooks use for a remote parent's decision (set once by `init`).
static SAMPLER: std::sync::OnceLock<Sampler> = std::sync::OnceLock::new();

pub(crate) fn set_sampler(sampler: Sampler) {
    let _ = SAMPLER.set(sampler);
}

fn set_parent(span: &tracing::Span, cx: &TraceContext) {
    let Some((trace_id, parent, flags)) = parse_traceparent(&cx.traceparent) else {
        return;
    };
    let sampler = SAMPLER.get().copied().unwrap_or(Sampler {
        parent_based: true,
        ratio: 1.0,
    });
    with_record(span, |r| {
        r.trace_id = trace_id;
        r.parent_id = Some(parent);
        r.remote_parent = true;
        let sampled = sampler.decide(&trace_id, Some(flags & SAMPLED != 0));
        r.flags = (flags & !SAMPLED) | if sampled { SAMPLED } else { 0 };
        r.trace_state = cx
            .tracestate
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= 512)
            .map(str::to_owned);
    });
}

fn add_link(span: &tracing::Span, traceparent: &str) {
    let Some((trace_id, span_id, flags)) = parse_traceparent(traceparent) else {
        return;
    };
    with_record(span, |r| {
        if r.links.len() < MAX_LINKS {
            r.links.push(Link {
                trace_id,
                span_id,
                flags,
            });
        }
    });
}

fn context_of(span: &tracing::Span) -> Option<TraceContext> {
    with_record(span, |r| r.context())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trip_and_rejections() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let (trace, span, flags) = parse_traceparent(tp).expect("valid");
        assert_eq!(trace[0], 0x4b);
        assert_eq!(span[7], 0xb7);
        assert_eq!(flags, 1);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad}");
        }
        // A later version may carry more parts.
        assert!(
            parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-ab")
                .is_some()
        );
    }

    #[test]
    fn samplers_from_the_environment() {
        let read = |pairs: &'static [(&'static str, &'static str)]| {
            Sampler::from_lookup(|k| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            })
        };
        let trace = [0xffu8; 16];
        let default = read(&[]);
        assert!(default.decide(&trace, None));
        assert!(!default.decide(&trace, Some(false)));
        let off = read(&[("OTEL_TRACES_SAMPLER", "always_off")]);
        assert!(!off.decide(&trace, Some(true)));
        let ratio = read(&[
            ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.5"),
        ]);
        let mut low = [0u8; 16];
        low[8] = 0x10;
        assert!(ratio.decide(&low, None));
        assert!(!ratio.decide(&trace, None));
        // Not parent based: the ratio decides even under a sampled parent.
        assert!(!ratio.decide(&trace, Some(true)));
        let parent = read(&[
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0"),
        ]);
        assert!(parent.decide(&trace, Some(true)));
        assert!(!parent.decide(&low, None));
    }

    #[test]
    fn text_is_cut_at_a_character_boundary() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("héllo", 3), "hé");
        assert_eq!(cut("abc", 10), "abc");
    }
}
