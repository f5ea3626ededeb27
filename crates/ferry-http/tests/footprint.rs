//! What one request costs the allocator: the endpoint's future is boxed once per request
//! (as `tower::Service` requires), and that box stays small enough for the allocator's
//! per-thread cache (glibc serves blocks up to 1,032 bytes from it; larger ones take
//! its slow path on every request).

mod support;

use bytes::Bytes;
use ferry_http::{HttpConfig, McpService};
use ferry_testkit::http::mcp_headers;
use ferry_testkit::rpc::call;
use http_body_util::{BodyExt, Full};
use serde_json::json;
use support::server;
use tower_service::Service;

#[tokio::test]
async fn the_boxed_future_of_a_request_stays_small() {
    let (s, _) = server();
    let mut service = McpService::new(s, HttpConfig::default());
    let message = call(3, "echo", json!({ "text": "hello" }), json!({}));
    let mut req = http::Request::post("/mcp")
        .body(Full::new(Bytes::from(
            serde_json::to_vec(&message).unwrap(),
        )))
        .unwrap();
    *req.headers_mut() = mcp_headers(&message);
    req.headers_mut()
        .insert("host", "127.0.0.1".parse().unwrap());

    let fut = service.call(req);
    let size = std::mem::size_of_val(fut.as_ref().get_ref());
    assert!(size <= 1024, "the request's future takes {size} bytes");

    // And it is the real future: it answers the call.
    let response = fut.await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let reply: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "hello", "{reply}");
}
