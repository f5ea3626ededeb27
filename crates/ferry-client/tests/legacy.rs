//! The client in the legacy era (2025-11-25) against ferry-everything, which serves
//! legacy sessions too: `initialize`, server requests answered through the same input
//! handler, progress, and notifications on the session.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{everything, text};
use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::{CallOptions, Client, ClientBuilder, Era, EraMode, FnHandler};
use serde_json::json;

fn confirm_and_pick() -> FnHandler {
    FnHandler::new().on_form(|form| {
        let field = form.fields().next().expect("a field").name.to_owned();
        let value = match field.as_str() {
            "aspect_ratio" => ElicitValue::String("9:16".into()),
            _ => ElicitValue::Bool(true),
        };
        assert!(
            form.context.key.is_none(),
            "legacy questions have no MRTR key"
        );
        async move { ElicitResult::accept(BTreeMap::from([(field, value)])) }
    })
}

async fn exercise(builder: ClientBuilder) -> Client {
    let client = builder
        .era(EraMode::Legacy)
        .input_handler(confirm_and_pick())
        .build()
        .await
        .expect("initialize");
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(
        client.server_info().expect("server info").name,
        "ferry-everything"
    );
    let d = client.discover().await.expect("discover from initialize");
    assert_eq!(d.supported_versions, ["2025-11-25"]);

    let tools = client.list_tools().await.expect("tools");
    assert!(tools.iter().any(|t| t.name == "confirm_delete"));
    let r = client
        .call_tool("echo", json!({"text": "legacy"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "legacy");
    let r = client
        .call_tool("confirm_delete", json!({"path": "notes.txt"}))
        .await
        .expect("confirm_delete");
    assert!(text(&r).starts_with("Deleted notes.txt ("), "{}", text(&r));
    let r = client
        .call_tool("generate_image", json!({"prompt": "sky"}))
        .await
        .expect("generate_image");
    assert!(text(&r).contains("9:16"), "{}", text(&r));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let opts = CallOptions::new().on_progress(move |p| log.lock().unwrap().push(p.progress));
    client
        .call_tool_with("test_tool_with_progress", json!({}), &opts)
        .await
        .expect("progress");
    assert_eq!(*seen.lock().unwrap(), [0.0, 50.0, 100.0]);

    let r = client
        .read_resource("test://static-text")
        .await
        .expect("read");
    assert_eq!(r.contents.len(), 1);
    client
}

#[tokio::test]
async fn legacy_over_http() {
    let server = everything(100).await;
    let started = std::time::Instant::now();
    let client = exercise(Client::builder().http(&server.url)).await;
    assert_eq!(
        server.count("server/discover"),
        0,
        "no probe when told the era"
    );
    client.close().await.expect("close");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// A session has one subscription per resource: two of the client's subscriptions to the
/// same resource share it, and dropping one leaves the other following it.
#[tokio::test]
async fn two_subscriptions_to_one_resource_on_a_session_share_it() {
    use ferry_client::ServerNotification;
    use ferry_client::ferry_protocol::subscriptions::SubscriptionFilter;

    const WATCHED: &str = "test://watched-resource";
    let server = everything(100).await;
    let client = Client::builder()
        .http(&server.url)
        .era(EraMode::Legacy)
        .build()
        .await
        .expect("initialize");
    let filter = SubscriptionFilter::new().with_resource(WATCHED);
    let first = client.listen(filter.clone()).await.expect("subscribe");
    let mut second = client.listen(filter).await.expect("subscribe again");
    drop(first);
    // Let the dropped subscription's clean-up run before the update.
    tokio::time::sleep(Duration::from_millis(200)).await;
    client
        .call_tool("test_trigger_resource_update", json!({}))
        .await
        .expect("the server updates the resource");
    let heard = tokio::time::timeout(Duration::from_secs(5), second.recv())
        .await
        .expect("the remaining subscription still hears the update")
        .expect("open")
        .expect("ok");
    assert_eq!(
        heard,
        ServerNotification::ResourceUpdated {
            uri: WATCHED.into()
        }
    );
    client.close().await.expect("close");
}
