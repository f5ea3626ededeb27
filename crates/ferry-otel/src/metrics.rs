//! MCP metrics, derived from Ferry's request spans and events by a `tracing` layer, so
//! the libraries need no metrics API: the convention's operation durations
//! (`mcp.server.operation.duration`, `mcp.client.operation.duration`, seconds), requests
//! by method and outcome, multi round-trip rounds per call and `requestState` refusals
//! by reason.

use std::time::Instant;

use ferry_protocol::methods::Method;
use ferry_protocol::version::ProtocolVersion;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};
use opentelemetry::{KeyValue, StringValue};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

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

/// The `tracing` layer that turns request spans into measurements.
pub(crate) struct MetricsLayer {
    instruments: Instruments,
}

impl MetricsLayer {
    pub(crate) fn new(instruments: Instruments) -> Self {
        MetricsLayer { instruments }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Server,
    Client,
}

/// What a request span has recorded so far.
struct Timing {
    start: Instant,
    side: Side,
    fields: Fields,
}

#[derive(Default)]
struct Fields {
    method: Option<StringValue>,
    version: Option<StringValue>,
    tool: Option<StringValue>,
    error_type: Option<StringValue>,
    transport: Option<StringValue>,
    round: Option<u64>,
    input_required: bool,
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

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        let slot = match field.name() {
            "mcp.method.name" => &mut self.method,
            "mcp.protocol.version" => &mut self.version,
            "gen_ai.tool.name" => &mut self.tool,
            "error.type" => &mut self.error_type,
            "network.transport" => &mut self.transport,
            _ => return,
        };
        *slot = Some(attribute_value(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "ferry.mcp.call.round" {
            self.round = Some(value);
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if let Ok(v) = u64::try_from(value) {
            self.record_u64(field, v);
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "ferry.mcp.input_required" {
            self.input_required = value;
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "error.type" {
            self.error_type = Some(attribute_value(format!("{value:?}").trim_matches('"')));
        }
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

impl<S> tracing_subscriber::Layer<S> for MetricsLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let side = match attrs.metadata().target() {
            SERVER_REQUEST_TARGET => Side::Server,
            CLIENT_REQUEST_TARGET => Side::Client,
            _ => return,
        };
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        span.extensions_mut().insert(Timing {
            start: Instant::now(),
            side,
            fields,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        if let Some(t) = span.extensions_mut().get_mut::<Timing>() {
            values.record(&mut t.fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let target = event.metadata().target();
        if ![STATE_TARGET, LISTEN_TARGET, TASK_TARGET].contains(&target) {
            return;
        }
        let mut f = EventFields::default();
        event.record(&mut f);
        match target {
            STATE_TARGET => {
                let reason = f.reason.unwrap_or_else(|| "unknown".to_owned());
                self.instruments
                    .refusals
                    .add(1, &[KeyValue::new("ferry.refusal.reason", reason)]);
            }
            LISTEN_TARGET => self.instruments.listen_streams.add(f.change, &[]),
            _ => {
                let status = f.status.unwrap_or_else(|| "unknown".to_owned());
                self.instruments
                    .tasks
                    .add(1, &[KeyValue::new("ferry.task.status", status)]);
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(t) = span.extensions_mut().remove::<Timing>() else {
            return;
        };
        let seconds = t.start.elapsed().as_secs_f64();
        let f = t.fields;
        let mut attrs = Vec::with_capacity(5);
        if let Some(m) = &f.method {
            attrs.push(KeyValue::new("mcp.method.name", m.clone()));
        }
        if let Some(v) = &f.version {
            attrs.push(KeyValue::new("mcp.protocol.version", v.clone()));
        }
        if let Some(tool) = &f.tool {
            attrs.push(KeyValue::new("gen_ai.tool.name", tool.clone()));
        }
        if let Some(tr) = &f.transport {
            attrs.push(KeyValue::new("network.transport", tr.clone()));
        }
        if let Some(e) = &f.error_type {
            attrs.push(KeyValue::new("error.type", e.clone()));
        }
        match t.side {
            Side::Client => self.instruments.client_duration.record(seconds, &attrs),
            Side::Server => {
                self.instruments.server_duration.record(seconds, &attrs);
                let outcome = if f.error_type.is_some() {
                    "error"
                } else if f.input_required {
                    "input_required"
                } else {
                    "ok"
                };
                let mut by = Vec::with_capacity(2);
                if let Some(m) = f.method {
                    by.push(KeyValue::new("mcp.method.name", m));
                }
                by.push(KeyValue::new("ferry.outcome", outcome));
                self.instruments.requests.add(1, &by);
                if let Some(round) = f.round
                    && !f.input_required
                {
                    self.instruments.rounds.record(round, &by[..by.len() - 1]);
                }
            }
        }
    }
}
