//! Ferry's HTTP/1.1 server connection (RFC 9112), used by [`crate::serve_app`] for every
//! plain-TCP connection unless HTTP/2 is enabled.
//!
//! hyper keeps an 8 KiB read buffer and an 8 KiB header buffer for the whole life of every
//! connection; with ten thousand open `subscriptions/listen` streams those buffers are
//! most of a server's memory. This connection holds no buffer while a response streams or
//! while it waits for the peer, copies each request (head and small body) into one
//! exactly-sized allocation, and writes each whole response with a single write.
//!
//! What it speaks: request heads up to `max_head_bytes` and 100 fields (431 above), bodies
//! framed by `Content-Length` or `Transfer-Encoding: chunked` up to `max_body_bytes` (413
//! above), `Expect: 100-continue`, keep-alive and `Connection: close`, HTTP/1.0 peers, and
//! pipelined requests (answered in order). Responses are sized by `Content-Length` when
//! the body's length is known and chunked otherwise. A request head must arrive within
//! `head_timeout` of its first byte and its body within `body_timeout` (408 after). A
//! peer that closes its connection drops the request's future and its response body,
//! which cancels the handler behind them.
//!
//! Malformed input gets a JSON-RPC error body with the status, then the connection closes:
//! after a framing error nothing later on the connection can be trusted.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use ferry_protocol::ErrorCode;
use http::header::{CONNECTION, CONTENT_LENGTH, DATE, TRANSFER_ENCODING};
use http::{
    HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri, Version,
};
use http_body::Body;
use http_body_util::BodyExt;
use tokio::io::AsyncRead;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::request_body::{BoxError, RequestBody};

/// Limits of one connection.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Largest request head (request line and fields).
    pub max_head_bytes: usize,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Time from a head's first byte to its end.
    pub head_timeout: Duration,
    /// Time to receive a body once its head is in.
    pub body_timeout: Duration,
}

/// Most header fields in a request.
const MAX_HEADERS: usize = 100;
/// How much is read at a time.
const READ_CHUNK: usize = 4096;
/// How much of the next pipelined requests is read while a response is pending.
const READ_AHEAD: usize = 64 * 1024;
/// Requests up to this size (head and body) are copied into one allocation.
const COPY_LIMIT: usize = 16 * 1024;
/// Response bodies of known length up to this size go out in the head's write.
const COALESCE_LIMIT: usize = 64 * 1024;
/// How long, and how many bytes, a closing connection keeps reading what the peer sends.
const LINGER_TIME: Duration = Duration::from_millis(500);
const LINGER_BYTES: usize = 256 * 1024;
/// Longest chunk-size or trailer line.
const MAX_CHUNK_LINE: usize = 4096;

