//! Connections served by hyper, when HTTP/2 with prior knowledge is enabled
//! ([`HttpConfig::http2`](crate::HttpConfig::http2)): hyper's auto-detecting connection
//! speaks HTTP/2 and HTTP/1.1, and a watchdog beside it closes the connection gracefully
//! once it has had no request in flight for the idle timeout, or when the server stops.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::HttpConfig;
use crate::request_body::{BoxError, RequestBody};

/// hyper's connection builder with the limits of `config`.
pub(super) fn builder(config: &HttpConfig) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.head_timeout())
        // hyper's smallest read buffer is 8 KiB.
        .max_buf_size(config.max_head_bytes().max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(config.max_head_bytes()).unwrap_or(u32::MAX));
    builder
}

/// Serves `stream` with hyper, calling `call` for each request, until the peer closes,
/// the connection idles for `idle_timeout`, or `stopping` fires; the last two close it
/// gracefully (HTTP/2 `GOAWAY`; HTTP/1.1 after the response in progress).
pub(super) async fn serve_connection<C, F, B>(
    builder: Arc<auto::Builder<TokioExecutor>>,
    stream: TcpStream,
    peer: SocketAddr,
    call: C,
    idle_timeout: Duration,
    stopping: CancellationToken,
) where
    C: Fn(Request<RequestBody>) -> F + Send + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let activity = Arc::new(Activity::new());
    let seen = activity.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let busy = Busy::start(seen.clone());
        let response = call(req.map(RequestBody::hyper));
        async move {
            let response = response.await;
            Ok::<_, Infallible>(response.map(|body| Tracked { body, _busy: busy }))
        }
    });
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    let mut closing = false;
    loop {
        let check = tokio::time::sleep_until(activity.idle_deadline(idle_timeout));
        tokio::select! {
            ended = conn.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            () = stopping.cancelled(), if !closing => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            () = check, if !closing => {
                if activity.idle_for() >= idle_timeout {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

/// Requests in flight on one connection, and since when it has had none.
struct Activity {
    start: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds from `start` to when the last request ended.
    idle_since: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            start: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
        }
    }

    /// How long the connection has had no request in flight (zero while one is).
    fn idle_for(&self) -> Duration {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return Duration::ZERO;
        }
        let since = Duration::from_millis(self.idle_since.load(Ordering::Acquire));
        self.start.elapsed().saturating_sub(since)
    }

    /// When to look again whether the connection idled for `timeout`.
    fn idle_deadline(&self, timeout: Duration) -> Instant {
        Instant::now() + timeout.saturating_sub(self.idle_for())
    }
}

/// One request in flight, until its response body is done or dropped.
struct Busy(Arc<Activity>);

impl Busy {
    fn start(activity: Arc<Activity>) -> Busy {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(activity)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let a = &self.0;
        let now = u64::try_from(a.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        a.idle_since.store(now, Ordering::Release);
        a.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request counted as in flight.
    struct Tracked<B> {
        #[pin]
        body: B,
        _busy: Busy,
    }
}

impl<B: Body> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
