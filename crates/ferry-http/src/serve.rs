//! Serving the endpoint on a TCP listener.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response, StatusCode};
use http_body_util::Either;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::body::McpBody;
use crate::h1;
use crate::request_body::RequestBody;
use crate::service::McpService;

/// Serves `service` at `path` (e.g. `/mcp`) on `listener` until `shutdown` completes;
/// other paths get 404. On shutdown, `subscriptions/listen` streams end with their
/// completion result and open connections get a moment to finish.
///
/// Sockets use `TCP_NODELAY`. Bind to 127.0.0.1 unless the server must be reachable from
/// elsewhere, and then put authentication in front of it.
pub async fn serve_with_shutdown<F>(
    listener: TcpListener,
    path: &str,
    service: McpService,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    let server = service.server().clone();
    let options = ServeOptions::new(path).with_config(service.config());
    serve_app(
        listener,
        &server,
        service,
        None::<NotFound>,
        &options,
        shutdown,
    )
    .await
}

/// Where the MCP endpoint is, which protocols the listener speaks, and the limits of its
/// connections.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServeOptions {
    /// The endpoint path, e.g. `/mcp`.
    pub path: String,
    /// Accept HTTP/2 with prior knowledge besides HTTP/1.1 (see [`crate::HttpConfig::http2`]).
    /// Connections are then served by hyper's auto-detecting connection instead of
    /// Ferry's HTTP/1.1 connection.
    pub http2: bool,
    /// Largest request head (request line and header fields), in bytes (431 above).
    /// Default 64 KiB.
    pub max_head_bytes: usize,
    /// Largest request body, in bytes (413 above). Default 4 MiB, like
    /// [`crate::HttpConfig::max_body_bytes`].
    pub max_body_bytes: usize,
    /// How long a request head may take from its first byte (408 after). Default 30 s.
    pub head_timeout: Duration,
    /// How long a request body may take once its head is in (408 after). Default 30 s.
    pub body_timeout: Duration,
}

impl ServeOptions {
    /// Options for an endpoint at `path`, with the other settings at their defaults.
    pub fn new(path: impl Into<String>) -> Self {
        ServeOptions {
            path: path.into(),
            ..ServeOptions::default()
        }
    }

    /// The same options with the body limits of `config`.
    pub fn with_config(mut self, config: &crate::HttpConfig) -> Self {
        self.http2 = config.http2;
        self.max_body_bytes = config.max_body_bytes;
        self.body_timeout = config.body_timeout;
        self
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            path: "/mcp".into(),
            http2: false,
            max_head_bytes: 64 * 1024,
            max_body_bytes: 4 * 1024 * 1024,
            head_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// Answers 404 to everything: the default for paths other than the MCP endpoint.
#[derive(Clone, Copy, Debug, Default)]
pub struct NotFound;

impl<B> tower_service::Service<Request<B>> for NotFound {
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<McpBody>, Infallible>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _req: Request<B>) -> Self::Future {
        let mut r = Response::new(McpBody::empty());
        *r.status_mut() = StatusCode::NOT_FOUND;
        std::future::ready(Ok(r))
    }
}

/// Serves an application: requests for `path` go straight to `mcp` (an [`McpService`],
/// possibly behind layers such as [`crate::BearerAuthLayer`]), everything else to `app`
/// (e.g. an axum `Router` with your pages), or 404 without one. The MCP endpoint skips
/// the app's routing entirely, which keeps its hot path short.
///
/// Connections speak HTTP/1.1 through Ferry's own connection (small per-connection memory,
/// one write per response; see [`ServeOptions`] for its limits), or, with
/// [`ServeOptions::http2`], hyper's connection that also takes HTTP/2 with prior
/// knowledge. Either way services receive a [`RequestBody`].
pub async fn serve_app<M, A, AB, F>(
    listener: TcpListener,
    server: &ferry_server::Server,
    mcp: M,
    app: Option<A>,
    options: &ServeOptions,
    shutdown: F,
) -> io::Result<()>
where
    M: tower_service::Service<
            Request<RequestBody>,
            Response = Response<McpBody>,
            Error = Infallible,
        > + Clone
        + Send
        + Sync
        + 'static,
    M::Future: Send + 'static,
    A: tower_service::Service<Request<RequestBody>, Response = Response<AB>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    A::Future: Send + 'static,
    AB: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    AB::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    F: Future<Output = ()> + Send,
{
    let path: Arc<str> = options.path.as_str().into();
    let limits = Arc::new(h1::Limits {
        max_head_bytes: options.max_head_bytes,
        max_body_bytes: options.max_body_bytes,
        head_timeout: options.head_timeout,
        body_timeout: options.body_timeout,
    });
    let graceful = GracefulShutdown::new();
    let stopping = CancellationToken::new();
    let connections = TaskTracker::new();
    let builder = auto::Builder::new(TokioExecutor::new());
    let server = server.clone();
    tokio::pin!(shutdown);
    if server.has_ephemeral_state_key() {
        tracing::warn!(
            "requestState is sealed with a random per-process key: in-flight multi-round requests will not survive a restart, and several instances behind a load balancer cannot open each other's states; configure state keys for production"
        );
    }
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let mut route = Route {
            path: path.clone(),
            mcp: mcp.clone(),
            app: app.clone(),
        };
        if options.http2 {
            let hyper_svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let fut = route.clone().call(req.map(RequestBody::hyper));
                async move { Ok::<_, Infallible>(fut.await) }
            });
            let conn = builder
                .serve_connection(TokioIo::new(stream), hyper_svc)
                .into_owned();
            let conn = graceful.watch(conn);
            connections.spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
            });
        } else {
            connections.spawn(h1::serve_connection(
                stream,
                move |req| route.call(req),
                limits.clone(),
                stopping.clone(),
            ));
        }
    }
    server.shutdown();
    stopping.cancel();
    connections.close();
    tokio::select! {
        _ = async { tokio::join!(graceful.shutdown(), connections.wait()) } => {}
        _ = tokio::time::sleep(Duration::from_secs(5)) => {
            tracing::debug!("connections still open after 5 s were dropped");
        }
    }
    Ok(())
}

