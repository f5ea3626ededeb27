//! `subscriptions/listen` through the gateway: a list change of an upstream
//! (ferry-everything's `test_trigger_tool_change` adds a tool) reaches the gateway's
//! listeners, a 2026-07-28 stream and a 2025-11-25 session alike, whichever era the
//! gateway speaks to the upstream; the new tool is then listed through the gateway.

mod support;

use std::time::Duration;

use ferry_client::{Client, EraMode, ServerNotification, Subscription};
use ferry_gateway::{UpstreamConfig, UpstreamEra};
use ferry_http::{HttpConfig, McpService};
use ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_server::Server;
use serde_json::json;
use support::open_gateway;

/// ferry-everything's tool that adds or removes `test_dynamic_tool`.
const TOGGLE: &str = "test_trigger_tool_change";
/// ferry-everything's tool that reports an update of [`WATCHED`].
const UPDATE: &str = "test_trigger_resource_update";

/// ferry-everything over Streamable HTTP in this process, and its server, to see its
/// listeners.
async fn upstream() -> (Server, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let everything = ferry_everything::build(ferry_everything::Options::default()).unwrap();
    let server = everything.server.clone();
    let mcp = McpService::new(everything.server, HttpConfig::default());
    tokio::spawn(async move {
        let _ = ferry_http::serve(listener, mcp).await;
    });
    (server, format!("http://{addr}/mcp"))
}

async fn client(url: &str, era: EraMode) -> Client {
    Client::builder()
        .http(url)
        .era(era)
        .build()
        .await
        .expect("connects to the gateway")
}

/// Calls ferry-everything's `tool` through the gateway until `subscription` hears
/// `expected` (a stream or upstream subscription set up a moment ago may still miss the
/// first change), at most ten times; counts the calls in `calls`.
async fn until_heard(
    client: &Client,
    subscription: &mut Subscription,
    tool: &str,
    expected: ServerNotification,
    calls: &mut u32,
    who: &str,
) {
    loop {
        assert!(
            *calls < 10,
            "{who}: no {expected:?} after {calls} calls of {tool}"
        );
        client
            .call_tool(tool, json!({}))
            .await
            .expect("the upstream changes");
        *calls += 1;
        match tokio::time::timeout(Duration::from_secs(1), subscription.recv()).await {
            Ok(Some(Ok(n))) => {
                assert_eq!(n, expected, "{who}");
                return;
            }
            Ok(other) => panic!("{who}: the subscription ended: {other:?}"),
            Err(_) => {}
        }
    }
}

/// ferry-everything behind a gateway that speaks `era` to it (and its server, to see its
/// listeners), with a 2026-07-28 and a 2025-11-25 client of the gateway.
async fn setup(era: UpstreamEra) -> (Server, Client, Client) {
    let (upstream_server, upstream_url) = upstream().await;
    let base = open_gateway(vec![
        UpstreamConfig::http("ev", &upstream_url).with_era(era),
    ])
    .await;
    let url = format!("{base}/mcp");
    let modern = client(&url, EraMode::Modern).await;
    let legacy = client(&url, EraMode::Legacy).await;
    (upstream_server, modern, legacy)
}

async fn list_changes_reach_the_gateways_listeners(era: UpstreamEra) {
    let (upstream_server, modern, legacy) = setup(era).await;
    let filter = SubscriptionFilter::new().with_tools_list_changed();
    let mut modern_sub = modern.listen(filter.clone()).await.expect("listen (2026)");
    let mut legacy_sub = legacy.listen(filter).await.expect("listen (2025)");
    let before = modern.list_tools().await.expect("tools/list");
    assert!(!before.iter().any(|t| t.name == "test_dynamic_tool"));

    let mut toggles = 0;
    for (sub, who) in [
        (&mut modern_sub, "2026-07-28 client"),
        (&mut legacy_sub, "2025-11-25 client"),
    ] {
        let changed = ServerNotification::ToolsListChanged;
        until_heard(&modern, sub, TOGGLE, changed, &mut toggles, who).await;
    }
    let after = modern.list_tools().await.expect("tools/list again");
    assert_eq!(
        after.iter().any(|t| t.name == "test_dynamic_tool"),
        toggles % 2 == 1,
        "the changed list is what the gateway lists ({toggles} changes)"
    );
    // One subscription upstream, however many clients listen at the gateway.
    assert_eq!(upstream_server.listener_count(), 1, "{era:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_upstreams_list_changes_reach_listeners_of_both_eras() {
    list_changes_reach_the_gateways_listeners(UpstreamEra::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_upstreams_list_changes_reach_listeners_of_both_eras() {
    list_changes_reach_the_gateways_listeners(UpstreamEra::Legacy).await;
}

/// The URI ferry-everything's [`UPDATE`] reports as updated.
const WATCHED: &str = "test://watched-resource";

/// Waits (at most 5 s) until the upstream follows exactly `uris`.
async fn upstream_follows(upstream: &Server, uris: &[&str], era: UpstreamEra) {
    for _ in 0..100 {
        if upstream.subscribed_resources() == uris {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "{era:?}: the upstream follows {:?}, not {uris:?}",
        upstream.subscribed_resources()
    );
}

async fn resource_updates_reach_the_gateways_subscribers(era: UpstreamEra) {
    let (upstream_server, modern, legacy) = setup(era).await;
    upstream_follows(&upstream_server, &[], era).await;

    let filter = SubscriptionFilter::new().with_resource(WATCHED);
    let mut modern_sub = modern.listen(filter.clone()).await.expect("listen (2026)");
    // A 2025-11-25 client subscribes with resources/subscribe on its session.
    let mut legacy_sub = legacy.listen(filter).await.expect("subscribe (2025)");
    upstream_follows(&upstream_server, &[WATCHED], era).await;
    for (sub, who) in [
        (&mut modern_sub, "2026-07-28 client"),
        (&mut legacy_sub, "2025-11-25 client"),
    ] {
        let updated = ServerNotification::ResourceUpdated {
            uri: WATCHED.into(),
        };
        until_heard(&modern, sub, UPDATE, updated, &mut 0, who).await;
    }

    // When no client follows it any more, neither does the gateway upstream.
    drop(modern_sub);
    drop(legacy_sub);
    upstream_follows(&upstream_server, &[], era).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_upstreams_resource_updates_reach_subscribers_of_both_eras() {
    resource_updates_reach_the_gateways_subscribers(UpstreamEra::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_upstreams_resource_updates_reach_subscribers_of_both_eras() {
    resource_updates_reach_the_gateways_subscribers(UpstreamEra::Legacy).await;
}
