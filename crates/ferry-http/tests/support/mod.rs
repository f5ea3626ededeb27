//! A test server on 127.0.0.1 behind the real transport (`ferry_http::serve`, or an
//! axum app), with tools that stream, block, hang and report who
//! called them.

#![allow(dead_code)]

pub mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use std::future::IntoFuture;

use ferry_http::{HttpConfig, McpService};
use ferry_protocol::resources::TextResourceContents;
use ferry_server::{Context, ResourceRequest, Server, resource, tool};
pub use ferry_testkit::serve::Running;
use serde_json::{Value, json};
use tokio::sync::watch;

/// The path the endpoint is served at.
pub const PATH: &str = "/mcp";
/// A resource URI that needs the Base64 sentinel in `Mcp-Name`.
pub const CAFE: &str = "test://café/menü";

/// What the tools let a test observe and control.
#[derive(Clone)]
pub struct Probe {
    /// Set when `hang` starts.
    pub started: Arc<AtomicBool>,
    /// Set when `hang`'s future is dropped.
    pub dropped: Arc<AtomicBool>,
    /// Set when a `gate` call starts waiting.
    pub waiting: Arc<AtomicBool>,
    gate: Arc<watch::Sender<bool>>,
}

impl Probe {
    /// Whether `hang` started.
    pub fn started(&self) -> bool {
        self.started.load(Ordering::SeqCst)
    }

    /// Whether `hang`'s future was dropped.
    pub fn dropped(&self) -> bool {
        self.dropped.load(Ordering::SeqCst)
    }

    /// Whether a `gate` call is waiting.
    pub fn waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Lets `gate` calls through, as `release` does.
    pub fn open_gate(&self) {
        self.gate.send_replace(true);
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A server with `echo`, `progress` (three progress notifications), `hang` (reports
/// progress once if asked, then never ends), `gate`/`release`, `whoami`, `route`
/// (`x-mcp-header` arguments) and a resource with a non-ASCII URI.
pub fn server() -> (Server, Probe) {
    let (gate, _) = watch::channel(false);
    let probe = Probe {
        started: Arc::default(),
        dropped: Arc::default(),
        waiting: Arc::default(),
        gate: Arc::new(gate),
    };
    let waiting = probe.waiting.clone();
    let (started, dropped) = (probe.started.clone(), probe.dropped.clone());
    let (g1, g2) = (probe.gate.clone(), probe.gate.clone());
    let server =
        Server::builder("http-test", "1")
            .tool(
                tool("echo")
                    .description("Echoes")
                    .handler(|_: Context, a: Text| async move { Ok(a.text) }),
            )
            .tool(
                tool("progress")
                    .description("Streams progress")
                    .json_handler(|ctx: Context, _: Value| async move {
                        for p in [1.0, 2.0, 3.0] {
                            ctx.progress(p, Some(3.0), None).await;
                        }
                        Ok("progress done")
                    }),
            )
            .tool(tool("hang").description("Never ends").json_handler(
                move |ctx: Context, _: Value| {
                    let (started, dropped) = (started.clone(), dropped.clone());
                    async move {
                        let _guard = DropFlag(dropped);
                        ctx.progress(1.0, None, Some("started")).await;
                        started.store(true, Ordering::SeqCst);
                        std::future::pending::<()>().await;
                        Ok("unreachable")
                    }
                },
            ))
            .tool(tool("gate").description("Waits for release").json_handler(
                move |_: Context, _: Value| {
                    let mut open = g1.subscribe();
                    waiting.store(true, Ordering::SeqCst);
                    async move {
                        let _ = open.wait_for(|o| *o).await;
                        Ok("passed")
                    }
                },
            ))
            .tool(tool("release").description("Opens the gate").json_handler(
                move |_: Context, _: Value| {
                    g2.send_replace(true);
                    async move { Ok("released") }
                },
            ))
            .tool(
                tool("whoami")
                    .description("Names the principal")
                    .json_handler(|ctx: Context, _: Value| async move {
                        Ok(ctx
                            .principal()
                            .map_or("anonymous".to_owned(), |p| p.id().to_owned()))
                    }),
            )
            .tool(
                tool("route")
                    .description("Annotated arguments")
                    .input_schema(json!({"type": "object", "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "priority": {"type": "integer", "x-mcp-header": "Priority"}
                    }}))
                    .json_handler(|_: Context, a: Value| async move { Ok(a.to_string()) }),
            )
            .resource(
                resource(CAFE, "cafe").handler(|_: Context, r: ResourceRequest| async move {
                    Ok(TextResourceContents::new(r.uri.clone(), "menu"))
                }),
            )
            .build()
            .expect("server builds");
    (server, probe)
}

/// Serves `server` at [`PATH`] with `ferry_http::serve`, with no drain grace period (the
/// tests that stop it need no load balancer to notice).
pub async fn start(server: Server, config: HttpConfig) -> Running {
    let config = config
        .to_builder()
        .drain_grace(Duration::ZERO)
        .build()
        .expect("a valid config");
    let service = McpService::new(server, config);
    Running::spawn(PATH, |listener, stop| {
        ferry_http::serve(listener, service)
            .with_graceful_shutdown(async {
                let _ = stop.await;
            })
            .into_future()
    })
    .await
}

/// Serves an axum app; `server.shutdown()` runs when it stops.
pub async fn start_router(server: Server, router: axum::Router, path: &str) -> Running {
    Running::router(router, path, move || server.shutdown()).await
}

/// A config with short keep-alives, for tests that wait for them.
pub fn quick_keep_alive() -> HttpConfig {
    HttpConfig::builder()
        .sse_keep_alive(Duration::from_millis(50))
        .build()
        .expect("a valid config")
}

/// The default config without a drain grace period.
pub fn no_grace() -> HttpConfig {
    HttpConfig::builder()
        .drain_grace(Duration::ZERO)
        .build()
        .expect("a valid config")
}
