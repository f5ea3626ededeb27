//! Raw HTTP: one crafted request, one bounded, timed answer.
//!
//! The audit sends exactly the bytes and headers each check needs, so it does not use a
//! regular MCP client. Every exchange has a deadline and a cap on the bytes read; an SSE
//! response is read only until the JSON-RPC response to the request arrives.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use url::Url;

use crate::config::{AuditConfig, AuditError, Token};

/// Whose credentials a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    /// User A (`--token`), or no token when none was given.
    A,
    /// User B (`--token-b`).
    B,
    /// A token no server issued.
    Bogus,
}

/// One request to send.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub(crate) method: reqwest::Method,
    pub(crate) body: Vec<u8>,
    /// The JSON-RPC id, to find the response in an SSE stream.
    pub(crate) id: Option<Value>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) who: Who,
    pub(crate) timeout: Option<Duration>,
}

impl Outgoing {
    /// A POST of `body`.
    pub(crate) fn post(body: Vec<u8>, id: Option<Value>, headers: Vec<(String, String)>) -> Self {
        Outgoing {
            method: reqwest::Method::POST,
            body,
            id,
            headers,
            who: Who::A,
            timeout: None,
        }
    }
}

/// What came back.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    /// The HTTP status.
    pub(crate) status: u16,
    /// `Mcp-Session-Id`, when the server assigned one.
    pub(crate) session_id: Option<String>,
    /// The JSON-RPC response, when one was found.
    pub(crate) message: Option<Value>,
    /// Why there is no message (not JSON, too large, the stream ended early).
    pub(crate) problem: Option<String>,
    /// From sending to the response being read.
    pub(crate) elapsed: Duration,
}

/// Why nothing came back.
#[derive(Debug, Clone)]
pub(crate) enum SendError {
    /// No answer in time.
    Timeout(Duration),
    /// The connection failed.
    Transport(String),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Timeout(t) => write!(f, "no answer within {:.1} s", t.as_secs_f64()),
            SendError::Transport(e) => write!(f, "the connection failed: {e}"),
        }
    }
}

/// Sends requests to one endpoint.
pub(crate) struct Prober {
    client: reqwest::Client,
    url: Url,
    token_a: Option<Token>,
    token_b: Option<Token>,
    timeout: Duration,
    max_bytes: usize,
    sent: AtomicU32,
}

impl Prober {
    pub(crate) fn new(config: &AuditConfig) -> Result<Self, AuditError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("ferry-audit/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(config.request_timeout)
            .build()
            .map_err(|e| AuditError::Client(e.to_string()))?;
        Ok(Prober {
            client,
            url: config.url.clone(),
            token_a: config.token.clone(),
            token_b: config.token_b.clone(),
            timeout: config.request_timeout,
            max_bytes: config.max_response_bytes,
            sent: AtomicU32::new(0),
        })
    }

    /// How many requests were sent.
    pub(crate) fn sent(&self) -> u32 {
        self.sent.load(Ordering::Relaxed)
    }

    /// The endpoint.
    pub(crate) fn url(&self) -> &Url {
        &self.url
    }

