//! Servers for the integration tests: ferry-everything in-process over HTTP (127.0.0.1
//! only). The tests against the `ferry-everything` binary over stdio live with that
//! binary, in ferry-everything's `tests/client_stdio.rs`.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use ferry_client::{Client, EraCache};
use ferry_everything::app::{StaticTokens, app};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use ferry_testkit::serve::Background;

/// A server running in this process; stops when dropped.
pub struct TestServer {
    /// The MCP endpoint.
    pub url: String,
    /// The `Mcp-Method` header (or `-` when absent) of every POST, in order.
    pub methods: Arc<Mutex<Vec<String>>>,
    _served: Background,
}

impl TestServer {
    /// How many POSTs carried `Mcp-Method: method`.
    pub fn count(&self, method: &str) -> usize {
        self.methods
            .lock()
            .unwrap()
            .iter()
            .filter(|m| *m == method)
            .count()
    }

    /// A client for this server with its own era cache.
    pub async fn client(&self) -> Client {
        Client::builder()
            .http(&self.url)
            .era_cache(Arc::new(EraCache::new()))
            // These exercise plain MRTR rounds; calls that become tasks are covered by
            // ferry-everything's tasks_client tests.
            .tasks(false)
            .build()
            .await
            .expect("connect")
    }
}

/// Serves `app` at 127.0.0.1 on a free port, recording the methods of POSTs.
pub async fn serve(app: Router) -> TestServer {
    let methods = Arc::new(Mutex::new(Vec::new()));
    let seen = methods.clone();
    let app = app.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| {
            let seen = seen.clone();
            async move {
                if req.method() == axum::http::Method::POST {
                    let m = req
                        .headers()
                        .get("mcp-method")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-")
                        .to_owned();
                    seen.lock().unwrap().push(m);
                }
                let r: Response = next.run(req).await;
                r
            }
        },
    ));
    let served = Background::router(app, "/mcp").await;
    TestServer {
        url: served.url.clone(),
        methods,
        _served: served,
    }
}

/// ferry-everything over HTTP, with `page_size` items per list page.
pub async fn everything(page_size: usize) -> TestServer {
    let e = build(Options {
        page_size,
        ..Options::default()
    })
    .expect("build ferry-everything");
    serve(
        app(e, HttpConfig::default(), StaticTokens::new(), false).expect("the application builds"),
    )
    .await
}

/// A plain ferry-server served over HTTP at `/mcp`.
pub async fn custom(server: ferry_server::Server) -> TestServer {
    let app = Router::new().route_service(
        "/mcp",
        ferry_http::McpService::new(server, HttpConfig::default()),
    );
    serve(app).await
}

#[allow(unused_imports)]
pub use ferry_testkit::content::text;
