//! What the standard `OTEL_*` environment variables ask for.

use crate::Error;

/// How spans and metrics leave the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP over HTTP with protobuf bodies (`http/protobuf`, the default).
    HttpProtobuf,
    /// OTLP over gRPC (`grpc`).
    Grpc,
}

/// Export settings read from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportConfig {
    /// Whether anything is exported over OTLP: only when an endpoint is set
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and
    /// `OTEL_SDK_DISABLED` is not `true`.
    pub enabled: bool,
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` wins for
    /// traces, `..._METRICS_PROTOCOL` for metrics; one protocol is used for both here).
    pub protocol: Protocol,
    /// `OTEL_SERVICE_NAME`, if set.
    pub service_name: Option<String>,
    /// An endpoint to use instead of what the exporters read from the environment
    /// (`http://host:port`: `/v1/traces` and `/v1/metrics` are added for HTTP).
    pub endpoint: Option<String>,
}

impl ExportConfig {
    /// Export on, to `endpoint` over `protocol` (for programs and tests that configure
    /// telemetry in code rather than in the environment).
    pub fn to_endpoint(endpoint: impl Into<String>, protocol: Protocol) -> Self {
        ExportConfig {
            enabled: true,
            protocol,
            service_name: None,
            endpoint: Some(endpoint.into()),
        }
    }
}

impl ExportConfig {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, Error> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads settings through `var` (a map in tests, the environment otherwise).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let set = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let disabled = set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim() == "true");
        let endpoint = set("OTEL_EXPORTER_OTLP_ENDPOINT")
            .or_else(|| set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
            .is_some();
        let protocol = match set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .as_deref()
            .map(str::trim)
        {
            None | Some("http/protobuf") => Protocol::HttpProtobuf,
            Some("grpc") => Protocol::Grpc,
            Some(other) => return Err(Error::Protocol(other.to_owned())),
        };
        Ok(ExportConfig {
            enabled: endpoint && !disabled,
            protocol,
            service_name: set("OTEL_SERVICE_NAME"),
            endpoint: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(pairs: &[(&str, &str)]) -> Result<ExportConfig, Error> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        ExportConfig::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn off_without_an_endpoint() {
        let c = read(&[("OTEL_SERVICE_NAME", "svc")]).unwrap();
        assert!(!c.enabled);
        assert_eq!(c.service_name.as_deref(), Some("svc"));
        assert_eq!(c.protocol, Protocol::HttpProtobuf);
    }

    #[test]
    fn endpoint_and_protocol() {
        let c = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ])
        .unwrap();
        assert!(c.enabled);
        assert_eq!(c.protocol, Protocol::Grpc);
        let off = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ])
        .unwrap();
        assert!(!off.enabled);
    }

    #[test]
    fn unknown_protocol_is_an_error() {
        let e = read(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")]).unwrap_err();
        assert!(e.to_string().contains("http/json"));
    }
}
