//! The `Forward` hook: feature methods of advertised features are answered with the
//! hook's raw JSON, given the params without `_meta` (MRTR members included) and the
//! principal; features the server does not advertise stay unknown methods.

mod support;

use ferry_server::{Forward, ForwardFuture, ForwardRequest, Principal, RequestEnv, Server};
use ferry_testkit::rpc::{call, form_caps, request_with};
use serde_json::{Value, json};
use support::{send, send_env};

/// Answers with what it was given, as a tool result.
struct Echo;

impl Forward for Echo {
    fn forward(&self, request: ForwardRequest) -> ForwardFuture {
        Box::pin(async move {
            if request.method == "tools/list" {
                let tool = json!({"name": "remote", "inputSchema": {"type": "object"}});
                return Ok(json!({"tools": [tool], "ttlMs": 0, "cacheScope": "private"}));
            }
            let seen = json!({
                "method": request.method,
                "params": request.params,
                "principal": request.principal.as_ref().map(|p| p.id().to_owned()),
            });
            Ok(json!({"content": [{"type": "text", "text": seen.to_string()}]}))
        })
    }
}

fn seen(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn advertised_feature_methods_go_to_the_hook_with_their_raw_params() {
    let server = Server::builder("front", "1")
        .enable_tools()
        .forward(Echo)
        .build()
        .unwrap();
    let list = send(
        &server,
        &request_with(1, "tools/list", json!({}), form_caps()),
    )
    .await;
    assert_eq!(list.result()["tools"][0]["name"], "remote");

    let mut retry = call(2, "remote", json!({"path": "/tmp/x"}), form_caps());
    retry["params"]["inputResponses"] = json!({"q": {"action": "accept", "content": {}}});
    retry["params"]["requestState"] = json!("opaque");
    let env = RequestEnv::stdio().with_principal(Some(Principal::new("alice")));
    let out = send_env(&server, &retry, env).await;
    let seen = seen(out.result());
    assert_eq!(seen["method"], "tools/call");
    assert_eq!(seen["principal"], "alice");
    assert_eq!(
        seen["params"],
        json!({
            "name": "remote",
            "arguments": {"path": "/tmp/x"},
            "inputResponses": {"q": {"action": "accept", "content": {}}},
            "requestState": "opaque",
        })
    );

    // Prompts are not advertised: the hook never sees them.
    let prompt = request_with(3, "prompts/get", json!({"name": "p"}), form_caps());
    assert_eq!(send(&server, &prompt).await.code(), -32601);
    // Discovery stays the server's own.
    let discover = request_with(4, "server/discover", json!({}), form_caps());
    let d = send(&server, &discover).await;
    assert!(d.result()["capabilities"]["tools"].is_object());
}
