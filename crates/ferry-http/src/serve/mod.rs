//! Serving the endpoint on a TCP listener: [`serve`] and its builder, [`Serve`].
//!
//! The parts: [`accept`] takes connections (the connection cap, back-off on accept
//! errors), [`route`] sends each request to the endpoint or the application, [`hyper`]
//! serves connections when HTTP/2 is enabled (Ferry's own HTTP/1.1 connection, in
//! `crate::h1`, serves them otherwise), and [`signal`] has the usual stop signal. The
//! life of a server, from the first accept to the last connection closed, is in one place:
//! [`Serve::run`].

mod accept;
mod health;
mod hyper;
mod route;
mod signal;
mod standby;

use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use ferry_protocol::ErrorCode;
use http::header::RETRY_AFTER;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use health::{READINESS_TIMEOUT, ReadinessProbe};
pub use route::NotFound;
pub use signal::shutdown_signal;

use crate::body::McpBody;
use crate::config::default_max_connections;
use crate::h1::{self, Rejection};
use crate::request_body::{BoxError, RequestBody};
use crate::service::McpService;
use crate::status::error_response;
use accept::{Acceptor, Admission, Slots};
use health::Health;
use route::Route;
use standby::Standby;

/// Serves `mcp` on `listener`: the MCP endpoint at `/mcp`, 404 on every other path.
///
/// This returns a [`Serve`] builder: `.await` it to serve, after setting the endpoint's
/// [`path`](Serve::path), [`layer`](Serve::layer)s around the endpoint (authentication,
/// concurrency limits), an [`app`](Serve::app) for the other paths, and a
/// [`graceful shutdown`](Serve::with_graceful_shutdown) signal. Every limit, those of the
/// connections included, comes from the endpoint's [`HttpConfig`](crate::HttpConfig).
///
/// Like `axum::serve`, a server has no stop signal unless given one: it serves until the
/// process ends. Binaries pass [`shutdown_signal`] (Ctrl-C or SIGTERM), so that
/// `subscriptions/listen` streams end with their completion result and requests in flight
/// finish.
///
/// ```no_run
/// use ferry_http::{HttpConfig, McpService};
///
/// # async fn run() -> std::io::Result<()> {
/// let server = ferry_server::Server::builder("demo", "1.0.0").build().unwrap();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// ferry_http::serve(listener, McpService::new(server, HttpConfig::default()))
///     .with_graceful_shutdown(ferry_http::shutdown_signal())
///     .await
/// # }
/// ```
///
/// Sockets use `TCP_NODELAY`. Bind to 127.0.0.1 unless the server must be reachable from
/// elsewhere, and then put authentication in front of it.
pub fn serve(listener: TcpListener, mcp: McpService) -> Serve<McpService> {
    Serve {
        listener,
        endpoint: mcp.clone(),
        mcp,
        app: NotFound,
        path: "/mcp".to_owned(),
        health: Health::default(),
        signal: std::future::pending(),
    }
}

