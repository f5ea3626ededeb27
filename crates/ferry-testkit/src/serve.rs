//! Running an HTTP endpoint on 127.0.0.1 for the length of a test.

use std::future::Future;
use std::io;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::http::Client;
use crate::within;

/// An endpoint serving on an ephemeral port of 127.0.0.1.
pub struct Running {
    /// A client of the endpoint.
    pub client: Client,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<io::Result<()>>,
}

impl Running {
    /// Binds 127.0.0.1:0 and runs `serve(listener, stop)`, where `stop` completes when the
    /// test calls [`Running::stop`]. The client targets `path`.
    pub async fn spawn<F, Fut>(path: &str, serve: F) -> Running
    where
        F: FnOnce(TcpListener, oneshot::Receiver<()>) -> Fut,
        Fut: Future<Output = io::Result<()>> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let (tx, rx) = oneshot::channel();
        Running {
            client: Client::new(addr, path),
            shutdown: Some(tx),
            task: tokio::spawn(serve(listener, rx)),
        }
    }

    /// Serves an axum app with graceful shutdown; `on_stop` runs when the stop begins
    /// (e.g. `server.shutdown()`, as a binary does on SIGTERM).
    pub async fn router(
        router: axum::Router,
        path: &str,
        on_stop: impl FnOnce() + Send + 'static,
    ) -> Running {
        Running::spawn(path, |listener, stop| async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stop.await;
                    on_stop();
                })
                .await
        })
        .await
    }

    /// Stops the endpoint and waits until it stopped.
    pub async fn stop(mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        within("the endpoint to stop", &mut self.task)
            .await
            .expect("the serving task")
            .expect("serving");
    }
}
