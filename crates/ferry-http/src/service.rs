//! The MCP endpoint as a `tower::Service`, mountable in any hyper or axum app.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::{ErrorCode, ErrorObject};
use ferry_server::{
    Handled, Outbound, Outcome, PendingCall, Principal, Reply, RequestEnv, Server, Streaming,
};
use futures::future::Either;
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use tokio::sync::mpsc;

use crate::body::McpBody;
use crate::config::HttpConfig;
use crate::legacy::{self, Streams};
use crate::status::{error_response, reply_response};

/// The MCP endpoint: POST a JSON-RPC message, get a JSON or SSE response.
///
/// Serve it with [`crate::serve`], or mount it at your endpoint path (e.g. `/mcp`) in axum
/// with `Router::route_service`. Its [`HttpConfig`] holds every limit, those of the
/// connections [`crate::serve`] accepts included. A principal placed in the request's
/// extensions by an authentication layer (such as `ferry_auth::AuthLayer`) reaches
/// handlers and binds `requestState`.
#[derive(Clone)]
pub struct McpService {
    server: Server,
    config: Arc<HttpConfig>,
    streams: Arc<Streams>,
}

impl McpService {
    /// An endpoint serving `server` with the settings and limits of `config`.
    pub fn new(server: Server, config: HttpConfig) -> Self {
        McpService {
            server,
            config: Arc::new(config),
            streams: Arc::new(Streams::default()),
        }
    }

    /// The server behind the endpoint.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The endpoint's settings.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    pub(crate) fn streams(&self) -> &Arc<Streams> {
        &self.streams
    }

    /// Handles one HTTP request.
    ///
    /// The future owns what it needs (it holds no borrow of `self`).
    pub fn call_http<B>(&self, req: Request<B>) -> impl Future<Output = Response<McpBody>> + use<B>
    where
        B: Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        handle(self.clone(), req)
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // `map`, not `async move { Ok(fut.await) }`: an async block would hold the
        // request's future twice (as its capture and as the value it awaits), doubling
        // the box to a size the allocator serves on its slow path, once per request.
        Box::pin(futures::FutureExt::map(handle(self.clone(), req), Ok))
    }
}

/// `Mcp-Session-Id`, parsed once.
static SESSION_ID: http::HeaderName =
    http::HeaderName::from_static(ferry_protocol::headers::SESSION_ID);

fn sse_response(body: McpBody) -> Response<McpBody> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// What the checks on a request's head leave for the rest: its fields, its principal
/// and its body.
struct Admitted<B> {
    headers: http::HeaderMap,
    principal: Option<Principal>,
    body: B,
    /// A `GET` or `DELETE` of a 2025-11-25 session that needs the session store.
    session_op: Option<legacy::SessionOp>,
}

/// Handles one request.
///
/// The checks that need no body run here, synchronously; only what later steps need is
/// carried into the future, and every path that may wait long or stream is boxed, so the
/// future of a plain JSON call stays small (one small allocation per request).
fn handle<B>(svc: McpService, req: Request<B>) -> impl Future<Output = Response<McpBody>> + use<B>
where
    B: Body + Send,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let admitted = admit(&svc, req);
    async move {
        let Admitted {
            headers,
            principal,
            body,
            session_op,
        } = match admitted {
            Ok(a) => a,
            Err(response) => return response,
        };
        if let Some(op) = session_op {
            return Box::pin(legacy::with_store(svc, op, headers)).await;
        }
        let next = match read_body(body, &svc.config).await {
            Ok(bytes) => {
                let mut env = RequestEnv::http(headers).with_principal(principal);
                if svc.server.has_session_store()
                    && env.headers().is_some_and(|h| h.contains_key(&SESSION_ID))
                {
                    // Adopt a session another instance opened (or refuse one ended there).
                    Box::pin(svc.server.prepare_session(&mut env)).await;
                }
                respond(&svc, svc.server.handle(&bytes, env))
            }
            Err(response) => return response,
        };
        next.await
    }
}