/// A server being set up: see [`serve`]. `.await` it (it implements [`IntoFuture`]) to
/// serve until the shutdown signal, or for ever without one.
///
/// # Connections
///
/// Connections speak HTTP/1.1 through Ferry's own connection: small per-connection memory
/// (no buffer held while a response streams or the connection waits), one write per
/// response, and the limits of the endpoint's [`HttpConfig`](crate::HttpConfig): head
/// and body size (431, 413) and time (408), and the idle timeout, which closes a
/// connection that sends no request for that long, new or kept alive. With
/// [`HttpConfig::http2`](crate::HttpConfig::http2) they are served by hyper instead,
/// which also takes HTTP/2 with prior knowledge. Either way services receive a
/// [`RequestBody`].
///
/// At most [`HttpConfig::max_connections`](crate::HttpConfig::max_connections) are open
/// at once. When a new connection comes beyond it, the server closes the HTTP/1.1
/// connection that has waited longest for a request (one that never sent a byte first,
/// then one idle between kept-alive requests) and serves the new one in its place: a
/// peer holding silent connections cannot lock clients out. Only when every connection
/// is busy with a request is a new one answered `503 Service Unavailable` with
/// `Retry-After: 1` and a JSON-RPC error, and closed; while 64 such answers are still
/// going out, the server stops accepting until a connection closes (new connections wait
/// in the listener's backlog). Accept errors never stop the server: running out of file
/// descriptors pauses accepting, with growing pauses up to a second, and is logged once
/// per 5 s with a count.
///
/// # Health checks
///
/// `GET /healthz` answers `200` while the process serves (liveness); `GET /readyz`
/// answers `200` when the server is ready for traffic and `503` otherwise (readiness:
/// while draining, or when the [`readiness`](Serve::readiness) probe says no). Both are
/// served on the same listener, before the endpoint and the app, and can be moved
/// ([`health_paths`](Serve::health_paths)) or turned off
/// ([`without_health_checks`](Serve::without_health_checks)).
///
/// # Stopping
///
/// When the shutdown signal completes, the server drains:
///
/// 1. readiness turns false (`/readyz` answers `503`), and new connections are still
///    accepted and served for [`HttpConfig::drain_grace`](crate::HttpConfig::drain_grace)
///    (default 5 s), so a load balancer notices and sends traffic elsewhere;
/// 2. the listener closes: new connections are refused;
/// 3. the server's `subscriptions/listen` streams end with their completion result, idle
///    connections close, and busy ones close once the response in progress is sent, so
///    calls in flight finish;
/// 4. connections still open [`HttpConfig::drain_timeout`](crate::HttpConfig::drain_timeout)
///    (default 30 s) after the listener closed are dropped, and the future returns
///    `Ok(())`.
#[must_use = "a server does nothing until it is awaited"]
pub struct Serve<M, A = NotFound, S = std::future::Pending<()>> {
    listener: TcpListener,
    endpoint: McpService,
    mcp: M,
    app: A,
    path: String,
    health: Health,
    signal: S,
}

impl<M, A, S> Serve<M, A, S> {
    /// Serves the endpoint at `path` instead of `/mcp`. It must start with `/`, or the
    /// server fails at once with [`io::ErrorKind::InvalidInput`].
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Serves liveness at `liveness` and readiness at `readiness` instead of `/healthz`
    /// and `/readyz`. Both must start with `/` and differ from the endpoint's path, or
    /// the server fails at once with [`io::ErrorKind::InvalidInput`].
    pub fn health_paths(
        mut self,
        liveness: impl Into<String>,
        readiness: impl Into<String>,
    ) -> Self {
        self.health.live_path = Some(liveness.into().into());
        self.health.ready_path = Some(readiness.into().into());
        self
    }

    /// Serves no health checks: `/healthz` and `/readyz` go to the app like any path.
    pub fn without_health_checks(mut self) -> Self {
        self.health.live_path = None;
        self.health.ready_path = None;
        self
    }

