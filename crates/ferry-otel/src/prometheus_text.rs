//! Prometheus text exposition of the MCP metrics, for an opt-in `GET /metrics`.

use std::sync::Arc;

use prometheus::{Encoder as _, TextEncoder};

use crate::Error;

/// Renders the current metrics as Prometheus text (version 0.0.4).
#[derive(Clone)]
pub struct MetricsText {
    registry: Arc<prometheus::Registry>,
}

impl std::fmt::Debug for MetricsText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsText")
    }
}

impl MetricsText {
    /// The metrics now, as Prometheus text.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        // Encoding into memory fails only on invalid metric families, which the
        // OpenTelemetry bridge does not build.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// An axum router answering `GET /metrics`.
    pub fn router(self) -> axum::Router {
        axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let text = self.render();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        text,
                    )
                }
            }),
        )
    }
}

/// A metric reader bridged to a fresh Prometheus registry, and the text source over it.
pub(crate) fn reader() -> Result<(opentelemetry_prometheus::PrometheusExporter, MetricsText), Error>
{
    let registry = prometheus::Registry::new();
    let exporter = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .build()
        .map_err(|e| Error::Prometheus(e.to_string()))?;
    Ok((
        exporter,
        MetricsText {
            registry: Arc::new(registry),
        },
    ))
}
