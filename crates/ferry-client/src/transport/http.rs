//! Streamable HTTP: one POST per message, answered with JSON or an SSE stream.
//!
//! For legacy (2025-11-25) servers this also keeps the session id, resumes a POST's SSE
//! stream with `GET` + `Last-Event-ID` after the server's `retry` delay when it ends
//! before the response, keeps a standalone GET stream for server requests and
//! notifications, and ends the session with `DELETE`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferry_oauth::Authorizer;
use ferry_protocol::headers as h;
use parking_lot::{Mutex, RwLock};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::reply::{DirectClient, Reply};
use super::{Background, EXCHANGE_QUEUE, Exchange, Incoming, Outgoing, auth};
use crate::error::{Error, Result, RpcError};
use crate::sse::{SseEvent, SseParser};
use ferry_protocol::jsonrpc::{JsonRpcErrorResponse, JsonRpcMessage, LenientMessage};

/// `Accept` on every POST.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// Wait before reconnecting when the server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How many times one POST's stream may be resumed.
const MAX_RESUMES: u32 = 5;
/// How many times in a row the standalone GET stream is reopened without receiving
/// anything.
const MAX_GET_FAILURES: u32 = 3;
/// The most of an HTTP error body that is read.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// The Streamable HTTP transport.
pub(crate) struct HttpTransport {
    shared: Arc<Shared>,
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        // The standalone stream's task holds the shared state, so it is stopped here.
        if let Some(h) = self.shared.get_stream.lock().take() {
            h.abort();
        }
    }
}

struct Shared {
    client: reqwest::Client,
    /// Sends the POSTs when the server is plain HTTP with no proxy in between (and the
    /// caller gave no reqwest client of its own).
    direct: Option<DirectClient>,
    url: Url,
    bearer: Option<HeaderValue>,
    authorizer: Option<Arc<dyn Authorizer>>,
    max_message: usize,
    session: RwLock<Option<String>>,
    legacy_version: RwLock<Option<String>>,
    background: mpsc::Sender<Background>,
    get_stream: Mutex<Option<AbortHandle>>,
    closed: AtomicBool,
}

impl HttpTransport {
    pub(crate) fn new(
        client: reqwest::Client,
        direct: Option<DirectClient>,
        url: Url,
        bearer: Option<&str>,
        authorizer: Option<Arc<dyn Authorizer>>,
        max_message: usize,
        background: mpsc::Sender<Background>,
    ) -> Result<Self> {
        let bearer = match bearer {
            Some(token) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                    Error::InvalidInput("the bearer token is not a valid header value".into())
                })?;
                v.set_sensitive(true);
                Some(v)
            }
            None => None,
        };
        Ok(HttpTransport {
            shared: Arc::new(Shared {
                client,
                direct,
                url,
                bearer,
                authorizer,
                max_message,
                session: RwLock::new(None),
                legacy_version: RwLock::new(None),
                background,
                get_stream: Mutex::new(None),
                closed: AtomicBool::new(false),
            }),
        })
    }

    /// The origin (`scheme://host:port`), the key of the era cache.
    pub(crate) fn origin(&self) -> String {
        self.shared.url.origin().ascii_serialization()
    }

    pub(crate) fn label(&self) -> String {
        self.shared.url.host_str().unwrap_or("server").to_owned()
    }

    /// Remembers the legacy session's version (the session id is taken from the
    /// `initialize` response).
    pub(crate) fn set_legacy(&self, version: &str) {
        *self.shared.legacy_version.write() = Some(version.to_owned());
    }

    /// Forgets the legacy session (it expired).
    pub(crate) fn clear_session(&self) {
        *self.shared.session.write() = None;
    }

    /// Whether a legacy session id is in use.
    pub(crate) fn has_session(&self) -> bool {
        self.shared.session.read().is_some()
    }

    pub(crate) fn start(&self, out: Outgoing) -> Result<Exchange> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        let (tx, rx) = mpsc::channel(EXCHANGE_QUEUE);
        let shared = self.shared.clone();
        let id = out.id.clone();
        let legacy = out.legacy;
        let driver = Box::pin(run_post(shared.clone(), out, tx));
        Ok(Exchange::driven(rx, driver, move |finished| {
            if !finished && legacy {
                cancel_legacy(shared, id);
            }
        }))
    }

    /// POSTs a notification or a response; the server answers 202.
    pub(crate) async fn post_no_answer(
        &self,
        body: Vec<u8>,
        headers: Vec<(String, String)>,
    ) -> Result<()> {
        let resp = self
            .shared
            .send_post(&body, &headers, "POST failed")
            .await?;
        let status = resp.status();
        if status.is_success() {
            return Ok(());
        }
        match error_reply(status, resp).await {
            Incoming::Error(e) => Err(Error::Rpc(Box::new(e))),
            Incoming::Failed(e) => Err(e),
            _ => Err(Error::HttpStatus {
                status: status.as_u16(),
                body: String::new(),
            }),
        }
    }

    /// Opens the legacy standalone GET stream, which carries server requests and
    /// notifications that belong to no request. Reopened (with `Last-Event-ID`) when it
    /// ends; given up when the server refuses it. The receiver resolves once the server
    /// has answered the first GET (with the stream, or a refusal): a server sends what
    /// belongs to no request only on an open stream, and drops it otherwise.
    pub(crate) fn open_standalone_stream(&self) -> tokio::sync::oneshot::Receiver<()> {
        let shared = self.shared.clone();
        let (opened, answered) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move { standalone(shared, opened).await });
        if let Some(old) = self.shared.get_stream.lock().replace(task.abort_handle()) {
            old.abort();
        }
        answered
    }

    pub(crate) async fn close(&self) -> Result<()> {
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        if let Some(h) = self.shared.get_stream.lock().take() {
            h.abort();
        }
        let session = self.shared.session.read().clone();
        if let Some(session) = session {
            let shared = &self.shared;
            let build = || {
                let mut req = shared
                    .client
                    .delete(shared.url.clone())
                    .header(h::SESSION_ID, session.as_str())
                    .timeout(Duration::from_secs(2));
                if let Some(v) = shared.legacy_version.read().clone() {
                    req = req.header(h::PROTOCOL_VERSION, v);
                }
                if let Some(b) = &shared.bearer {
                    req = req.header(AUTHORIZATION, b.clone());
                }
                Ok(req)
            };
            let authorizer = shared.authorizer.as_deref();
            if let Err(e) = auth::send(
                authorizer,
                None,
                "DELETE",
                &shared.url,
                build,
                "DELETE failed",
            )
            .await
            {
                tracing::debug!(error = %e, "DELETE of the legacy session failed");
            }
        }
        Ok(())
    }
}

