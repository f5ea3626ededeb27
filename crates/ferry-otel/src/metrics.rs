//! MCP metrics, derived from Ferry's request spans and events (by the span side, from
//! the record it keeps of each span), so the libraries need no metrics API: the
//! convention's operation durations (`mcp.server.operation.duration`,
//! `mcp.client.operation.duration`, seconds), requests by method and outcome, multi
//! round-trip rounds per call and `requestState` refusals by reason.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::{Arc, RwLock};

use ferry_protocol::methods::Method;
use ferry_protocol::version::ProtocolVersion;
use opentelemetry::metrics::{
    BoundCounter, BoundHistogram, Counter, Histogram, Meter, UpDownCounter,
};
use opentelemetry::{KeyValue, StringValue};
use tracing::Event;
use tracing::field::{Field, Visit};

use crate::spans::{AttrValue, SpanRecord};

/// `tracing` target of server request spans.
pub const SERVER_REQUEST_TARGET: &str = "ferry_server::request";
/// `tracing` target of client request spans.
pub const CLIENT_REQUEST_TARGET: &str = "ferry_client::request";
/// `tracing` target of `requestState` refusal events.
pub const STATE_TARGET: &str = "ferry_server::state";
/// `tracing` target of listen streams opening and closing.
pub const LISTEN_TARGET: &str = "ferry_server::listen";
/// `tracing` target of task status events.
pub const TASK_TARGET: &str = "ferry_server::task";

/// Bucket boundaries the convention advises for operation durations, in seconds.
const DURATION_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The most attribute sets of request measurements kept bound ([`Bindings`]); requests
/// with other sets are measured through the instruments' per-call lookup.
const MAX_BINDINGS: usize = 256;

/// The instruments.
#[derive(Clone)]
pub(crate) struct Instruments {
    server_duration: Histogram<f64>,
    client_duration: Histogram<f64>,
    requests: Counter<u64>,
    rounds: Histogram<u64>,
    refusals: Counter<u64>,
    listen_streams: UpDownCounter<i64>,
    tasks: Counter<u64>,
    bindings: Arc<Bindings>,
}

/// The attributes of one request measurement, as read from its span: which side, the
/// outcome (server side), and the method, protocol version, tool, transport and error
/// type when the span has them.
#[derive(Hash)]
struct Attributes<'a> {
    side: Side,
    outcome: &'static str,
    values: [Option<&'a str>; 5],
}

/// The names of [`Attributes::values`], in order.
const ATTRIBUTE_KEYS: [&str; 5] = [
    "mcp.method.name",
    "mcp.protocol.version",
    "gen_ai.tool.name",
    "network.transport",
    "error.type",
];

/// What the metrics read of a request span, found in one pass over its attributes: the
/// values of [`ATTRIBUTE_KEYS`], whether it asked for input, and its round.
struct Measured<'a> {
    values: [Option<&'a str>; 5],
    input_required: bool,
    round: Option<i64>,
}

impl<'a> Measured<'a> {
    fn of(record: &'a SpanRecord) -> Self {
        let mut m = Measured {
            values: [None; 5],
            input_required: false,
            round: None,
        };
        for a in &record.attributes {
            match (a.key, &a.value) {
                ("ferry.mcp.input_required", AttrValue::Bool(b)) => m.input_required = *b,
                ("ferry.mcp.call.round", AttrValue::I64(round)) => m.round = Some(*round),
                (key, value) => {
                    if let Some(slot) = slot(key) {
                        m.values[slot] = record.text_of(value);
                    }
                }
            }
        }
        m
    }
}

/// Where `key` is in [`ATTRIBUTE_KEYS`]: a `match`, which compiles to a length test and
/// at most one comparison, where searching the array compares with each key in turn.
fn slot(key: &str) -> Option<usize> {
    match key {
        "mcp.method.name" => Some(0),
        "mcp.protocol.version" => Some(1),
        "gen_ai.tool.name" => Some(2),
        "network.transport" => Some(3),
        "error.type" => Some(4),
        _ => None,
    }
}

/// The instruments bound to one attribute set.
struct Binding {
    side: Side,
    outcome: &'static str,
    values: [Option<Box<str>>; 5],
    duration: BoundHistogram<f64>,
    /// Server side: requests by method and outcome.
    requests: Option<BoundCounter<u64>>,
    /// Server side, complete calls: rounds by method.
    rounds: Option<BoundHistogram<u64>>,
}

impl Binding {
    fn is(&self, a: &Attributes<'_>) -> bool {
        self.side == a.side
            && self.outcome == a.outcome
            && self
                .values
                .iter()
                .zip(a.values)
                .all(|(mine, theirs)| mine.as_deref() == theirs)
    }
}

