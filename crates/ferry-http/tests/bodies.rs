//! Request bodies that arrive in pieces (as on HTTP/2, or through any `http_body::Body`
//! a host app hands the endpoint) are read whole, within the size limit.

mod support;

use bytes::Bytes;
use ferry_http::{HttpConfig, McpService};
use ferry_testkit::http::mcp_headers;
use ferry_testkit::rpc::call;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use serde_json::{Value, json};
use support::server;

/// A body whose frames come from a list.
type Pieces =
    StreamBody<futures::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>>>;

/// A body of `text`, cut into `pieces` frames.
fn in_pieces(text: &[u8], pieces: usize) -> Pieces {
    let size = text.len().div_ceil(pieces);
    let frames: Vec<_> = text
        .chunks(size)
        .map(|c| Ok(Frame::data(Bytes::copy_from_slice(c))))
        .collect();
    StreamBody::new(futures::stream::iter(frames))
}

async fn post(service: &McpService, message: &Value, pieces: usize) -> (u16, Value) {
    let text = serde_json::to_vec(message).expect("json");
    let mut req = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .body(in_pieces(&text, pieces))
        .expect("request");
    *req.headers_mut() = {
        let mut h = mcp_headers(message);
        h.insert("host", "127.0.0.1".parse().expect("host"));
        h
    };
    let response = service.call_http(req).await;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (status, serde_json::from_slice(&body).expect("JSON body"))
}

#[tokio::test]
async fn bodies_in_several_frames_are_read_whole() {
    let (s, _) = server();
    let service = McpService::new(s, HttpConfig::default());
    let text = "x".repeat(300);
    let message = call(7, "echo", json!({ "text": text }), json!({}));
    for pieces in [1, 2, 5] {
        let (status, reply) = post(&service, &message, pieces).await;
        assert_eq!(status, 200, "{pieces} pieces: {reply}");
        assert_eq!(reply["id"], 7, "{reply}");
        assert_eq!(
            reply["result"]["content"][0]["text"], text,
            "{pieces} pieces"
        );
    }
}

#[tokio::test]
async fn bodies_over_the_limit_get_413_whether_whole_or_in_pieces() {
    let (s, _) = server();
    let config = HttpConfig::builder()
        .max_body_bytes(256)
        .build()
        .expect("a valid config");
    let service = McpService::new(s, config);
    let message = call(8, "echo", json!({ "text": "y".repeat(400) }), json!({}));
    for pieces in [1, 3] {
        let (status, reply) = post(&service, &message, pieces).await;
        assert_eq!(status, 413, "{pieces} pieces: {reply}");
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
    }
}
