//! Liveness and readiness: `GET /healthz` and `GET /readyz` on the server's own listener,
//! and the readiness probe an application plugs in.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode};

use crate::body::McpBody;

/// How long a readiness probe may take; one that takes longer counts as not ready.
pub const READINESS_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether the application behind a server is ready for traffic: asked on every
/// `GET /readyz` while the server is not draining (see [`Serve::readiness`]).
///
/// Any `Fn() -> impl Future<Output = bool>` is one; implement the trait by hand for a
/// type that holds its own connections, e.g. a Redis backend reporting whether it
/// reaches its server. A probe that takes longer than [`READINESS_TIMEOUT`] counts as
/// not ready.
///
/// [`Serve::readiness`]: crate::Serve::readiness
pub trait ReadinessProbe: Send + Sync + 'static {
    /// Whether the application is ready now.
    fn ready(&self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>>;
}

impl<F, Fut> ReadinessProbe for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
{
    fn ready(&self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(self())
    }
}

/// Where the health endpoints are served, and what readiness depends on.
#[derive(Clone)]
pub(super) struct Health {
    pub live_path: Option<Arc<str>>,
    pub ready_path: Option<Arc<str>>,
    pub probe: Option<Arc<dyn ReadinessProbe>>,
    /// Set when the shutdown signal has come: readiness is false from then on.
    pub draining: Arc<AtomicBool>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            live_path: Some("/healthz".into()),
            ready_path: Some("/readyz".into()),
            probe: None,
            draining: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// Which health endpoint a request is for.
pub(super) enum Check {
    Live,
    Ready,
}

impl Health {
    /// The health endpoint `path` names, if any.
    pub fn check_for(&self, path: &str) -> Option<Check> {
        if self.live_path.as_deref() == Some(path) {
            Some(Check::Live)
        } else if self.ready_path.as_deref() == Some(path) {
            Some(Check::Ready)
        } else {
            None
        }
    }

    /// From now on readiness is false.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Answers a health check: `200` or `503` with a one-word JSON status, `405` for a
    /// method other than `GET` or `HEAD`. Never cached.
    pub fn answer<B>(
        &self,
        check: Check,
        req: &Request<B>,
    ) -> impl Future<Output = Response<McpBody>> + Send + 'static + use<B> {
        let allowed = matches!(*req.method(), Method::GET | Method::HEAD);
        let head = *req.method() == Method::HEAD;
        let draining = self.draining.clone();
        let probe = self.probe.clone();
        async move {
            if !allowed {
                let mut r = Response::new(McpBody::empty());
                *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
                r.headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
                return r;
            }
            let (ok, word) = match check {
                Check::Live => (true, "alive"),
                Check::Ready if draining.load(Ordering::SeqCst) => (false, "draining"),
                Check::Ready => match probe {
                    None => (true, "ready"),
                    Some(probe) => {
                        match tokio::time::timeout(READINESS_TIMEOUT, probe.ready()).await {
                            Ok(true) => (true, "ready"),
                            Ok(false) => (false, "not ready"),
                            Err(_) => (false, "readiness probe timed out"),
                        }
                    }
                },
            };
            let body = if head {
                McpBody::empty()
            } else {
                McpBody::full(Bytes::from(format!("{{\"status\":\"{word}\"}}")))
            };
            let mut r = Response::new(body);
            *r.status_mut() = if ok {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            let h = r.headers_mut();
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
    }
}
