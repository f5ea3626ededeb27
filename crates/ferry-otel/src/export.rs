//! The span exporter: closed spans wait in a bounded queue and one thread of their own
//! encodes them in batches ([`crate::otlp`]) and sends them over OTLP/HTTP or OTLP/gRPC.
//!
//! The standard batch settings apply: `OTEL_BSP_SCHEDULE_DELAY` (ms between exports,
//! default 5000), `OTEL_BSP_MAX_QUEUE_SIZE` (2048), `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`
//! (512) and `OTEL_BSP_EXPORT_TIMEOUT` (ms, 30000); and the exporter's:
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL), else `OTEL_EXPORTER_OTLP_ENDPOINT`
//! (`/v1/traces` added for HTTP), `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`
//! (`key=value,...`, values percent-decoded) and `OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`
//! (ms, 10000). A full queue drops new spans (counted, and said once on stderr) rather
//! than slow requests down.
//!
//! Spans are queued encoded: the thread that closes a span encodes it while its record
//! is in that core's cache and keeps the record for its next span, so no record crosses
//! threads and the exporter only frames and sends bytes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::config::{ExportConfig, Protocol};
use crate::otlp::{self, Preamble};

/// The gRPC method of OTLP trace export.
const GRPC_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// Where and how spans are sent.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) url: String,
    pub(crate) protocol: Protocol,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) timeout: Duration,
    pub(crate) schedule_delay: Duration,
    pub(crate) max_queue: usize,
    pub(crate) max_batch: usize,
    pub(crate) export_timeout: Duration,
}

impl Settings {
    /// The settings for `config`, the rest read through `var`.
    pub(crate) fn from_lookup(config: &ExportConfig, var: impl Fn(&str) -> Option<String>) -> Self {
        let set = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let millis = |k: &str, default: u64| {
            Duration::from_millis(
                set(k)
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(default),
            )
        };
        let count = |k: &str, default: usize| {
            set(k)
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        let url = match (&config.endpoint, config.protocol) {
            (Some(base), Protocol::HttpProtobuf) => {
                format!("{}/v1/traces", base.trim_end_matches('/'))
            }
            (Some(base), Protocol::Grpc) => {
                format!("{}{GRPC_PATH}", base.trim_end_matches('/'))
            }
            (None, protocol) => match (set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), protocol) {
                (Some(full), Protocol::HttpProtobuf) => full.trim().to_owned(),
                (Some(base), Protocol::Grpc) => {
                    format!("{}{GRPC_PATH}", base.trim().trim_end_matches('/'))
                }
                (None, Protocol::HttpProtobuf) => format!(
                    "{}/v1/traces",
                    set("OTEL_EXPORTER_OTLP_ENDPOINT")
                        .as_deref()
                        .map_or("http://localhost:4318", |b| b.trim().trim_end_matches('/'))
                ),
                (None, Protocol::Grpc) => format!(
                    "{}{GRPC_PATH}",
                    set("OTEL_EXPORTER_OTLP_ENDPOINT")
                        .as_deref()
                        .map_or("http://localhost:4317", |b| b.trim().trim_end_matches('/'))
                ),
            },
        };
        let headers = set("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
            .or_else(|| set("OTEL_EXPORTER_OTLP_HEADERS"))
            .map(|h| parse_headers(&h))
            .unwrap_or_default();
        let timeout = if set("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT").is_some() {
            millis("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", 10_000)
        } else {
            millis("OTEL_EXPORTER_OTLP_TIMEOUT", 10_000)
        };
        let max_queue = count("OTEL_BSP_MAX_QUEUE_SIZE", 2048);
        Settings {
            url,
            protocol: config.protocol,
            headers,
            timeout,
            schedule_delay: millis("OTEL_BSP_SCHEDULE_DELAY", 5_000),
            max_queue,
            max_batch: count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512).min(max_queue),
            export_timeout: millis("OTEL_BSP_EXPORT_TIMEOUT", 30_000),
        }
    }
}

/// `key=value` pairs separated by commas, values percent-decoded (the OTLP exporter
/// specification's format); malformed pairs are skipped.
fn parse_headers(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| (k.to_owned(), percent_decode(v.trim())))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// Bytes left in front of a batch's spans for the messages around them
/// ([`otlp::finish`]): enough for the usual resource.
pub(crate) const HEAD_ROOM: usize = 1024;

/// Encoded spans past this many bytes wait for the exporter no more than a full queue
/// does: new spans are dropped.
const MAX_QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// Encoded spans, one after another, after [`HEAD_ROOM`] bytes.
struct Batch {
    bytes: Vec<u8>,
    spans: usize,
}

