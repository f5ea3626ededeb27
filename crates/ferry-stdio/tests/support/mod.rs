//! A test server with the probe tools of `ferry_testkit::probe` (they block, hang and
//! count), and an in-process stdio connection to it over in-memory pipes.

#![allow(dead_code)]

use ferry_server::Server;
use ferry_stdio::{StdioConfig, serve};
use ferry_testkit::lines::JsonLines;
pub use ferry_testkit::probe::Probe;
use ferry_testkit::probe::{count, echo, gate, hang, release};
use tokio::io::DuplexStream;
use tokio::task::JoinHandle;

/// The size of `count`'s answer, so a few responses fill the pipes.
pub const COUNT_TEXT_LEN: usize = 1000;

/// A server with `echo`, `gate` (waits until `release`), `release`, `hang` (never ends)
/// and `count` (counts its calls, answers `COUNT_TEXT_LEN` bytes).
pub fn server() -> (Server, Probe) {
    let probe = Probe::new();
    let server = Server::builder("stdio-test", "1")
        .tool(echo())
        .tool(gate(&probe))
        .tool(release(&probe))
        .tool(hang(&probe, false))
        .tool(count(&probe, COUNT_TEXT_LEN))
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