/// The checks on a request's head (transports/streamable-http.mdx, "Security & Endpoint"
/// and "Sending Messages"): origin, host, method, media type. A
/// `GET` or `DELETE` of a 2025-11-25 session is answered here.
// Matched at once by its one caller; boxing the response would only add an allocation.
#[allow(clippy::result_large_err)]
fn admit<B>(svc: &McpService, req: Request<B>) -> Result<Admitted<B>, Response<McpBody>> {
    let McpService {
        server,
        config,
        streams,
    } = svc;
    // Origin and Host first: a rebinding attack gets nothing else.
    if let Some(origin) = req.headers().get(ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| config.origins().origin_ok(o));
        if !ok {
            return Err(error_response(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                "Forbidden: origin not allowed",
            ));
        }
    }
    let host_ok = match req.headers().get(HOST).and_then(|h| h.to_str().ok()) {
        Some(host) => config.origins().host_ok(host),
        None => req
            .uri()
            .authority()
            .is_none_or(|a| config.origins().host_ok(a.as_str())),
    };
    if !host_ok {
        return Err(error_response(
            StatusCode::FORBIDDEN,
            ErrorCode::INVALID_REQUEST,
            "Forbidden: host not allowed",
        ));
    }
    // GET and DELETE exist only for 2025-11-25 sessions; everything else is POST.
    let with_session = server.serves_legacy() && req.headers().contains_key(&SESSION_ID);
    if with_session && server.has_session_store() {
        let op = match *req.method() {
            Method::GET => Some(legacy::SessionOp::Get),
            Method::DELETE => Some(legacy::SessionOp::Delete),
            _ => None,
        };
        if op.is_some() {
            let (parts, body) = req.into_parts();
            return Ok(Admitted {
                headers: parts.headers,
                principal: None,
                body,
                session_op: op,
            });
        }
    }
    if with_session && req.method() == Method::GET {
        return Err(legacy::get(
            streams,
            server,
            req.headers(),
            config.sse_keep_alive(),
        ));
    }
    if with_session && req.method() == Method::DELETE {
        return Err(legacy::delete(streams, server, req.headers()));
    }
    if req.method() != Method::POST {
        let mut r = error_response(
            StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::INVALID_REQUEST,
            "Method not allowed: this MCP endpoint accepts POST only",
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return Err(r);
    }
    if let Some(ct) = req.headers().get(CONTENT_TYPE) {
        let ok = ct.to_str().is_ok_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
        if !ok {
            return Err(error_response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::INVALID_REQUEST,
                "Unsupported media type: send application/json",
            ));
        }
    }
    let (mut parts, body) = req.into_parts();
    Ok(Admitted {
        principal: parts.extensions.remove::<Principal>(),
        headers: parts.headers,
        body,
        session_op: None,
    })
}

/// The whole body, within the size and time limits. A body already in memory (Ferry's
/// HTTP/1.1 connection reads each body whole) is taken as it is; any other is collected
/// in a small allocation of its own, so it costs no space in the caller's future.
async fn read_body<B>(body: B, config: &HttpConfig) -> Result<Bytes, Response<McpBody>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use bytes::Buf as _;

    let mut body = std::pin::pin!(body);
    let mut first = Bytes::new();
    if let Some(frame) = futures::FutureExt::now_or_never(body.as_mut().frame()) {
        match frame {
            None => return Ok(Bytes::new()),
            Some(Err(_)) => return Err(unreadable_body()),
            Some(Ok(frame)) => {
                if let Ok(mut data) = frame.into_data() {
                    if data.remaining() > config.max_body_bytes() {
                        return Err(body_too_large());
                    }
                    first = data.copy_to_bytes(data.remaining());
                    if body.is_end_stream() {
                        return Ok(first);
                    }
                }
            }
        }
    }
    let limit = config.max_body_bytes() - first.len();
    let collect = Box::pin(Limited::new(body, limit).collect());
    match deadline(config.body_timeout(), collect).await {
        Ok(Ok(c)) if first.is_empty() => Ok(c.to_bytes()),
        Ok(Ok(c)) => {
            let rest = c.to_bytes();
            let mut whole = bytes::BytesMut::with_capacity(first.len() + rest.len());
            whole.extend_from_slice(&first);
            whole.extend_from_slice(&rest);
            Ok(whole.freeze())
        }
        Err(_) => Err(error_response(
            StatusCode::REQUEST_TIMEOUT,
            ErrorCode::INVALID_REQUEST,
            "Request timeout: body not received in time",
        )),
        Ok(Err(e))
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(body_too_large())
        }
        Ok(Err(_)) => Err(unreadable_body()),
    }
}

fn body_too_large() -> Response<McpBody> {
    error_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::INVALID_REQUEST,
        "Payload too large: the message exceeds the size limit",
    )
}

fn unreadable_body() -> Response<McpBody> {
    error_response(
        StatusCode::BAD_REQUEST,
        ErrorCode::PARSE_ERROR,
        "Parse error: the body could not be read",
    )
}

