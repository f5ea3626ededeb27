//! Over HTTP, what an error repeats of the request is bounded: the battery's 1 MiB tool
//! name sent with `Mcp-Name: echo` gets a `-32020` of a few hundred bytes.

mod support;

use ferry_http::HttpConfig;
use ferry_testkit::rpc::call;
use serde_json::{Value, json};
use support::{PATH, server, start};

#[tokio::test]
async fn a_huge_tool_name_with_a_short_mcp_name_gets_a_small_error() {
    let (s, _) = server();
    let run = start(s, HttpConfig::default()).await;
    let name = "n".repeat(1 << 20);
    let msg = call(1, &name, json!({}), json!({}));
    let res = reqwest::Client::new()
        .post(format!("http://{}{PATH}", run.client.addr()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", ferry_testkit::rpc::VERSION)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .json(&msg)
        .send()
        .await
        .expect("a response");
    assert_eq!(res.status(), 400);
    let body = res.bytes().await.expect("a body");
    assert!(body.len() < 1024, "{} bytes", body.len());
    let body: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(body["error"]["code"], -32020, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("…(1048576 bytes)"), "{message}");
    run.stop().await;
}
