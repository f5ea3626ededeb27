//! 2025-11-25 sessions over HTTP: the `GET` stream, `DELETE`, and SSE streams with event
//! ids that a client can resume with `Last-Event-ID` after a disconnect (2025-11-25
//! transports: "Resumability and Redelivery"). In that revision a disconnect is not a
//! cancellation, so a session's handler keeps running and its messages wait, within a
//! bounded window, for the client to come back.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use ferry_protocol::ErrorCode;
use ferry_server::transport::RequestEnv;
use ferry_server::{Outbound, Outcome, PendingCall, Server, Session};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use parking_lot::Mutex;
use tokio::sync::mpsc;

use crate::body::McpBody;
use crate::status::{error_response, json_response};

/// Events kept per stream for resumption.
const WINDOW: usize = 256;
/// Streams kept per session.
const STREAMS_PER_SESSION: usize = 64;
/// How long a finished stream stays resumable.
const LINGER: Duration = Duration::from_secs(60);

/// One event of a stream: its sequence number, its message, and whether it is the
/// request's final response.
type Event = (u64, Bytes, bool);

struct StreamLog {
    events: VecDeque<(u64, Bytes)>,
    next_seq: u64,
    live: Option<mpsc::Sender<Event>>,
    finished: Option<Instant>,
}

impl StreamLog {
    fn new() -> Self {
        StreamLog {
            events: VecDeque::new(),
            next_seq: 1,
            live: None,
            finished: None,
        }
    }

    fn push(&mut self, data: Bytes, last: bool) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.events.len() == WINDOW {
            self.events.pop_front();
        }
        self.events.push_back((seq, data.clone()));
        if let Some(tx) = &self.live
            && tx.try_send((seq, data, last)).is_err()
        {
            // The reader is gone or slow: it resumes from the log.
            self.live = None;
        }
        seq
    }
}

#[derive(Default)]
struct SessionStreams {
    next: u64,
    streams: HashMap<u64, StreamLog>,
}

/// The resumable streams of every live session.
#[derive(Default)]
pub(crate) struct Streams {
    sessions: Mutex<HashMap<String, SessionStreams>>,
}

impl Streams {
    fn open(&self, session: &str) -> u64 {
        let mut all = self.sessions.lock();
        // Finished streams stay resumable for a while; sessions with none left go.
        for s in all.values_mut() {
            s.streams
                .retain(|_, log| log.finished.is_none_or(|t| t.elapsed() < LINGER));
        }
        all.retain(|id, s| id == session || !s.streams.is_empty());
        let s = all.entry(session.to_owned()).or_default();
        if s.streams.len() >= STREAMS_PER_SESSION
            && let Some(oldest) = s.streams.keys().min().copied()
        {
            s.streams.remove(&oldest);
        }
        s.next += 1;
        let n = s.next;
        s.streams.insert(n, StreamLog::new());
        n
    }

    fn with<R>(
        &self,
        session: &str,
        stream: u64,
        f: impl FnOnce(&mut StreamLog) -> R,
    ) -> Option<R> {
        let mut all = self.sessions.lock();
        all.get_mut(session)?.streams.get_mut(&stream).map(f)
    }

    pub(crate) fn forget(&self, session: &str) {
        self.sessions.lock().remove(session);
    }
}

fn event_bytes(stream: u64, seq: u64, data: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(data.len() + 48);
    b.put_slice(format!("id: {stream}-{seq}\nevent: message\ndata: ").as_bytes());
    b.put_slice(data);
    b.put_slice(b"\n\n");
    b.freeze()
}

