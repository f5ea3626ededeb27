//! What the server repeats of a request in an error is bounded: a 1 MiB tool name,
//! method, URI, argument name or header value comes back cut to a few hundred bytes,
//! marked with `…` and its length.

mod support;

use ferry_server::{Server, tool};
use ferry_testkit::rpc::{call, request};
use serde_json::Value;
use serde_json::json;
use support::{Out, http_env, send, send_env};

/// Sends `msg` with conforming headers, after `edit` changes them.
async fn send_with(s: &Server, msg: &Value, edit: impl FnOnce(&mut http::HeaderMap)) -> Out {
    let mut env = http_env(msg);
    edit(env.headers_mut().expect("headers"));
    send_env(s, msg, env).await
}

const MIB: usize = 1 << 20;

fn server() -> Server {
    Server::builder("bounded", "1")
        .tool(
            tool("echo")
                .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}},
                                     "additionalProperties": false}))
                .json_handler(|_: ferry_server::Context, a: serde_json::Value| async move {
                    Ok(a.to_string())
                }),
        )
        .resource_template(ferry_server::resource_template("test://x/{id}", "x").handler(
            |_: ferry_server::Context, r: ferry_server::ResourceRequest| async move {
                Ok(ferry_protocol::resources::TextResourceContents::new(r.uri.clone(), "x"))
            },
        ))
        .build()
        .expect("server builds")
}

/// The whole response is small, and its message shows the cut.
fn assert_small(out: &Out, bytes: usize) {
    let body = out.msg.to_string();
    assert!(body.len() < 1024, "{} bytes: {}", body.len(), &body[..300]);
    assert!(body.contains(&format!("…({bytes} bytes)")), "{body}");
}

#[tokio::test]
async fn a_huge_unknown_tool_name_comes_back_cut() {
    let s = server();
    let name = "t".repeat(MIB);
    let out = send(&s, &call(1, &name, json!({}), json!({}))).await;
    assert_small(&out, MIB);
}

#[tokio::test]
async fn a_huge_method_and_uri_come_back_cut() {
    let s = server();
    let method = "m".repeat(MIB);
    let out = send(&s, &request(1, &method, json!({}))).await;
    assert_eq!(out.code(), -32601, "{}", &out.msg.to_string()[..200]);
    assert_small(&out, MIB);

    let uri = format!("test://{}", "u".repeat(MIB));
    let out = send(&s, &request(2, "resources/read", json!({"uri": uri}))).await;
    assert_small(&out, uri.len());
}

#[tokio::test]
async fn a_huge_argument_name_comes_back_cut() {
    let s = server();
    let key = "k".repeat(MIB);
    let out = send(&s, &call(1, "echo", json!({ key: "x" }), json!({}))).await;
    let body = out.msg.to_string();
    assert!(body.len() < 1024, "{} bytes", body.len());
    assert!(body.contains("…(1048576 bytes)"), "{body}");
}

/// The battery's case: a 1 MiB tool name in the body, `Mcp-Name: echo` in the headers.
#[tokio::test]
async fn a_huge_name_that_does_not_match_its_header_comes_back_cut() {
    let s = server();
    let name = "n".repeat(MIB);
    let msg = call(1, &name, json!({}), json!({}));
    let out = send_with(&s, &msg, |h| {
        h.insert("mcp-name", http::HeaderValue::from_static("echo"));
    })
    .await;
    assert_eq!(out.code(), -32020, "{}", &out.msg.to_string()[..200]);
    assert_small(&out, MIB);

    // And a long header value against a short body.
    let msg = call(2, "echo", json!({}), json!({}));
    let long = "h".repeat(60 * 1024);
    let out = send_with(&s, &msg, |h| {
        h.insert("mcp-name", http::HeaderValue::from_str(&long).unwrap());
    })
    .await;
    assert_eq!(out.code(), -32020);
    assert_small(&out, long.len());
}
