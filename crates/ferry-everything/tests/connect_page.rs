//! `connect_account` end to end in a real browser: the URL-mode page is bound to the user
//! who started the connection, a changed link does not open, and the tool's retry
//! completes only after the page's form was submitted (otherwise it asks again).
//!
//! Drives Debian's headless Chromium through chromedriver (WebDriver). Without them the
//! test is skipped, except in CI (`FERRY_CI` set), where it fails.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ferry_everything::app::{PageState, StaticTokens, router};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use serde_json::{Value, json};

const ALICE: &str = "alice-token-3f9a";
const BOB: &str = "bob-token-77c1";

fn browser_available() -> bool {
    let ok = ["chromium", "chromedriver"].iter().all(|b| {
        Command::new(b)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !ok && std::env::var_os("FERRY_CI").is_some() {
        panic!(
            "chromium and chromedriver are required in CI (apt-get install chromium chromium-driver)"
        );
    }
    ok
}

async fn start_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let everything = build(Options {
        public_url: format!("http://{addr}"),
        ..Options::default()
    })
    .expect("server builds");
    let tokens = StaticTokens::new().with("alice", ALICE).with("bob", BOB);
    let state = Arc::new(PageState {
        connections: everything.connections.clone(),
        links: everything.links.clone(),
        tokens,
    });
    let app = router(everything.server, HttpConfig::default(), state, true)
        .expect("the application builds");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app.into_make_service()).await;
    });
    addr
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

struct Driver {
    child: Child,
    base: String,
    http: reqwest::Client,
    session: String,
    _profile: tempfile::TempDir,
}

impl Driver {
    async fn start() -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        for _ in 0..100 {
            if http.get(format!("{base}/status")).send().await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let profile = tempfile::tempdir().expect("profile dir");
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-background-networking", "--disable-component-update", "--disable-sync",
                         "--no-first-run", format!("--user-data-dir={}", profile.path().display())]
            }
        }}});
        let created: Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .await
            .expect("new session")
            .json()
            .await
            .expect("session JSON");
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {created}"))
            .to_owned();
        let driver = Driver {
            child,
            base,
            http,
            session,
            _profile: profile,
        };
        // A form submission navigates after the click returns: element lookups wait for the
        // next page instead of failing on the one being left.
        driver
            .cmd(
                reqwest::Method::POST,
                "/timeouts",
                Some(json!({"implicit": 10_000})),
            )
            .await;
        driver
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{}", self.base, self.session, path);
        let mut req = self.http.request(method, url);
        if let Some(b) = body {
            req = req.json(&b);
        }
        req.send()
            .await
            .expect("WebDriver")
            .json()
            .await
            .expect("WebDriver JSON")
    }

    async fn open(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", Some(json!({"url": url})))
            .await;
    }

    async fn find(&self, css: &str) -> Option<String> {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        v["value"]["element-6066-11e4-a52e-4f735466cecf"]
            .as_str()
            .map(str::to_owned)
    }

    async fn text(&self, css: &str) -> String {
        let id = self
            .find(css)
            .await
            .unwrap_or_else(|| panic!("no element {css}"));
        let v = self
            .cmd(reqwest::Method::GET, &format!("/element/{id}/text"), None)
            .await;
        v["value"].as_str().unwrap_or_default().to_owned()
    }

    async fn submit_as(&self, token: &str) -> String {
        let field = self.find("#token").await.expect("token field");
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{field}/value"),
            Some(json!({"text": token})),
        )
        .await;
        let button = self.find("#connect").await.expect("connect button");
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{button}/click"),
            Some(json!({})),
        )
        .await;
        self.text("#result").await
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_account_page_is_bound_to_its_user() {
    if !browser_available() {
        eprintln!("skipped: chromium or chromedriver not installed");
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

    let driver = Driver::start().await;

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
    let as_bob = driver.submit_as(BOB).await;
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
    let as_alice = driver.submit_as(ALICE).await;
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