fn sse(rx: mpsc::Receiver<Bytes>) -> Response<McpBody> {
    let mut r = Response::new(McpBody::stream(rx));
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// Runs a session's request as its own task, so a disconnect does not stop it. The
/// response is JSON when the handler sends nothing first; otherwise an SSE stream with
/// resumable event ids.
pub(crate) async fn run_call(
    streams: Arc<Streams>,
    session: Arc<Session>,
    call: PendingCall,
) -> Response<McpBody> {
    let n = streams.open(session.id());
    let (out_tx, mut out_rx) = mpsc::channel::<Bytes>(32);
    let (live_tx, mut live_rx) = mpsc::channel::<Event>(64);
    streams.with(session.id(), n, |log| log.live = Some(live_tx));
    let task_streams = streams.clone();
    let sid = session.id().to_owned();
    tokio::spawn(async move {
        let mut run = call.run(Outbound::channel(out_tx));
        let outcome = loop {
            tokio::select! {
                biased;
                Some(msg) = out_rx.recv() => {
                    task_streams.with(&sid, n, |log| log.push(msg, false));
                }
                outcome = &mut run => break outcome,
            }
        };
        while let Ok(msg) = out_rx.try_recv() {
            task_streams.with(&sid, n, |log| log.push(msg, false));
        }
        task_streams.with(&sid, n, |log| {
            if let Outcome::Reply(reply) = outcome {
                log.push(reply.body, true);
            }
            log.finished = Some(Instant::now());
            log.live = None;
        });
    });
    // The first event decides the response's shape: the final response alone is JSON.
    let Some((seq, first, last)) = live_rx.recv().await else {
        // Cancelled without a reply: nothing may be sent for it.
        let mut r = Response::new(McpBody::empty());
        *r.status_mut() = StatusCode::ACCEPTED;
        return r;
    };
    if last {
        return json_response(StatusCode::OK, first);
    }
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let _ = tx.try_send(event_bytes(n, seq, &first));
    tokio::spawn(async move {
        while let Some((seq, data, _)) = live_rx.recv().await {
            if tx.send(event_bytes(n, seq, &data)).await.is_err() {
                break;
            }
        }
    });
    sse(rx)
}

/// `GET` on the endpoint: with `Last-Event-ID`, resumes that stream; otherwise opens the
/// session's standalone stream.
pub(crate) fn get(
    streams: &Arc<Streams>,
    server: &Server,
    headers: &HeaderMap,
    keep_alive: Duration,
) -> Response<McpBody> {
    let Some(session) = session_from(server, headers) else {
        return not_found_or_not_allowed(headers);
    };
    if let Some(last) = headers
        .get(ferry_protocol::headers::LAST_EVENT_ID)
        .and_then(|v| v.to_str().ok())
        && let Some((stream, seq)) = last
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
    {
        return resume(streams, &session, stream, seq);
    }
    // The standalone stream: server notifications and requests not tied to a request.
    let n = streams.open(session.id());
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let (session_tx, mut session_rx) = mpsc::channel::<Bytes>(64);
    session.attach_stream(session_tx);
    let streams = streams.clone();
    let sid = session.id().to_owned();
    let closed = session.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(keep_alive);
        tick.tick().await;
        loop {
            tokio::select! {
                msg = session_rx.recv() => {
                    let Some(msg) = msg else { break };
                    let seq = streams.with(&sid, n, |log| log.push(msg.clone(), false)).unwrap_or(0);
                    if tx.send(event_bytes(n, seq, &msg)).await.is_err() {
                        break;
                    }
                }
                _ = tick.tick() => {
                    if tx.send(Bytes::from_static(b":\n\n")).await.is_err() {
                        break;
                    }
                }
                _ = closed.closed() => break,
            }
        }
        streams.with(&sid, n, |log| log.finished = Some(Instant::now()));
    });
    sse(rx)
}

fn resume(
    streams: &Arc<Streams>,
    session: &Arc<Session>,
    stream: u64,
    after: u64,
) -> Response<McpBody> {
    let (tx, rx) = mpsc::channel::<Bytes>(WINDOW + 64);
    let (live_tx, mut live_rx) = mpsc::channel::<Event>(64);
    let found = streams.with(session.id(), stream, |log| {
        for (seq, data) in log.events.iter().filter(|(s, _)| *s > after) {
            let _ = tx.try_send(event_bytes(stream, *seq, data));
        }
        if log.finished.is_none() {
            log.live = Some(live_tx);
        }
    });
    if found.is_none() {
        let mut r = Response::new(McpBody::empty());
        *r.status_mut() = StatusCode::NOT_FOUND;
        return r;
    }
    tokio::spawn(async move {
        while let Some((seq, data, _)) = live_rx.recv().await {
            if tx.send(event_bytes(stream, seq, &data)).await.is_err() {
                break;
            }
        }
    });
    sse(rx)
}

