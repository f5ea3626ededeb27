//! A real browser for tests: Debian's headless Chromium driven through chromedriver
//! (W3C WebDriver over loopback HTTP).
//!
//! The browser resolves no host names but 127.0.0.1 and `localhost`, so a page that
//! links to the internet (web fonts, say) cannot make a test reach beyond the machine.
//! [`Browser::start`] returns `None` when Chromium or chromedriver is missing, except
//! under `FERRY_CI`, where it fails the test.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// The key of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A headless Chromium session; the browser stops when this is dropped.
pub struct Browser {
    child: Child,
    base: String,
    http: reqwest::Client,
    session: String,
    _profile: tempfile::TempDir,
}

/// Whether Chromium and chromedriver can run here (panics under `FERRY_CI` when not).
pub fn available() -> bool {
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
    if !ok {
        eprintln!("skipped: chromium or chromedriver is not installed");
    }
    ok
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session, or `None` when they are not
    /// installed (outside CI).
    pub async fn start() -> Option<Browser> {
        if !available() {
            return None;
        }
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
        for _ in 0..200 {
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
                         "--no-first-run", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
                         format!("--user-data-dir={}", profile.path().display())]
            }
        }}});
        let created: Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .await
            .expect("new WebDriver session")
            .json()
            .await
            .expect("session JSON");
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {created}"))
            .to_owned();
        let browser = Browser {
            child,
            base,
            http,
            session,
            _profile: profile,
        };
        // A form submission navigates after the click returns: element lookups wait for
        // the next page instead of failing on the one being left.
        browser
            .command(
                reqwest::Method::POST,
                "/timeouts",
                Some(json!({"implicit": 10_000, "pageLoad": 20_000})),
            )
            .await;
        Some(browser)
    }

    /// One WebDriver command of this session; its JSON answer.
    pub async fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
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

    /// Navigates to `url` and waits for the page to load.
    pub async fn open(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", Some(json!({"url": url})))
            .await;
    }

    /// The address of the page shown now.
    pub async fn current_url(&self) -> String {
        let v = self.command(reqwest::Method::GET, "/url", None).await;
        v["value"].as_str().unwrap_or_default().to_owned()
    }

    /// The first element matching `css` (waiting up to 10 s for it), if any.
    pub async fn find(&self, css: &str) -> Option<String> {
        let v = self
            .command(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        v["value"][ELEMENT].as_str().map(str::to_owned)
    }

    fn expect_found(css: &str, found: Option<String>) -> String {
        found.unwrap_or_else(|| panic!("no element matches {css}"))
    }

    /// The visible text of the element matching `css`.
    pub async fn text(&self, css: &str) -> String {
        let id = Self::expect_found(css, self.find(css).await);
        let v = self
            .command(reqwest::Method::GET, &format!("/element/{id}/text"), None)
            .await;
        v["value"].as_str().unwrap_or_default().to_owned()
    }

    /// Types `text` into the element matching `css`.
    pub async fn type_into(&self, css: &str, text: &str) {
        let id = Self::expect_found(css, self.find(css).await);
        self.command(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            Some(json!({"text": text})),
        )
        .await;
    }

    /// Clicks the element matching `css`.
    pub async fn click(&self, css: &str) {
        let id = Self::expect_found(css, self.find(css).await);
        self.command(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            Some(json!({})),
        )
        .await;
    }
}

impl Drop for Browser {
    /// Ends the WebDriver session first, so chromedriver closes Chromium and its helper
    /// processes (killing chromedriver alone leaves them running), then stops chromedriver.
    fn drop(&mut self) {
        let _ = self.end_session();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    /// `DELETE /session/{id}` over a blocking loopback connection (a destructor cannot
    /// await), read to the end of chromedriver's answer.
    fn end_session(&self) -> std::io::Result<()> {
        use std::io::{Read, Write};
        let host = self.base.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(host)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.set_write_timeout(Some(Duration::from_secs(10)))?;
        write!(
            stream,
            "DELETE /session/{} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            self.session
        )?;
        // chromedriver keeps the connection open: read the head, then the body it announces.
        let mut answer = Vec::new();
        let mut chunk = [0u8; 1024];
        loop {
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                return Ok(());
            }
            answer.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&answer);
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if answer.len() >= end + 4 + length {
                    return Ok(());
                }
            }
        }
    }
}
