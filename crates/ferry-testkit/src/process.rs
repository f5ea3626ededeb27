//! Starting peers in other processes and waiting until they listen.

use std::time::{Duration, Instant};

use tokio::io::AsyncBufReadExt;
use tokio::process::Child;

use crate::within_for;

/// A loopback port nothing listens on right now (the system picks it).
pub fn ephemeral_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Waits until something accepts connections on 127.0.0.1:`port`, failing the test
/// with `what` after `limit`.
pub async fn wait_for_port(port: u16, what: &str, limit: Duration) {
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < limit,
            "{what} did not start in {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads the first line `child` prints on its (piped) stdout, as a peer announcing the
/// port it bound, and waits until that port accepts connections. Fails the test with
/// `what` after `limit`.
pub async fn announced_port(child: &mut Child, what: &str, limit: Duration) -> u16 {
    let stdout = child.stdout.take().expect("the peer's stdout is piped");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = within_for(limit, what, lines.next_line())
        .await
        .expect("read the peer's stdout")
        .unwrap_or_else(|| panic!("{what} exited before printing its port"));
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{what} printed {line:?}, not a port"));
    wait_for_port(port, what, limit).await;
    port
}
