//! A small Streamable HTTP client for tests: one connection per request, MCP headers
//! derived from the body (overridable), JSON and SSE responses checked message by
//! message.

use std::net::SocketAddr;

use bytes::Bytes;
use ferry_protocol::headers::encode_value;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use crate::{check, rpc, within};

/// Where an MCP endpoint listens, and who the client is.
#[derive(Clone, Debug)]
pub struct Client {
    addr: SocketAddr,
    path: String,
    token: Option<String>,
}

impl Client {
    /// A client of the endpoint at `http://{addr}{path}`.
    pub fn new(addr: SocketAddr, path: &str) -> Self {
        Client {
            addr,
            path: path.to_owned(),
            token: None,
        }
    }

    /// The same endpoint, sending `Authorization: Bearer {token}`.
    pub fn with_token(&self, token: &str) -> Client {
        Client {
            token: Some(token.to_owned()),
            ..self.clone()
        }
    }

    /// The address of the server.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A POST of `message` with the headers a conforming client sends: `Content-Type`,
    /// `Accept`, `MCP-Protocol-Version` (from `_meta`), `Mcp-Method` and, for `tools/call`,
    /// `prompts/get`, `resources/read` and `tasks/*` (the task id), `Mcp-Name` (Base64-sentinel encoded when
    /// needed).
    pub fn post(&self, message: &Value) -> Call {
        let mut call = self.call(Method::POST);
        call.body = Bytes::from(serde_json::to_vec(message).expect("serializable"));
        call.headers.extend(mcp_headers(message));
        if let (Some(m), Some(id)) = (message["method"].as_str(), message.get("id")) {
            call.rpc_method = Some(m.to_owned());
            call.id = Some(id.clone());
        }
        call
    }

    /// A request with this HTTP method and no body or MCP headers.
    pub fn call(&self, method: Method) -> Call {
        let mut headers = HeaderMap::new();
        headers.insert(
            HOST,
            HeaderValue::from_str(&self.addr.to_string()).expect("host"),
        );
        if let Some(t) = &self.token {
            headers.insert(
                AUTHORIZATION,
                HeaderValue::from_str(&format!("Bearer {t}")).expect("token"),
            );
        }
        Call {
            addr: self.addr,
            method,
            path: self.path.clone(),
            headers,
            body: Bytes::new(),
            rpc_method: None,
            id: None,
        }
    }
}

/// The headers a conforming client sends with `message`: `Content-Type`, `Accept`,
/// `MCP-Protocol-Version` (from `_meta`), `Mcp-Method` and, for `tools/call`,
/// `prompts/get`, `resources/read` and `tasks/*` (the task id), `Mcp-Name` (Base64-sentinel encoded when needed).
pub fn mcp_headers(message: &Value) -> HeaderMap {
    let mut h = HeaderMap::new();
    let value = |s: &str| HeaderValue::from_str(s).expect("header value");
    h.insert(CONTENT_TYPE, value("application/json"));
    h.insert(ACCEPT, value("application/json, text/event-stream"));
    let params = &message["params"];
    if let Some(v) = params["_meta"][rpc::PROTOCOL_VERSION].as_str() {
        h.insert("mcp-protocol-version", value(v));
    }
    if let (Some(m), Some(_)) = (message["method"].as_str(), message.get("id")) {
        h.insert("mcp-method", value(m));
        let name = match m {
            "tools/call" | "prompts/get" => params["name"].as_str(),
            "resources/read" => params["uri"].as_str(),
            "tasks/get" | "tasks/update" | "tasks/cancel" => params["taskId"].as_str(),
            _ => None,
        };
        if let Some(n) = name {
            h.insert("mcp-name", value(&encode_value(n)));
        }
    }
    h
}

/// One HTTP request about to be sent.
#[must_use = "a call does nothing until sent"]
pub struct Call {
    addr: SocketAddr,
    method: Method,
    path: String,
    headers: HeaderMap,
    body: Bytes,
    rpc_method: Option<String>,
    id: Option<Value>,
}

impl Call {
    /// Sets a header, replacing any value it had.
    pub fn header(self, name: &str, value: &str) -> Self {
        self.header_bytes(name, value.as_bytes())
    }

