//! The connection loop: read a request, run it, write its response, until the peer leaves,
//! a request asks to close, the connection idles too long, or the server stops.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http::header::CONNECTION;
use http::{Method, Request, Response, StatusCode, Version};
use http_body::Body;
use http_body_util::BodyExt;
use tokio::io::AsyncRead;
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use pin_project_lite::pin_project;
use tokio_util::sync::CancellationToken;

use super::decode::Chunked;
use super::encode::{self, LAST_CHUNK, Plan};
use super::io::{Conn, READ_CHUNK, SCRATCH};
use super::parse::{Framing, Head, has_token, parse_head, wants_keep_alive};
use super::{Fail, Limits, Presence, Rejection, reject, too_large};
use crate::request_body::{BoxError, RequestBody};

/// What the first read of a request gave: the bytes read (0: the peer closed), and the
/// head when it was all in them.
type FirstRead = (usize, Option<Box<Head>>);

/// Serves HTTP/1.1 requests on `stream` until the peer closes it, a request asks to close,
/// an error ends it, it waits `idle_timeout` for a request, or `shutdown` fires between
/// requests. Each request goes to `handle`; a request that cannot be read is answered
/// with `render`'s response to its [`Rejection`], and the connection closes. `presence`
/// says, for whoever watches, when the connection waits for a request.
pub(crate) async fn serve_connection<H, F, B, R, RB>(
    stream: TcpStream,
    mut handle: H,
    render: R,
    limits: Arc<Limits>,
    shutdown: CancellationToken,
    presence: Arc<Presence>,
) where
    H: FnMut(Request<RequestBody>) -> F,
    F: Future<Output = Response<B>>,
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
    R: FnOnce(Rejection) -> Response<RB>,
    RB: Body<Data = Bytes>,
    RB::Error: Into<BoxError>,
{
    let mut conn = Conn::new(stream);
    let mut idle = std::pin::pin!(Idle::new(limits.idle_timeout));
    loop {
        let req = match conn
            .read_request(&limits, &shutdown, idle.as_mut(), &presence)
            .await
        {
            Ok(Some(req)) => req,
            Ok(None) | Err(Fail::Io) => return,
            Err(Fail::Reject(rejection)) => {
                // Boxed: the refusal is rare, and kept inline its state would set the
                // size of every held connection's future.
                Box::pin(conn.answer_and_close(render(rejection))).await;
                return;
            }
        };
        let head_only = req.method() == Method::HEAD;
        let version = req.version();
        let mut keep_alive = wants_keep_alive(&req) && !shutdown.is_cancelled();

        // Run the request; a peer that hangs up drops it (and cancels its handler).
        let response = tokio::select! {
            biased;
            r = handle(req) => r,
            () = conn.peer_gone() => return,
        };
        let (parts, body) = response.into_parts();
        if parts
            .headers
            .get(CONNECTION)
            .is_some_and(|v| has_token(v.as_bytes(), b"close"))
        {
            keep_alive = false;
        }
        let body = std::pin::pin!(body);
        let written = conn
            .write_response(parts, body, version, head_only, &mut keep_alive)
            .await;
        if written.is_err() || !keep_alive || shutdown.is_cancelled() {
            conn.close().await;
            return;
        }
    }
}

/// How many parts the idle timeout is checked in.
const IDLE_SLICES: u32 = 4;

pin_project! {
    /// The idle timeout: a timer that ticks every quarter of it, counting the ticks that
    /// find the connection still waiting for a request. A connection that waits through
    /// the whole timeout (four ticks after the one that began the wait) is idle: it is
    /// closed between `idle_timeout` and a quarter more after its wait began.
    ///
    /// A new request costs nothing here (no clock read, no timer moved), and a connection
    /// busy with one response is woken at most once, by the tick that finds it busy.
    struct Idle {
        #[pin]
        tick: Sleep,
        slice: Duration,
        ticks: u32,
    }
}

impl Idle {
    /// The timer of a new connection, which starts waiting at once: its first tick is
    /// due now.
    fn new(timeout: Duration) -> Idle {
        Idle {
            tick: tokio::time::sleep_until(Instant::now()),
            slice: timeout / IDLE_SLICES,
            ticks: 0,
        }
    }

    /// The connection begins waiting for a request.
    fn start_wait(self: Pin<&mut Self>) {
        *self.project().ticks = 0;
    }

    /// Completes once the connection has waited for the whole timeout.
    fn poll_expired(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        let mut me = self.project();
        loop {
            std::task::ready!(me.tick.as_mut().poll(cx));
            *me.ticks += 1;
            if *me.ticks > IDLE_SLICES {
                return Poll::Ready(());
            }
            me.tick.as_mut().reset(Instant::now() + *me.slice);
        }
    }
}

/// How long writing a refusal may take before the connection is dropped.
const REFUSAL_WRITE_TIME: Duration = Duration::from_secs(1);