    /// Makes readiness depend on `probe` too: `/readyz` answers `200` only when the
    /// server is not draining and the probe returns `true` within
    /// [`READINESS_TIMEOUT`]. The probe runs once per readiness check.
    ///
    /// ```no_run
    /// # async fn run(listener: tokio::net::TcpListener, mcp: ferry_http::McpService) -> std::io::Result<()> {
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicBool, Ordering};
    ///
    /// let backend_up = Arc::new(AtomicBool::new(true));
    /// ferry_http::serve(listener, mcp)
    ///     .readiness(move || {
    ///         let up = backend_up.clone();
    ///         async move { up.load(Ordering::Relaxed) }
    ///     })
    ///     .await
    /// # }
    /// ```
    pub fn readiness(mut self, probe: impl ReadinessProbe) -> Self {
        self.health.probe = Some(Arc::new(probe));
        self
    }

    /// Wraps the endpoint in `layer`, e.g. authentication or a concurrency limit. Layers
    /// stack: the last one added sees requests first. They wrap the endpoint only; the
    /// [`app`](Serve::app) has its own.
    ///
    /// Authorization is `ferry-auth`'s `AuthLayer`, added here
    /// (`.layer(auth).app(auth.metadata().router())`); see the crate README.
    ///
    /// ```no_run
    /// # async fn run(listener: tokio::net::TcpListener, mcp: ferry_http::McpService) -> std::io::Result<()> {
    /// ferry_http::serve(listener, mcp)
    ///     .layer(tower::limit::ConcurrencyLimitLayer::new(64))
    ///     .await
    /// # }
    /// ```
    pub fn layer<L>(self, layer: L) -> Serve<L::Service, A, S>
    where
        L: tower_layer::Layer<M>,
    {
        Serve {
            listener: self.listener,
            endpoint: self.endpoint,
            mcp: layer.layer(self.mcp),
            app: self.app,
            path: self.path,
            health: self.health,
            signal: self.signal,
        }
    }

    /// Serves `app` (an axum `Router`, or any tower service) on every path other than the
    /// endpoint's. Requests for the endpoint never go through the app's routing.
    ///
    /// ```no_run
    /// # async fn run(listener: tokio::net::TcpListener, mcp: ferry_http::McpService) -> std::io::Result<()> {
    /// let pages = axum::Router::new().route("/", axum::routing::get(|| async { "hello" }));
    /// ferry_http::serve(listener, mcp).app(pages).await
    /// # }
    /// ```
    pub fn app<A2>(self, app: A2) -> Serve<M, A2, S> {
        Serve {
            listener: self.listener,
            endpoint: self.endpoint,
            mcp: self.mcp,
            app,
            path: self.path,
            health: self.health,
            signal: self.signal,
        }
    }

    /// Stops serving, gracefully, once `signal` completes (see [`Serve`], "Stopping").
    pub fn with_graceful_shutdown<S2>(self, signal: S2) -> Serve<M, A, S2>
    where
        S2: Future<Output = ()> + Send + 'static,
    {
        Serve {
            listener: self.listener,
            endpoint: self.endpoint,
            mcp: self.mcp,
            app: self.app,
            path: self.path,
            health: self.health,
            signal,
        }
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

impl<M, A, S> std::fmt::Debug for Serve<M, A, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve")
            .field("listener", &self.listener)
            .field("path", &self.path)
            .field("liveness", &self.health.live_path)
            .field("readiness", &self.health.ready_path)
            .field("config", self.endpoint.config())
            .finish_non_exhaustive()
    }
}

impl<M, A, AB, S> IntoFuture for Serve<M, A, S>
where
    M: tower_service::Service<
            Request<RequestBody>,
            Response = Response<McpBody>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    M::Future: Send + 'static,
    A: tower_service::Service<Request<RequestBody>, Response = Response<AB>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    A::Future: Send + 'static,
    AB: Body<Data = Bytes> + Send + 'static,
    AB::Error: Into<BoxError>,
    S: Future<Output = ()> + Send + 'static,
{
    type Output = io::Result<()>;
    type IntoFuture = ServeFuture;

    fn into_future(self) -> ServeFuture {
        ServeFuture(Box::pin(self.run()))
    }
}