    /// Sets a header to raw bytes, replacing any value it had.
    pub fn header_bytes(mut self, name: &str, value: &[u8]) -> Self {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("header name");
        self.headers
            .insert(name, HeaderValue::from_bytes(value).expect("header value"));
        self
    }

    /// Adds another value for a header.
    pub fn append(mut self, name: &str, value: &str) -> Self {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("header name");
        self.headers
            .append(name, HeaderValue::from_str(value).expect("header value"));
        self
    }

    /// Removes a header.
    pub fn without(mut self, name: &str) -> Self {
        self.headers.remove(name);
        self
    }

    /// Replaces the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// Sends the request on a new connection and returns the response head.
    pub async fn send(self) -> Response {
        let stream = within("connecting", TcpStream::connect(self.addr))
            .await
            .expect("connect");
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("HTTP handshake");
        let conn = tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut req = Request::builder()
            .method(self.method)
            .uri(&self.path)
            .body(Full::new(self.body))
            .expect("request");
        *req.headers_mut() = self.headers;
        let res = within("the response head", sender.send_request(req))
            .await
            .expect("HTTP response");
        let (parts, body) = res.into_parts();
        Response {
            status: parts.status,
            headers: parts.headers,
            body,
            conn,
            rpc_method: self.rpc_method,
            id: self.id,
        }
    }
}

/// A response whose body has not been read yet.
pub struct Response {
    /// The HTTP status.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    body: Incoming,
    conn: JoinHandle<()>,
    rpc_method: Option<String>,
    id: Option<Value>,
}

impl Response {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("ASCII header"))
    }

    /// The media type, without parameters.
    pub fn content_type(&self) -> Option<&str> {
        self.header("content-type")
            .map(|v| v.split(';').next().unwrap_or("").trim())
    }

    /// The whole body.
    pub async fn bytes(self) -> Bytes {
        let collected = within("the response body", self.body.collect())
            .await
            .expect("body");
        self.conn.abort();
        collected.to_bytes()
    }

    /// The body of an `application/json` response: one JSON-RPC message, checked.
    pub async fn json(self) -> Value {
        assert_eq!(
            self.content_type(),
            Some("application/json"),
            "expected a JSON response"
        );
        let (method, id) = (self.rpc_method.clone(), self.id.clone());
        let body = self.bytes().await;
        let v = check::parse_line(&body);
        check::received(&v, method.as_deref());
        if let (Some(id), Some(got)) = (id, v.get("id")) {
            assert_eq!(got, &id, "the response carries another request's id");
        }
        v
    }

    /// The final response, whether the body is JSON or SSE (notifications before it are
    /// checked and returned too).
    pub async fn message(self) -> (Value, Vec<Value>) {
        if self.content_type() == Some("text/event-stream") {
            let mut sse = self.sse();
            let mut notes = Vec::new();
            while let Some(m) = sse.next_message().await {
                if m.get("method").is_some() {
                    notes.push(m);
                } else {
                    assert!(
                        sse.next_message().await.is_none(),
                        "the stream goes on after the response"
                    );
                    return (m, notes);
                }
            }
            panic!("the SSE stream ended without a response");
        }
        (self.json().await, Vec::new())
    }

    /// Reads the body as an SSE stream.
    pub fn sse(self) -> Sse {
        assert_eq!(
            self.content_type(),
            Some("text/event-stream"),
            "expected an SSE response"
        );
        Sse {
            body: self.body,
            conn: self.conn,
            buf: Vec::new(),
            rpc_method: self.rpc_method,
            id: self.id,
            finished: false,
        }
    }
}

/// One SSE event.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A JSON-RPC message (already checked).
    Message(Value),
    /// A comment line (keep-alive).
    Comment(String),
}

/// An SSE response being read.
pub struct Sse {
    body: Incoming,
    conn: JoinHandle<()>,
    buf: Vec<u8>,
    rpc_method: Option<String>,
    id: Option<Value>,
    finished: bool,
}

