//! OpenTelemetry for Ferry: one call sets up `tracing` with logs on stderr and, when the
//! standard `OTEL_*` variables ask for it, OTLP export of MCP spans and metrics.
//!
//! Ferry's libraries emit through `tracing` only (a span per request, after the
//! OpenTelemetry semantic conventions for MCP). This crate adds what turns those spans
//! into OpenTelemetry: a `tracing` subscriber of its own that writes log lines and gives
//! every span a W3C trace context and records it for export, the hooks that parent a
//! server span on the `traceparent` in a request's `_meta` and link the rounds of a multi
//! round-trip call, the MCP metrics derived from the recorded spans, the OTLP exporters,
//! and Prometheus text for an opt-in `GET /metrics`.
//!
//! The subscriber keeps spans in a concurrent slab and the spans each thread is in on a
//! stack of that thread's, with no layers or per-layer filters between a span and what
//! records it. The thread that closes a span encodes it as OTLP protobuf and queues the
//! bytes for a batch exporter of Ferry's own, which frames and sends them from a thread
//! of its own; the record stays with its thread for the next span, so a traced request
//! allocates nothing and goes through no intermediate span types. Metrics go through
//! the OpenTelemetry SDK.
//!
//! | variable | effect |
//! | --- | --- |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | turns export on (e.g. `http://127.0.0.1:4318`); unset: nothing is exported |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL` | `http/protobuf` (default) or `grpc` |
//! | `OTEL_SERVICE_NAME` | the `service.name` resource attribute (default: the name given to [`Telemetry::new`]) |
//! | `OTEL_SDK_DISABLED=true` | export off whatever else is set |
//! | `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG` | which traces are recorded (default `parentbased_always_on`; also `always_on`, `always_off`, `traceidratio`, `parentbased_always_off`, `parentbased_traceidratio`) |
//! | `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, `OTEL_BSP_EXPORT_TIMEOUT` | span batching (defaults 5000 ms, 2048, 512, 30000 ms) |
//! | `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` (and their `_TRACES_`/`_METRICS_` forms) | headers (`key=value,...`) and timeout (ms) of export requests |
//! | `RUST_LOG` | log filter, `target=level` directives (default `info`) |
//! | `NO_COLOR` | set and not empty: logs without colours (they have none anyway unless stderr is a terminal) |
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferry_otel::Error> {
//! let telemetry = ferry_otel::Telemetry::new("my-server")
//!     .prometheus(true)
//!     .init()?;
//! // Serve `telemetry.metrics_router()` beside the MCP endpoint for `GET /metrics`.
//! let _metrics = telemetry.metrics_router();
//! // Dropping the guard flushes what is still buffered.
//! drop(telemetry);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod collector;
mod config;
mod export;
mod filter;
mod logs;
mod metrics;
mod otlp;
mod prometheus_text;
mod spans;

use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::util::SubscriberInitExt;

pub use config::{ExportConfig, Protocol};
pub use metrics::{
    CLIENT_REQUEST_TARGET, LISTEN_TARGET, SERVER_REQUEST_TARGET, STATE_TARGET, TASK_TARGET,
};
pub use prometheus_text::MetricsText;

/// What can go wrong setting telemetry up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` names a protocol this build does not speak.
    #[error("OTEL_EXPORTER_OTLP_PROTOCOL {0:?} is not supported (use http/protobuf or grpc)")]
    Protocol(String),
    /// An OTLP exporter could not be built (or its thread started).
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(String),
    /// The Prometheus reader could not be built.
    #[error("the Prometheus reader could not be built: {0}")]
    Prometheus(String),
    /// A global `tracing` subscriber was already set.
    #[error("a tracing subscriber is already installed")]
    AlreadyInstalled,
}

/// Telemetry settings, read from the environment by [`Telemetry::new`].
#[derive(Debug, Clone)]
pub struct Telemetry {
    service_name: String,
    export: Option<ExportConfig>,
    json_logs: bool,
    prometheus: bool,
    log_filter: Option<String>,
    always_trace: bool,
}

impl Telemetry {
    /// Settings for `service_name` (overridden by `OTEL_SERVICE_NAME`), export as the
    /// environment says, plain-text logs, no Prometheus endpoint.
    pub fn new(service_name: impl Into<String>) -> Self {
        Telemetry {
            service_name: service_name.into(),
            export: None,
            json_logs: false,
            prometheus: false,
            log_filter: None,
            always_trace: false,
        }
    }

    /// Gives spans OpenTelemetry trace ids (and sends them in `_meta`) even when nothing
    /// is exported, so a program can show the id of a trace the server side records.
    pub fn always_trace(mut self, on: bool) -> Self {
        self.always_trace = on;
        self
    }

    /// Uses `config` instead of reading the environment.
    pub fn export(mut self, config: ExportConfig) -> Self {
        self.export = Some(config);
        self
    }

    /// Logs as JSON lines (one object per event) instead of text.
    pub fn json_logs(mut self, on: bool) -> Self {
        self.json_logs = on;
        self
    }

