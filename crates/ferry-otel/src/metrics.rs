//! MCP metrics, derived from Ferry's request spans and events (by the span layer, from
//! the record it keeps of each span), so the libraries need no metrics API: the
//! convention's operation durations (`mcp.server.operation.duration`,
//! `mcp.client.operation.duration`, seconds), requests by method and outcome, multi
//! round-trip rounds per call and `requestState` refusals by reason.

use ferry_protocol::methods::Method;
use ferry_protocol::version::ProtocolVersion;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};
use opentelemetry::{KeyValue, StringValue};
use tracing::Event;
use tracing::field::{Field, Visit};

use crate::spans::SpanRecord;

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
        }
    }
}

/// Which side of a request a request span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The fields of the events the layer counts.
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

    /// Measures a request span of `side` that closed.
    pub(crate) fn request_closed(&self, side: Side, record: &SpanRecord) {
        let seconds = record.started.elapsed().as_secs_f64();
        let text = |key: &str| record.text(key).map(attribute_value);
        let method = text("mcp.method.name");
        let error_type = text("error.type");
        let mut attrs = Vec::with_capacity(5);
        if let Some(m) = &method {
            attrs.push(KeyValue::new("mcp.method.name", m.clone()));
        }
        for key in [
            "mcp.protocol.version",
            "gen_ai.tool.name",
            "network.transport",
        ] {
            if let Some(v) = text(key) {
                attrs.push(KeyValue::new(key, v));
            }
        }
        if let Some(e) = &error_type {
            attrs.push(KeyValue::new("error.type", e.clone()));
        }
        match side {
            Side::Client => self.client_duration.record(seconds, &attrs),
            Side::Server => {
                self.server_duration.record(seconds, &attrs);
                let input_required = record.flag("ferry.mcp.input_required") == Some(true);
                let outcome = if error_type.is_some() {
                    "error"
                } else if input_required {
                    "input_required"
                } else {
                    "ok"
                };
                let mut by = Vec::with_capacity(2);
                if let Some(m) = method {
                    by.push(KeyValue::new("mcp.method.name", m));
                }
                by.push(KeyValue::new("ferry.outcome", outcome));
                self.requests.add(1, &by);
                if let Some(round) = record.int("ferry.mcp.call.round")
                    && !input_required
                {
                    self.rounds
                        .record(u64::try_from(round).unwrap_or(0), &by[..by.len() - 1]);
                }
            }
        }
    }
}
