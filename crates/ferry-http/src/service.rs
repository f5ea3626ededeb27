//! The MCP endpoint as a `tower::Service`, mountable in any hyper or axum app.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use ferry_protocol::{ErrorCode, ErrorObject};
use ferry_server::{
    Handled, Outbound, PendingCall, Principal, Reply, RequestEnv, Server, Streaming,
};
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use tokio::sync::mpsc;

use crate::body::McpBody;
use crate::config::HttpConfig;
use crate::legacy::{self, Streams};

/// The MCP endpoint: POST a JSON-RPC message, get a JSON or SSE response.
///
/// Mount it at your endpoint path (e.g. `/mcp`) in axum with `Router::route_service`, or
/// serve it alone with [`crate::serve`]. A principal placed in the request's extensions by
/// an authentication layer (see [`crate::BearerAuthLayer`]) reaches handlers and binds
/// `requestState`.
#[derive(Clone)]
pub struct McpService {
    server: Server,
    config: Arc<HttpConfig>,
    streams: Arc<Streams>,
}

impl McpService {
    /// An endpoint serving `server`.
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

    /// Handles one HTTP request.
    pub async fn call_http<B>(&self, req: Request<B>) -> Response<McpBody>
    where
        B: Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        handle(self.clone(), req).await
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
        let svc = self.clone();
        Box::pin(async move { Ok(handle(svc, req).await) })
    }
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");

fn json_response(status: u16, body: Bytes) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(body));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    r.headers_mut().insert(CONTENT_TYPE, JSON);
    r
}

pub(crate) fn error_response(
    status: StatusCode,
    code: ErrorCode,
    message: &str,
) -> Response<McpBody> {
    let reply = Reply::error_with_status(None, &ErrorObject::new(code, message), status.as_u16());
    json_response(reply.status, reply.body)
}

fn sse_response(body: McpBody) -> Response<McpBody> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

async fn handle<B>(svc: McpService, req: Request<B>) -> Response<McpBody>
where
    B: Body + Send,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let McpService {
        server,
        config,
        streams,
    } = svc;
    // Origin and Host first: a rebinding attack gets nothing else (DIGEST §3.3.1).
    if let Some(origin) = req.headers().get(ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| config.origins.origin_ok(o));
        if !ok {
            return error_response(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                "Forbidden: origin not allowed",
            );
        }
    }
    let host = req
        .headers()
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    if let Some(host) = host
        && !config.origins.host_ok(&host)
    {
        return error_response(
            StatusCode::FORBIDDEN,
            ErrorCode::INVALID_REQUEST,
            "Forbidden: host not allowed",
        );
    }
    // GET and DELETE exist only for 2025-11-25 sessions; everything else is POST.
    let with_session = server.serves_legacy()
        && req
            .headers()
            .contains_key(ferry_protocol::headers::SESSION_ID);
    if with_session && req.method() == Method::GET {
        return legacy::get(&streams, &server, req.headers(), config.keep_alive);
    }
    if with_session && req.method() == Method::DELETE {
        return legacy::delete(&streams, &server, req.headers());
    }
    if req.method() != Method::POST {
        let mut r = error_response(
            StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::INVALID_REQUEST,
            "Method not allowed: this MCP endpoint accepts POST only",
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    if let Some(ct) = req.headers().get(CONTENT_TYPE) {
        let ok = ct.to_str().is_ok_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
        if !ok {
            return error_response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::INVALID_REQUEST,
                "Unsupported media type: send application/json",
            );
        }
    }
    let (mut parts, body) = req.into_parts();
    let collected = deadline(
        config.body_timeout,
        Limited::new(body, config.max_body_bytes).collect(),
    )
    .await;
    let bytes = match collected {
        Err(_) => {
            return error_response(
                StatusCode::REQUEST_TIMEOUT,
                ErrorCode::INVALID_REQUEST,
                "Request timeout: body not received in time",
            );
        }
        Ok(Err(e)) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return error_response(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    ErrorCode::INVALID_REQUEST,
                    "Payload too large: the message exceeds the size limit",
                );
            }
            return error_response(
                StatusCode::BAD_REQUEST,
                ErrorCode::PARSE_ERROR,
                "Parse error: the body could not be read",
            );
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    let principal = parts.extensions.remove::<Principal>();
    let env = RequestEnv {
        principal,
        headers: Some(std::mem::take(&mut parts.headers)),
        session: None,
    };
    match server.handle(&bytes, env) {
        Handled::Reply(r) => json_response(r.status, r.body),
        Handled::Accepted | Handled::Cancel(_) => {
            let mut r = Response::new(McpBody::empty());
            *r.status_mut() = StatusCode::ACCEPTED;
            r
        }
        Handled::UnexpectedResponse => error_response(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "Invalid request: clients do not send JSON-RPC responses in MCP 2026-07-28",
        ),
        Handled::Initialized { reply, session } => {
            let mut r = json_response(reply.status, reply.body);
            if let Ok(v) = HeaderValue::from_str(session.id()) {
                r.headers_mut()
                    .insert(ferry_protocol::headers::SESSION_ID, v);
            }
            server.watch_session(&session);
            r
        }
        Handled::Pending(call) => match call.session().cloned() {
            Some(session) => legacy::run_call(streams, session, call).await,
            None => run(call, &config).await,
        },
    }
}

