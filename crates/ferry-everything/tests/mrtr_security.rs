//! `requestState` security end to end over HTTP, with bearer tokens for alice and bob
//! (mrtr.mdx, "Security").
//!
//! A state is sealed, bound to the principal, method, tool and arguments, expires, and is
//! redeemed at most once by single-use tools. Every forgery gets the same -32602 error,
//! so a client learns nothing about why, and the server goes on serving.

mod support;

use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry_everything::Options;
use ferry_http::HttpConfig;
use ferry_state::KeyRing;
use ferry_testkit::http::Client;
use ferry_testkit::rpc::{self, accept, call, form_caps, retry};
use ferry_testkit::{check, serve::Running};
use serde_json::{Value, json};
use support::{ALICE, BOB, key, start, with_keys};

const DELETE: &str = "confirm_delete";
const CONFIRM: &str = "test_input_required_result_request_state";

/// A "yes" to `confirm_delete`'s question.
fn confirm_yes() -> Value {
    json!({"confirm": accept(json!({"confirm": true}))})
}

/// A "yes" to the confirmation of `test_input_required_result_request_state`.
fn ok_yes() -> Value {
    json!({"confirm": accept(json!({"ok": true}))})
}

fn first_round(tool: &str, path: &str) -> Value {
    let args = if tool == DELETE {
        json!({"path": path})
    } else {
        json!({})
    };
    call("first", tool, args, form_caps())
}

