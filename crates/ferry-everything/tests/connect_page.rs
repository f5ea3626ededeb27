//! `connect_account` end to end in a real browser: the URL-mode page is bound to the user
//! who started the connection, a changed link does not open, and the tool's retry
//! completes only after the page's form was submitted (otherwise it asks again).
//!
//! Drives Debian's headless Chromium through chromedriver (`ferry_testkit::browser`).
//! Without them the test is skipped, except in CI (`FERRY_CI` set), where it fails.

use std::net::SocketAddr;

use ferry_everything::app::{StaticTokens, app};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use ferry_testkit::browser::Browser;
use ferry_testkit::serve::Background;
use serde_json::{Value, json};

const ALICE: &str = "alice-token-3f9a";
const BOB: &str = "bob-token-77c1";

async fn start_server() -> SocketAddr {
    Background::start("/mcp", |addr| {
        let everything = build(Options {
            public_url: format!("http://{addr}"),
            ..Options::default()
        })
        .expect("server builds");
        let tokens = StaticTokens::new().with("alice", ALICE).with("bob", BOB);
        app(everything, HttpConfig::default(), tokens, true).expect("the application builds")
    })
    .await
    .detach()
}

/// One `tools/call connect_account` round as `token`, returning the result.
async fn call(http: &reqwest::Client, addr: SocketAddr, token: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": "connect_account",
        "arguments": {"service": "github"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}}
        }
    });
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let resp = http
        .post(format!("http://{addr}/mcp"))
        .bearer_auth(token)
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "connect_account")
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .expect("POST");
    resp.json::<Value>().await.expect("JSON")
}

fn url_of(result: &Value) -> (String, String) {
    let requests = result["inputRequests"].as_object().expect("input requests");
    let (key, req) = requests.iter().next().expect("one request");
    assert_eq!(req["params"]["mode"], "url");
    (
        key.clone(),
        req["params"]["url"].as_str().expect("url").to_owned(),
    )
}

/// Signs in on the connect page as `token` and returns what the page says.
async fn submit_as(browser: &Browser, token: &str) -> String {
    browser.type_into("#token", token).await;
    browser.click("#connect").await;
    browser.text("#result").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_account_page_is_bound_to_its_user() {
    if !ferry_testkit::browser::available() {
        return;
    }
    let addr = start_server().await;
    let http = reqwest::Client::new();

    // Round 1: alice asks to connect; the server answers with a URL-mode elicitation.
    let r1 = call(&http, addr, ALICE, json!({})).await;
    let r1 = &r1["result"];
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    let (key1, url) = url_of(r1);
    assert!(
        url.starts_with(&format!("http://{addr}/connect?t=")),
        "{url}"
    );

    // Accepting (opening) without finishing the page does not complete: it asks again.
    let r2 = call(
        &http,
        addr,
        ALICE,
        json!({"requestState": r1["requestState"], "inputResponses": {key1.clone(): {"action": "accept"}}}),
    )
    .await;
    let r2 = &r2["result"];
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    let (key2, url2) = url_of(r2);
    assert_ne!(key1, key2);
    assert!(
        url2.starts_with(&format!("http://{addr}/connect?t=")),
        "{url2}"
    );

    // Someone else cannot present alice's state.
    let stolen = call(
        &http,
        addr,
        BOB,
        json!({"requestState": r2["requestState"], "inputResponses": {key2.clone(): {"action": "accept"}}}),
    )
    .await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");

    let Some(driver) = Browser::start().await else {
        return;
    };

    // A changed link does not open.
    let mut tampered = url.clone();
    let last = tampered.pop().expect("non-empty");
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    driver.open(&tampered).await;
    assert!(
        driver.text("#result").await.contains("invalid"),
        "tampered link must not open"
    );

    // Bob, signed in on the page, is refused: the request belongs to alice.
    driver.open(&url).await;
    let as_bob = submit_as(&driver, BOB).await;
    assert!(as_bob.contains("someone else"), "{as_bob}");

    // Still not connected: another retry asks again.
    let r3 = call(
        &http,
        addr,
        ALICE,
        json!({"requestState": r2["requestState"], "inputResponses": {key2.clone(): {"action": "accept"}}}),
    )
    .await;
    let r3 = &r3["result"];
    assert_eq!(r3["resultType"], "input_required", "{r3}");
    let (key3, _) = url_of(r3);

    // Alice finishes the page.
    driver.open(&url).await;
    let as_alice = submit_as(&driver, ALICE).await;
    assert!(as_alice.starts_with("Connected"), "{as_alice}");

    // Now the retry completes.
    let done = call(
        &http,
        addr,
        ALICE,
        json!({"requestState": r3["requestState"], "inputResponses": {key3: {"action": "accept"}}}),
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Connected github");
}