async fn run(call: PendingCall, config: &HttpConfig) -> Response<McpBody> {
    let id = call.id().clone();
    let timeout = config.request_timeout;
    let timed_id = id.clone();
    let timed = move |fut: Pin<Box<dyn Future<Output = Reply> + Send>>| -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        Box::pin(async move {
            match deadline(timeout, fut).await {
                Ok(r) => r,
                Err(_) => Reply::error(
                    Some(&timed_id),
                    &ErrorObject::internal("Internal error: the request timed out"),
                ),
            }
        })
    };
    match call.streaming() {
        Streaming::Never => {
            let reply = match deadline(timeout, call.run(Outbound::none())).await {
                Ok(r) => r,
                Err(_) => Reply::error(
                    Some(&id),
                    &ErrorObject::internal("Internal error: the request timed out"),
                ),
            };
            json_response(reply.status, reply.body)
        }
        Streaming::Maybe => {
            // JSON unless the handler sends a notification first; then switch to SSE and
            // keep driving the handler from the body.
            let (tx, mut rx) = mpsc::channel(config.stream_buffer.max(1));
            let mut fut = timed(call.run(Outbound::channel(tx)));
            tokio::select! {
                biased;
                reply = &mut fut => {
                    match rx.try_recv() {
                        Ok(first) => sse_response(McpBody::sse(Some(first), rx, Box::pin(std::future::ready(reply)), None)),
                        Err(_) => json_response(reply.status, reply.body),
                    }
                }
                Some(first) = rx.recv() => sse_response(McpBody::sse(Some(first), rx, fut, Some(config.keep_alive))),
            }
        }
        Streaming::Always => match call.into_listen() {
            Ok(stream) => sse_response(McpBody::listen(stream, config.keep_alive)),
            Err(call) => {
                let call = *call;
                let (tx, rx) = mpsc::channel(config.stream_buffer.max(1));
                let fut = call.run(Outbound::channel(tx));
                sse_response(McpBody::sse(None, rx, fut, Some(config.keep_alive)))
            }
        },
    }
}

/// Like `tokio::time::timeout`, but a future that is ready at once (a body that arrived
/// with its headers, a handler that never waits) costs no timer.
async fn deadline<F: Future>(
    limit: std::time::Duration,
    fut: F,
) -> Result<F::Output, tokio::time::error::Elapsed> {
    let mut fut = std::pin::pin!(fut);
    if let Some(out) = futures::FutureExt::now_or_never(fut.as_mut()) {
        return Ok(out);
    }
    tokio::time::timeout(limit, fut).await
}