impl<M, A, AB, S> Serve<M, A, S>
where
    M: tower_service::Service<
            Request<RequestBody>,
            Response = Response<McpBody>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    M::Future: Send + 'static,
    A: tower_service::Service<Request<RequestBody>, Response = Response<AB>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    A::Future: Send + 'static,
    AB: Body<Data = Bytes> + Send + 'static,
    AB::Error: Into<BoxError>,
    S: Future<Output = ()> + Send + 'static,
{
    /// The life of the server: accept until the signal, then drain in order (see
    /// [`Serve`], "Stopping").
    async fn run(self) -> io::Result<()> {
        let Serve {
            listener,
            endpoint,
            mcp,
            app,
            path,
            health,
            signal,
        } = self;
        check_paths(&path, &health)?;
        let server = endpoint.server().clone();
        if server.has_ephemeral_state_key() {
            tracing::warn!(
                "requestState is sealed with a random per-process key: in-flight multi-round requests will not survive a restart, and several instances behind a load balancer cannot open each other's states; configure state keys for production"
            );
        }
        let config = endpoint.config();
        let max_connections = config
            .max_connections()
            .unwrap_or_else(default_max_connections);
        tracing::debug!(max_connections, "serving");
        let (drain_grace, drain_timeout) = (config.drain_grace(), config.drain_timeout());
        let connections = Connections::new(config);
        let route = Route {
            health: health.clone(),
            path: path.into(),
            mcp,
            app,
        };
        let mut acceptor = Acceptor::new(listener);
        let mut slots = Slots::new(max_connections);

        // Serving.
        accept_until(
            signal,
            &mut acceptor,
            &mut slots,
            &connections,
            route.clone(),
        )
        .await;

        // Draining: not ready, but still accepting while load balancers notice.
        health.start_draining();
        if !drain_grace.is_zero() {
            tracing::info!(
                grace_ms = drain_grace.as_millis() as u64,
                "draining: readiness is false; still accepting connections for the grace period"
            );
            let grace = tokio::time::sleep(drain_grace);
            accept_until(grace, &mut acceptor, &mut slots, &connections, route).await;
        }

        // Stopping: no new connections, listen streams complete, connections finish.
        drop(acceptor);
        tracing::info!("listener closed; finishing calls in flight");
        server.shutdown();
        connections.stop(drain_timeout).await;
        Ok(())
    }
}

/// Accepts and serves connections until `stop` completes.
async fn accept_until<M, A, AB>(
    stop: impl Future<Output = ()>,
    acceptor: &mut Acceptor,
    slots: &mut Slots,
    connections: &Connections,
    route: Route<M, A>,
) where
    M: tower_service::Service<
            Request<RequestBody>,
            Response = Response<McpBody>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    M::Future: Send + 'static,
    A: tower_service::Service<Request<RequestBody>, Response = Response<AB>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    A::Future: Send + 'static,
    AB: Body<Data = Bytes> + Send + 'static,
    AB::Error: Into<BoxError>,
{
    let mut stop = std::pin::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = &mut stop => return,
            accepted = async {
                slots.room().await;
                acceptor.accept().await
            } => accepted,
        };
        match slots.admit() {
            Some(Admission::Serve(slot)) => {
                connections.serve(stream, peer, route.clone(), Slot::Held(slot));
            }
            Some(Admission::Refuse(slot)) if connections.standby.close_one_waiting() => {
                // A connection waiting for a request is closing to make room: serve this
                // one in its slot.
                slots.made_room();
                let slot = Slot::Freed {
                    serving: slots.serving_permits(),
                    meanwhile: slot,
                };
                connections.serve(stream, peer, route.clone(), slot);
            }
            Some(Admission::Refuse(slot)) => {
                slots.refused();
                connections.refuse(stream, slot);
            }
            None => {
                slots.refused();
                drop(stream);
            }
        }
    }
}

/// Checks the endpoint's and the health checks' paths: each starts with `/`, and none is
/// another's.
fn check_paths(path: &str, health: &Health) -> io::Result<()> {
    let invalid = |message: String| Err(io::Error::new(io::ErrorKind::InvalidInput, message));
    if !path.starts_with('/') {
        return invalid(format!(
            "the MCP endpoint's path must start with '/', got {path:?}"
        ));
    }
    for (what, p) in [
        ("liveness", health.live_path.as_deref()),
        ("readiness", health.ready_path.as_deref()),
    ] {
        let Some(p) = p else { continue };
        if !p.starts_with('/') {
            return invalid(format!("the {what} path must start with '/', got {p:?}"));
        }
        if p == path {
            return invalid(format!("the {what} path {p:?} is the MCP endpoint's path"));
        }
    }
    if health.live_path.is_some() && health.live_path == health.ready_path {
        return invalid("the liveness and readiness paths must differ".to_owned());
    }
    Ok(())
}

