//! `subscriptions/listen` on the everything server over HTTP, driven by its trigger tools:
//! each stream gets only the kinds it asked for, tagged with its subscription id, and ends
//! with the completion result when the server shuts down (subscriptions.mdx).

mod support;

use std::time::Duration;

use ferry_everything::Options;
use ferry_http::HttpConfig;
use ferry_testkit::http::{Client, Sse};
use ferry_testkit::rpc::{self, SUBSCRIPTION_ID, call, request};
use ferry_testkit::{eventually, within};
use serde_json::{Value, json};
use support::start;

async fn listen(client: &Client, id: &str, filter: Value) -> Sse {
    let mut sse = client
        .post(&request(
            id,
            "subscriptions/listen",
            json!({"notifications": filter}),
        ))
        .send()
        .await
        .sse();
    let ack = sse.next_message().await.expect("an acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], id);
    assert_eq!(ack["params"]["notifications"], filter);
    sse
}

async fn trigger(client: &Client, tool: &str) {
    let r = client
        .post(&call(tool, tool, json!({}), json!({})))
        .send()
        .await
        .json()
        .await;
    assert_eq!(rpc::result_type(&r), "complete", "{r}");
}

#[tokio::test]
async fn each_listener_hears_only_what_it_asked_for() {
    let config = HttpConfig {
        keep_alive: Duration::from_millis(100),
        ..HttpConfig::default()
    };
    let (run, server) = start(Options::default(), config).await;
    let c = run.client.clone();
    let streams = [
        (
            "tools",
            json!({"toolsListChanged": true}),
            "notifications/tools/list_changed",
        ),
        (
            "prompts",
            json!({"promptsListChanged": true}),
            "notifications/prompts/list_changed",
        ),
        (
            "watched",
            json!({"resourceSubscriptions": ["test://watched-resource"]}),
            "notifications/resources/updated",
        ),
    ];
    let mut open = Vec::new();
    for (id, filter, _) in &streams {
        open.push(listen(&c, id, filter.clone()).await);
    }
    eventually("three listeners", || server.listener_count() == 3).await;
    // Two rounds: when a stream has heard its second notification it has also passed
    // over everything published before it.
    for _ in 0..2 {
        for tool in [
            "test_trigger_tool_change",
            "test_trigger_prompt_change",
            "test_trigger_resource_update",
        ] {
            trigger(&c, tool).await;
        }
    }
    for (sse, (id, _, method)) in open.iter_mut().zip(&streams) {
        for round in 0..2 {
            let note = sse.next_message().await.expect("a notification");
            assert_eq!(note["method"], *method, "{id}, round {round}: {note}");
            assert_eq!(note["params"]["_meta"][SUBSCRIPTION_ID], *id);
            if *id == "watched" {
                assert_eq!(note["params"]["uri"], "test://watched-resource");
            }
        }
    }
    let stopping = tokio::spawn(run.stop());
    for (mut sse, (id, _, _)) in open.into_iter().zip(&streams) {
        let done = sse.next_message().await.expect("the completion result");
        assert_eq!(
            done["id"], *id,
            "nothing else before the completion: {done}"
        );
        assert_eq!(done["result"]["_meta"][SUBSCRIPTION_ID], *id);
        assert!(sse.next_message().await.is_none());
    }
    within("the server to stop", stopping).await.unwrap();
}
