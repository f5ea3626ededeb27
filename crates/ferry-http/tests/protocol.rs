//! The protocol rules as an HTTP client sees them: JSON-RPC error codes with the HTTP
//! statuses the spec requires (basic/index.mdx, transports/streamable-http.mdx).

mod support;

use ferry_http::HttpConfig;
use ferry_testkit::http::Call;
use ferry_testkit::rpc::{self, CLIENT_CAPABILITIES, PROTOCOL_VERSION, VERSION, call, request};
use http::StatusCode;
use serde_json::{Value, json};
use support::{CAFE, Running, server, start};

async fn endpoint() -> Running {
    let (s, _) = server();
    start(s, HttpConfig::default()).await
}

/// Sends and checks the status and JSON-RPC error code.
async fn expect(call: Call, status: u16, code: i64, what: &str) -> Value {
    let res = call.send().await;
    assert_eq!(res.status.as_u16(), status, "{what}");
    let body = res.json().await;
    assert_eq!(rpc::error_code(&body), code, "{what}: {body}");
    body
}

/// Missing `_meta`, protocol version or capabilities: 400 with -32602.
#[tokio::test]
async fn missing_meta_is_400_invalid_params() {
    let run = endpoint().await;
    let c = &run.client;
    let cases = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {PROTOCOL_VERSION: VERSION}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {CLIENT_CAPABILITIES: {}}}}),
    ];
    for msg in cases {
        let post = c.post(&msg).header("mcp-protocol-version", VERSION);
        expect(post, 400, -32602, &msg.to_string()).await;
    }
    run.stop().await;
}

/// An unsupported version: 400 with -32022, `data.supported` and `data.requested`.
#[tokio::test]
async fn unsupported_versions_are_400() {
    let run = endpoint().await;
    let mut msg = request(1, "tools/list", json!({}));
    msg["params"]["_meta"][PROTOCOL_VERSION] = json!("v999.0.0");
    let body = expect(run.client.post(&msg), 400, -32022, "v999").await;
    assert_eq!(body["error"]["data"]["requested"], "v999.0.0");
    assert!(
        body["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(VERSION))
    );
    run.stop().await;
}

/// Header and body disagree: 400 with -32020.
#[tokio::test]
async fn header_mismatches_are_400() {
    let run = endpoint().await;
    let c = &run.client;
    let list = request(1, "tools/list", json!({}));
    expect(
        c.post(&list).header("mcp-protocol-version", "2099-01-01"),
        400,
        -32020,
        "version",
    )
    .await;
    expect(
        c.post(&list).without("mcp-method"),
        400,
        -32020,
        "no Mcp-Method",
    )
    .await;
    expect(
        c.post(&list).header("mcp-method", "prompts/list"),
        400,
        -32020,
        "other Mcp-Method",
    )
    .await;
    let echo = call(2, "echo", json!({"text": "x"}), json!({}));
    expect(
        c.post(&echo).without("mcp-name"),
        400,
        -32020,
        "no Mcp-Name",
    )
    .await;
    expect(
        c.post(&echo).header("mcp-name", "whoami"),
        400,
        -32020,
        "other Mcp-Name",
    )
    .await;
    let prompt = request(3, "prompts/get", json!({"name": "x"}));
    expect(
        c.post(&prompt).without("mcp-name"),
        400,
        -32020,
        "prompts/get without Mcp-Name",
    )
    .await;
    run.stop().await;
}

/// `Mcp-Name` for a non-ASCII resource URI travels Base64-encoded and is decoded before
/// comparing.
#[tokio::test]
async fn mcp_name_is_decoded_from_base64() {
    let run = endpoint().await;
    let c = &run.client;
    let read = request(1, "resources/read", json!({"uri": CAFE}));
    let ok = c.post(&read).send().await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(ok.json().await["result"]["contents"][0]["text"], "menu");
    let raw = c.post(&read).header_bytes("mcp-name", CAFE.as_bytes());
    expect(raw, 400, -32020, "raw UTF-8").await;
    let wrong = c
        .post(&read)
        .header("mcp-name", "=?base64?dGVzdDovL2NhZmU=?=");
    expect(wrong, 400, -32020, "another URI").await;
    run.stop().await;
}

/// `Mcp-Param-*` headers must mirror annotated arguments.
#[tokio::test]
async fn param_headers_are_checked() {
    let run = endpoint().await;
    let c = &run.client;
    let msg = call(
        1,
        "route",
        json!({"region": "eu", "priority": 7}),
        json!({}),
    );
    let ok = c
        .post(&msg)
        .header("mcp-param-region", "eu")
        .header("MCP-PARAM-PRIORITY", "7.0")
        .send()
        .await;
    assert_eq!(
        ok.status,
        StatusCode::OK,
        "header names are case-insensitive, integers numeric"
    );
    ok.json().await;
    expect(
        c.post(&msg).header("mcp-param-region", "eu"),
        400,
        -32020,
        "missing priority",
    )
    .await;
    let wrong = c
        .post(&msg)
        .header("mcp-param-region", "us")
        .header("mcp-param-priority", "7");
    expect(wrong, 400, -32020, "wrong region").await;
    let none = c
        .post(&call(2, "route", json!({"region": null}), json!({})))
        .send()
        .await;
    assert_eq!(
        none.status,
        StatusCode::OK,
        "null and absent arguments need no header"
    );
    none.json().await;
    run.stop().await;
}

/// Removed and unknown methods: 404 with -32601.
#[tokio::test]
async fn unknown_and_removed_methods_are_404() {
    let run = endpoint().await;
    for (i, method) in [
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "initialize",
        "tasks/list",
        "no/such",
    ]
    .into_iter()
    .enumerate()
    {
        expect(
            run.client.post(&request(i as i64, method, json!({}))),
            404,
            -32601,
            method,
        )
        .await;
    }
    run.stop().await;
}

/// An unknown tool is -32602 with 200; invalid arguments are a tool error result with
/// 200.
#[tokio::test]
async fn tool_errors_are_200() {
    let run = endpoint().await;
    expect(
        run.client.post(&call(1, "nope", json!({}), json!({}))),
        200,
        -32602,
        "unknown tool",
    )
    .await;
    let bad = run
        .client
        .post(&call(2, "route", json!({"priority": "high"}), json!({})))
        .header("mcp-param-priority", "high")
        .send()
        .await;
    assert_eq!(bad.status, StatusCode::OK);
    assert_eq!(bad.json().await["result"]["isError"], true);
    run.stop().await;
}

/// A body that is not JSON-RPC: 400 with an error that has no id.
#[tokio::test]
async fn unreadable_bodies_are_400() {
    let run = endpoint().await;
    let msg = request(1, "tools/list", json!({}));
    for body in [&b"{not json"[..], b"[]", b"42", b""] {
        let res = run.client.post(&msg).body(body.to_vec()).send().await;
        assert_eq!(
            res.status,
            StatusCode::BAD_REQUEST,
            "{:?}",
            String::from_utf8_lossy(body)
        );
        let v = res.json().await;
        assert!(v.get("error").is_some(), "{v}");
    }
    let res = run
        .client
        .post(&msg)
        .header("content-type", "text/plain")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    run.stop().await;
}
