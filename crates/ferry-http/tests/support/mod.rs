//! A test server on 127.0.0.1 behind the real transport (`ferry_http::serve`, or an
//! axum app), with the probe tools of `ferry_testkit::probe` (they stream, block, hang
//! and report who called them) and a few of its own.

#![allow(dead_code)]

pub mod wire;

use std::time::Duration;

use std::future::IntoFuture;

use ferry_http::{HttpConfig, McpService};
use ferry_protocol::resources::TextResourceContents;
use ferry_server::{Context, ResourceRequest, Server, resource, tool};
pub use ferry_testkit::probe::Probe;
use ferry_testkit::probe::{echo, gate, hang, release, whoami};
pub use ferry_testkit::serve::Running;
use serde_json::{Value, json};

/// The path the endpoint is served at.
pub const PATH: &str = "/mcp";
/// A resource URI that needs the Base64 sentinel in `Mcp-Name`.
pub const CAFE: &str = "test://café/menü";

/// A server with `echo`, `progress` (three progress notifications), `hang` (reports
/// progress once if asked, then never ends), `gate`/`release`, `whoami`, `route`
/// (`x-mcp-header` arguments) and a resource with a non-ASCII URI.
pub fn server() -> (Server, Probe) {
    let probe = Probe::new();
    let server = Server::builder("http-test", "1")
        .tool(echo())
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
        .tool(hang(&probe, true))
        .tool(gate(&probe))
        .tool(release(&probe))
        .tool(whoami())
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