impl Batch {
    fn new(spans: usize) -> Self {
        let mut bytes = Vec::with_capacity(HEAD_ROOM + spans.min(64) * 768);
        bytes.resize(HEAD_ROOM, 0);
        Batch { bytes, spans: 0 }
    }
}

/// What the exporter thread and the request path share.
struct Queue {
    /// Batches filled up, oldest first.
    full: std::collections::VecDeque<Batch>,
    /// The batch spans are being added to.
    filling: Batch,
    /// Spans and bytes waiting, all batches together.
    spans: usize,
    bytes: usize,
    /// Flushes asked for and done (tickets).
    flush_asked: u64,
    flush_done: u64,
    shutdown: bool,
}

/// The bounded queue between closing spans and the exporter thread. Spans arrive
/// encoded ([`otlp::encode_span`]): a record is read once, on the thread that closed it,
/// while it is still in that core's cache, and never crosses to the exporter's.
pub(crate) struct Batcher {
    queue: Mutex<Queue>,
    /// Wakes the exporter (a full batch, a flush, shutdown).
    wake: Condvar,
    /// Wakes flushers when the exporter has caught up.
    done: Condvar,
    max_queue: usize,
    max_batch: usize,
    dropped: AtomicU64,
}

impl Batcher {
    pub(crate) fn new(max_queue: usize, max_batch: usize) -> Self {
        Batcher {
            queue: Mutex::new(Queue {
                full: std::collections::VecDeque::new(),
                filling: Batch::new(max_batch),
                spans: 0,
                bytes: 0,
                flush_asked: 0,
                flush_done: 0,
                shutdown: false,
            }),
            wake: Condvar::new(),
            done: Condvar::new(),
            max_queue,
            max_batch,
            dropped: AtomicU64::new(0),
        }
    }

    /// Queues one encoded span (a `Span` field of `ScopeSpans`); drops it when the queue
    /// is full.
    pub(crate) fn push(&self, span: &[u8]) {
        let Ok(mut q) = self.queue.lock() else {
            return;
        };
        if q.spans >= self.max_queue || q.bytes + span.len() > MAX_QUEUE_BYTES {
            drop(q);
            if self.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                eprintln!(
                    "OpenTelemetry: the span queue is full ({} spans); spans are dropped until the exporter catches up",
                    self.max_queue
                );
            }
            return;
        }
        q.filling.bytes.extend_from_slice(span);
        q.filling.spans += 1;
        q.spans += 1;
        q.bytes += span.len();
        if q.filling.spans == self.max_batch {
            let next = Batch::new(self.max_batch);
            let full = std::mem::replace(&mut q.filling, next);
            q.full.push_back(full);
            self.wake.notify_one();
        }
    }

    /// Everything queued, decoded (for tests).
    #[cfg(test)]
    pub(crate) fn take(&self) -> Vec<opentelemetry_proto::tonic::trace::v1::Span> {
        use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
        use prost::Message as _;
        let preamble = crate::otlp::Preamble::new(std::iter::empty(), "test", "0");
        let body = self.take_request(&preamble, otlp::Framing::Plain);
        let request = ExportTraceServiceRequest::decode(body).expect("decodes");
        request
            .resource_spans
            .into_iter()
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
            .collect()
    }

    /// Everything queued, as one request, built as the exporter builds one (for tests).
    #[cfg(test)]
    pub(crate) fn take_request(&self, preamble: &Preamble, framing: otlp::Framing) -> bytes::Bytes {
        let batch = [vec![0; HEAD_ROOM], self.take_encoded()].concat();
        otlp::finish(preamble, batch, HEAD_ROOM, framing)
    }

    /// Everything queued, as the encoded spans one after another (for tests).
    #[cfg(test)]
    pub(crate) fn take_encoded(&self) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let (batch, _) = self.next_batch(Duration::ZERO).expect("not shut down");
            if batch.is_empty() {
                return out;
            }
            out.extend_from_slice(&batch[HEAD_ROOM..]);
        }
    }

    /// Spans dropped because the queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Waits (up to `limit`) until everything queued before the call has been sent.
    pub(crate) fn flush(&self, limit: Duration) {
        let Ok(mut q) = self.queue.lock() else {
            return;
        };
        q.flush_asked += 1;
        let ticket = q.flush_asked;
        self.wake.notify_one();
        let deadline = Instant::now() + limit;
        while q.flush_done < ticket && !q.shutdown {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            match self.done.wait_timeout(q, left) {
                Ok((guard, _)) => q = guard,
                Err(_) => return,
            }
        }
    }

    fn shutting_down(&self) -> bool {
        self.queue.lock().map_or(true, |q| q.shutdown)
    }

    /// Asks the exporter thread to send what is queued and stop.
    fn shut_down(&self) {
        if let Ok(mut q) = self.queue.lock() {
            q.shutdown = true;
        }
        self.wake.notify_one();
        self.done.notify_all();
    }

    /// The next batch to send (encoded spans after [`HEAD_ROOM`] bytes), waiting up to
    /// `delay` for one to fill; `None` when shut down with nothing left. The second
    /// value: a flush ticket this batch completes.
    fn next_batch(&self, delay: Duration) -> Option<(Vec<u8>, u64)> {
        let mut q = self.queue.lock().ok()?;
        let deadline = Instant::now() + delay;
        while q.full.is_empty() && q.flush_asked == q.flush_done && !q.shutdown {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            q = self.wake.wait_timeout(q, left).ok()?.0;
        }
        if q.shutdown && q.spans == 0 {
            q.flush_done = q.flush_asked;
            self.done.notify_all();
            return None;
        }
        let batch = match q.full.pop_front() {
            Some(full) => full,
            // Nothing waits: the batch filling stays (an idle exporter allocates nothing).
            None if q.filling.spans == 0 => {
                let ticket = q.flush_asked;
                return Some((Vec::new(), ticket));
            }
            None => {
                let next = Batch::new(self.max_batch);
                std::mem::replace(&mut q.filling, next)
            }
        };
        q.spans -= batch.spans;
        q.bytes -= batch.bytes.len() - HEAD_ROOM;
        // A flush is complete once the queue it saw is sent: when this batch empties it.
        let ticket = if q.spans == 0 {
            q.flush_asked
        } else {
            q.flush_done
        };
        Some((batch.bytes, ticket))
    }

    fn flushed(&self, ticket: u64) {
        if let Ok(mut q) = self.queue.lock()
            && ticket > q.flush_done
        {
            q.flush_done = ticket;
            self.done.notify_all();
        }
    }
}

