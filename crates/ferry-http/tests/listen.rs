//! `subscriptions/listen` over HTTP: an SSE stream that starts with the acknowledgement,
//! carries only the requested notifications, keeps alive, and ends with the completion
//! result when the server shuts down (subscriptions.mdx).

mod support;

use ferry_server::{Context, tool};
use ferry_testkit::http::{Event, Sse};
use ferry_testkit::rpc::{SUBSCRIPTION_ID, request};
use ferry_testkit::{eventually, within};
use serde_json::{Value, json};
use support::{quick_keep_alive, server, start};

async fn listen(client: &ferry_testkit::http::Client, id: Value, filter: Value) -> Sse {
    let res = client
        .post(&request(
            id,
            "subscriptions/listen",
            json!({"notifications": filter}),
        ))
        .send()
        .await;
    assert_eq!(res.header("x-accel-buffering"), Some("no"));
    res.sse()
}

/// The first event is the acknowledgement, tagged with the listen request's id and
/// naming the subset honoured; then only opted-in kinds arrive, each tagged; keep-alive
/// comments flow; on shutdown the stream ends with the completion result.
#[tokio::test]
async fn listen_streams_acknowledge_filter_keep_alive_and_complete() {
    let (s, _) = server();
    let run = start(s.clone(), quick_keep_alive()).await;
    let mut tools_only = listen(
        &run.client,
        json!("sub-1"),
        json!({"toolsListChanged": true, "promptsListChanged": false}),
    )
    .await;
    let ack = tools_only.next_message().await.expect("acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], "sub-1");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "prompts are not offered by this server"
    );

    let mut watched = listen(
        &run.client,
        json!(2),
        json!({"resourceSubscriptions": ["test://café"]}),
    )
    .await;
    let ack = watched.next_message().await.expect("acknowledgement");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 2);
    eventually("both listeners to be registered", || {
        s.listener_count() >= 2
    })
    .await;

    s.notify_resource_updated("test://other");
    s.notify_resource_updated("test://café/menü");
    s.add_tool(
        tool("added")
            .description("new")
            .json_handler(|_: Context, _: Value| async move { Ok("new") }),
    )
    .unwrap();

    let note = tools_only.next_message().await.expect("tools change");
    assert_eq!(note["method"], "notifications/tools/list_changed");
    assert_eq!(note["params"]["_meta"][SUBSCRIPTION_ID], "sub-1");
    let note = watched.next_message().await.expect("resource update");
    assert_eq!(note["method"], "notifications/resources/updated");
    assert_eq!(
        note["params"]["uri"], "test://café/menü",
        "a sub-resource of the subscribed URI"
    );
    assert_eq!(note["params"]["_meta"][SUBSCRIPTION_ID], 2);

    let mut comments = 0;
    while comments < 2 {
        match tools_only.next_event().await.expect("stream open") {
            Event::Comment(_) => comments += 1,
            Event::Message(m) => panic!("nothing else was requested: {m}"),
        }
    }

    let stopping = tokio::spawn(run.stop());
    for (mut sse, id) in [(tools_only, json!("sub-1")), (watched, json!(2))] {
        let mut last = None;
        while let Some(m) = sse.next_message().await {
            assert!(
                m.get("method").is_none(),
                "no notification after shutdown began: {m}"
            );
            last = Some(m);
        }
        let done = last.expect("a completion result");
        assert_eq!(done["id"], id);
        assert_eq!(done["result"]["resultType"], "complete");
        assert_eq!(done["result"]["_meta"][SUBSCRIPTION_ID], id);
    }
    within("the endpoint to stop", stopping).await.unwrap();
}

/// Closing a listen stream ends the subscription on the server.
#[tokio::test]
async fn closing_a_listen_stream_unsubscribes() {
    let (s, _) = server();
    let run = start(s.clone(), quick_keep_alive()).await;
    let mut sse = listen(&run.client, json!(1), json!({"toolsListChanged": true})).await;
    sse.next_message().await.expect("acknowledgement");
    eventually("the listener to be registered", || s.listener_count() == 1).await;
    sse.close();
    eventually("the listener to go away", || s.listener_count() == 0).await;
    run.stop().await;
}

/// A listen request without a filter object is invalid (-32602), answered as JSON.
#[tokio::test]
async fn listen_needs_a_filter() {
    let (s, _) = server();
    let run = start(s, quick_keep_alive()).await;
    for (i, params) in [
        json!({}),
        json!({"notifications": []}),
        json!({"notifications": {"toolsListChanged": "yes"}}),
    ]
    .into_iter()
    .enumerate()
    {
        let r = run
            .client
            .post(&request(i as i64, "subscriptions/listen", params.clone()))
            .send()
            .await
            .json()
            .await;
        assert_eq!(r["error"]["code"], -32602, "{params}");
    }
    run.stop().await;
}