impl Shared {
    fn post(&self, body: Vec<u8>, headers: &[(String, String)]) -> Result<reqwest::RequestBuilder> {
        let mut req = self
            .client
            .post(self.url.clone())
            .header(ACCEPT, ACCEPT_BOTH)
            .header(CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::InvalidInput(format!("invalid header name {name:?}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| Error::InvalidInput(format!("invalid value for header {name}")))?;
            req = req.header(name, value);
        }
        req = self.session_headers(req);
        Ok(req.body(body))
    }

    /// POSTs `body`, with the authorizer's credentials when there is one.
    async fn send_post(
        &self,
        body: &[u8],
        headers: &[(String, String)],
        failure: &str,
    ) -> Result<Reply> {
        let build = || self.post(body.to_vec(), headers);
        auth::send(
            self.authorizer.as_deref(),
            self.direct.as_ref(),
            "POST",
            &self.url,
            build,
            failure,
        )
        .await
    }

    fn session_headers(&self, mut req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(b) = &self.bearer {
            req = req.header(AUTHORIZATION, b.clone());
        }
        if let Some(s) = self.session.read().as_deref() {
            req = req.header(h::SESSION_ID, s);
        }
        req
    }

    /// A legacy GET for the session's stream, resuming after `last_event_id`.
    async fn get(&self, last_event_id: Option<&str>) -> Result<Reply> {
        let build = || {
            let mut req = self
                .client
                .get(self.url.clone())
                .header(ACCEPT, "text/event-stream");
            if let Some(v) = self.legacy_version.read().as_deref() {
                req = req.header(h::PROTOCOL_VERSION, v);
            }
            if let Some(id) = last_event_id {
                req = req.header(h::LAST_EVENT_ID, id);
            }
            Ok(self.session_headers(req))
        };
        let resp = auth::send(
            self.authorizer.as_deref(),
            None,
            "GET",
            &self.url,
            build,
            "GET failed",
        )
        .await?;
        let status = resp.status();
        if status.is_success() && is_event_stream(&resp) {
            return Ok(resp);
        }
        Err(match error_reply(status, resp).await {
            Incoming::Error(e) => Error::Rpc(Box::new(e)),
            Incoming::Failed(e) => e,
            _ => Error::HttpStatus {
                status: status.as_u16(),
                body: "not an event stream".into(),
            },
        })
    }
}

fn is_event_stream(resp: &Reply) -> bool {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

/// Sends `notifications/cancelled` for a legacy request whose stream was dropped
/// (closing a legacy stream does not cancel).
fn cancel_legacy(shared: Arc<Shared>, id: ferry_protocol::RequestId) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    rt.spawn(async move {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "method": ferry_protocol::notifications::CANCELLED,
            "params": {"requestId": id.to_value(), "reason": "cancelled by the client"}
        });
        let mut headers = Vec::new();
        if let Some(v) = shared.legacy_version.read().clone() {
            headers.push((h::PROTOCOL_VERSION.to_owned(), v));
        }
        let _ = shared
            .send_post(body.to_string().as_bytes(), &headers, "POST failed")
            .await;
    });
}

