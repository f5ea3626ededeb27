//! A test server with tools that block, hang and count, and an in-process stdio
//! connection to it over in-memory pipes.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ferry_server::{Context, Server, tool};
use ferry_stdio::{StdioConfig, serve};
use ferry_testkit::lines::JsonLines;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::DuplexStream;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the test server's tools let a test observe and control.
#[derive(Clone)]
pub struct Probe {
    /// Set when `hang` starts.
    pub started: Arc<AtomicBool>,
    /// Set when `hang`'s future is dropped.
    pub dropped: Arc<AtomicBool>,
    /// How many times `count` ran.
    pub counted: Arc<AtomicUsize>,
    gate: Arc<watch::Sender<bool>>,
}

/// Sets a flag when dropped: proves a handler's future was dropped.
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

/// The size of `count`'s answer, so a few responses fill the pipes.
pub const COUNT_TEXT_LEN: usize = 1000;

/// A server with `echo`, `gate` (waits until `release`), `release`, `hang` (never ends)
/// and `count` (counts its calls, answers `COUNT_TEXT_LEN` bytes).
pub fn server() -> (Server, Probe) {
    let (gate, _) = watch::channel(false);
    let probe = Probe {
        started: Arc::default(),
        dropped: Arc::default(),
        counted: Arc::default(),
        gate: Arc::new(gate),
    };
    let (g1, g2) = (probe.gate.clone(), probe.gate.clone());
    let (started, dropped, counted) = (
        probe.started.clone(),
        probe.dropped.clone(),
        probe.counted.clone(),
    );
    let server =
        Server::builder("stdio-test", "1")
            .tool(
                tool("echo")
                    .description("Echoes")
                    .handler(|_: Context, a: Text| async move { Ok(a.text) }),
            )
            .tool(tool("gate").description("Waits for release").json_handler(
                move |_: Context, _: Value| {
                    let mut open = g1.subscribe();
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
            .tool(tool("hang").description("Never ends").json_handler(
                move |_: Context, _: Value| {
                    let (started, dropped) = (started.clone(), dropped.clone());
                    async move {
                        let _guard = DropFlag(dropped);
                        started.store(true, Ordering::SeqCst);
                        std::future::pending::<()>().await;
                        Ok("unreachable")
                    }
                },
            ))
            .tool(
                tool("count")
                    .description("Counts")
                    .json_handler(move |_: Context, _: Value| {
                        counted.fetch_add(1, Ordering::SeqCst);
                        async move { Ok("c".repeat(COUNT_TEXT_LEN)) }
                    }),
            )
            .build()
            .expect("server builds");
    (server, probe)
}

/// The client end of an in-process stdio connection.
pub type Conn = JsonLines<DuplexStream, DuplexStream>;

/// Serves `server` over in-memory pipes of `pipe` bytes each way.
pub fn connect(
    server: Server,
    config: StdioConfig,
    pipe: usize,
) -> (Conn, JoinHandle<std::io::Result<()>>) {
    let (client_in, server_out) = tokio::io::duplex(pipe);
    let (server_in, client_out) = tokio::io::duplex(pipe);
    let task = tokio::spawn(serve(server, server_in, server_out, config));
    (JsonLines::new(client_in, client_out), task)
}