    /// Keeps metrics for Prometheus text ([`TelemetryGuard::metrics_text`],
    /// [`TelemetryGuard::metrics_router`]), whether or not OTLP export is on.
    pub fn prometheus(mut self, on: bool) -> Self {
        self.prometheus = on;
        self
    }

    /// The log filter (`target=level` directives) instead of `RUST_LOG`.
    pub fn log_filter(mut self, directives: impl Into<String>) -> Self {
        self.log_filter = Some(directives.into());
        self
    }

    /// Installs the global `tracing` subscriber: logs on stderr and, when export is on
    /// or Prometheus asked for, span recording and metrics. Records of the `log` crate
    /// are forwarded to it too.
    pub fn init(self) -> Result<TelemetryGuard, Error> {
        let export = match self.export {
            Some(c) => c,
            None => ExportConfig::from_env()?,
        };
        let logs = logs::Logs::stderr(
            filter::TargetFilter::new(log_filter(self.log_filter)?),
            self.json_logs,
            stderr_colors(std::env::var_os("NO_COLOR").as_deref()),
        );

        let resource = resource(&self.service_name, export.service_name.as_deref());
        let record_spans = export.enabled || self.always_trace;
        let mut meter_provider = None;
        let mut metrics_text = None;
        let mut instruments = None;
        if export.enabled || self.prometheus {
            let mut builder = SdkMeterProvider::builder().with_resource(resource.clone());
            if export.enabled {
                builder = builder.with_periodic_exporter(metric_exporter(&export)?);
            }
            if self.prometheus {
                let (reader, text) = prometheus_text::reader()?;
                builder = builder.with_reader(reader);
                metrics_text = Some(text);
            }
            let provider = builder.build();
            let meter = opentelemetry::metrics::MeterProvider::meter(&provider, "ferry");
            instruments = Some(metrics::Instruments::new(&meter));
            meter_provider = Some(provider);
        }

        let mut span_exporter = None;
        let mut spans = None;
        if record_spans || instruments.is_some() {
            let env = |k: &str| std::env::var(k).ok();
            let sampler = spans::Sampler::from_lookup(env);
            if export.enabled {
                let settings = export::Settings::from_lookup(&export, env);
                let exporter = export::Exporter::start(settings, preamble(&resource))
                    .map_err(|e| Error::Exporter(e.to_string()))?;
                span_exporter = Some(exporter);
            }
            let sink = span_exporter.as_ref().map(export::Exporter::batcher);
            // The span side records spans for export and measures them: with spans off
            // it sees only the request spans and the events metrics count.
            let filter = if record_spans {
                otel_filter(instruments.is_some())
            } else {
                metrics_filter()
            };
            spans = Some(
                spans::SpanRecorder::new(filter::TargetFilter::new(filter), sampler, sink)
                    .with_metrics(instruments),
            );
            if record_spans {
                spans::set_sampler(sampler);
                ferry_protocol::trace::install_hooks(spans::hooks());
            }
        }

        collector::Collector::new(Some(logs), spans)
            .try_init()
            .map_err(|_| Error::AlreadyInstalled)?;
        Ok(TelemetryGuard {
            exporting: export.enabled,
            span_exporter,
            meter_provider,
            metrics_text,
        })
    }
}

/// Keeps the exporters alive; dropping it flushes and shuts them down.
#[must_use = "dropping the guard shuts the exporters down"]
pub struct TelemetryGuard {
    exporting: bool,
    span_exporter: Option<export::Exporter>,
    meter_provider: Option<SdkMeterProvider>,
    metrics_text: Option<MetricsText>,
}

impl std::fmt::Debug for TelemetryGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryGuard")
            .field("exporting", &self.exporting())
            .field("prometheus", &self.metrics_text.is_some())
            .finish()
    }
}

impl TelemetryGuard {
    /// Whether spans and metrics are exported over OTLP.
    pub fn exporting(&self) -> bool {
        self.exporting
    }

    /// The Prometheus text source, when [`Telemetry::prometheus`] was on.
    pub fn metrics_text(&self) -> Option<MetricsText> {
        self.metrics_text.clone()
    }

    /// An axum router answering `GET /metrics` with Prometheus text, when
    /// [`Telemetry::prometheus`] was on.
    pub fn metrics_router(&self) -> Option<axum::Router> {
        self.metrics_text.clone().map(MetricsText::router)
    }

    /// Spans dropped because the export queue was full (the exporter fell behind).
    pub fn spans_dropped(&self) -> u64 {
        self.span_exporter
            .as_ref()
            .map_or(0, |e| e.batcher().dropped())
    }

    /// Exports everything buffered now (spans and metrics).
    pub fn flush(&self) {
        if let Some(e) = &self.span_exporter {
            e.flush();
        }
        if let Some(p) = &self.meter_provider {
            let _ = p.force_flush();
        }
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        self.flush();
        if let Some(mut e) = self.span_exporter.take() {
            e.shutdown();
        }
        if let Some(p) = self.meter_provider.take() {
            let _ = p.shutdown();
        }
    }
}