/// The running exporter: its queue and thread.
pub(crate) struct Exporter {
    batcher: std::sync::Arc<Batcher>,
    thread: Option<std::thread::JoinHandle<()>>,
    export_timeout: Duration,
}

impl Exporter {
    /// Starts the exporter thread.
    pub(crate) fn start(settings: Settings, preamble: Preamble) -> std::io::Result<Self> {
        let batcher = std::sync::Arc::new(Batcher::new(settings.max_queue, settings.max_batch));
        let export_timeout = settings.export_timeout;
        let shared = batcher.clone();
        let thread = std::thread::Builder::new()
            .name("ferry-otel-spans".into())
            .spawn(move || run(&shared, &settings, &preamble))?;
        Ok(Exporter {
            batcher,
            thread: Some(thread),
            export_timeout,
        })
    }

    /// The queue spans are pushed to.
    pub(crate) fn batcher(&self) -> std::sync::Arc<Batcher> {
        self.batcher.clone()
    }

    /// Sends everything queued now (waits up to the export timeout).
    pub(crate) fn flush(&self) {
        self.batcher.flush(self.export_timeout);
    }

    /// Sends what is queued and stops the thread.
    pub(crate) fn shutdown(&mut self) {
        self.batcher.shut_down();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The exporter thread: batches until shutdown.
fn run(batcher: &Batcher, settings: &Settings, preamble: &Preamble) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("OpenTelemetry: the span exporter could not start: {e}");
            return;
        }
    };
    let client = match client(settings) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("OpenTelemetry: the span exporter could not start: {e}");
            return;
        }
    };
    let framing = match settings.protocol {
        Protocol::HttpProtobuf => otlp::Framing::Plain,
        Protocol::Grpc => otlp::Framing::Grpc,
    };
    let mut failing = false;
    while let Some((batch, ticket)) = batcher.next_batch(settings.schedule_delay) {
        // Shutting down with the collector failing: what is left is dropped rather than
        // holding the process up for a timeout per batch.
        if failing && batcher.shutting_down() {
            batcher.flushed(ticket);
            continue;
        }
        if !batch.is_empty() {
            let body = otlp::finish(preamble, batch, HEAD_ROOM, framing);
            let sent = runtime.block_on(async {
                tokio::time::timeout(settings.export_timeout, send(&client, settings, body))
                    .await
                    .unwrap_or_else(|_| Err("timed out".to_owned()))
            });
            match sent {
                Ok(()) if failing => {
                    eprintln!("OpenTelemetry: spans are exported again");
                    failing = false;
                }
                Ok(()) => {}
                Err(e) if !failing => {
                    eprintln!(
                        "OpenTelemetry: exporting spans to {} failed: {e}",
                        settings.url
                    );
                    failing = true;
                }
                Err(_) => {}
            }
        }
        batcher.flushed(ticket);
    }
}