/// Serves HTTP/1.1 requests on `stream` until the peer closes it, a request asks to close,
/// an error ends it, or `shutdown` fires between requests.
pub(crate) async fn serve_connection<H, F, B>(
    stream: TcpStream,
    mut handle: H,
    limits: Arc<Limits>,
    shutdown: CancellationToken,
) where
    H: FnMut(Request<RequestBody>) -> F,
    F: Future<Output = Response<B>>,
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let mut conn = Conn {
        stream,
        buf: BytesMut::new(),
    };
    loop {
        let req = match conn.read_request(&limits, &shutdown).await {
            Ok(Some(req)) => req,
            Ok(None) => return,
            Err(Fail::Io) => return,
            Err(Fail::Reject(status, code, message)) => {
                conn.reject(status, code, message).await;
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

/// Why reading a request stopped the connection.
enum Fail {
    /// The socket failed or the peer vanished mid-request: nothing to answer.
    Io,
    /// The request is unacceptable: answer this and close.
    Reject(StatusCode, ErrorCode, &'static str),
}

impl From<io::Error> for Fail {
    fn from(_: io::Error) -> Self {
        Fail::Io
    }
}

fn bad_request(message: &'static str) -> Fail {
    Fail::Reject(StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST, message)
}

/// A parsed request head.
struct Head {
    /// The request, fields included, without its body.
    request: Request<()>,
    /// Bytes of the input taken: the head, and the body when `body` is set.
    consumed: usize,
    framing: Framing,
    /// The client waits for `100 Continue` before it sends the body.
    expect_continue: bool,
    /// The whole body, when it came with the head.
    body: Option<Bytes>,
}

thread_local! {
    /// Where each worker thread reads the start of requests, so an idle connection holds
    /// no read buffer and a read costs no zeroing.
    static SCRATCH: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0; READ_CHUNK].into_boxed_slice());
}

thread_local! {
    /// The buffer each worker thread writes responses from, lent to one response at a
    /// time: a response written at once costs no allocation, and a connection between
    /// responses holds no write buffer.
    static OUT: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Largest write buffer kept for the next response.
const OUT_KEEP: usize = 16 * 1024;

/// The thread's write buffer (or a new one if another response has it), empty, with room
/// for `capacity` bytes.
fn borrow_out(capacity: usize) -> Vec<u8> {
    let mut out = OUT.take();
    out.clear();
    out.reserve(capacity);
    out
}

/// Gives a write buffer back for the next response, unless it grew large.
fn return_out(out: Vec<u8>) {
    if out.capacity() <= OUT_KEEP {
        OUT.set(out);
    }
}

/// How a request's body is framed.
enum Framing {
    Length(usize),
    Chunked,
}

struct Conn {
    stream: TcpStream,
    /// Bytes read and not yet consumed. Empty, with no allocation, between requests
    /// whenever it can be.
    buf: BytesMut,
}

impl Conn {
    /// Reads more into the buffer: `Ok(0)` at end of stream. Without room already
    /// reserved it reads into the thread's scratch buffer first, so a wake-up with nothing
    /// to read (or the end of the stream) allocates nothing.
    ///
    /// Reads go through `poll_read`, which takes a read that did not fill the buffer as
    /// proof that the socket is drained: the next wait goes straight to the reactor
    /// instead of first making a `recv` that would only say `EAGAIN` (one system call
    /// fewer per request).
    async fn fill(&mut self) -> io::Result<usize> {
        let Conn { stream, buf } = self;
        std::future::poll_fn(|cx| {
            let mut stream = std::pin::Pin::new(&mut *stream);
            if buf.capacity() - buf.len() >= READ_CHUNK {
                return tokio_util::io::poll_read_buf(stream, cx, buf);
            }
            SCRATCH.with_borrow_mut(|scratch| {
                let mut read = tokio::io::ReadBuf::new(&mut scratch[..]);
                match stream.as_mut().poll_read(cx, &mut read) {
                    Poll::Ready(Ok(())) => {
                        buf.extend_from_slice(read.filled());
                        Poll::Ready(Ok(read.filled().len()))
                    }
                    Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                    Poll::Pending => Poll::Pending,
                }
            })
        })
        .await
    }

    /// While a response is pending or streaming: reads ahead (bounded) and completes once
    /// the peer has closed or reset the connection. Never completes while the peer stays.
    async fn peer_gone(&mut self) {
        loop {
            if self.buf.len() >= READ_AHEAD {
                // Enough of the next requests is queued; stop reading (back-pressure).
                return std::future::pending().await;
            }
            match self.fill().await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    }

    async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            match self.stream.try_write(data) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.stream.writable().await?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Writes a response taken from [`borrow_out`], then gives the buffer back.
    async fn write_out(&self, out: Vec<u8>) -> io::Result<()> {
        let written = self.write_all(&out).await;
        return_out(out);
        written
    }

    /// Closes in stages (RFC 9112 §9.6): the write side first, then whatever the peer
    /// still sends is read and dropped for a moment, so that unread bytes do not turn the
    /// close into a reset that could destroy the response before the peer reads it.
    async fn close(mut self) {
        let _ = tokio::io::AsyncWriteExt::shutdown(&mut self.stream).await;
        let drain = async {
            let mut left = LINGER_BYTES;
            loop {
                if self.stream.readable().await.is_err() {
                    return;
                }
                let read =
                    SCRATCH.with_borrow_mut(|scratch| self.stream.try_read(&mut scratch[..]));
                match read {
                    Ok(0) => return,
                    Ok(n) if n >= left => return,
                    Ok(n) => left -= n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => return,
                }
            }
        };
        let _ = tokio::time::timeout(LINGER_TIME, drain).await;
    }

    /// Answers a request that could not be read with the endpoint's JSON-RPC error
    /// response, then closes.
    async fn reject(mut self, status: StatusCode, code: ErrorCode, message: &str) {
        let (parts, body) = crate::status::error_response(status, code, message).into_parts();
        let mut keep_alive = false;
        let body = std::pin::pin!(body);
        let _ = self
            .write_response(parts, body, Version::HTTP_11, false, &mut keep_alive)
            .await;
        self.close().await;
    }

    /// Reads the next request: `None` when the peer closed between requests or `shutdown`
    /// fired while the connection was idle.
    async fn read_request(
        &mut self,
        limits: &Limits,
        shutdown: &CancellationToken,
    ) -> Result<Option<Request<RequestBody>>, Fail> {
        // Wait for the first bytes with no buffer and no timer, and read them into the
        // thread's scratch buffer: a whole small request (the usual case) is copied once,
        // straight into its own allocation, and the connection holds no read buffer.
        let mut first = None;
        if self.buf.is_empty() {
            let read = tokio::select! {
                biased;
                r = std::future::poll_fn(|cx| self.poll_first(cx, limits)) => r,
                _ = shutdown.cancelled() => return Ok(None),
            };
            match read {
                Ok((0, _)) => return Ok(None),
                Ok((_, head)) => first = head,
                Err(f) => return Err(f),
            }
        }
        let head = match first {
            Some(head) => head,
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
                        return Err(Fail::Reject(
                            StatusCode::REQUEST_TIMEOUT,
                            ErrorCode::INVALID_REQUEST,
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
    fn poll_first(
        &mut self,
        cx: &mut std::task::Context<'_>,
        limits: &Limits,
    ) -> Poll<Result<(usize, Option<Head>), Fail>> {
        SCRATCH.with_borrow_mut(|scratch| {
            let mut read = tokio::io::ReadBuf::new(&mut scratch[..]);
            match std::pin::Pin::new(&mut self.stream).poll_read(cx, &mut read) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Err(_)) => Poll::Ready(Err(Fail::Io)),
                Poll::Ready(Ok(())) => {
                    let data = read.filled();
                    let head = match parse_head(data, limits) {
                        Ok(head) => head,
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
                return Err(head_too_large());
            }
            let until = *deadline.get_or_insert_with(|| Instant::now() + limits.head_timeout);
            let before = self.buf.len();
            match tokio::time::timeout_at(until, self.fill()).await {
                Err(_) => {
                    return Err(Fail::Reject(
                        StatusCode::REQUEST_TIMEOUT,
                        ErrorCode::INVALID_REQUEST,
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
        mut body: std::pin::Pin<&mut B>,
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
        let bodiless = head_only
            || status.is_informational()
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::NOT_MODIFIED;
        let declared_length = headers.contains_key(CONTENT_LENGTH);
        let exact = body.size_hint().exact();
        let chunked =
            !bodiless && exact.is_none() && !declared_length && version == Version::HTTP_11;
        if !bodiless && exact.is_none() && !declared_length && version != Version::HTTP_11 {
            // An HTTP/1.0 peer: the end of the connection ends the body.
            *keep_alive = false;
        }

        let mut out = borrow_out(256 + exact.map_or(0, |n| n.min(COALESCE_LIMIT as u64) as usize));
        put_status_line(&mut out, status);
        for (name, value) in &headers {
            if name == CONNECTION || name == TRANSFER_ENCODING {
                continue;
            }
            put_header(&mut out, name.as_str(), value.as_bytes());
        }
        if !declared_length
            && let Some(n) = exact
            && (!bodiless || head_only)
        {
            put_content_length(&mut out, n as usize);
        }
        if chunked {
            put_header(&mut out, TRANSFER_ENCODING.as_str(), b"chunked");
        }
        if !*keep_alive {
            put_header(&mut out, CONNECTION.as_str(), b"close");
        } else if version == Version::HTTP_10 {
            put_header(&mut out, CONNECTION.as_str(), b"keep-alive");
        }
        if !headers.contains_key(DATE) {
            put_date(&mut out);
        }
        out.extend_from_slice(b"\r\n");
        // A stream may last hours: keep nothing of the head but its bytes.
        drop(headers);

        if bodiless {
            return self.write_out(out).await;
        }

        if !chunked && exact.is_some_and(|n| n <= COALESCE_LIMIT as u64) {
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
                    if chunked {
                        out.extend_from_slice(b"0\r\n\r\n");
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
                    if chunked {
                        out.reserve(data.len() + 12);
                        put_hex(&mut out, data.len());
                        out.extend_from_slice(b"\r\n");
                        out.extend_from_slice(&data);
                        out.extend_from_slice(b"\r\n");
                    } else {
                        out.extend_from_slice(&data);
                    }
                    self.write_all(&out).await?;
                }
            }
        }
    }
}

fn head_too_large() -> Fail {
    Fail::Reject(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        ErrorCode::INVALID_REQUEST,
        "Request header fields too large",
    )
}

fn too_large() -> Fail {
    Fail::Reject(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::INVALID_REQUEST,
        "Payload too large: the message exceeds the size limit",
    )
}

/// Parses a complete request head at the start of `buf`, copying it (and its body, when
/// the whole body is in `buf` and small) into one allocation that the fields' values then
/// share. `None` when the head is incomplete.
fn parse_head(buf: &[u8], limits: &Limits) -> Result<Option<Head>, Fail> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut fields);
    let head_len = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Fail::Reject(
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                ErrorCode::INVALID_REQUEST,
                "Request header fields too large: too many fields",
            ));
        }
        Err(httparse::Error::Version) => {
            return Err(Fail::Reject(
                StatusCode::HTTP_VERSION_NOT_SUPPORTED,
                ErrorCode::INVALID_REQUEST,
                "HTTP version not supported: speak HTTP/1.1",
            ));
        }
        Err(_) => return Err(bad_request("Bad request: malformed HTTP request")),
    };
    if head_len > limits.max_head_bytes {
        return Err(head_too_large());
    }
    let version = match parsed.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };

    // Body framing (RFC 9112 §6): chunked, a length, or nothing.
    let mut length: Option<usize> = None;
    let mut transfer_encoding = false;
    let mut has_host = false;
    let mut expect_continue = false;
    for field in parsed.headers.iter() {
        if field.name.eq_ignore_ascii_case("content-length") {
            let n = parse_length(field.value)
                .ok_or_else(|| bad_request("Bad request: malformed Content-Length"))?;
            if length.is_some_and(|m| m != n) {
                return Err(bad_request(
                    "Bad request: conflicting Content-Length fields",
                ));
            }
            length = Some(n);
        } else if field.name.eq_ignore_ascii_case("transfer-encoding") {
            if transfer_encoding || !field.value.eq_ignore_ascii_case(b"chunked") {
                return Err(Fail::Reject(
                    StatusCode::NOT_IMPLEMENTED,
                    ErrorCode::INVALID_REQUEST,
                    "Not implemented: the only transfer coding accepted is chunked",
                ));
            }
            transfer_encoding = true;
        } else if field.name.eq_ignore_ascii_case("host") {
            has_host = true;
        } else if field.name.eq_ignore_ascii_case("expect") {
            // RFC 9110 §10.1.1: 100-continue is the only expectation defined; refuse others.
            if !field.value.eq_ignore_ascii_case(b"100-continue") {
                return Err(Fail::Reject(
                    StatusCode::EXPECTATION_FAILED,
                    ErrorCode::INVALID_REQUEST,
                    "Expectation failed: only 100-continue is supported",
                ));
            }
            expect_continue = version == Version::HTTP_11;
        }
    }
    if version == Version::HTTP_11 && !has_host {
        return Err(bad_request(
            "Bad request: HTTP/1.1 requests need a Host field",
        ));
    }
    let framing = match (transfer_encoding, length) {
        (true, Some(_)) => {
            return Err(bad_request(
                "Bad request: both Transfer-Encoding and Content-Length",
            ));
        }
        (true, None) if version == Version::HTTP_10 => {
            return Err(bad_request(
                "Bad request: chunked body from an HTTP/1.0 client",
            ));
        }
        (true, None) => Framing::Chunked,
        (false, n) => Framing::Length(n.unwrap_or(0)),
    };

    // One copy: the head, with the body behind it when it is all here and small.
    let with_body = match framing {
        Framing::Length(n) => {
            n <= limits.max_body_bytes
                && head_len + n <= buf.len()
                && head_len + n <= COPY_LIMIT.max(head_len)
        }
        Framing::Chunked => false,
    };
    let consumed = match framing {
        Framing::Length(n) if with_body => head_len + n,
        _ => head_len,
    };
    let copy = Bytes::copy_from_slice(&buf[..consumed]);
    let at = |part: &[u8]| {
        let start = part.as_ptr() as usize - buf.as_ptr() as usize;
        copy.slice(start..start + part.len())
    };

    let method = Method::from_bytes(parsed.method.unwrap_or_default().as_bytes())
        .map_err(|_| bad_request("Bad request: malformed method"))?;
    let uri = Uri::from_maybe_shared(at(parsed.path.unwrap_or_default().as_bytes()))
        .map_err(|_| bad_request("Bad request: malformed request target"))?;
    let mut request = Request::new(());
    *request.method_mut() = method;
    *request.uri_mut() = uri;
    *request.version_mut() = version;
    let headers: &mut HeaderMap = request.headers_mut();
    headers.reserve(parsed.headers.len());
    for field in parsed.headers.iter() {
        let name =
            field_name(field.name).map_err(|_| bad_request("Bad request: malformed field name"))?;
        let value = HeaderValue::from_maybe_shared(at(field.value))
            .map_err(|_| bad_request("Bad request: malformed field value"))?;
        headers.append(name, value);
    }
    Ok(Some(Head {
        request,
        consumed,
        framing,
        expect_continue,
        body: with_body.then(|| copy.slice(head_len..)),
    }))
}

/// Field names MCP clients send on most requests that the `http` crate does not know.
/// Reading one of these costs no allocation (any other custom name is copied).
static MCP_FIELDS: [HeaderName; 5] = [
    HeaderName::from_static(ferry_protocol::headers::PROTOCOL_VERSION),
    HeaderName::from_static(ferry_protocol::headers::METHOD),
    HeaderName::from_static(ferry_protocol::headers::NAME),
    HeaderName::from_static(ferry_protocol::headers::SESSION_ID),
    HeaderName::from_static(ferry_protocol::headers::LAST_EVENT_ID),
];

/// A request field's name: a well-known one shared, anything else parsed and copied.
fn field_name(raw: &str) -> Result<HeaderName, http::header::InvalidHeaderName> {
    if raw.len() >= ferry_protocol::headers::NAME.len() {
        for known in MCP_FIELDS.iter() {
            if raw.eq_ignore_ascii_case(known.as_str()) {
                return Ok(known.clone());
            }
        }
    }
    HeaderName::from_bytes(raw.as_bytes())
}

fn parse_length(value: &[u8]) -> Option<usize> {
    if value.is_empty() || value.len() > 18 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// Whether the connection stays open after this request's response (RFC 9112 §9.3).
fn wants_keep_alive(req: &Request<RequestBody>) -> bool {
    let connection = req.headers().get(CONNECTION).map(HeaderValue::as_bytes);
    match req.version() {
        Version::HTTP_11 => !connection.is_some_and(|c| has_token(c, b"close")),
        _ => connection.is_some_and(|c| has_token(c, b"keep-alive")),
    }
}

/// Whether a comma-separated field value holds `token` (case-insensitive).
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// Incremental decoder of a chunked body (RFC 9112 §7.1).
#[derive(Default)]
struct Chunked {
    state: ChunkState,
}

#[derive(Default)]
enum ChunkState {
    #[default]
    Size,
    Data(usize),
    DataEnd,
    Trailers,
}

impl Chunked {
    /// Moves what it can from `input` to `body`: `true` once the body is complete.
    fn decode(
        &mut self,
        input: &mut BytesMut,
        body: &mut BytesMut,
        max: usize,
    ) -> Result<bool, Fail> {
        loop {
            match self.state {
                ChunkState::Size => {
                    let Some(line) = take_line(input)? else {
                        return Ok(false);
                    };
                    let size = line
                        .split(|&b| b == b';')
                        .next()
                        .unwrap_or_default()
                        .trim_ascii();
                    if size.is_empty() || size.len() > 15 || !size.iter().all(u8::is_ascii_hexdigit)
                    {
                        return Err(bad_request("Bad request: malformed chunk size"));
                    }
                    let size = usize::from_str_radix(std::str::from_utf8(size).unwrap_or("0"), 16)
                        .map_err(|_| bad_request("Bad request: malformed chunk size"))?;
                    if size == 0 {
                        self.state = ChunkState::Trailers;
                    } else if body.len().saturating_add(size) > max {
                        return Err(too_large());
                    } else {
                        body.reserve(size);
                        self.state = ChunkState::Data(size);
                    }
                }
                ChunkState::Data(left) => {
                    if input.is_empty() {
                        return Ok(false);
                    }
                    let n = left.min(input.len());
                    body.put_slice(&input[..n]);
                    input.advance(n);
                    self.state = if n == left {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(left - n)
                    };
                }
                ChunkState::DataEnd => {
                    if input.len() < 2 {
                        return Ok(false);
                    }
                    if &input[..2] != b"\r\n" {
                        return Err(bad_request("Bad request: malformed chunk"));
                    }
                    input.advance(2);
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailers => {
                    let Some(line) = take_line(input)? else {
                        return Ok(false);
                    };
                    if line.is_empty() {
                        return Ok(true);
                    }
                    // Trailer fields are read and dropped.
                }
            }
        }
    }
}

/// Takes one CRLF-terminated line off the front of `input`, without its CRLF.
fn take_line(input: &mut BytesMut) -> Result<Option<Bytes>, Fail> {
    match memchr::memchr(b'\n', input) {
        Some(i) => {
            if i == 0 || input[i - 1] != b'\r' {
                return Err(bad_request("Bad request: malformed chunk line"));
            }
            let line = input.split_to(i + 1).freeze();
            Ok(Some(line.slice(..i - 1)))
        }
        None if input.len() > MAX_CHUNK_LINE => {
            Err(bad_request("Bad request: chunk line too long"))
        }
        None => Ok(None),
    }
}

/// The status line. Always `HTTP/1.1`, the highest version this server speaks, also to
/// HTTP/1.0 peers (RFC 9110 §6.2).
fn put_status_line(out: &mut Vec<u8>, status: StatusCode) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("Unknown").as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn put_header(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

fn put_content_length(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(b"content-length: ");
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
    out.extend_from_slice(b"\r\n");
}

fn put_hex(out: &mut Vec<u8>, n: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = HEX[n & 0xf];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Adds a `Date` field (RFC 9110 §6.6.1), formatted once a second per thread.
fn put_date(out: &mut Vec<u8>) {
    use std::cell::RefCell;
    use std::time::{SystemTime, UNIX_EPOCH};

    thread_local! {
        static CACHED: RefCell<(u64, [u8; 29])> = const { RefCell::new((u64::MAX, [0; 29])) };
    }
    let now = SystemTime::now();
    let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    CACHED.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != second {
            let text = httpdate::fmt_http_date(now);
            if text.len() == 29 {
                c.1.copy_from_slice(text.as_bytes());
                c.0 = second;
            } else {
                out.extend_from_slice(b"date: ");
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(b"\r\n");
                return;
            }
        }
        out.extend_from_slice(b"date: ");
        out.extend_from_slice(&c.1);
        out.extend_from_slice(b"\r\n");
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_head_bytes: 1024,
            max_body_bytes: 64,
            head_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
        }
    }

    fn decode_all(input: &[u8], max: usize) -> Result<Option<Vec<u8>>, Fail> {
        let mut d = Chunked::default();
        let mut body = BytesMut::new();
        // Feed one byte at a time: every state must resume where it stopped.
        let mut pending = BytesMut::new();
        for &b in input {
            pending.put_u8(b);
            if d.decode(&mut pending, &mut body, max)? {
                return Ok(Some(body.to_vec()));
            }
        }
        Ok(None)
    }

    #[test]
    fn mcp_field_names_are_shared_and_others_parsed() {
        for (raw, parsed) in [
            ("MCP-Protocol-Version", "mcp-protocol-version"),
            ("Mcp-Name", "mcp-name"),
            ("Content-Type", "content-type"),
            ("X-Custom-Field", "x-custom-field"),
            ("mcp-name-x", "mcp-name-x"),
        ] {
            let name = field_name(raw).ok();
            assert_eq!(name.as_ref().map(HeaderName::as_str), Some(parsed), "{raw}");
        }
        assert_eq!(
            field_name("Content-Type").ok(),
            Some(http::header::CONTENT_TYPE)
        );
        assert!(field_name("bad name").is_err());
    }

    #[test]
    fn chunked_bodies_decode_byte_by_byte() {
        let body = decode_all(
            b"5;ext=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: y\r\n\r\n",
            64,
        )
        .ok()
        .flatten();
        assert_eq!(body.as_deref(), Some(&b"hello, world!!!"[..]));
        assert_eq!(
            decode_all(b"0\r\n\r\n", 64).ok().flatten().as_deref(),
            Some(&b""[..])
        );
        assert!(decode_all(b"5\r\nhello\r\n", 64).ok().flatten().is_none());
    }

    #[test]
    fn malformed_or_oversized_chunks_are_refused() {
        for bad in [
            &b"zz\r\nhello\r\n0\r\n\r\n"[..],
            b"5\r\nhelloXX0\r\n\r\n",
            b"5\nhello\r\n",
            b"\r\n",
        ] {
            assert!(
                matches!(
                    decode_all(bad, 64),
                    Err(Fail::Reject(StatusCode::BAD_REQUEST, ..))
                ),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(matches!(
            decode_all(b"41\r\n", 64),
            Err(Fail::Reject(StatusCode::PAYLOAD_TOO_LARGE, ..))
        ));
        assert!(matches!(
            decode_all(b"ffffffffffffffffff\r\n", 64),
            Err(Fail::Reject(StatusCode::BAD_REQUEST, ..))
        ));
    }

    #[test]
    fn heads_parse_with_their_framing() {
        let head = b"POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}";
        let Ok(Some(parsed)) = parse_head(head, &limits()) else {
            panic!("head not parsed");
        };
        assert_eq!(parsed.consumed, head.len(), "head and body taken together");
        assert_eq!(parsed.body.as_deref(), Some(&b"{}"[..]));
        assert!(!parsed.expect_continue);
        let req = parsed.request;
        assert_eq!(req.method(), Method::POST);
        assert_eq!(req.uri().path(), "/mcp");
        assert_eq!(req.headers()["host"], "a");
        assert_eq!(req.headers()["content-length"], "2");
        // A body still on its way: the head alone is taken.
        let Ok(Some(early)) = parse_head(&head[..head.len() - 1], &limits()) else {
            panic!("head not parsed");
        };
        assert_eq!(early.consumed, head.len() - 2);
        assert!(early.body.is_none());
        let partial = b"POST /mcp HTTP/1.1\r\nHost: a\r\n";
        assert!(matches!(parse_head(partial, &limits()), Ok(None)));
        let chunked = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(
            parse_head(chunked, &limits()),
            Ok(Some(Head {
                framing: Framing::Chunked,
                body: None,
                ..
            }))
        ));
    }

    #[test]
    fn expectations_are_read_from_the_head() {
        let head =
            b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 9\r\n\r\n";
        assert!(matches!(
            parse_head(head, &limits()),
            Ok(Some(Head {
                framing: Framing::Length(9),
                expect_continue: true,
                ..
            }))
        ));
        let old = b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n";
        assert!(matches!(
            parse_head(old, &limits()),
            Ok(Some(Head {
                expect_continue: false,
                ..
            }))
        ));
        let other = b"POST / HTTP/1.1\r\nHost: a\r\nExpect: something\r\n\r\n";
        assert!(matches!(
            parse_head(other, &limits()),
            Err(Fail::Reject(StatusCode::EXPECTATION_FAILED, ..))
        ));
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection_field() {
        let req = |version, connection: Option<&'static str>| {
            let mut r = Request::new(RequestBody::empty());
            *r.version_mut() = version;
            if let Some(c) = connection {
                r.headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static(c));
            }
            r
        };
        assert!(wants_keep_alive(&req(Version::HTTP_11, None)));
        assert!(!wants_keep_alive(&req(
            Version::HTTP_11,
            Some("Upgrade, close")
        )));
        assert!(!wants_keep_alive(&req(Version::HTTP_10, None)));
        assert!(wants_keep_alive(&req(Version::HTTP_10, Some("Keep-Alive"))));
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        let cases: [(&[u8], StatusCode); 6] = [
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", StatusCode::BAD_REQUEST),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -2\r\n\r\n", StatusCode::BAD_REQUEST),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", StatusCode::BAD_REQUEST),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", StatusCode::NOT_IMPLEMENTED),
            (b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", StatusCode::BAD_REQUEST),
            (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", StatusCode::BAD_REQUEST),
        ];
        for (head, status) in cases {
            match parse_head(head, &limits()) {
                Err(Fail::Reject(s, ..)) => {
                    assert_eq!(s, status, "{}", String::from_utf8_lossy(head))
                }
                _ => panic!("accepted: {}", String::from_utf8_lossy(head)),
            }
        }
    }

    #[test]
    fn numbers_are_written_exactly() {
        let mut out = Vec::new();
        put_content_length(&mut out, 0);
        put_content_length(&mut out, 1234567);
        put_hex(&mut out, 0x1a2f);
        assert_eq!(out, b"content-length: 0\r\ncontent-length: 1234567\r\n1a2f");
        let mut date = Vec::new();
        put_date(&mut date);
        assert!(
            date.starts_with(b"date: ") && date.ends_with(b" GMT\r\n"),
            "{date:?}"
        );
    }
}