impl Sse {
    /// The next event; `None` when the stream ends.
    ///
    /// Each event must have exactly one `data:` line holding one JSON-RPC message, and no
    /// `id:` (2026-07-28 streams are not resumable). The final response must carry the
    /// request's id, and nothing may follow it.
    pub async fn next_event(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = find(&self.buf, b"\n\n") {
                let block: Vec<u8> = self.buf.drain(..end + 2).collect();
                return Some(self.event(&block[..end]));
            }
            let frame = within("an SSE event", self.body.frame()).await;
            match frame {
                None => {
                    assert!(
                        self.buf.is_empty(),
                        "the stream ended inside an event: {:?}",
                        String::from_utf8_lossy(&self.buf)
                    );
                    return None;
                }
                Some(f) => {
                    if let Ok(data) = f.expect("SSE body").into_data() {
                        self.buf.extend_from_slice(&data);
                    }
                }
            }
        }
    }

    fn event(&mut self, block: &[u8]) -> Event {
        let text = std::str::from_utf8(block).expect("SSE is UTF-8");
        let mut data = Vec::new();
        let mut comment = None;
        for line in text.split('\n') {
            if let Some(c) = line.strip_prefix(':') {
                comment = Some(c.to_owned());
            } else if let Some(d) = line.strip_prefix("data:") {
                data.push(d.strip_prefix(' ').unwrap_or(d));
            } else if line.starts_with("id:") {
                panic!("2026-07-28 SSE events carry no id: {text:?}");
            } else {
                assert!(
                    line.starts_with("event:") || line.is_empty(),
                    "unexpected SSE line {line:?}"
                );
            }
        }
        match (data.as_slice(), comment) {
            ([], Some(c)) => Event::Comment(c),
            ([one], _) => {
                assert!(!self.finished, "an event follows the final response: {one}");
                let v = check::parse_line(one.as_bytes());
                if v.get("method").is_some() {
                    check::received(&v, None);
                } else {
                    check::received(&v, self.rpc_method.as_deref());
                    if let Some(id) = &self.id {
                        assert_eq!(
                            v.get("id"),
                            Some(id),
                            "the response carries another request's id"
                        );
                    }
                    self.finished = true;
                }
                Event::Message(v)
            }
            _ => panic!("an SSE event must have exactly one data line: {text:?}"),
        }
    }

    /// The next JSON-RPC message, skipping comments; `None` when the stream ends.
    pub async fn next_message(&mut self) -> Option<Value> {
        loop {
            match self.next_event().await? {
                Event::Message(m) => return Some(m),
                Event::Comment(_) => continue,
            }
        }
    }

    /// Closes the stream and its connection, as a client that goes away.
    pub fn close(self) {
        self.conn.abort();
        drop(self.body);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// POSTs `message` to the endpoint at `url` with the headers of [`mcp_headers`] (and
/// `Authorization: Bearer {token}` when given) and returns the final message: the body of
/// a JSON response, or the last message of an SSE stream. Nothing is checked against the
/// schema, so this also serves peers whose answers are not under test.
pub async fn post_url(url: &str, token: Option<&str>, message: &Value) -> Value {
    post_url_response(url, token, message).await.2
}

/// [`post_url`], with the response's HTTP status and headers.
pub async fn post_url_response(
    url: &str,
    token: Option<&str>,
    message: &Value,
) -> (StatusCode, HeaderMap, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .headers(mcp_headers(message))
        .body(serde_json::to_vec(message).expect("serializable"));
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let response = within("the response", request.send())
        .await
        .expect("the request is answered");
    let status = response.status();
    let headers = response.headers().clone();
    let text = within("the response body", response.text())
        .await
        .expect("a body");
    let json_text = if text.trim_start().starts_with('{') {
        text
    } else {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|l| l.starts_with('{'))
            .unwrap_or_default()
            .to_owned()
    };
    let message =
        serde_json::from_str(&json_text).unwrap_or_else(|e| panic!("not JSON ({e}): {json_text}"));
    (status, headers, message)
}

/// A POST of `body` to `url` as a 2025-11-25 client sends it: a JSON body, both media
/// types accepted and, on a session, its `Mcp-Session-Id` and the protocol version.
pub fn legacy_post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut r = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(body);
    if let Some(s) = session {
        r = r
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    r
}