/// The future of a [`Serve`]: serves until the shutdown signal.
#[must_use = "a server does nothing until it is awaited"]
pub struct ServeFuture(Pin<Box<dyn Future<Output = io::Result<()>> + Send>>);

impl Future for ServeFuture {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll(cx)
    }
}

impl std::fmt::Debug for ServeFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeFuture").finish_non_exhaustive()
    }
}

/// The open connections: how each is served, and how they all stop.
struct Connections {
    tasks: TaskTracker,
    /// Asks connections to finish (after the response in progress).
    stopping: CancellationToken,
    /// Drops connections at once: the drain timeout has passed.
    abort: CancellationToken,
    limits: Arc<h1::Limits>,
    /// The HTTP/1.1 connections, to close a waiting one when the server is full.
    standby: Arc<Standby>,
    /// hyper's connection builder, when HTTP/2 is enabled.
    hyper: Option<Arc<::hyper_util::server::conn::auto::Builder<::hyper_util::rt::TokioExecutor>>>,
    idle_timeout: Duration,
}

impl Connections {
    fn new(config: &crate::HttpConfig) -> Connections {
        Connections {
            tasks: TaskTracker::new(),
            stopping: CancellationToken::new(),
            abort: CancellationToken::new(),
            limits: Arc::new(h1::Limits::of(config)),
            standby: Arc::default(),
            hyper: config.http2().then(|| Arc::new(hyper::builder(config))),
            idle_timeout: config.idle_timeout(),
        }
    }

    /// Serves a connection for as long as it lasts, holding its `slot`.
    fn serve<M, A, AB>(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
        mut route: Route<M, A>,
        slot: Slot,
    ) where
        M: tower_service::Service<
                Request<RequestBody>,
                Response = Response<McpBody>,
                Error = Infallible,
            > + Clone
            + Send
            + 'static,
        M::Future: Send + 'static,
        A: tower_service::Service<
                Request<RequestBody>,
                Response = Response<AB>,
                Error = Infallible,
            > + Clone
            + Send
            + 'static,
        A::Future: Send + 'static,
        AB: Body<Data = Bytes> + Send + 'static,
        AB::Error: Into<BoxError>,
    {
        let _ = stream.set_nodelay(true);
        match &self.hyper {
            Some(builder) => {
                let builder = builder.clone();
                let idle_timeout = self.idle_timeout;
                let stopping = self.stopping.clone();
                self.spawn(async move {
                    let Some(_slot) = slot.take().await else {
                        return refuse_full(stream).await;
                    };
                    let call = move |req| route.clone().call(req);
                    hyper::serve_connection(builder, stream, peer, call, idle_timeout, stopping)
                        .await;
                });
            }
            None => {
                let limits = self.limits.clone();
                // Closed by the server's stop, or to make room for a new connection.
                let close = self.stopping.child_token();
                let presence = Arc::new(h1::Presence::default());
                let listed = self.standby.enlist(presence.clone(), close.clone());
                self.spawn(async move {
                    let _listed = listed;
                    let Some(_slot) = slot.take().await else {
                        return refuse_full(stream).await;
                    };
                    let call = move |req| route.call(req);
                    h1::serve_connection(stream, call, rejected, limits, close, presence).await;
                });
            }
        }
    }

    /// Answers a connection the server has no room for with `503`, then closes it.
    fn refuse(&self, stream: TcpStream, slot: OwnedSemaphorePermit) {
        self.spawn(async move {
            let _slot = slot;
            refuse_full(stream).await;
        });
    }

    /// Runs a connection's task, until it ends or the connections are aborted.
    fn spawn(&self, connection: impl Future<Output = ()> + Send + 'static) {
        self.tasks.spawn(UntilAborted {
            connection,
            aborted: self.abort.clone().cancelled_owned(),
        });
    }

