//! The `Forward` hook: feature methods of advertised features are answered with the
//! hook's raw JSON, given the params without `_meta` (MRTR members included) and the
//! principal; features the server does not advertise stay unknown methods. A hook (or a
//! tool handler) refusing with a typed reason is reported by the transport in its own
//! terms; a plain error with the same code is not.

mod support;

use std::time::Duration;

use ferry_server::protocol::ErrorObject;
use ferry_server::transport::{Handled, Outbound};
use ferry_server::{
    Forward, ForwardError, ForwardFuture, ForwardRequest, Principal, RATE_LIMITED, RequestEnv,
    Server, tool,
};
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
                return Ok(json!({"tools": [tool], "ttlMs": 0, "cacheScope": "private"}).into());
            }
            let seen = json!({
                "method": request.method,
                "params": request.params,
                "principal": request.principal.as_ref().map(|p| p.id().to_owned()),
            });
            // Sent as JSON text, as a gateway relays an upstream's result: the server
            // adds the `resultType` it lacks.
            let text = json!({"content": [{"type": "text", "text": seen.to_string()}]});
            Ok(serde_json::value::RawValue::from_string(text.to_string())
                .unwrap()
                .into())
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
    assert_eq!(out.result()["resultType"], "complete");
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

/// Refuses `limited` for a rate limit, and answers `plain` with a plain error of the same
/// code.
struct Refuses;

impl Forward for Refuses {
    fn forward(&self, request: ForwardRequest) -> ForwardFuture {
        Box::pin(async move {
            match request.params.get("name").and_then(Value::as_str) {
                Some("limited") => Err(ForwardError::rate_limited(
                    "Rate limited: slow down",
                    Duration::from_millis(1_500),
                )),
                Some("plain") => Err(ErrorObject::new(RATE_LIMITED, "not a refusal").into()),
                _ => Ok(json!({"tools": [], "ttlMs": 0, "cacheScope": "private"}).into()),
            }
        })
    }
}

/// The HTTP status and the response of one request. Not through `support::send`: its
/// checks refuse every code in -32000..-32019, which basic/index.mdx leaves to
/// implementations (legacy, "SHOULD NOT"), and the rate-limit code is -32000.
async fn status_and_message(server: &Server, msg: &Value) -> (u16, Value) {
    let bytes = serde_json::to_vec(msg).unwrap();
    let reply = match server.handle(&bytes, RequestEnv::stdio()) {
        Handled::Reply(r) => r,
        Handled::Pending(call) => call.run(Outbound::none()).await.into_reply().unwrap(),
        _ => panic!("expected a response"),
    };
    (
        ferry_http::reply_status(&reply).as_u16(),
        serde_json::from_slice(&reply.body).unwrap(),
    )
}

#[tokio::test]
async fn a_hook_refusing_for_a_rate_limit_is_a_429_and_a_plain_error_is_not() {
    let server = Server::builder("front", "1")
        .enable_tools()
        .forward(Refuses)
        .build()
        .unwrap();
    let (status, limited) =
        status_and_message(&server, &call(1, "limited", json!({}), form_caps())).await;
    assert_eq!(status, 429, "{limited}");
    assert_eq!(limited["id"], 1);
    assert_eq!(limited["error"]["code"], RATE_LIMITED.0);
    assert_eq!(limited["error"]["message"], "Rate limited: slow down");
    assert_eq!(limited["error"]["data"]["retryAfterMs"], 1_500);

    // The code alone decides nothing: without a refusal it is answered in the body.
    let (status, plain) =
        status_and_message(&server, &call(2, "plain", json!({}), form_caps())).await;
    assert_eq!(status, 200, "{plain}");
    assert_eq!(plain["error"]["code"], RATE_LIMITED.0);
}

#[tokio::test]
async fn a_tool_handler_refusing_for_a_rate_limit_is_a_429() {
    let server = Server::builder("s", "1")
        .tool(tool("busy").handler(|| async {
            Err::<String, _>(ferry_server::Error::rate_limited(
                "Rate limited: busy",
                Duration::from_millis(200),
            ))
        }))
        .build()
        .unwrap();
    let (status, out) = status_and_message(&server, &call(1, "busy", json!({}), form_caps())).await;
    assert_eq!(status, 429, "{out}");
    assert_eq!(out["error"]["code"], RATE_LIMITED.0);
    assert_eq!(out["error"]["data"]["retryAfterMs"], 200);
}