/// The response to a handled message: ready now, a JSON call to run in place, or
/// (boxed) a call that may stream.
fn respond(
    svc: &McpService,
    handled: Handled,
) -> impl Future<Output = Response<McpBody>> + Send + use<> {
    type Streamed = Pin<Box<dyn Future<Output = Response<McpBody>> + Send>>;
    let ready = |r| Either::Left(std::future::ready(r));
    let streamed = |f: Streamed| Either::Right(Either::Right(f));
    match handled {
        Handled::Reply(r) => ready(reply_response(r)),
        Handled::Accepted | Handled::Cancel(_) => {
            let mut r = Response::new(McpBody::empty());
            *r.status_mut() = StatusCode::ACCEPTED;
            ready(r)
        }
        Handled::UnexpectedResponse => ready(error_response(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "Invalid request: clients do not send JSON-RPC responses in MCP 2026-07-28",
        )),
        Handled::Initialized { reply, session } => {
            let mut r = reply_response(reply);
            if let Ok(v) = HeaderValue::from_str(session.id()) {
                r.headers_mut()
                    .insert(ferry_protocol::headers::SESSION_ID, v);
            }
            svc.server.watch_session(&session);
            if svc.server.has_session_store() {
                // Shared before the client learns its id, so its next request may land
                // on any instance.
                let server = svc.server.clone();
                return streamed(Box::pin(async move {
                    server.share_session(&session).await;
                    r
                }));
            }
            ready(r)
        }
        Handled::Pending(call) => match call.session().cloned() {
            Some(session) => streamed(Box::pin(legacy::run_call(
                svc.streams.clone(),
                session,
                call,
            ))),
            None if call.streaming() == Streaming::Never => {
                Either::Right(Either::Left(run_json(call, svc.config.request_timeout())))
            }
            None => {
                let config = svc.config.clone();
                streamed(Box::pin(async move { run_streaming(call, &config).await }))
            }
        },
    }
}

/// Runs a call that never streams: a JSON response. The future holds only the handler's
/// (already boxed) future and the request id.
fn run_json(
    call: PendingCall,
    timeout: std::time::Duration,
) -> impl Future<Output = Response<McpBody>> + Send + use<> {
    let id = call.id().clone();
    let fut = call.run(Outbound::none());
    async move {
        let reply = match deadline(timeout, fut).await {
            Ok(outcome) => outcome.into_reply().unwrap_or_else(|| cancelled(&id)),
            Err(_) => timed_out(&id),
        };
        reply_response(reply)
    }
}

/// Runs a call that may stream: JSON if it sends nothing before its result, else SSE.
async fn run_streaming(call: PendingCall, config: &HttpConfig) -> Response<McpBody> {
    let id = call.id().clone();
    let timeout = config.request_timeout();
    let timed_id = id.clone();
    let timed = move |fut: Pin<Box<dyn Future<Output = Outcome> + Send>>| -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        Box::pin(async move {
            match deadline(timeout, fut).await {
                Ok(outcome) => outcome.into_reply().unwrap_or_else(|| cancelled(&timed_id)),
                Err(_) => timed_out(&timed_id),
            }
        })
    };
    match call.streaming() {
        Streaming::Never => run_json(call, config.request_timeout()).await,
        Streaming::Maybe => {
            // JSON unless the handler sends a notification first; then switch to SSE and
            // keep driving the handler from the body.
            let (tx, mut rx) = mpsc::channel(config.stream_buffer());
            let mut fut = timed(call.run(Outbound::channel(tx)));
            tokio::select! {
                biased;
                reply = &mut fut => {
                    match rx.try_recv() {
                        Ok(first) => sse_response(McpBody::sse(Some(first), rx, Box::pin(std::future::ready(reply)), None)),
                        Err(_) => reply_response(reply),
                    }
                }
                Some(first) = rx.recv() => sse_response(McpBody::sse(Some(first), rx, fut, Some(config.sse_keep_alive()))),
            }
        }
        Streaming::Always => match call.into_listen() {
            Ok(stream) => sse_response(McpBody::listen(stream, config.sse_keep_alive())),
            Err(call) => {
                let call = *call;
                let id = call.id().clone();
                let (tx, rx) = mpsc::channel(config.stream_buffer());
                let fut = call.run(Outbound::channel(tx));
                let fut =
                    Box::pin(
                        async move { fut.await.into_reply().unwrap_or_else(|| cancelled(&id)) },
                    );
                sse_response(McpBody::sse(None, rx, fut, Some(config.sse_keep_alive())))
            }
        },
    }
}

/// The answer for a request whose handler ran out of time.
fn timed_out(id: &RequestId) -> Reply {
    Reply::error(
        Some(id),
        &ErrorObject::internal("Internal error: the request timed out"),
    )
}

/// The answer for a request cancelled outside a session, where nothing else can: there
/// is always an answer on HTTP.
fn cancelled(id: &RequestId) -> Reply {
    Reply::error(Some(id), &ErrorObject::internal("Request cancelled"))
}

/// Like `tokio::time::timeout`, but a future that is ready at once (a body that arrived
/// with its headers, a handler that never waits) costs no timer, and the timer of one
/// that waits lives in its own small allocation rather than in the caller's future.
async fn deadline<F: Future + Unpin>(
    limit: std::time::Duration,
    mut fut: F,
) -> Result<F::Output, tokio::time::error::Elapsed> {
    if let Some(out) = futures::FutureExt::now_or_never(&mut fut) {
        return Ok(out);
    }
    Box::pin(tokio::time::timeout(limit, fut)).await
}
