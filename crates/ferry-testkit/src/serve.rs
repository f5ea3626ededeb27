//! Running an HTTP endpoint on 127.0.0.1 for the length of a test.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

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

/// An axum app served on an ephemeral port of 127.0.0.1 in the background; it stops
/// when dropped, or runs on until the test's runtime ends once [`detached`](Self::detach).
pub struct Background {
    /// `127.0.0.1:PORT`.
    pub addr: SocketAddr,
    /// The endpoint, `http://127.0.0.1:PORT{path}`.
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
}

impl Background {
    /// Binds 127.0.0.1:0 and serves the app `make` builds for that address (for an app
    /// that must know its own URL); [`url`](Self::url) is its `path`.
    pub async fn start(path: &str, make: impl FnOnce(SocketAddr) -> axum::Router) -> Background {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let app = make(addr);
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app.into_make_service())
                .with_graceful_shutdown(async move {
                    // A detached endpoint's sender is dropped unsent: serve on.
                    if stopped.await.is_err() {
                        std::future::pending::<()>().await;
                    }
                })
                .await;
        });
        Background {
            addr,
            url: format!("http://{addr}{path}"),
            stop: Some(stop),
        }
    }

    /// Serves `app`; [`url`](Self::url) is its `path`.
    pub async fn router(app: axum::Router, path: &str) -> Background {
        Self::start(path, |_| app).await
    }

    /// Lets the endpoint serve until the runtime ends; returns its address.
    pub fn detach(mut self) -> SocketAddr {
        drop(self.stop.take());
        self.addr
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}
