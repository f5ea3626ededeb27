//! Serving the endpoint on a TCP listener with hyper.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use http::{Request, Response, StatusCode};
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
    let path: std::sync::Arc<str> = path.into();
    let graceful = GracefulShutdown::new();
    let builder = auto::Builder::new(TokioExecutor::new());
    let server = service.server().clone();
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
        let svc = service.clone();
        let path = path.clone();
        let hyper_svc = hyper::service::service_fn(move |req: Request<Incoming>| {
            let svc = svc.clone();
            let path = path.clone();
            async move {
                if req.uri().path() != &*path {
                    let mut r = Response::new(McpBody::empty());
                    *r.status_mut() = StatusCode::NOT_FOUND;
                    return Ok::<_, std::convert::Infallible>(r);
                }
                Ok(svc.call_http(req).await)
            }
        });
        let conn = builder
            .serve_connection(TokioIo::new(stream), hyper_svc)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
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
