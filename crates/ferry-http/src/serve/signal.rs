//! The usual signal to stop a server on.

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM: the signal binaries pass to
/// [`Serve::with_graceful_shutdown`](crate::Serve::with_graceful_shutdown).
///
/// ```no_run
/// # async fn run(listener: tokio::net::TcpListener, mcp: ferry_http::McpService) -> std::io::Result<()> {
/// ferry_http::serve(listener, mcp)
///     .with_graceful_shutdown(ferry_http::shutdown_signal())
///     .await
/// # }
/// ```
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