/// Instruments bound to the attribute sets requests have had. Measuring through an
/// instrument resolves its attributes on every call (the SDK hashes each set and looks
/// it up); a bound instrument has done that once, so a request that repeats a set (most
/// do: the same few methods, tools and outcomes) costs a few atomic adds.
#[derive(Default)]
struct Bindings {
    /// Seeded at random per process, so attribute values a client chooses (tool names)
    /// cannot be made to collide.
    hasher: foldhash::fast::RandomState,
    /// By the hash of their attributes (already hashed: the map does not hash again).
    by_hash: RwLock<HashMap<u64, Vec<Arc<Binding>>, BuildHasherDefault<Prehashed>>>,
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl Bindings {
    /// The binding for `attrs`, made with `bind` the first time; `None` once
    /// [`MAX_BINDINGS`] sets are bound (or a lock was poisoned).
    fn get(&self, attrs: &Attributes<'_>, bind: impl FnOnce() -> Binding) -> Option<Arc<Binding>> {
        let hash = self.hasher.hash_one(attrs);
        {
            let map = self.by_hash.read().ok()?;
            if let Some(found) = map.get(&hash).and_then(|v| v.iter().find(|b| b.is(attrs))) {
                return Some(found.clone());
            }
            if map.values().map(Vec::len).sum::<usize>() >= MAX_BINDINGS {
                return None;
            }
        }
        let mut map = self.by_hash.write().ok()?;
        let slot = map.entry(hash).or_default();
        if let Some(found) = slot.iter().find(|b| b.is(attrs)) {
            return Some(found.clone());
        }
        let made = Arc::new(bind());
        slot.push(made.clone());
        Some(made)
    }
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Self {
        Instruments {
            server_duration: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("Duration of MCP requests handled by the server")
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build(),
            client_duration: meter
                .f64_histogram("mcp.client.operation.duration")
                .with_unit("s")
                .with_description("Duration of MCP requests sent by the client")
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build(),
            requests: meter
                .u64_counter("ferry.mcp.server.requests")
                .with_unit("{request}")
                .with_description("MCP requests handled, by method and outcome")
                .build(),
            rounds: meter
                .u64_histogram("ferry.mcp.server.call.rounds")
                .with_unit("{round}")
                .with_description("Rounds a completed multi round-trip call took")
                .with_boundaries(vec![1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 16.0])
                .build(),
            refusals: meter
                .u64_counter("ferry.mcp.server.request_state.refusals")
                .with_unit("{refusal}")
                .with_description("requestState refusals, by reason")
                .build(),
            listen_streams: meter
                .i64_up_down_counter("ferry.mcp.server.listen.streams")
                .with_unit("{stream}")
                .with_description("subscriptions/listen streams open")
                .build(),
            tasks: meter
                .u64_counter("ferry.mcp.server.tasks")
                .with_unit("{task}")
                .with_description("Task status changes, by the status reached")
                .build(),
            bindings: Arc::default(),
        }
    }
}

/// Which side of a request a request span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Side {
    Server,
    Client,
}

impl Side {
    /// The side of a span of `target`, if it is a request span.
    pub(crate) fn of(target: &str) -> Option<Side> {
        match target {
            SERVER_REQUEST_TARGET => Some(Side::Server),
            CLIENT_REQUEST_TARGET => Some(Side::Client),
            _ => None,
        }
    }
}

/// `value` as an attribute value: the static name when it is a method, a protocol
/// version or another value Ferry's spans repeat, so most measurements copy no text.
fn attribute_value(value: &str) -> StringValue {
    if let Some(m) = Method::parse(value) {
        return m.as_str().into();
    }
    if let Some(v) = ProtocolVersion::parse(value) {
        return v.as_str().into();
    }
    match value {
        "tcp" => "tcp".into(),
        "pipe" => "pipe".into(),
        "tool_error" => "tool_error".into(),
        other => other.to_owned().into(),
    }
}

/// The fields of the events the metrics count.
#[derive(Default)]
struct EventFields {
    reason: Option<String>,
    status: Option<String>,
    change: i64,
}

impl Visit for EventFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "reason" => self.reason = Some(value.to_owned()),
            "status" => self.status = Some(value.to_owned()),
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if field.name() == "change" {
            self.change = value;
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "reason" => self.reason = Some(format!("{value:?}")),
            "status" => self.status = Some(format!("{value:?}").trim_matches('"').to_owned()),
            _ => {}
        }
    }
}

impl Instruments {
    /// Counts an event of [`STATE_TARGET`], [`LISTEN_TARGET`] or [`TASK_TARGET`];
    /// `false` for any other event.
    pub(crate) fn event(&self, event: &Event<'_>) -> bool {
        let target = event.metadata().target();
        if ![STATE_TARGET, LISTEN_TARGET, TASK_TARGET].contains(&target) {
            return false;
        }
        let mut f = EventFields::default();
        event.record(&mut f);
        match target {
            STATE_TARGET => {
                let reason = f.reason.unwrap_or_else(|| "unknown".to_owned());
                self.refusals
                    .add(1, &[KeyValue::new("ferry.refusal.reason", reason)]);
            }
            LISTEN_TARGET => self.listen_streams.add(f.change, &[]),
            _ => {
                let status = f.status.unwrap_or_else(|| "unknown".to_owned());
                self.tasks
                    .add(1, &[KeyValue::new("ferry.task.status", status)]);
            }
        }
        true
    }

