//! Progress through the gateway: a client that asks for progress on a call (a
//! `progressToken`) gets the upstream's `notifications/progress` for it, relayed on its
//! own stream under its own token, whichever era the gateway speaks to the upstream
//! (a call to a 2025-11-25 upstream goes through the bridge, which holds it between
//! rounds).

mod support;

use std::sync::{Arc, Mutex};

use ferry_client::{CallOptions, Client, EraMode};
use ferry_gateway::{UpstreamConfig, UpstreamEra};
use serde_json::json;
use support::{everything_upstream, open_gateway};

async fn progress_is_relayed(era: UpstreamEra, client_era: EraMode) {
    let upstream = everything_upstream().await;
    let base = open_gateway(vec![UpstreamConfig::http("ev", &upstream).with_era(era)]).await;
    let client = Client::builder()
        .http(format!("{base}/mcp"))
        .era(client_era)
        .build()
        .await
        .expect("connects to the gateway");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let opts = CallOptions::new().on_progress(move |p| log.lock().unwrap().push(p.progress));
    let result = client
        .call_tool_with("test_tool_with_progress", json!({}), &opts)
        .await
        .expect("the call completes through the gateway");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        *seen.lock().unwrap(),
        [0.0, 50.0, 100.0],
        "{era:?} upstream, {client_era:?} client"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_upstreams_progress_reaches_a_2026_client() {
    progress_is_relayed(UpstreamEra::Modern, EraMode::Modern).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_upstreams_progress_reaches_a_2025_client() {
    progress_is_relayed(UpstreamEra::Modern, EraMode::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_upstreams_progress_reaches_a_2026_client_through_the_bridge() {
    progress_is_relayed(UpstreamEra::Legacy, EraMode::Modern).await;
}