/// Sends each request to the MCP endpoint or to the app.
#[derive(Clone)]
struct Route<M, A> {
    path: Arc<str>,
    mcp: M,
    app: Option<A>,
}

impl<M, A, AB> Route<M, A>
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
{
    /// Calls the service the request is for.
    fn call(
        &mut self,
        req: Request<RequestBody>,
    ) -> impl Future<Output = Response<Either<McpBody, AB>>> + use<M, A, AB> {
        use futures::future::Either as Which;
        use tower_service::Service as _;

        let routed = if req.uri().path() == &*self.path {
            Which::Left(call_ready(&mut self.mcp, req))
        } else {
            match &mut self.app {
                Some(app) => Which::Right(Which::Left(call_ready(app, req))),
                None => Which::Right(Which::Right(NotFound.call(req))),
            }
        };
        async move {
            let response = match routed {
                Which::Left(mcp) => mcp.await.map(|r| r.map(Either::Left)),
                Which::Right(Which::Left(app)) => app.await.map(|r| r.map(Either::Right)),
                Which::Right(Which::Right(none)) => none.await.map(|r| r.map(Either::Left)),
            };
            match response {
                Ok(r) => r,
                Err(never) => match never {},
            }
        }
    }
}

/// A call that waits for its service to be ready.
type Waiting<T> = std::pin::Pin<Box<dyn Future<Output = Result<T, Infallible>> + Send>>;

/// A call to `svc` as tower requires it: once ready. A service that is ready at once (the
/// endpoint, the authentication layer, most routers) is called in place and cloned for
/// nothing; one that must wait (a concurrency limit, a buffer) is cloned and waited for
/// in a boxed future.
fn call_ready<S, R>(svc: &mut S, req: R) -> futures::future::Either<S::Future, Waiting<S::Response>>
where
    S: tower_service::Service<R, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    use futures::future::Either as Which;

    match futures::FutureExt::now_or_never(std::future::poll_fn(|cx| svc.poll_ready(cx))) {
        Some(Ok(())) => Which::Left(svc.call(req)),
        Some(Err(never)) => match never {},
        None => {
            let mut svc = svc.clone();
            Which::Right(Box::pin(async move {
                std::future::poll_fn(|cx| svc.poll_ready(cx)).await?;
                svc.call(req).await
            }))
        }
    }
}

/// Serves `service` at `path` on `listener` until the process gets Ctrl-C (SIGINT) or
/// SIGTERM.
pub async fn serve(listener: TcpListener, path: &str, service: McpService) -> io::Result<()> {
    serve_with_shutdown(listener, path, service, shutdown_signal()).await
}

/// Binds `addr` and serves until Ctrl-C or SIGTERM. Returns once the listener is bound
/// and the server stopped.
pub async fn bind_and_serve(addr: SocketAddr, path: &str, service: McpService) -> io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    serve(listener, path, service).await
}

/// Completes on Ctrl-C or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
