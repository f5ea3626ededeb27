//! Runs in-process `tools/call`s in a loop, for profilers: one-round calls of an echo tool,
//! or two-round calls of a tool that asks for a confirmation (MRTR, sealed state).
//!
//! ```sh
//! cargo build --release -p ferry-server --example profile_calls
//! valgrind --tool=callgrind target/release/examples/profile_calls one 20000
//! valgrind --tool=callgrind target/release/examples/profile_calls two 20000
//! ```
//! Instruction counts are repeatable whatever else the machine is doing; divide by the
//! iteration count for a per-call figure.

use ferry_server::{Context, Elicitation, Form, Handled, Outbound, RequestEnv, Server, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Args {
    text: String,
}

#[derive(Deserialize, Form)]
struct Confirm {
    confirm: bool,
}

fn request(id: u64, name: &str, extra: Value) -> Vec<u8> {
    let mut params = json!({
        "name": name,
        "arguments": {"text": "hello"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
    });
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
    )
    .expect("serializes")
}

async fn call(server: &Server, body: &[u8]) -> bytes::Bytes {
    match server.handle(body, RequestEnv::stdio()) {
        Handled::Pending(call) => call
            .run(Outbound::none())
            .await
            .into_reply()
            .map(|r| r.body)
            .unwrap_or_default(),
        Handled::Reply(r) => r.body,
        _ => bytes::Bytes::new(),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "one".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let server = Server::builder("profile", "1.0.0")
        .tool(tool("echo").handler(|_: Context, a: Args| async move { Ok(a.text) }))
        .tool(tool("confirm").handler(|ctx: Context, a: Args| async move {
            Ok(match ctx.elicit::<Confirm>("Sure?").key("confirm").await? {
                Elicitation::Accept(Confirm { confirm: true }) => a.text,
                _ => "no".to_owned(),
            })
        }))
        .build()
        .expect("server builds");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let echo = request(1, "echo", json!({}));
    let first = request(2, "confirm", json!({}));
    let mut total = 0usize;
    rt.block_on(async {
        for _ in 0..n {
            if mode == "two" {
                let r1: Value = serde_json::from_slice(&call(&server, &first).await).expect("JSON");
                let retry = request(
                    3,
                    "confirm",
                    json!({
                        "requestState": r1["result"]["requestState"],
                        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}
                    }),
                );
                total += call(&server, &retry).await.len();
            } else {
                total += call(&server, &echo).await.len();
            }
        }
    });
    println!("{mode}: {n} calls, {total} response bytes");
}