fn client(settings: &Settings) -> Result<reqwest::Client, reqwest::Error> {
    let mut b = reqwest::Client::builder()
        .timeout(settings.timeout)
        .pool_max_idle_per_host(1);
    if settings.protocol == Protocol::Grpc && settings.url.starts_with("http://") {
        b = b.http2_prior_knowledge();
    }
    b.build()
}

/// One export request; `Err` says why it failed.
async fn send(
    client: &reqwest::Client,
    settings: &Settings,
    body: bytes::Bytes,
) -> Result<(), String> {
    let mut req = client.post(&settings.url);
    for (k, v) in &settings.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let req = match settings.protocol {
        Protocol::HttpProtobuf => req
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .body(body),
        // Framed as one gRPC message already.
        Protocol::Grpc => req
            .header(http::header::CONTENT_TYPE, "application/grpc")
            .header(http::header::TE, "trailers")
            .body(body),
    };
    let resp = req.send().await.map_err(|e| e.to_string())?;
    let status = resp.status();
    let grpc_status = resp
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // Read the answer to the end so the connection is reused.
    let _ = resp.bytes().await;
    if !status.is_success() {
        return Err(format!("HTTP {status}"));
    }
    match grpc_status.as_deref() {
        None | Some("0") => Ok(()),
        Some(code) => Err(format!("gRPC status {code}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(config: &ExportConfig, pairs: &[(&str, &str)]) -> Settings {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Settings::from_lookup(config, |k| map.get(k).cloned())
    }

    #[test]
    fn urls_headers_and_batch_settings_from_the_environment() {
        let env = ExportConfig {
            enabled: true,
            protocol: Protocol::HttpProtobuf,
            service_name: None,
            endpoint: None,
        };
        let s = settings(
            &env,
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")],
        );
        assert_eq!(s.url, "http://collector:4318/v1/traces");
        assert_eq!(s.max_batch, 512);
        assert_eq!(s.schedule_delay, Duration::from_secs(5));
        let s = settings(
            &env,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://traces:9/custom",
                ),
                (
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    "api-key=a%20b, x-tenant=7,broken",
                ),
                ("OTEL_BSP_SCHEDULE_DELAY", "100"),
                ("OTEL_BSP_MAX_QUEUE_SIZE", "64"),
            ],
        );
        assert_eq!(s.url, "http://traces:9/custom");
        assert_eq!(
            s.headers,
            vec![
                ("api-key".to_owned(), "a b".to_owned()),
                ("x-tenant".to_owned(), "7".to_owned())
            ]
        );
        assert_eq!(s.schedule_delay, Duration::from_millis(100));
        assert_eq!(s.max_batch, 64);
        let grpc = ExportConfig::to_endpoint("http://127.0.0.1:4317", Protocol::Grpc);
        assert_eq!(
            settings(&grpc, &[]).url,
            "http://127.0.0.1:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export"
        );
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decode("a%2Cb"), "a,b");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    /// Spans fill batches of `max_batch` in the order they closed; past `max_queue`
    /// they are dropped and counted; a flush takes the batch still filling.
    #[test]
    fn batches_fill_in_order_and_a_full_queue_drops() {
        let batcher = Batcher::new(5, 2);
        for i in 0..7u8 {
            batcher.push(&[i; 3]);
        }
        assert_eq!(batcher.dropped(), 2);
        let wait = Duration::from_millis(1);
        let (first, ticket) = batcher.next_batch(wait).expect("a batch");
        assert_eq!(&first[HEAD_ROOM..], &[0, 0, 0, 1, 1, 1]);
        assert_eq!(ticket, 0);
        let (second, _) = batcher.next_batch(wait).expect("a batch");
        assert_eq!(&second[HEAD_ROOM..], &[2, 2, 2, 3, 3, 3]);
        // The fifth span waits in the batch still filling, sent when the delay is up.
        let (last, _) = batcher.next_batch(wait).expect("a batch");
        assert_eq!(&last[HEAD_ROOM..], &[4, 4, 4]);
        let (empty, _) = batcher.next_batch(wait).expect("nothing");
        assert!(empty.is_empty());
        // Room again: the queue counts only what waits.
        batcher.push(&[9]);
        assert_eq!(batcher.dropped(), 2);
        batcher.shut_down();
        let (rest, _) = batcher.next_batch(wait).expect("the rest");
        assert_eq!(&rest[HEAD_ROOM..], &[9]);
        assert!(batcher.next_batch(wait).is_none());
    }
}