/// Whether text logs get ANSI colours: only when stderr is a terminal and `NO_COLOR` is
/// unset or empty (no-color.org), so a log written to a file or a pipe stays plain.
fn stderr_colors(no_color: Option<&std::ffi::OsStr>) -> bool {
    use std::io::IsTerminal as _;
    no_color.is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

/// The log filter: `RUST_LOG` (or the given directives), default `info`. Request spans
/// stay out of the logs unless a directive names their targets, so a server logging at
/// `info` does not pay for a span per request it only discards.
fn log_filter(directives: Option<String>) -> Result<Targets, Error> {
    let spec = directives.or_else(|| std::env::var("RUST_LOG").ok());
    let base = match spec.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => s.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("RUST_LOG ignored ({e}); logging at info");
            Targets::new().with_default(tracing::Level::INFO)
        }),
        _ => Targets::new().with_default(tracing::Level::INFO),
    };
    let named = |t: &str| spec.as_deref().is_some_and(|s| s.contains(t));
    let mut f = base;
    for target in [SERVER_REQUEST_TARGET, CLIENT_REQUEST_TARGET] {
        if !named(target) {
            f = f.with_target(target, tracing::level_filters::LevelFilter::OFF);
        }
    }
    Ok(f)
}

/// What goes to OpenTelemetry: request spans, the events inside them (refused states, a
/// `debug` event, included), and the application's own spans at `info` and above; with
/// `metrics`, also the `debug` events they count.
fn otel_filter(metrics: bool) -> Targets {
    use tracing::level_filters::LevelFilter;
    // The exporters' own HTTP and gRPC stacks stay out: exporting must not trace itself.
    let mut f = Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target(STATE_TARGET, tracing::Level::DEBUG);
    if metrics {
        f = f
            .with_target(LISTEN_TARGET, tracing::Level::DEBUG)
            .with_target(TASK_TARGET, tracing::Level::DEBUG);
    }
    for quiet in [
        "h2",
        "hyper",
        "hyper_util",
        "reqwest",
        "tonic",
        "tower",
        "opentelemetry",
    ] {
        f = f.with_target(quiet, LevelFilter::OFF);
    }
    f
}

/// What the span side sees when only metrics are kept: request spans and the events
/// it counts.
fn metrics_filter() -> Targets {
    Targets::new()
        .with_target(SERVER_REQUEST_TARGET, tracing::Level::INFO)
        .with_target(CLIENT_REQUEST_TARGET, tracing::Level::INFO)
        .with_target(STATE_TARGET, tracing::Level::DEBUG)
        .with_target(LISTEN_TARGET, tracing::Level::DEBUG)
        .with_target(TASK_TARGET, tracing::Level::DEBUG)
}

fn resource(default_name: &str, env_name: Option<&str>) -> Resource {
    // `Resource::builder` reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES itself.
    let builder = Resource::builder();
    match env_name {
        Some(_) => builder.build(),
        None => builder.with_service_name(default_name.to_owned()).build(),
    }
}

/// The signal's URL on an explicit endpoint: HTTP wants the path, gRPC the bare address.
fn signal_url(config: &ExportConfig, path: &str) -> Option<String> {
    let base = config.endpoint.as_deref()?.trim_end_matches('/');
    Some(match config.protocol {
        Protocol::HttpProtobuf => format!("{base}{path}"),
        Protocol::Grpc => base.to_owned(),
    })
}

/// The OTLP metric exporter for `config`.
fn metric_exporter(config: &ExportConfig) -> Result<opentelemetry_otlp::MetricExporter, Error> {
    let b = opentelemetry_otlp::MetricExporter::builder();
    let url = signal_url(config, "/v1/metrics");
    let built = match config.protocol {
        Protocol::HttpProtobuf => {
            let mut h = b
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
            if let Some(u) = url {
                h = h.with_endpoint(u);
            }
            h.build()
        }
        Protocol::Grpc => {
            let mut t = b.with_tonic();
            if let Some(u) = url {
                t = t.with_endpoint(u);
            }
            t.build()
        }
    };
    built.map_err(|e| Error::Exporter(e.to_string()))
}

/// The resource and instrumentation scope every exported span carries.
fn preamble(resource: &Resource) -> otlp::Preamble {
    use opentelemetry::Value as V;
    let values: Vec<(String, String, Option<otlp::Value<'static>>)> = resource
        .iter()
        .map(|(k, v)| {
            let (text, scalar) = match v {
                V::Bool(b) => (String::new(), Some(otlp::Value::Bool(*b))),
                V::I64(i) => (String::new(), Some(otlp::Value::I64(*i))),
                V::F64(f) => (String::new(), Some(otlp::Value::F64(*f))),
                other => (other.to_string(), None),
            };
            (k.as_str().to_owned(), text, scalar)
        })
        .collect();
    otlp::Preamble::new(
        values
            .iter()
            .map(|(k, text, scalar)| (k.as_str(), scalar.unwrap_or(otlp::Value::Str(text)))),
        "ferry",
        env!("CARGO_PKG_VERSION"),
    )
}