    /// Asks every connection to finish and waits for them, `timeout` at most; those
    /// still open then are dropped (their handlers with them).
    async fn stop(self, timeout: Duration) {
        self.stopping.cancel();
        self.tasks.close();
        if tokio::time::timeout(timeout, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                open = self.tasks.len(),
                timeout_ms = timeout.as_millis() as u64,
                "connections still open after the drain timeout are dropped"
            );
            self.abort.cancel();
            self.tasks.wait().await;
        }
    }
}

pin_project_lite::pin_project! {
    /// A connection's task: the connection, dropped once the connections are aborted.
    ///
    /// A future of its own, not an `async` block around a `select!`: such a block keeps
    /// the connection's future twice (the captured value and the one being polled), which
    /// doubled every open connection's task, about 2.8 KiB more per held stream.
    struct UntilAborted<F> {
        #[pin]
        connection: F,
        #[pin]
        aborted: tokio_util::sync::WaitForCancellationFutureOwned,
    }
}

impl<F: Future<Output = ()>> Future for UntilAborted<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let me = self.project();
        if me.aborted.poll(cx).is_ready() {
            return Poll::Ready(());
        }
        me.connection.poll(cx)
    }
}

/// How long a connection admitted in the slot of a closing one waits for that slot
/// before it is answered `503` instead.
const MAKE_ROOM_WAIT: Duration = Duration::from_secs(1);

/// A connection's place among those served.
enum Slot {
    /// Its own.
    Held(OwnedSemaphorePermit),
    /// The one a closing connection is about to free; until then it holds a place among
    /// the connections being refused, so the accept loop still counts it.
    Freed {
        serving: Arc<Semaphore>,
        meanwhile: OwnedSemaphorePermit,
    },
}

impl Slot {
    /// The slot, once it is free: `None` if it was not within [`MAKE_ROOM_WAIT`].
    async fn take(self) -> Option<OwnedSemaphorePermit> {
        match self {
            Slot::Held(slot) => Some(slot),
            Slot::Freed { serving, meanwhile } => {
                let slot = tokio::time::timeout(MAKE_ROOM_WAIT, serving.acquire_owned()).await;
                drop(meanwhile);
                slot.ok()?.ok()
            }
        }
    }
}

/// Answers `503` with `Retry-After: 1` and a JSON-RPC error on a connection the server
/// has no room for, then closes it.
async fn refuse_full(stream: TcpStream) {
    let mut response = error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        "Service unavailable: too many open connections; retry later",
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    h1::refuse(stream, response).await;
}

/// The response to a request the HTTP/1.1 connection refused: its status, with a
/// JSON-RPC error naming the reason.
fn rejected(rejection: Rejection) -> Response<McpBody> {
    error_response(
        rejection.status,
        ErrorCode::INVALID_REQUEST,
        rejection.reason,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_task_holds_its_connection_once() {
        let connection = async {
            let buf = [7u8; 4096];
            tokio::task::yield_now().await;
            assert_eq!(std::hint::black_box(&buf)[0], 7);
        };
        let alone = std::mem::size_of_val(&connection);
        let task = UntilAborted {
            connection,
            aborted: CancellationToken::new().cancelled_owned(),
        };
        assert!(
            std::mem::size_of_val(&task) < alone + 256,
            "{} bytes for a {alone}-byte connection",
            std::mem::size_of_val(&task)
        );
    }

    #[tokio::test]
    async fn an_aborted_connection_task_ends_and_drops_its_connection() {
        let abort = CancellationToken::new();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(UntilAborted {
            // Never ends by itself; dropping it drops the sender.
            connection: async move {
                let _tx = tx;
                std::future::pending::<()>().await;
            },
            aborted: abort.clone().cancelled_owned(),
        });
        abort.cancel();
        task.await.unwrap();
        assert!(rx.await.is_err(), "the connection was dropped");
    }
}
