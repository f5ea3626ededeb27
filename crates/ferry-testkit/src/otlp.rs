//! A real OTLP receiver for tests: the `rotel` collector (PyPI `rotel`, its `rotel-agent`
//! binary) on loopback, printing every span and metric it receives, and a parser for what
//! it printed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::services::{free_port, wait_for_port};

/// The collector's binary: `FERRY_ROTEL_AGENT`, or beside the installed `rotel` package.
pub fn rotel_agent() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FERRY_ROTEL_AGENT") {
        return Some(PathBuf::from(p));
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && path.is_file()).then_some(path)
}

/// A running receiver, stopped when dropped.
pub struct Receiver {
    child: Child,
    output: PathBuf,
    /// OTLP over HTTP: `http://127.0.0.1:PORT`, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub endpoint: String,
    /// OTLP over gRPC: `http://127.0.0.1:PORT` (with `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`).
    pub grpc_endpoint: String,
    _dir: tempfile::TempDir,
}

impl Receiver {
    /// Starts a receiver, or `None` when `rotel-agent` is not installed (a test then
    /// skips, except under `FERRY_CI`, where this panics).
    pub fn start() -> Option<Receiver> {
        let Some(agent) = rotel_agent() else {
            if std::env::var_os("FERRY_CI").is_some() {
                panic!("rotel-agent is required here (python3 -m pip install rotel)");
            }
            eprintln!("skipped: rotel-agent is not installed (python3 -m pip install rotel)");
            return None;
        };
        let dir = tempfile::tempdir().expect("a temporary directory");
        let output = dir.path().join("received.txt");
        let (http_port, grpc_port) = (free_port(), free_port());
        let child = Command::new(&agent)
            .arg("start")
            .args(["--otlp-http-endpoint", &format!("127.0.0.1:{http_port}")])
            .args(["--otlp-grpc-endpoint", &format!("127.0.0.1:{grpc_port}")])
            .args(["--exporter", "blackhole"])
            .args(["--debug-log", "traces", "--debug-log", "metrics"])
            .args(["--debug-log-verbosity", "detailed"])
            .arg("--pid-file")
            .arg(dir.path().join("rotel.pid"))
            .arg("--log-file")
            .arg(dir.path().join("rotel.log"))
            .stdout(std::fs::File::create(&output).expect("the receiver's output file"))
            .stderr(Stdio::null())
            .spawn()
            .expect("start rotel-agent");
        let receiver = Receiver {
            child,
            output,
            endpoint: format!("http://127.0.0.1:{http_port}"),
            grpc_endpoint: format!("http://127.0.0.1:{grpc_port}"),
            _dir: dir,
        };
        assert!(
            wait_for_port(http_port, Duration::from_secs(15)),
            "the receiver did not listen on {http_port}"
        );
        assert!(
            wait_for_port(grpc_port, Duration::from_secs(15)),
            "the receiver did not listen on {grpc_port}"
        );
        Some(receiver)
    }

    /// Everything the receiver printed so far.
    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.output).unwrap_or_default()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One span as the receiver printed it.
#[derive(Debug, Default, Clone)]
pub struct Span {
    /// The `service.name` of the resource that sent it.
    pub service: String,
    /// Its trace id (hex).
    pub trace_id: String,
    /// Its parent span id (hex), empty for a root.
    pub parent_id: String,
    /// Its span id (hex).
    pub id: String,
    /// Its name.
    pub name: String,
    /// `Server`, `Client`, `Internal`, ...
    pub kind: String,
    /// Its status code as printed (`Ok`, `Error`, `Unset`).
    pub status: String,
    /// Its start time as printed (a UTC timestamp; same-format values order as text).
    pub start: String,
    /// Its end time as printed.
    pub end: String,
    /// Its attributes, values without their type wrapper.
    pub attributes: BTreeMap<String, String>,
    /// Span ids named in the span's links.
    pub links: Vec<String>,
}

/// Parses the receiver's detailed debug output into spans and the `(service, metric name)`
/// pairs it received.
pub fn parse(text: &str) -> (Vec<Span>, BTreeSet<(String, String)>) {
    let mut spans = Vec::new();
    let mut metrics = BTreeSet::new();
    let mut service = String::new();
    let mut current: Option<Span> = None;
    let mut section = "";
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with("ResourceSpans #") || line.starts_with("ResourceMetrics #") {
            spans.extend(current.take());
            section = "resource";
            continue;
        }
        if let Some(v) = line.strip_prefix("-> service.name: Str(")
            && section == "resource"
        {
            service = v.trim_end_matches(')').to_owned();
            continue;
        }
        if let Some(v) = line.strip_prefix("-> Name: ") {
            metrics.insert((service.clone(), v.to_owned()));
            continue;
        }
        if line.starts_with("Span #") {
            spans.extend(current.take());
            current = Some(Span {
                service: service.clone(),
                ..Span::default()
            });
            section = "span";
            continue;
        }
        let Some(span) = current.as_mut() else {
            continue;
        };
        if !line.contains("->") && line.ends_with(':') && !line.contains(" : ") {
            section = match line {
                "Attributes:" => "attributes",
                l if l.starts_with("Links") => "links",
                l if l.starts_with("Events") => "events",
                _ => section,
            };
            continue;
        }
        if line.starts_with("Links") || line.starts_with("SpanLink") || line.starts_with("Link #") {
            section = "links";
        }
        let field = |name: &str| {
            line.strip_prefix(name)
                .and_then(|r| r.trim_start().strip_prefix(':'))
                .map(|v| v.trim().to_owned())
        };
        match section {
            "span" => {
                if let Some(v) = field("Trace ID") {
                    span.trace_id = v;
                } else if let Some(v) = field("Parent ID") {
                    span.parent_id = v;
                } else if let Some(v) = field("ID") {
                    span.id = v;
                } else if let Some(v) = field("Name") {
                    span.name = v;
                } else if let Some(v) = field("Kind") {
                    span.kind = v;
                } else if let Some(v) = field("Status code") {
                    span.status = v;
                } else if let Some(v) = field("Start time") {
                    span.start = v;
                } else if let Some(v) = field("End time") {
                    span.end = v;
                }
            }
            "attributes" => {
                if let Some(rest) = line.strip_prefix("-> ")
                    && let Some((k, v)) = rest.split_once(": ")
                {
                    let v = v
                        .split_once('(')
                        .map(|(_, v)| v.trim_end_matches(')'))
                        .unwrap_or(v);
                    span.attributes.insert(k.to_owned(), v.to_owned());
                }
            }
            "links" => {
                for word in line.split(|c: char| !c.is_ascii_hexdigit()) {
                    if word.len() == 16 {
                        span.links.push(word.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    spans.extend(current);
    (spans, metrics)
}
