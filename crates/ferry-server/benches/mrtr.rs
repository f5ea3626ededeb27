//! The cost of a multi round-trip `tools/call` against a one-round call, in-process
//! (no transport): parsing, dispatch, the handler, sealing and opening `requestState`.

use criterion::{Criterion, criterion_group, criterion_main};
use ferry_server::{Context, Elicitation, Form, Outbound, RequestEnv, Server, tool};
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

fn server() -> Server {
    Server::builder("bench", "1.0.0")
        .tool(tool("echo").handler(|_: Context, a: Args| async move { Ok(a.text) }))
        .tool(tool("confirm").handler(|ctx: Context, a: Args| async move {
            Ok(match ctx.elicit::<Confirm>("Sure?").key("confirm").await? {
                Elicitation::Accept(Confirm { confirm: true }) => a.text,
                _ => "no".to_owned(),
            })
        }))
        .build()
        .expect("server builds")
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

async fn call(server: &Server, body: &[u8]) -> Value {
    let reply = match server.handle(body, RequestEnv::stdio()) {
        ferry_server::Handled::Pending(call) => call
            .run(Outbound::none())
            .await
            .into_reply()
            .expect("not cancelled"),
        ferry_server::Handled::Reply(r) => r,
        _ => unreachable!("a request"),
    };
    serde_json::from_slice(&reply.body).expect("JSON reply")
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = server();
    let echo = request(1, "echo", json!({}));
    let first = request(2, "confirm", json!({}));
    let mut group = c.benchmark_group("tools_call");
    group.bench_function("one_round", |b| {
        b.iter(|| rt.block_on(call(&server, &echo)));
    });
    group.bench_function("two_rounds", |b| {
        b.iter(|| {
            rt.block_on(async {
                let r1 = call(&server, &first).await;
                let state = r1["result"]["requestState"].clone();
                let retry = request(
                    3,
                    "confirm",
                    json!({
                        "requestState": state,
                        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}
                    }),
                );
                call(&server, &retry).await
            })
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
