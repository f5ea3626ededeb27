//! Edge policy against a real upstream that requires its own credential: the client's
//! `Authorization` stays at the gateway, the upstream sees the gateway's bearer token from
//! the environment variable the configuration names, and no secret shows in `Debug`.

mod support;

use ferry_auth::{AuthLayer, ResourceMetadata, StaticTokens};
use ferry_gateway::{Gateway, GatewayConfig, UpstreamConfig};
use ferry_http::{HttpConfig, McpService};
use ferry_server::{Context, Server, tool};
use serde_json::json;
use support::{accept_all, everything_upstream, metrics, post, post_response, serve, text};

/// The `Retry-After` of a response, in seconds; fails without one.
fn retry_after(headers: &http::HeaderMap) -> u64 {
    headers
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("a Retry-After in whole seconds: {headers:?}"))
}

/// An upstream on 127.0.0.1 that accepts only `svc-secret` (as principal `svc`) and
/// whose `whoami` tool names the principal it sees.
async fn guarded_upstream() -> String {
    let server = Server::builder("guarded", "1")
        .tool(tool("whoami").handler(|ctx: Context| async move {
            Ok(ctx
                .principal()
                .map(|p| p.id().to_owned())
                .unwrap_or_default())
        }))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let metadata = ResourceMetadata::new(&format!("http://{addr}/mcp")).unwrap();
    let layer = AuthLayer::builder(metadata, StaticTokens::new().with("svc", "svc-secret"))
        .build()
        .unwrap();
    let mcp = McpService::new(server, HttpConfig::default());
    tokio::spawn(async move {
        let _ = ferry_http::serve(listener, mcp).layer(layer).await;
    });
    format!("http://{addr}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_sees_the_gateways_credential_never_the_clients() {
    let upstream = guarded_upstream().await;
    let mut config = GatewayConfig::default();
    config.upstreams = vec![UpstreamConfig::http("guarded", &upstream).with_deny(["nothing"])];
    config.dev_tokens = vec!["alice=alice-token".into()];
    let gateway = Gateway::builder(config)
        .bearer_token("guarded", "svc-secret")
        .build()
        .await
        .expect("starts");
    let shown = format!("{gateway:?}");
    assert!(
        !shown.contains("svc-secret") && !shown.contains("alice-token"),
        "{shown}"
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(gateway.serve(listener, std::future::pending()));

    let call = json!({"name": "whoami", "arguments": {}});
    let r = post(&url, Some("alice-token"), 1, "tools/call", call).await;
    assert_eq!(r["result"]["content"][0]["text"], "svc", "{r}");

    // The client's token means nothing upstream: sent there directly it is refused.
    let resp = reqwest::Client::new()
        .post(&upstream)
        .bearer_auth("alice-token")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn a_missing_credential_variable_stops_the_gateway_from_starting() {
    let mut config = GatewayConfig::default();
    config.upstreams = vec![
        UpstreamConfig::http("guarded", "http://127.0.0.1:9/mcp")
            .with_bearer_env("FERRY_GATEWAY_TEST_UNSET_VARIABLE"),
    ];
    let err = Gateway::builder(config).build().await.unwrap_err();
    assert!(
        err.to_string()
            .contains("FERRY_GATEWAY_TEST_UNSET_VARIABLE (its credential) is not set"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_principal_is_rate_limited_on_its_own() {
    let upstream = guarded_upstream().await;
    let mut config = GatewayConfig::default();
    config.upstreams = vec![UpstreamConfig::http("guarded", &upstream)];
    config.dev_tokens = vec!["alice=alice-token".into(), "bob=bob-token".into()];
    config.rate_limit = 2;
    let gateway = Gateway::builder(config)
        .bearer_token("guarded", "svc-secret")
        .build()
        .await
        .expect("starts");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{base}/mcp");
    tokio::spawn(gateway.serve(listener, std::future::pending()));

    let call = json!({"name": "whoami", "arguments": {}});
    for id in 1..=2 {
        let r = post(&url, Some("alice-token"), id, "tools/call", call.clone()).await;
        assert_eq!(r["result"]["content"][0]["text"], "svc", "{r}");
    }
    let (status, headers, r) =
        post_response(&url, Some("alice-token"), 3, "tools/call", call.clone()).await;
    assert_eq!(status, http::StatusCode::TOO_MANY_REQUESTS, "{r}");
    // Two a second: the next is admitted within half a second, said as 1 (rounded up).
    assert_eq!(retry_after(&headers), 1);
    assert_eq!(r["id"], 3, "{r}");
    assert_eq!(r["error"]["code"], ferry_gateway::RATE_LIMITED.0, "{r}");
    assert!(r["error"]["data"]["retryAfterMs"].as_u64().unwrap() >= 1);
    let r = post(&url, Some("bob-token"), 4, "tools/call", call).await;
    assert_eq!(r["result"]["content"][0]["text"], "svc", "{r}");
    let metrics = metrics(&base).await;
    assert!(
        metrics.contains("ferry_gateway_rate_limited_total 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_calls_of_a_tool_are_rate_limited_per_principal_and_retries_are_not() {
    let upstream = everything_upstream().await;
    let mut config = GatewayConfig::default();
    config.upstreams = vec![UpstreamConfig::http("ev", &upstream)];
    config.dev_tokens = vec!["alice=alice-token".into(), "bob=bob-token".into()];
    config.tool_rate_limit = 1;
    let url = format!("{}/mcp", serve(config).await);
    let call = json!({"name": "confirm_delete", "arguments": {"path": "notes.txt"}});

    let first = post(&url, Some("alice-token"), 1, "tools/call", call.clone()).await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{first}");
    // The retry continues the call: not counted.
    let mut retry = call.clone();
    retry["inputResponses"] = accept_all(first);
    retry["requestState"] = first["requestState"].clone();
    let done = post(&url, Some("alice-token"), 2, "tools/call", retry).await;
    assert!(
        text(&done["result"]).starts_with("Deleted notes.txt"),
        "{done}"
    );

    let (status, headers, again) =
        post_response(&url, Some("alice-token"), 3, "tools/call", call.clone()).await;
    assert_eq!(status, http::StatusCode::TOO_MANY_REQUESTS, "{again}");
    assert!(retry_after(&headers) >= 1);
    assert_eq!(
        again["error"]["code"],
        ferry_gateway::RATE_LIMITED.0,
        "{again}"
    );
    let message = again["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("calls a second of confirm_delete"),
        "{again}"
    );
    assert!(again["error"]["data"]["retryAfterMs"].as_u64().unwrap() >= 1);

    let echo = json!({"name": "echo", "arguments": {"text": "hi"}});
    let other = post(&url, Some("alice-token"), 4, "tools/call", echo).await;
    assert_eq!(text(&other["result"]), "hi", "{other}");
    let bobs = post(&url, Some("bob-token"), 5, "tools/call", call).await;
    assert_eq!(bobs["result"]["resultType"], "input_required", "{bobs}");
    let metrics = metrics(url.trim_end_matches("/mcp")).await;
    assert!(
        metrics.contains("ferry_gateway_rate_limited_total 1"),
        "{metrics}"
    );
}