async fn run_post(shared: Arc<Shared>, out: Outgoing, tx: mpsc::Sender<Incoming>) {
    let reply = post_and_read(&shared, &out, &tx).await;
    if let Some(m) = reply {
        let _ = tx.send(m).await;
    }
}

/// Sends the POST and reads the answer; returns the final message to deliver (`None` when
/// it was delivered from the stream or nobody listens any more).
async fn post_and_read(
    shared: &Shared,
    out: &Outgoing,
    tx: &mpsc::Sender<Incoming>,
) -> Option<Incoming> {
    let resp = match shared
        .send_post(&out.body, &out.headers, "POST failed")
        .await
    {
        Ok(r) => r,
        Err(e) => return Some(Incoming::Failed(e)),
    };
    if out.method == ferry_protocol::legacy::INITIALIZE
        && let Some(sid) = resp
            .headers()
            .get(h::SESSION_ID)
            .and_then(|v| v.to_str().ok())
    {
        *shared.session.write() = Some(sid.to_owned());
    }
    let status = resp.status();
    if !status.is_success() {
        return Some(error_reply(status, resp).await);
    }
    if is_event_stream(&resp) {
        return pump(shared, resp, out, tx).await;
    }
    let body = match read_body(resp, shared.max_message).await {
        Ok(b) => b,
        Err(e) => return Some(Incoming::Failed(e)),
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Some(Incoming::Failed(Error::protocol(format!(
            "the server answered the request with an empty body (HTTP {})",
            status.as_u16()
        ))));
    }
    Some(match JsonRpcMessage::parse_lenient_raw(&body) {
        Some(LenientMessage::Result { id, result }) if id == out.id => Incoming::Result(result),
        Some(LenientMessage::Other(JsonRpcMessage::Error(JsonRpcErrorResponse {
            id,
            error,
            ..
        }))) if id.as_ref().is_none_or(|i| *i == out.id) => {
            Incoming::Error(RpcError::new(error, Some(status.as_u16())))
        }
        Some(_) => Incoming::Failed(Error::protocol("the response does not answer the request")),
        None => Incoming::Failed(Error::protocol(
            "the response body is not a JSON-RPC message",
        )),
    })
}

/// Turns an HTTP error status into the error to report: the JSON-RPC error in the body
/// when there is one.
async fn error_reply(status: StatusCode, resp: Reply) -> Incoming {
    if status == StatusCode::UNAUTHORIZED {
        let www_authenticate = resp
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        return Incoming::Failed(Error::Unauthorized { www_authenticate });
    }
    let body = read_body(resp, ERROR_BODY_LIMIT).await.unwrap_or_default();
    if let Some(JsonRpcMessage::Error(JsonRpcErrorResponse { error, .. })) =
        JsonRpcMessage::parse_lenient(&body)
    {
        return Incoming::Error(RpcError::new(error, Some(status.as_u16())));
    }
    let text = String::from_utf8_lossy(&body);
    let body: String = text.trim().chars().take(512).collect();
    Incoming::Failed(Error::HttpStatus {
        status: status.as_u16(),
        body,
    })
}