    /// Measures a request span of `side` that closed, through the instruments bound to
    /// its attribute set.
    pub(crate) fn request_closed(&self, side: Side, record: &SpanRecord, seconds: f64) {
        let Measured {
            values,
            input_required,
            round,
        } = Measured::of(record);
        let outcome = match side {
            Side::Client => "",
            Side::Server if values[4].is_some() => "error",
            Side::Server if input_required => "input_required",
            Side::Server => "ok",
        };
        let attrs = Attributes {
            side,
            outcome,
            values,
        };
        let Some(binding) = self.bindings.get(&attrs, || self.bind(&attrs)) else {
            return self.request_closed_unbound(&attrs, round, seconds);
        };
        binding.duration.record(seconds);
        if let Some(requests) = &binding.requests {
            requests.add(1);
        }
        if let (Some(rounds), Some(round)) = (&binding.rounds, round) {
            rounds.record(u64::try_from(round).unwrap_or(0));
        }
    }

    /// The instruments bound to `attrs`: the attributes `request_closed_unbound` gives
    /// each measurement.
    fn bind(&self, attrs: &Attributes<'_>) -> Binding {
        let sets = AttributeSets::of(attrs);
        let server = attrs.side == Side::Server;
        Binding {
            side: attrs.side,
            outcome: attrs.outcome,
            values: attrs.values.map(|v| v.map(Box::from)),
            duration: match attrs.side {
                Side::Client => self.client_duration.bind(&sets.all),
                Side::Server => self.server_duration.bind(&sets.all),
            },
            requests: server.then(|| self.requests.bind(&sets.by_outcome)),
            rounds: sets.counts_rounds.then(|| self.rounds.bind(&sets.method)),
        }
    }

    /// Measures a request with `attrs` past the bindings' cap, through the same
    /// attribute sets a binding would hold.
    fn request_closed_unbound(&self, attrs: &Attributes<'_>, round: Option<i64>, seconds: f64) {
        let sets = AttributeSets::of(attrs);
        match attrs.side {
            Side::Client => self.client_duration.record(seconds, &sets.all),
            Side::Server => {
                self.server_duration.record(seconds, &sets.all);
                self.requests.add(1, &sets.by_outcome);
                if let (true, Some(round)) = (sets.counts_rounds, round) {
                    self.rounds
                        .record(u64::try_from(round).unwrap_or(0), &sets.method);
                }
            }
        }
    }
}

/// The attribute sets a request is measured with: every attribute it has (durations),
/// its method and outcome (requests), its method alone (rounds per call).
struct AttributeSets {
    all: Vec<KeyValue>,
    by_outcome: Vec<KeyValue>,
    method: Vec<KeyValue>,
    /// Whether the request ends a call, so its round counts: a server request that did
    /// not ask for more input.
    counts_rounds: bool,
}

impl AttributeSets {
    fn of(attrs: &Attributes<'_>) -> Self {
        let value = |i: usize| attrs.values[i].map(attribute_value);
        let all = ATTRIBUTE_KEYS
            .iter()
            .enumerate()
            .filter_map(|(i, key)| value(i).map(|v| KeyValue::new(*key, v)))
            .collect();
        let method: Vec<KeyValue> = value(0)
            .map(|m| KeyValue::new(ATTRIBUTE_KEYS[0], m))
            .into_iter()
            .collect();
        let mut by_outcome = method.clone();
        by_outcome.push(KeyValue::new("ferry.outcome", attrs.outcome));
        AttributeSets {
            all,
            by_outcome,
            method,
            counts_rounds: attrs.side == Side::Server && attrs.outcome != "input_required",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_attribute_key_has_its_own_slot() {
        for (i, key) in ATTRIBUTE_KEYS.iter().enumerate() {
            assert_eq!(slot(key), Some(i), "{key}");
        }
        assert_eq!(slot("mcp.session.id"), None);
    }

    #[test]
    fn each_attribute_set_is_bound_once_up_to_the_cap() {
        let provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder().build();
        let meter = opentelemetry::metrics::MeterProvider::meter(&provider, "test");
        let instruments = Instruments::new(&meter);
        let tools: Vec<String> = (0..=MAX_BINDINGS).map(|i| format!("tool{i}")).collect();
        for (i, tool) in tools.iter().enumerate() {
            let attrs = Attributes {
                side: Side::Server,
                outcome: "ok",
                values: [Some("tools/call"), None, Some(tool), None, None],
            };
            let bound = instruments
                .bindings
                .get(&attrs, || instruments.bind(&attrs));
            assert_eq!(bound.is_some(), i < MAX_BINDINGS, "binding {i}");
            if let Some(bound) = bound {
                let again = instruments
                    .bindings
                    .get(&attrs, || unreachable!("bound once"));
                assert!(Arc::ptr_eq(&bound, &again.unwrap()));
            }
        }
        // Another outcome or side of a bound set is a set of its own.
        let client = Attributes {
            side: Side::Client,
            outcome: "ok",
            values: [Some("tools/call"), None, Some("tool0"), None, None],
        };
        assert!(
            instruments
                .bindings
                .get(&client, || instruments.bind(&client))
                .is_none()
        );
    }
}