/// The first round as `who`: the request and the state it got back.
async fn state_for(client: &Client, tool: &str, path: &str) -> (Value, String) {
    let req = first_round(tool, path);
    let r = client.post(&req).send().await.json().await;
    assert_eq!(rpc::result_type(&r), "input_required", "{r}");
    assert_eq!(
        r["result"]["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    (req, rpc::state(&r).to_owned())
}

/// Posts `req` and returns the response body with its id removed, after checking it.
async fn refused(client: &Client, req: &Value) -> String {
    let res = client.post(req).send().await;
    let status = res.status;
    let body = res.bytes().await;
    let v = check::parse_line(&body);
    check::received(&v, Some("tools/call"));
    assert_eq!(status, 200, "{v}");
    assert_eq!(rpc::error_code(&v), -32602, "{v}");
    let id = format!("\"id\":{},", req["id"]);
    let text = String::from_utf8(body.to_vec()).unwrap();
    assert!(text.contains(&id), "{text}");
    text.replacen(&id, "", 1)
}

/// After a refusal the server still answers correctly.
async fn still_serving(client: &Client, n: usize) {
    let r = client
        .post(&call(
            format!("echo-{n}"),
            "echo",
            json!({"text": n.to_string()}),
            json!({}),
        ))
        .send()
        .await
        .json()
        .await;
    assert_eq!(rpc::text(&r), n.to_string());
}

async fn everything(options: Options) -> Running {
    start(options, HttpConfig::default()).await.0
}

/// The round trip works; every tampered, truncated, empty, oversized, replayed, stolen,
/// anonymous, misplaced or foreign-key state is refused with the very same error, and the
/// genuine state still works afterwards (it was not consumed by the forgeries).
#[tokio::test]
async fn forged_states_are_refused_alike_and_the_real_one_still_works() {
    let run = everything(with_keys(KeyRing::new(key("ka", 1)))).await;
    let alice = run.client.with_token(ALICE);
    let bob = run.client.with_token(BOB);
    let anonymous = run.client.clone();
    let (req, state) = state_for(&alice, DELETE, "notes.txt").await;
    let attempt =
        |n: usize, s: &str| retry(&req, format!("forged-{n}"), Some(confirm_yes()), Some(s));

    let reference = refused(&alice, &attempt(0, "")).await;
    assert!(
        reference.contains("Invalid or expired requestState"),
        "{reference}"
    );
    let mut cases: Vec<(String, Client, Value)> = Vec::new();
    let raw = URL_SAFE_NO_PAD
        .decode(&state)
        .expect("the state is unpadded base64url");
    for i in 0..raw.len() {
        let mut flipped = raw.clone();
        flipped[i] ^= 0xff;
        cases.push((
            format!("byte {i} flipped"),
            alice.clone(),
            attempt(cases.len() + 1, &URL_SAFE_NO_PAD.encode(&flipped)),
        ));
    }
    for cut in [1, 2, 16, state.len() / 2, state.len() - 1] {
        cases.push((
            format!("truncated to {cut}"),
            alice.clone(),
            attempt(cases.len() + 1, &state[..cut]),
        ));
    }
    cases.push((
        "bob presents alice's state".into(),
        bob.clone(),
        attempt(cases.len() + 1, &state),
    ));
    cases.push((
        "presented anonymously".into(),
        anonymous.clone(),
        attempt(cases.len() + 1, &state),
    ));
    let mut other_args = attempt(cases.len() + 1, &state);
    other_args["params"]["arguments"]["path"] = json!("/etc/passwd");
    cases.push(("other arguments".into(), alice.clone(), other_args));
    let mut other_tool = attempt(cases.len() + 1, &state);
    other_tool["params"]["name"] = json!(CONFIRM);
    other_tool["params"]["arguments"] = json!({});
    cases.push(("another tool".into(), alice.clone(), other_tool));
    let foreign = everything(with_keys(KeyRing::new(key("kz", 2)))).await;
    let (_, foreign_state) =
        state_for(&foreign.client.with_token(ALICE), DELETE, "notes.txt").await;
    foreign.stop().await;
    cases.push((
        "sealed under a key not in the ring".into(),
        alice.clone(),
        attempt(cases.len() + 1, &foreign_state),
    ));

    for (n, (what, client, req)) in cases.iter().enumerate() {
        assert_eq!(refused(client, req).await, reference, "{what}");
        still_serving(client, n).await;
    }

    let huge = attempt(9_999, &"A".repeat(1024 * 1024));
    let started = Instant::now();
    assert_eq!(refused(&alice, &huge).await, reference, "a 1 MiB state");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a 1 MiB state took {:?}",
        started.elapsed()
    );

    let done = alice
        .post(&retry(&req, "genuine", Some(confirm_yes()), Some(&state)))
        .send()
        .await
        .json()
        .await;
    assert!(
        rpc::text(&done).starts_with("Deleted notes.txt ("),
        "{done}"
    );
    let replay = retry(&req, "replay", Some(confirm_yes()), Some(&state));
    assert_eq!(
        refused(&alice, &replay).await,
        reference,
        "replayed after redemption"
    );
    still_serving(&alice, 10_000).await;
    run.stop().await;
}

/// A state past its TTL is refused with the same error.
#[tokio::test]
async fn expired_states_are_refused_alike() {
    let ttl = Duration::from_millis(300);
    let run = everything(Options {
        state_ttl: ttl,
        ..with_keys(KeyRing::new(key("ka", 1)))
    })
    .await;
    let alice = run.client.with_token(ALICE);
    let (req, state) = state_for(&alice, CONFIRM, "").await;
    let (_, fresh) = state_for(&alice, CONFIRM, "").await;
    let ok = alice
        .post(&retry(&req, "in-time", Some(ok_yes()), Some(&fresh)))
        .send()
        .await
        .json()
        .await;
    assert_eq!(rpc::text(&ok), "state-ok: confirmed=true");
    let reference = refused(&alice, &retry(&req, "empty", Some(ok_yes()), Some(""))).await;
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    assert_eq!(
        refused(&alice, &retry(&req, "late", Some(ok_yes()), Some(&state))).await,
        reference
    );
    still_serving(&alice, 1).await;
    run.stop().await;
}

/// Key rotation: a state sealed under key A still opens after a restart with the ring
/// "B (primary), A", and is refused by a server that only has B.
#[tokio::test]
async fn states_survive_key_rotation_until_the_old_key_is_retired() {
    let a = everything(with_keys(KeyRing::new(key("ka", 1)))).await;
    let (req, state) = state_for(&a.client.with_token(ALICE), CONFIRM, "").await;
    a.stop().await;

    let rotated = everything(with_keys(
        KeyRing::new(key("kb", 2))
            .with_old_key(key("ka", 1))
            .unwrap(),
    ))
    .await;
    let ok = rotated
        .client
        .with_token(ALICE)
        .post(&retry(&req, "after-rotation", Some(ok_yes()), Some(&state)))
        .send()
        .await
        .json()
        .await;
    assert_eq!(rpc::text(&ok), "state-ok: confirmed=true");
    rotated.stop().await;

    let retired = everything(with_keys(KeyRing::new(key("kb", 2)))).await;
    let alice = retired.client.with_token(ALICE);
    let reference = refused(&alice, &retry(&req, "empty", Some(ok_yes()), Some(""))).await;
    let late = retry(&req, "after-retirement", Some(ok_yes()), Some(&state));
    assert_eq!(refused(&alice, &late).await, reference);
    retired.stop().await;
}