/// Answers a connection with `response` before reading anything from it (e.g. a `503`
/// when the server has no room for it), then closes it in stages.
pub(crate) async fn refuse<B>(stream: TcpStream, response: Response<B>)
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let conn = Conn::new(stream);
    let _ = tokio::time::timeout(REFUSAL_WRITE_TIME, conn.answer_and_close(response)).await;
}

impl Conn {
    /// Writes `response` with `Connection: close`, then closes.
    async fn answer_and_close<B>(mut self, response: Response<B>)
    where
        B: Body<Data = Bytes>,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = response.into_parts();
        let mut keep_alive = false;
        let body = std::pin::pin!(body);
        let _ = self
            .write_response(parts, body, Version::HTTP_11, false, &mut keep_alive)
            .await;
        self.close().await;
    }

    /// Reads the next request: `None` when the peer closed between requests, no request
    /// began within the idle timeout, or `shutdown` fired while the connection was idle.
    async fn read_request(
        &mut self,
        limits: &Limits,
        shutdown: &CancellationToken,
        mut idle: Pin<&mut Idle>,
        presence: &Presence,
    ) -> Result<Option<Request<RequestBody>>, Fail> {
        // Wait for the first bytes with no buffer, and read them into the thread's scratch
        // buffer: a whole small request (the usual case) is copied once, straight into its
        // own allocation, and the connection holds no read buffer.
        let mut first = None;
        if self.buf.is_empty() {
            idle.as_mut().start_wait();
            presence.set_waiting(true);
            let read = tokio::select! {
                biased;
                r = std::future::poll_fn(|cx| self.poll_first(cx, limits)) => r,
                _ = shutdown.cancelled() => return Ok(None),
                () = std::future::poll_fn(|cx| idle.as_mut().poll_expired(cx)) => return Ok(None),
            };
            presence.set_waiting(false);
            match read {
                Ok((0, _)) => return Ok(None),
                Ok((_, head)) => first = head,
                Err(f) => return Err(f),
            }
        }
        let head = match first {
            Some(head) => *head,
            None => self.read_head(limits).await?,
        };
        let Head {
            request,
            framing,
            expect_continue,
            body,
            ..
        } = head;
        let body = match (body, framing) {
            (Some(body), _) => body,
            (None, Framing::Length(n)) if n > limits.max_body_bytes => return Err(too_large()),
            (None, framing) => {
                if expect_continue && self.buf.is_empty() {
                    self.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
                }
                let until = Instant::now() + limits.body_timeout;
                match tokio::time::timeout_at(until, self.read_body(framing, limits)).await {
                    Ok(body) => body?,
                    Err(_) => {
                        return Err(reject(
                            StatusCode::REQUEST_TIMEOUT,
                            "Request timeout: body not received in time",
                        ));
                    }
                }
            }
        };
        if self.buf.is_empty() && self.buf.capacity() > READ_CHUNK {
            // A large request went through: give its buffer back.
            self.buf = BytesMut::new();
        }
        let (parts, ()) = request.into_parts();
        Ok(Some(Request::from_parts(
            parts,
            RequestBody::from_bytes(body),
        )))
    }

    /// Reads the first bytes of a request into the thread's scratch buffer and parses
    /// its head from there when it is all in; what follows the head is kept in `buf`.
    /// Like [`Conn::fill`], it reads with `poll_read`, so a short read clears the
    /// socket's readiness and the next wait costs no `EAGAIN`.
    ///
    /// The head comes boxed: it passes through several futures' outputs on its way to
    /// the handler, and a pointer is cheaper to move than the head's 250-odd bytes.
    fn poll_first(
        &mut self,
        cx: &mut std::task::Context<'_>,
        limits: &Limits,
    ) -> Poll<Result<FirstRead, Fail>> {
        SCRATCH.with_borrow_mut(|scratch| {
            let mut read = tokio::io::ReadBuf::new(&mut scratch[..]);
            match Pin::new(&mut self.stream).poll_read(cx, &mut read) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Err(_)) => Poll::Ready(Err(Fail::Io)),
                Poll::Ready(Ok(())) => {
                    let data = read.filled();
                    let head = match parse_head(data, limits) {
                        Ok(head) => head.map(Box::new),
                        Err(f) => return Poll::Ready(Err(f)),
                    };
                    let rest = head.as_ref().map_or(data, |h| &data[h.consumed..]);
                    // Whatever is left is the rest of this request or the next one.
                    self.buf.extend_from_slice(rest);
                    Poll::Ready(Ok((data.len(), head)))
                }
            }
        })
    }

    /// Reads until the buffer holds a whole head, within the head's time and size limits.
    async fn read_head(&mut self, limits: &Limits) -> Result<Head, Fail> {
        let mut deadline: Option<Instant> = None;
        let mut complete_possible = true;
        loop {
            if complete_possible && let Some(head) = parse_head(&self.buf, limits)? {
                self.buf.advance(head.consumed);
                return Ok(head);
            }
            if self.buf.len() >= limits.max_head_bytes {
                return Err(super::head_too_large());
            }
            let until = *deadline.get_or_insert_with(|| Instant::now() + limits.head_timeout);
            let before = self.buf.len();
            match tokio::time::timeout_at(until, self.fill()).await {
                Err(_) => {
                    return Err(reject(
                        StatusCode::REQUEST_TIMEOUT,
                        "Request timeout: the request head was not received in time",
                    ));
                }
                Ok(Ok(0)) | Ok(Err(_)) => return Err(Fail::Io),
                Ok(Ok(_)) => {}
            }
            // A head ends with a line feed: parse again only when one arrived, so a peer
            // that trickles bytes cannot make each byte cost a parse of the whole head.
            complete_possible = memchr::memchr(b'\n', &self.buf[before..]).is_some();
        }
    }

    async fn read_body(&mut self, framing: Framing, limits: &Limits) -> Result<Bytes, Fail> {
        match framing {
            Framing::Length(n) => {
                if self.buf.len() < n {
                    self.buf.reserve(n - self.buf.len());
                }
                while self.buf.len() < n {
                    if self.fill().await? == 0 {
                        return Err(Fail::Io);
                    }
                }
                Ok(self.buf.split_to(n).freeze())
            }
            Framing::Chunked => {
                let mut decoder = Chunked::default();
                let mut body = BytesMut::new();
                loop {
                    if decoder.decode(&mut self.buf, &mut body, limits.max_body_bytes)? {
                        return Ok(body.freeze());
                    }
                    if self.fill().await? == 0 {
                        return Err(Fail::Io);
                    }
                }
            }
        }
    }

    async fn write_response<B>(
        &mut self,
        parts: http::response::Parts,
        mut body: Pin<&mut B>,
        version: Version,
        head_only: bool,
        keep_alive: &mut bool,
    ) -> io::Result<()>
    where
        B: Body<Data = Bytes>,
        B::Error: Into<BoxError>,
    {
        let http::response::Parts {
            status, headers, ..
        } = parts;
        let plan = Plan::new(
            status,
            &headers,
            body.size_hint().exact(),
            version,
            head_only,
            keep_alive,
        );
        let mut out = encode::borrow_out(plan.capacity());
        encode::put_head(
            &mut out,
            status,
            &headers,
            &plan,
            version,
            head_only,
            *keep_alive,
        );
        // A stream may last hours: keep nothing of the head but its bytes.
        drop(headers);

        if plan.bodiless {
            return self.write_out(out).await;
        }

        if plan.coalesce() {
            // A body of known, modest length (every JSON response): gather it behind the
            // head and send the lot at once.
            loop {
                let frame = tokio::select! {
                    biased;
                    f = body.frame() => f,
                    () = self.peer_gone() => return Err(io::ErrorKind::ConnectionReset.into()),
                };
                match frame {
                    None => break,
                    Some(Ok(f)) => {
                        if let Ok(data) = f.into_data() {
                            out.extend_from_slice(&data);
                        }
                    }
                    Some(Err(_)) => return Err(io::ErrorKind::InvalidData.into()),
                }
            }
            return self.write_out(out).await;
        }

        // A stream (SSE) or a large body: head with whatever is ready, then each frame as
        // it comes, while watching for the peer to leave.
        if self.buf.is_empty() {
            self.buf = BytesMut::new();
        }
        let mut pending = Some(out);
        loop {
            let next = match futures::FutureExt::now_or_never(body.frame()) {
                Some(f) => f,
                None => {
                    if let Some(head) = pending.take() {
                        self.write_all(&head).await?;
                    }
                    tokio::select! {
                        biased;
                        f = body.frame() => f,
                        () = self.peer_gone() => return Err(io::ErrorKind::ConnectionReset.into()),
                    }
                }
            };
            let mut out = pending.take().unwrap_or_default();
            match next {
                None => {
                    if plan.chunked {
                        out.extend_from_slice(LAST_CHUNK);
                    }
                    return self.write_all(&out).await;
                }
                Some(Err(_)) => {
                    // The body failed midway: the response cannot be completed, so the
                    // connection ends without the final chunk.
                    if !out.is_empty() {
                        self.write_all(&out).await?;
                    }
                    return Err(io::ErrorKind::InvalidData.into());
                }
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    if data.is_empty() {
                        if !out.is_empty() {
                            self.write_all(&out).await?;
                        }
                        continue;
                    }
                    if plan.chunked {
                        encode::put_chunk(&mut out, &data);
                    } else {
                        out.extend_from_slice(&data);
                    }
                    self.write_all(&out).await?;
                }
            }
        }
    }
}