/// Reads a whole body of at most `limit` bytes.
async fn read_body(mut resp: Reply, limit: usize) -> Result<Vec<u8>> {
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(Error::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Err(Error::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// How one SSE response ended.
enum StreamEnd {
    /// The response was delivered, or nobody listens any more.
    Done,
    /// The stream ended before the response.
    Ended,
    /// Reading failed in a way resuming cannot fix.
    Failed(Error),
}

/// Reads a POST's SSE stream until the response, resuming a legacy stream that ends
/// early.
async fn pump(
    shared: &Shared,
    resp: Reply,
    out: &Outgoing,
    tx: &mpsc::Sender<Incoming>,
) -> Option<Incoming> {
    let mut parser = SseParser::new(shared.max_message);
    let mut current = resp;
    let mut resumes = 0;
    loop {
        match read_events(&mut parser, current, |ev| deliver(ev, out, tx)).await {
            StreamEnd::Done => return None,
            StreamEnd::Failed(e) => return Some(Incoming::Failed(e)),
            StreamEnd::Ended => {}
        }
        let last = parser.last_event_id().map(str::to_owned);
        if !out.legacy || last.is_none() || resumes >= MAX_RESUMES {
            return Some(Incoming::Failed(Error::transport(
                "the server closed the event stream before answering",
            )));
        }
        resumes += 1;
        tokio::time::sleep(parser.retry().unwrap_or(DEFAULT_RETRY)).await;
        match shared.get(last.as_deref()).await {
            Ok(r) => {
                parser.reset_stream();
                current = r;
            }
            Err(e) => return Some(Incoming::Failed(e)),
        }
    }
}

/// What to do after an event.
enum Flow {
    Continue,
    Stop,
}

async fn read_events<F, Fut>(parser: &mut SseParser, mut resp: Reply, mut on_event: F) -> StreamEnd
where
    F: FnMut(SseEvent) -> Fut,
    Fut: Future<Output = Flow>,
{
    loop {
        let chunk = match resp.chunk().await {
            Ok(Some(c)) => c,
            Ok(None) => return StreamEnd::Ended,
            Err(e) => {
                tracing::debug!(error = %e, "event stream broke");
                return StreamEnd::Ended;
            }
        };
        let events = match parser.feed(&chunk) {
            Ok(ev) => ev,
            Err(e) => return StreamEnd::Failed(Error::TooLarge { limit: e.limit }),
        };
        for ev in events {
            if let Flow::Stop = on_event(ev).await {
                return StreamEnd::Done;
            }
        }
    }
}

/// Hands one event of a POST stream to the exchange.
async fn deliver(ev: SseEvent, out: &Outgoing, tx: &mpsc::Sender<Incoming>) -> Flow {
    if !matches!(ev.event.as_deref(), None | Some("message")) || ev.data.trim().is_empty() {
        return Flow::Continue;
    }
    let m = match JsonRpcMessage::parse_lenient_raw(ev.data.as_bytes()) {
        Some(LenientMessage::Other(JsonRpcMessage::Notification(n))) => Incoming::Notification(n),
        Some(LenientMessage::Other(JsonRpcMessage::Request(r))) => Incoming::Request(r),
        Some(LenientMessage::Result { id, result }) if id == out.id => Incoming::Result(result),
        Some(LenientMessage::Other(JsonRpcMessage::Error(JsonRpcErrorResponse {
            id,
            error,
            ..
        }))) if id.as_ref().is_none_or(|i| *i == out.id) => {
            Incoming::Error(RpcError::new(error, Some(200)))
        }
        Some(_) => {
            tracing::debug!("ignoring a response for another request on the event stream");
            return Flow::Continue;
        }
        None => {
            tracing::warn!("ignoring an event that is not a JSON-RPC message");
            return Flow::Continue;
        }
    };
    let is_final = m.is_final();
    if tx.send(m).await.is_err() || is_final {
        Flow::Stop
    } else {
        Flow::Continue
    }
}

/// The legacy standalone GET stream.
async fn standalone(shared: Arc<Shared>, opened: tokio::sync::oneshot::Sender<()>) {
    let mut parser = SseParser::new(shared.max_message);
    let mut failures = 0;
    let mut opened = Some(opened);
    loop {
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        let got = shared.get(parser.last_event_id()).await;
        if let Some(opened) = opened.take() {
            let _ = opened.send(());
        }
        let resp = match got {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(error = %e, "the server offers no standalone event stream");
                return;
            }
        };
        parser.reset_stream();
        let mut received = false;
        let end = read_events(&mut parser, resp, |ev| {
            received = true;
            let bg = shared.background.clone();
            async move {
                if !matches!(ev.event.as_deref(), None | Some("message"))
                    || ev.data.trim().is_empty()
                {
                    return Flow::Continue;
                }
                let m = match JsonRpcMessage::parse_lenient(ev.data.as_bytes()) {
                    Some(JsonRpcMessage::Request(r)) => Background::Request(r),
                    Some(JsonRpcMessage::Notification(n)) => Background::Notification(n),
                    _ => return Flow::Continue,
                };
                if bg.send(m).await.is_err() {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            }
        })
        .await;
        if let StreamEnd::Failed(e) = end {
            tracing::warn!(error = %e, "the standalone event stream failed");
            return;
        }
        if matches!(end, StreamEnd::Done) {
            return;
        }
        failures = if received { 0 } else { failures + 1 };
        if failures >= MAX_GET_FAILURES {
            return;
        }
        tokio::time::sleep(parser.retry().unwrap_or(DEFAULT_RETRY)).await;
    }
}
