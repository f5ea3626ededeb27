//! A handler that panics, over stdio: its call is answered `-32603` and the connection
//! goes on serving, for a 2026-07-28 client and for a 2025-11-25 session (`initialize`).

mod support;

use ferry_server::Server;
use ferry_stdio::StdioConfig;
use ferry_testkit::probe::{assert_panicked, fine, panicking};
use ferry_testkit::rpc::{self, call};
use ferry_testkit::within;
use serde_json::{Value, json};
use support::connect;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

const PIPE: usize = 64 * 1024;

fn server() -> Server {
    Server::builder("stdio-panics", "1")
        .tool(fine())
        .tool(panicking("boom"))
        .build()
        .expect("server builds")
}

/// A 2025-11-25 request: no `_meta` of the new revision.
fn legacy_call(id: i64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

#[tokio::test]
async fn a_panicking_handler_fails_its_call_and_the_connection_goes_on() {
    let (mut c, task) = connect(server(), StdioConfig::default(), PIPE);
    for id in 0..3 {
        let r = c.ask(&call(id, "boom", json!({}), json!({}))).await;
        assert_panicked(&r, "boom");
        let r = c.ask(&call(100 + id, "ok", json!({}), json!({}))).await;
        assert_eq!(rpc::text(&r), "fine", "{r}");
    }
    c.close_input().await;
    within("serve to return", task).await.unwrap().unwrap();
}

/// Raw lines both ways: the test kit's client checks messages against 2026-07-28, and
/// these are 2025-11-25's.
struct RawLines {
    reader: tokio::io::Lines<BufReader<DuplexStream>>,
    writer: DuplexStream,
}

impl RawLines {
    async fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).await.unwrap();
    }

    async fn ask(&mut self, request: &Value) -> Value {
        self.send(request).await;
        let line = within("a response", self.reader.next_line())
            .await
            .unwrap()
            .expect("a line");
        let r: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(r["id"], request["id"], "{r}");
        r
    }
}

#[tokio::test]
async fn a_panicking_handler_on_a_2025_11_25_session_fails_its_call_only() {
    let (client_in, server_out) = tokio::io::duplex(PIPE);
    let (server_in, client_out) = tokio::io::duplex(PIPE);
    let task = tokio::spawn(ferry_stdio::serve(
        server(),
        server_in,
        server_out,
        StdioConfig::default(),
    ));
    let mut c = RawLines {
        reader: BufReader::new(client_in).lines(),
        writer: client_out,
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    let r = c.ask(&init).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    c.send(&rpc::notification("notifications/initialized", json!({})))
        .await;
    for id in 1..4 {
        let r = c.ask(&legacy_call(id, "boom")).await;
        assert_panicked(&r, "boom");
        let r = c.ask(&legacy_call(100 + id, "ok")).await;
        assert_eq!(rpc::text(&r), "fine", "{r}");
    }
    drop(c);
    within("serve to return", task).await.unwrap().unwrap();
}