    /// Sends one request and reads its answer, within the request's deadline.
    pub(crate) async fn send(&self, out: Outgoing) -> Result<Exchange, SendError> {
        let limit = out.timeout.unwrap_or(self.timeout);
        self.sent.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let result = tokio::time::timeout(limit, self.exchange(out)).await;
        match result {
            Ok(Ok(mut ex)) => {
                ex.elapsed = started.elapsed();
                Ok(ex)
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(SendError::Timeout(limit)),
        }
    }

    async fn exchange(&self, out: Outgoing) -> Result<Exchange, SendError> {
        let mut req = self.client.request(out.method, self.url.clone());
        for (name, value) in &out.headers {
            req = req.header(name.as_str(), value.as_str());
        }
        let token = match out.who {
            Who::A => self.token_a.as_ref().map(Token::expose),
            Who::B => self.token_b.as_ref().map(Token::expose),
            Who::Bogus => Some("ferry-audit-not-a-real-token"),
        };
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if !out.body.is_empty() {
            req = req.body(out.body);
        }
        let mut resp = req.send().await.map_err(|e| {
            SendError::Transport(if e.is_connect() {
                "connection refused or unreachable".into()
            } else {
                without_url(&e)
            })
        })?;
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let session_id = header("mcp-session-id");
        let sse = header("content-type")
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        if resp
            .content_length()
            .is_some_and(|n| n > self.max_bytes as u64)
        {
            return Ok(Exchange {
                status,
                session_id,
                message: None,
                problem: Some(format!("a body over {} bytes", self.max_bytes)),
                elapsed: Duration::ZERO,
            });
        }
        let mut buf: Vec<u8> = Vec::new();
        let mut scanner = SseScanner::default();
        let mut problem = None;
        let mut message = None;
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => {
                    problem = Some(format!("the body broke off: {}", without_url(&e)));
                    break;
                }
            };
            if buf.len() + chunk.len() > self.max_bytes {
                problem = Some(format!("a body over {} bytes", self.max_bytes));
                break;
            }
            buf.extend_from_slice(&chunk);
            if sse && let Some(m) = scanner.response(&buf, out.id.as_ref()) {
                message = Some(m);
                break;
            }
        }
        if message.is_none() && problem.is_none() {
            if sse {
                problem = Some("the event stream ended without a response".into());
            } else if buf.is_empty() {
                problem = Some("an empty body".into());
            } else {
                match serde_json::from_slice::<Value>(&buf) {
                    Ok(v) if v.is_object() => message = Some(v),
                    _ => problem = Some(format!("a body that is not JSON: {}", snippet(&buf))),
                }
            }
        }
        Ok(Exchange {
            status,
            session_id,
            message,
            problem,
            elapsed: Duration::ZERO,
        })
    }
}

/// A reqwest error without the URL (which may carry credentials in its query).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "the endpoint");
    }
    text
}

/// The start of a body, for messages.
fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(120)]);
    crate::report::clean(&text)
}

/// Reads SSE events as they arrive, from where it stopped, looking for the response.
#[derive(Default)]
struct SseScanner {
    /// Where the next event starts.
    pos: usize,
}

impl SseScanner {
    fn response(&mut self, buf: &[u8], id: Option<&Value>) -> Option<Value> {
        loop {
            let rest = &buf[self.pos..];
            let (end, next) = event_end(rest)?;
            let event = &rest[..end];
            self.pos += next;
            let mut data = String::new();
            for line in String::from_utf8_lossy(event).lines() {
                if let Some(d) = line.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(d.strip_prefix(' ').unwrap_or(d));
                }
            }
            let Ok(msg) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            let is_response = msg.get("result").is_some() || msg.get("error").is_some();
            let matches = match (msg.get("id"), id) {
                (Some(got), Some(want)) => got == want,
                (None | Some(Value::Null), _) => msg.get("error").is_some(),
                (Some(_), None) => true,
            };
            if is_response && matches {
                return Some(msg);
            }
        }
    }
}

/// The end of the first complete event in `buf` and where the next one starts.
fn event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i < buf.len() {
        if buf[i] == b'\n' {
            if buf.get(i + 1) == Some(&b'\n') {
                return Some((i, i + 2));
            }
            if buf.get(i + 1) == Some(&b'\r') && buf.get(i + 2) == Some(&b'\n') {
                return Some((i, i + 3));
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sse_finds_the_response_among_notifications() {
        let stream = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n\
data: {\"jsonrpc\":\"2.0\",\"id\":\"other\",\"result\":{}}\r\n\r\n\
data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":\"a-1\",\"result\":{\"x\":1}}\n\n";
        let mut s = SseScanner::default();
        // Fed in two pieces, as the network would.
        assert_eq!(s.response(&stream[..30], Some(&json!("a-1"))), None);
        let got = s.response(stream, Some(&json!("a-1"))).unwrap();
        assert_eq!(got["result"]["x"], 1);
    }

    #[test]
    fn an_unfinished_event_is_not_read() {
        let mut s = SseScanner::default();
        assert_eq!(
            s.response(b"data: {\"id\":1,\"result\":{}}\n", Some(&json!(1))),
            None
        );
    }
}
