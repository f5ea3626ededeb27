//! Two gateway instances sharing keys and one real `redis-server` (of the test's own, on
//! loopback): a state redeemed on one is refused on the other, and with Redis down a
//! retry is refused (fail closed) rather than let through; a principal's rate limit is
//! one budget across both, and with Redis down requests are refused (503), not admitted.
//! ferry-everything is the upstream.
//!
//! Skipped when redis-server is missing, except under `FERRY_CI`, where that fails.

mod support;

use ferry_gateway::{Gateway, GatewayConfig, UpstreamConfig};
use ferry_state::KeyRing;
use ferry_testkit::services::{RedisServer, available};
use serde_json::{Value, json};
use support::{everything_upstream, post, post_response, serve};

const KEYS: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

async fn instance(upstream: &str, redis: &str) -> String {
    let mut config = GatewayConfig::default();
    config.upstreams = vec![UpstreamConfig::http("ev", upstream)];
    config.redis = Some(redis.to_owned());
    let gateway = Gateway::builder(config)
        .state_keys(KeyRing::parse(KEYS).unwrap())
        .build()
        .await
        .expect("the gateway starts on Redis");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    url
}

fn elicit() -> Value {
    json!({"name": "test_elicitation", "arguments": {"message": "Who are you?"}})
}

fn retry(first: &Value) -> Value {
    let mut params = elicit();
    let key = first["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");
    params["inputResponses"] = json!({ key: {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}} });
    params["requestState"] = first["result"]["requestState"].clone();
    params
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_redeemed_on_one_instance_is_refused_on_another_and_redis_down_fails_closed() {
    if !available("redis-server") {
        return;
    }
    let mut redis = RedisServer::start();
    let upstream = everything_upstream().await;
    let a = instance(&upstream, &redis.url()).await;
    let b = instance(&upstream, &redis.url()).await;

    let first = post(&a, None, 1, "tools/call", elicit()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let again = retry(&first);
    let done = post(&a, None, 2, "tools/call", again.clone()).await;
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("action=accept"), "{done}");
    let replay = post(&b, None, 3, "tools/call", again).await;
    assert_eq!(
        replay["error"]["message"], "Invalid or expired requestState",
        "{replay}"
    );

    // A state issued by one instance is redeemed on the other once.
    let first = post(&a, None, 4, "tools/call", elicit()).await;
    let done = post(&b, None, 5, "tools/call", retry(&first)).await;
    assert!(done["result"]["content"].is_array(), "{done}");

    // Redis down: the retry is refused, never let through unchecked.
    let first = post(&a, None, 6, "tools/call", elicit()).await;
    redis.stop();
    let refused = post(&a, None, 7, "tools/call", retry(&first)).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("could not be checked for replay")
    );
}

/// An instance in front of `upstream` on `redis`, with principals alice and bob and a
/// rate limit of two requests a second each; returns its MCP URL.
async fn limited_instance(upstream: &str, redis: &str) -> String {
    let mut config = GatewayConfig::default();
    config.upstreams = vec![UpstreamConfig::http("ev", upstream)];
    config.redis = Some(redis.to_owned());
    config.dev_tokens = vec!["alice=alice-token".into(), "bob=bob-token".into()];
    config.rate_limit = 2;
    format!("{}/mcp", serve(config).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_is_one_budget_across_instances_and_redis_down_refuses() {
    if !available("redis-server") {
        return;
    }
    let mut redis = RedisServer::start();
    let upstream = everything_upstream().await;
    let a = limited_instance(&upstream, &redis.url()).await;
    let b = limited_instance(&upstream, &redis.url()).await;
    let echo = || json!({"name": "echo", "arguments": {"text": "hi"}});

    // Alice alternates between the instances: the third within the second is refused,
    // though neither instance saw more than two of hers.
    for (id, url) in [(1, &a), (2, &b)] {
        let (status, _, r) =
            post_response(url, Some("alice-token"), id, "tools/call", echo()).await;
        assert_eq!(status, 200, "{r}");
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    }
    let (status, headers, r) =
        post_response(&a, Some("alice-token"), 3, "tools/call", echo()).await;
    assert_eq!(status, http::StatusCode::TOO_MANY_REQUESTS, "{r}");
    assert_eq!(headers[http::header::RETRY_AFTER], "1");
    assert_eq!(r["error"]["code"], ferry_gateway::RATE_LIMITED.0, "{r}");
    assert!(
        r["error"]["data"]["retryAfterMs"].as_u64().unwrap() >= 1,
        "{r}"
    );
    let (status, _, r) = post_response(&b, Some("alice-token"), 4, "tools/call", echo()).await;
    assert_eq!(status, http::StatusCode::TOO_MANY_REQUESTS, "{r}");

    // Bob has a budget of his own.
    let (status, _, r) = post_response(&b, Some("bob-token"), 5, "tools/call", echo()).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");

    // Redis down: the limit cannot be checked, and requests are refused, not admitted.
    redis.stop();
    for (id, url) in [(6, &a), (7, &b)] {
        let (status, headers, r) =
            post_response(url, Some("bob-token"), id, "tools/call", echo()).await;
        assert_eq!(status, http::StatusCode::SERVICE_UNAVAILABLE, "{r}");
        assert!(headers.get(http::header::RETRY_AFTER).is_none());
        assert_eq!(r["error"]["code"], -32603, "{r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("rate limit could not be checked"), "{r}");
        assert!(r.get("result").is_none(), "{r}");
    }
}
