//! Serving the endpoint on a TCP listener with hyper.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use std::convert::Infallible;

use http::{Request, Response, StatusCode};
use http_body_util::Either;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use crate::body::McpBody;
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
    let options = ServeOptions {
        path: path.to_owned(),
        http2: service.config().http2,
    };
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

/// Where the MCP endpoint is and which protocols the listener speaks.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The endpoint path, e.g. `/mcp`.
    pub path: String,
    /// Accept HTTP/2 with prior knowledge besides HTTP/1.1 (see [`crate::HttpConfig::http2`]).
    pub http2: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            path: "/mcp".into(),
            http2: false,
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
pub async fn serve_app<M, A, AB, F>(
    listener: TcpListener,
    server: &ferry_server::Server,
    mcp: M,
    app: Option<A>,
    options: &ServeOptions,
    shutdown: F,
) -> io::Result<()>
where
    M: tower_service::Service<Request<Incoming>, Response = Response<McpBody>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    M::Future: Send + 'static,
    A: tower_service::Service<Request<Incoming>, Response = Response<AB>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    A::Future: Send + 'static,
    AB: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    AB::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    F: Future<Output = ()> + Send,
{
    let path: std::sync::Arc<str> = options.path.as_str().into();
    let graceful = GracefulShutdown::new();
    let builder = auto::Builder::new(TokioExecutor::new());
    let http1 = hyper::server::conn::http1::Builder::new();
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
        let mcp = mcp.clone();
        let app = app.clone();
        let path = path.clone();
        let hyper_svc = hyper::service::service_fn(move |req: Request<Incoming>| {
            let on_endpoint = req.uri().path() == &*path;
            let mut mcp = mcp.clone();
            let app = app.clone();
            async move {
                use tower_service::Service as _;

                if on_endpoint {
                    mcp.call(req).await.map(|r| r.map(Either::Left))
                } else {
                    match app {
                        Some(mut app) => app.call(req).await.map(|r| r.map(Either::Right)),
                        None => NotFound.call(req).await.map(|r| r.map(Either::Left)),
                    }
                }
            }
        });
        if options.http2 {
            let conn = builder
                .serve_connection(TokioIo::new(stream), hyper_svc)
                .into_owned();
            let conn = graceful.watch(conn);
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
            });
        } else {
            // HTTP/1.1 only: the plain connection is smaller than the auto-detecting one,
            // which matters with thousands of open `subscriptions/listen` streams.
            let conn = http1.serve_connection(TokioIo::new(stream), hyper_svc);
            let conn = graceful.watch(conn);
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
            });
        }
    }
    server.shutdown();
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(std::time::Duration::from_secs(5)) => {
            tracing::debug!("connections still open after 5 s were dropped");
        }
    }
    Ok(())
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
