//! Prometheus metrics, served as text at `GET /metrics` on the gateway's listener.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::meter::RoundOutcome;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RoundLabels {
    upstream: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamLabels {
    upstream: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// The gateway's metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<MethodLabels, Counter>,
    rounds: Family<RoundLabels, Counter>,
    rounds_per_call: HistogramFamily<UpstreamLabels>,
    refusals: Family<ReasonLabels, Counter>,
    latency: HistogramFamily<UpstreamLabels>,
    rate_limited: Counter,
    held_calls: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn rounds_histogram() -> Histogram {
    Histogram::new([1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0])
}

fn latency_histogram() -> Histogram {
    // 0.5 ms to about 65 s.
    Histogram::new(exponential_buckets(0.0005, 2.0, 18))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("ferry_gateway");
        let requests = Family::<MethodLabels, Counter>::default();
        let rounds = Family::<RoundLabels, Counter>::default();
        let rounds_per_call: HistogramFamily<UpstreamLabels> =
            Family::new_with_constructor(rounds_histogram);
        let refusals = Family::<ReasonLabels, Counter>::default();
        let latency: HistogramFamily<UpstreamLabels> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "requests",
            "Requests answered by the gateway, by method",
            requests.clone(),
        );
        registry.register(
            "rounds",
            "Round trips to upstreams, by upstream and outcome",
            rounds.clone(),
        );
        registry.register(
            "rounds_per_call",
            "Rounds a logical call took, observed when it ended",
            rounds_per_call.clone(),
        );
        registry.register(
            "state_refusals",
            "requestStates refused at the gateway, by reason",
            refusals.clone(),
        );
        registry.register(
            "upstream_latency_seconds",
            "Time waiting for an upstream's answer to one round",
            latency.clone(),
        );
        let rate_limited = Counter::default();
        registry.register(
            "rate_limited",
            "Requests refused by the per-principal rate limit",
            rate_limited.clone(),
        );
        let held_calls = Gauge::default();
        registry.register(
            "held_calls",
            "Calls held open on 2025-11-25 upstreams, waiting for their client's answer",
            held_calls.clone(),
        );
        Metrics {
            held_calls,
            rate_limited,
            registry,
            requests,
            rounds,
            rounds_per_call,
            refusals,
            latency,
        }
    }
}

impl Metrics {
    pub(crate) fn request(&self, method: &str) {
        self.requests
            .get_or_create(&MethodLabels {
                method: method.to_owned(),
            })
            .inc();
    }

    pub(crate) fn round(&self, upstream: &str, outcome: RoundOutcome, seconds: f64, round: u32) {
        self.rounds
            .get_or_create(&RoundLabels {
                upstream: upstream.to_owned(),
                outcome: outcome.label().to_owned(),
            })
            .inc();
        let labels = UpstreamLabels {
            upstream: upstream.to_owned(),
        };
        self.latency.get_or_create(&labels).observe(seconds);
        if outcome != RoundOutcome::InputRequired {
            self.rounds_per_call
                .get_or_create(&labels)
                .observe(f64::from(round));
        }
    }

    /// The gauge of held calls, which the bridge keeps up to date.
    pub(crate) fn held_calls(&self) -> Gauge {
        self.held_calls.clone()
    }

    pub(crate) fn rate_limited(&self) {
        self.rate_limited.inc();
    }

    pub(crate) fn refusal(&self, reason: &str) {
        self.refusals
            .get_or_create(&ReasonLabels {
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// The metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