/// `DELETE` on the endpoint: ends the session.
pub(crate) fn delete(streams: &Streams, server: &Server, headers: &HeaderMap) -> Response<McpBody> {
    let Some(id) = headers
        .get(ferry_protocol::headers::SESSION_ID)
        .and_then(|v| v.to_str().ok())
    else {
        return method_not_allowed();
    };
    let mut r = Response::new(McpBody::empty());
    if server.end_session(id) {
        streams.forget(id);
        *r.status_mut() = StatusCode::NO_CONTENT;
    } else {
        *r.status_mut() = StatusCode::NOT_FOUND;
    }
    r
}

/// A `GET` or `DELETE` of a session on a server that shares sessions through a store.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SessionOp {
    Get,
    Delete,
}

/// `GET` or `DELETE` with a session store: the session is adopted from the store (`GET`:
/// the stream then lives on this instance), or ended here and in the store (`DELETE`).
/// When the store cannot be reached, a session this instance does not hold gets 503.
pub(crate) async fn with_store(
    svc: crate::McpService,
    op: SessionOp,
    headers: HeaderMap,
) -> Response<McpBody> {
    let server = svc.server();
    let Some(id) = headers
        .get(ferry_protocol::headers::SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    else {
        return method_not_allowed();
    };
    match op {
        SessionOp::Get => {
            let mut env = RequestEnv::http(headers);
            server.prepare_session(&mut env).await;
            if env.session_store_unavailable() && server.session(&id).is_none() {
                return store_unavailable();
            }
            let headers = env.headers().cloned().unwrap_or_default();
            get(
                svc.streams(),
                server,
                &headers,
                svc.config().sse_keep_alive(),
            )
        }
        SessionOp::Delete => {
            let mut r = Response::new(McpBody::empty());
            match server.delete_session(&id).await {
                Ok(true) => {
                    svc.streams().forget(&id);
                    *r.status_mut() = StatusCode::NO_CONTENT;
                    r
                }
                Ok(false) => {
                    *r.status_mut() = StatusCode::NOT_FOUND;
                    r
                }
                Err(e) => {
                    tracing::warn!(error = %e, "DELETE: the session store could not be reached");
                    svc.streams().forget(&id);
                    error_response(
                        StatusCode::SERVICE_UNAVAILABLE,
                        ErrorCode::INTERNAL_ERROR,
                        "Service unavailable: the session store cannot be reached, so the session could not be ended on every instance; retry later",
                    )
                }
            }
        }
    }
}

fn store_unavailable() -> Response<McpBody> {
    error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        "Service unavailable: the session store cannot be reached, so this session could not be looked up; retry later",
    )
}

fn session_from(server: &Server, headers: &HeaderMap) -> Option<Arc<Session>> {
    let id = headers
        .get(ferry_protocol::headers::SESSION_ID)?
        .to_str()
        .ok()?;
    server.session(id)
}

fn not_found_or_not_allowed(headers: &HeaderMap) -> Response<McpBody> {
    if headers.contains_key(ferry_protocol::headers::SESSION_ID) {
        error_response(
            StatusCode::NOT_FOUND,
            ErrorCode::INVALID_REQUEST,
            "Session not found",
        )
    } else {
        method_not_allowed()
    }
}

pub(crate) fn method_not_allowed() -> Response<McpBody> {
    let mut r = error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::INVALID_REQUEST,
        "Method not allowed: this MCP endpoint accepts POST (and GET or DELETE with a 2025-11-25 session)",
    );
    r.headers_mut()
        .insert(http::header::ALLOW, HeaderValue::from_static("POST"));
    r
}
