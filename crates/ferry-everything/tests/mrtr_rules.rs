//! The rules of multi round-trip requests on the everything server's flows, over HTTP
//! (mrtr.mdx).

mod support;

use ferry_everything::Options;
use ferry_http::HttpConfig;
use ferry_testkit::http::Client;
use ferry_testkit::rpc::{self, accept, call, form_caps, retry};
use serde_json::{Value, json};
use support::start;

async fn ask(client: &Client, req: &Value) -> Value {
    client.post(req).send().await.json().await
}

/// An `InputRequiredResult` never asks for what this request's capabilities did not
/// declare; the server answers -32021 naming what is missing instead.
#[tokio::test]
async fn input_requests_only_use_declared_capabilities() {
    let (run, _) = start(Options::default(), HttpConfig::default()).await;
    let c = &run.client;
    let cases = [
        (
            "test_input_required_result_elicitation",
            json!({}),
            "elicitation",
        ),
        (
            "test_input_required_result_elicitation",
            json!({"sampling": {}, "roots": {}}),
            "elicitation",
        ),
        (
            "test_input_required_result_elicitation",
            json!({"elicitation": {"url": {}}}),
            "elicitation",
        ),
        (
            "test_input_required_result_sampling",
            form_caps(),
            "sampling",
        ),
        (
            "test_input_required_result_list_roots",
            form_caps(),
            "roots",
        ),
        (
            "test_input_required_result_multiple_inputs",
            json!({"elicitation": {}, "roots": {}}),
            "sampling",
        ),
        ("connect_account", form_caps(), "elicitation"),
        (
            "test_input_required_result_capabilities",
            json!({}),
            "elicitation",
        ),
    ];
    for (i, (tool, caps, missing)) in cases.into_iter().enumerate() {
        let args = if tool == "connect_account" {
            json!({"service": "github"})
        } else {
            json!({})
        };
        let res = c
            .post(&call(i as i64, tool, args, caps.clone()))
            .send()
            .await;
        assert_eq!(res.status, 400, "{tool} with {caps}");
        let r = res.json().await;
        assert_eq!(rpc::error_code(&r), -32021, "{tool} with {caps}: {r}");
        assert!(
            r["error"]["data"]["requiredCapabilities"]
                .get(missing)
                .is_some(),
            "{r}"
        );
    }
    // Asking only for what was declared.
    let r = ask(
        c,
        &call(
            20,
            "test_input_required_result_capabilities",
            json!({}),
            json!({"sampling": {}}),
        ),
    )
    .await;
    let asked: Vec<&String> = r["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(asked, ["greeting"], "{r}");
    assert_eq!(
        r["result"]["inputRequests"]["greeting"]["method"],
        "sampling/createMessage"
    );
    let r = ask(
        c,
        &call(
            21,
            "connect_account",
            json!({"service": "github"}),
            json!({"elicitation": {"url": {}}}),
        ),
    )
    .await;
    let link = &r["result"]["inputRequests"]["connect-1"]["params"];
    assert_eq!(link["mode"], "url", "{r}");
    run.stop().await;
}

/// When answers are missing the server asks again with a new `InputRequiredResult`
/// (only for what is still missing), not an error; answers already given ride in the
/// state.
#[tokio::test]
async fn missing_answers_get_a_new_input_required_result() {
    let (run, _) = start(Options::default(), HttpConfig::default()).await;
    let c = &run.client;
    let first = call(
        1,
        "generate_image",
        json!({"prompt": "a ferry"}),
        form_caps(),
    );
    let r1 = ask(c, &first).await;
    let mut keys: Vec<&String> = r1["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    keys.sort();
    assert_eq!(keys, ["aspect_ratio", "go_ahead"]);
    let ratio = json!({"aspect_ratio": accept(json!({"aspect_ratio": "1:1"}))});
    let r2 = ask(c, &retry(&first, 2, Some(ratio), Some(rpc::state(&r1)))).await;
    assert_eq!(rpc::result_type(&r2), "input_required");
    let keys: Vec<&String> = r2["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        ["go_ahead"],
        "only the missing answer is asked again: {r2}"
    );
    let go = json!({"go_ahead": accept(json!({"go_ahead": true}))});
    let r3 = ask(c, &retry(&first, 3, Some(go), Some(rpc::state(&r2)))).await;
    assert_eq!(r3["result"]["content"][0]["type"], "image", "{r3}");
    assert_eq!(
        r3["result"]["content"][1]["text"],
        "Generated a 1:1 image for \"a ferry\""
    );
    // No answers at all on a retry: asked again.
    let again = ask(c, &retry(&first, 4, None, Some(rpc::state(&r1)))).await;
    assert_eq!(rpc::result_type(&again), "input_required");
    run.stop().await;
}

/// Unexpected extra entries in `inputResponses` are ignored (mrtr.mdx).
#[tokio::test]
async fn extra_answers_are_ignored() {
    let (run, _) = start(Options::default(), HttpConfig::default()).await;
    let c = &run.client;
    let first = call(
        1,
        "test_input_required_result_request_state",
        json!({}),
        form_caps(),
    );
    let r1 = ask(c, &first).await;
    let answers = json!({
        "confirm": accept(json!({"ok": true})),
        "not_asked": accept(json!({"anything": 1})),
        "also_not_asked": {"roots": []}
    });
    let r2 = ask(c, &retry(&first, 2, Some(answers), Some(rpc::state(&r1)))).await;
    assert_eq!(rpc::text(&r2), "state-ok: confirmed=true");
    run.stop().await;
}

/// Malformed `inputResponses` are protocol errors (-32602): not an object, null, an
/// entry that is not an object, an elicitation answer with an unknown action
/// (mrtr.mdx).
#[tokio::test]
async fn malformed_input_responses_are_invalid_params() {
    let (run, _) = start(Options::default(), HttpConfig::default()).await;
    let c = &run.client;
    let first = call(
        1,
        "test_input_required_result_request_state",
        json!({}),
        form_caps(),
    );
    let r1 = ask(c, &first).await;
    let state = rpc::state(&r1).to_owned();
    let malformed = [
        json!(null),
        json!(5),
        json!("accept"),
        json!([{"action": "accept"}]),
        json!({"confirm": 3}),
        json!({"confirm": null}),
        json!({"confirm": {"action": "maybe"}}),
        json!({"confirm": {"action": "accept", "content": "yes"}}),
    ];
    for (i, responses) in malformed.into_iter().enumerate() {
        let r = ask(
            c,
            &retry(&first, 10 + i as i64, Some(responses.clone()), Some(&state)),
        )
        .await;
        assert_eq!(rpc::error_code(&r), -32602, "{responses}: {r}");
    }
    let ok = ask(
        c,
        &retry(
            &first,
            99,
            Some(json!({"confirm": {"action": "decline"}})),
            Some(&state),
        ),
    )
    .await;
    assert_eq!(rpc::text(&ok), "state-ok: not confirmed");
    run.stop().await;
}

/// Prompts ask through MRTR too; neither the interim result nor the retry's result
/// carries caching hints where none are allowed.
#[tokio::test]
async fn prompts_ask_and_interim_results_are_not_cacheable() {
    let (run, _) = start(Options::default(), HttpConfig::default()).await;
    let c = &run.client;
    let first = rpc::request_with(
        1,
        "prompts/get",
        json!({"name": "test_input_required_result_prompt"}),
        form_caps(),
    );
    let r1 = ask(c, &first).await;
    assert_eq!(rpc::result_type(&r1), "input_required");
    for hint in ["ttlMs", "cacheScope"] {
        assert!(r1["result"].get(hint).is_none(), "{r1}");
    }
    let answers = json!({"user_context": accept(json!({"context": "harbour"}))});
    let r2 = ask(c, &retry(&first, 2, Some(answers), Some(rpc::state(&r1)))).await;
    assert_eq!(
        r2["result"]["messages"][0]["content"]["text"],
        "Use this context: harbour"
    );
    run.stop().await;
}
