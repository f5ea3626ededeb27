//! The stdio transport for Ferry MCP servers (MCP 2026-07-28 `transports/stdio`).
//!
//! One JSON-RPC message per line on stdin and stdout; nothing else is ever written to
//! stdout (log to stderr). Many requests run at once on one connection, each answered when
//! it finishes. `notifications/cancelled` stops a request's handler. The server exits
//! when stdin ends.
//!
//! Memory stays bounded whatever the client does: lines have a size limit, at most
//! [`StdioConfig::max_in_flight`] requests run at a time, and output goes through a bounded
//! queue. A client that writes requests without reading the answers is slowed down (the
//! server stops reading stdin) rather than buffered without limit.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! let server = ferry_server::Server::builder("demo", "1.0.0").build().unwrap();
//! ferry_stdio::serve_stdio(server).await
//! # }
//! ```
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::io;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use ferry_protocol::ErrorCode;
use ferry_protocol::ErrorObject;
use ferry_protocol::jsonrpc::RequestId;
use ferry_server::{Handled, Outbound, Outcome, Principal, Reply, RequestEnv, Server, Streaming};
use futures::StreamExt;
use futures::future::{AbortHandle, Abortable};
use futures::stream::FuturesUnordered;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Limits and settings of a stdio connection.
#[derive(Clone, Debug)]
pub struct StdioConfig {
    /// The longest line accepted, in bytes. Longer messages are skipped and answered with
    /// -32600. Default 4 MiB.
    pub max_line_bytes: usize,
    /// How many requests may run at once before the server stops reading stdin.
    /// Default 64.
    pub max_in_flight: usize,
    /// How many outgoing messages may wait for the client to read them. Default 256.
    pub output_queue: usize,
    /// How long requests still running at end of input may take to finish before they
    /// are dropped. Default 2 s.
    pub shutdown_grace: Duration,
    /// The principal of every request on this connection, if the process knows who runs
    /// it (stdio servers take credentials from their environment).
    pub principal: Option<Principal>,
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig {
            max_line_bytes: 4 * 1024 * 1024,
            max_in_flight: 64,
            output_queue: 256,
            shutdown_grace: Duration::from_secs(2),
            principal: None,
        }
    }
}

/// Serves `server` on the process's stdin and stdout until stdin ends.
///
/// On Unix, when stdin and stdout are pipes or Unix sockets (as when a client starts the
/// server), they are read and written through the runtime's event loop, with no thread
/// hop per read or write; otherwise (a terminal, a file) through Tokio's blocking
/// [`tokio::io::stdin`] and [`tokio::io::stdout`]. Either way, the server owns the
/// process's stdin and stdout while it serves.
///
/// The connection runs as a task of its own on the runtime, so that on a multi-threaded
/// runtime it is polled by the worker that also waits for stdin to become readable, not
/// by the thread that called `block_on` (which every wake-up would otherwise have to
/// hand over to, through the kernel).
pub async fn serve_stdio(server: Server) -> io::Result<()> {
    let connection = tokio::spawn(serve(
        server,
        process_io::stdin(),
        process_io::stdout(),
        StdioConfig::default(),
    ));
    let mut connection = AbortOnDrop(connection);
    match (&mut connection.0).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(io::Error::other(e)),
    }
}

/// Stops the connection's task when the future serving it is dropped, as dropping the
/// connection's own future would.
struct AbortOnDrop(tokio::task::JoinHandle<io::Result<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The process's stdin and stdout, event-driven where the platform allows it.
mod process_io {
    use tokio::io::{AsyncRead, AsyncWrite};

    /// Stdin as an async reader.
    pub(crate) fn stdin() -> Box<dyn AsyncRead + Unpin + Send> {
        #[cfg(unix)]
        if let Some(reader) = event_driven::reader() {
            return reader;
        }
        Box::new(tokio::io::stdin())
    }

    /// Stdout as an async writer.
    pub(crate) fn stdout() -> Box<dyn AsyncWrite + Unpin + Send> {
        #[cfg(unix)]
        if let Some(writer) = event_driven::writer() {
            return writer;
        }
        Box::new(tokio::io::stdout())
    }

    /// Pipes and Unix sockets registered with the runtime's reactor. A copy of the file
    /// descriptor is registered (the process's own fd 0 and 1 stay open); it is switched to
    /// non-blocking mode, which the process's stdin and stdout then share.
    #[cfg(unix)]
    mod event_driven {
        use std::fs::File;
        use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
        use std::os::unix::fs::FileTypeExt;

        use tokio::io::{AsyncRead, AsyncWrite};
        use tokio::net::unix::pipe;

        enum Kind {
            Pipe,
            Socket,
        }

        /// A copy of `fd` and what it is, if it is a pipe or a Unix socket.
        fn pollable(fd: BorrowedFd<'_>) -> Option<(OwnedFd, Kind)> {
            let owned = fd.try_clone_to_owned().ok()?;
            let file = File::from(owned);
            let kind = file.metadata().ok()?.file_type();
            let kind = if kind.is_fifo() {
                Kind::Pipe
            } else if kind.is_socket() {
                Kind::Socket
            } else {
                return None;
            };
            Some((OwnedFd::from(file), kind))
        }

        /// A socket as a Tokio stream, if it is a Unix stream socket.
        fn unix_stream(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
            let socket = std::os::unix::net::UnixStream::from(fd);
            // A TCP socket (an inetd-style start) is not a Unix socket: leave it to the
            // blocking path.
            socket.local_addr().ok()?;
            socket.set_nonblocking(true).ok()?;
            tokio::net::UnixStream::from_std(socket).ok()
        }

        pub(super) fn reader() -> Option<Box<dyn AsyncRead + Unpin + Send>> {
            let stdin = std::io::stdin();
            let (fd, kind) = pollable(stdin.as_fd())?;
            match kind {
                Kind::Pipe => Some(Box::new(pipe::Receiver::from_owned_fd(fd).ok()?)),
                Kind::Socket => Some(Box::new(unix_stream(fd)?)),
            }
        }

        pub(super) fn writer() -> Option<Box<dyn AsyncWrite + Unpin + Send>> {
            let stdout = std::io::stdout();
            let (fd, kind) = pollable(stdout.as_fd())?;
            match kind {
                Kind::Pipe => Some(Box::new(pipe::Sender::from_owned_fd(fd).ok()?)),
                Kind::Socket => Some(Box::new(unix_stream(fd)?)),
            }
        }
    }
}

/// Serves `server` over any reader and writer pair (a child's pipes, a socket, a test
/// buffer) until the reader ends or the server shuts down.
///
/// The end of one connection is not the end of the server: the same [`Server`] may serve
/// other connections at once, and `subscriptions/listen` streams of this connection end
/// with their completion result while the server goes on.
///
/// Reading and writing run in the caller's task, side by side: answers queue while input
/// is read, and everything queued goes out in one write when reading pauses.
pub async fn serve<R, W>(
    server: Server,
    reader: R,
    writer: W,
    config: StdioConfig,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    let (tx, rx) = mpsc::channel::<Bytes>(config.output_queue.max(1));
    let ((), written) = tokio::join!(
        read_loop(server, reader, tx, config),
        write_loop(writer, rx)
    );
    written
}

/// Reads and runs requests until the input ends, sending every outgoing message to `tx`.
/// Ends by dropping its sender: the writer ends once the last sender is gone.
async fn read_loop<R: AsyncRead + Unpin>(
    server: Server,
    reader: R,
    tx: mpsc::Sender<Bytes>,
    config: StdioConfig,
) {
    let mut reader = LineReader::new(reader, config.max_line_bytes);
    let mut in_flight: FuturesUnordered<_> = FuturesUnordered::new();
    let mut running: HashMap<RequestId, Running> = HashMap::new();
    let mut next_seq: u64 = 0;
    let mut eof = false;
    let mut session: Option<std::sync::Arc<ferry_server::Session>> = None;

    while !eof {
        let can_read = in_flight.len() < config.max_in_flight;
        tokio::select! {
            biased;
            Some((id, seq, outcome)) = in_flight.next(), if !in_flight.is_empty() => {
                if running.get(&id).is_some_and(|r| r.seq == seq) {
                    running.remove(&id);
                }
                if let Ok(Outcome::Reply(reply)) = outcome
                    && tx.send(reply.body).await.is_err()
                {
                    break;
                }
            }
            _ = server.shutting_down() => eof = true,
            read = reader.next_line(), if can_read => {
                match read {
                    Ok(Line::Eof) => eof = true,
                    Ok(Line::TooLong) => {
                        let e = ErrorObject::new(ErrorCode::INVALID_REQUEST, "Invalid request: message exceeds the size limit");
                        if tx.send(Reply::error(None, &e).body).await.is_err() {
                            break;
                        }
                    }
                    Ok(Line::Message) => {
                        if reader.line().iter().all(u8::is_ascii_whitespace) {
                            reader.clear();
                            continue;
                        }
                        let env = RequestEnv::stdio()
                            .with_principal(config.principal.clone())
                            .with_session(session.clone());
                        let handled = server.handle(reader.line(), env);
                        reader.clear();
                        match handled {
                            Handled::Reply(r) => {
                                if tx.send(r.body).await.is_err() {
                                    break;
                                }
                            }
                            Handled::Accepted | Handled::UnexpectedResponse => {}
                            Handled::Initialized { reply, session: s } => {
                                // A 2025-11-25 client: the process is now its session, and
                                // messages not tied to a request go to stdout too.
                                s.attach_stream(tx.clone());
                                server.watch_session(&s);
                                session = Some(s);
                                if tx.send(reply.body).await.is_err() {
                                    break;
                                }
                            }
                            Handled::Cancel(id) => {
                                if let Some(r) = running.remove(&id) {
                                    r.abort.abort();
                                }
                            }
                            Handled::Pending(call) => {
                                let id = call.id().clone();
                                if running.contains_key(&id) {
                                    let e = ErrorObject::new(
                                        ErrorCode::INVALID_REQUEST,
                                        format!("Invalid request: id {id} is already in use by a request in progress"),
                                    );
                                    if tx.send(Reply::error(Some(&id), &e).body).await.is_err() {
                                        break;
                                    }
                                    continue;
                                }
                                let listen = call.streaming() == Streaming::Always;
                                let mut fut = call.run(Outbound::channel(tx.clone()));
                                // Most handlers finish on their first poll: answer those
                                // at once, with nothing to register or cancel.
                                if let Poll::Ready(outcome) = futures::poll!(&mut fut) {
                                    if let Outcome::Reply(reply) = outcome
                                        && tx.send(reply.body).await.is_err()
                                    {
                                        break;
                                    }
                                    continue;
                                }
                                let (abort, registration) = AbortHandle::new_pair();
                                let seq = next_seq;
                                next_seq += 1;
                                running.insert(id.clone(), Running { seq, abort, listen });
                                let fut = Abortable::new(fut, registration);
                                in_flight.push(async move { (id, seq, fut.await) });
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "stdin read failed");
                        eof = true;
                    }
                }
            }
        }
    }

    // End of input. A 2025-11-25 session ends with its connection. Listen streams never
    // end by themselves: end them with their completion result (unless the server is
    // shutting down, when they end so on their own). Other requests get a moment to
    // finish; whatever still runs after it is dropped.
    if let Some(s) = &session {
        s.close();
    }
    if !server.is_shutting_down() {
        let mut listens: Vec<&RequestId> = running
            .iter()
            .filter(|(_, r)| r.listen)
            .map(|(id, _)| id)
            .collect();
        listens.sort_by_key(|id| running[*id].seq);
        for id in listens {
            running[id].abort.abort();
            if tx.send(listen_completion(&server, id)).await.is_err() {
                break;
            }
        }
    }
    let drain = async {
        while let Some((_, _, outcome)) = in_flight.next().await {
            if let Ok(Outcome::Reply(reply)) = outcome
                && tx.send(reply.body).await.is_err()
            {
                break;
            }
        }
    };
    if tokio::time::timeout(config.shutdown_grace, drain)
        .await
        .is_err()
    {
        tracing::debug!("requests still running at end of input were dropped");
    }
    // Dropping the unfinished requests (and, on return, `tx`) drops their senders, so
    // the writer ends.
    drop(in_flight);
    drop(running);
}

/// A request whose handler is running.
struct Running {
    /// Tells this request from a later one reusing its id.
    seq: u64,
    abort: AbortHandle,
    /// A `subscriptions/listen` stream.
    listen: bool,
}

/// The graceful end of a listen stream: `{resultType: complete, _meta: {subscriptionId}}`
/// (subscriptions.mdx).
fn listen_completion(server: &Server, id: &RequestId) -> Bytes {
    let message = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.to_value(),
        "result": {
            "resultType": "complete",
            "_meta": {
                ferry_protocol::meta::SUBSCRIPTION_ID: id.to_value(),
                ferry_protocol::meta::SERVER_INFO: server.info(),
            }
        }
    });
    Bytes::from(serde_json::to_vec(&message).unwrap_or_default())
}

enum Line {
    Message,
    TooLong,
    Eof,
}

/// Splits input into lines, holding at most `max` bytes of one line. Cancel-safe: a read
/// interrupted by `select!` keeps what it consumed, and the next call continues the line.
struct LineReader<R> {
    inner: BufReader<R>,
    buf: Vec<u8>,
    too_long: bool,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(reader: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, reader),
            buf: Vec::with_capacity(4096),
            too_long: false,
            max,
        }
    }

    /// The line returned by the last [`Line::Message`].
    fn line(&self) -> &[u8] {
        &self.buf
    }

    async fn next_line(&mut self) -> io::Result<Line> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                let result = if self.too_long {
                    Line::TooLong
                } else if self.buf.is_empty() {
                    Line::Eof
                } else {
                    Line::Message
                };
                self.too_long = false;
                return Ok(result);
            }
            let newline = memchr::memchr(b'\n', available);
            let chunk = &available[..newline.unwrap_or(available.len())];
            if !self.too_long {
                if self.buf.len() + chunk.len() > self.max {
                    self.too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(chunk);
                }
            }
            let consumed = newline.map_or(available.len(), |i| i + 1);
            self.inner.consume(consumed);
            if newline.is_some() {
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                }
                let result = if self.too_long {
                    Line::TooLong
                } else {
                    Line::Message
                };
                self.too_long = false;
                return Ok(result);
            }
        }
    }

    /// Forgets the last line before reading the next.
    fn clear(&mut self) {
        self.buf.clear();
    }
}

/// How long the writer waits after a progress notification before writing on (a flush
/// and a yield are not enough for a client that reads slowly to see it alone).
const PROGRESS_GAP: std::time::Duration = std::time::Duration::from_millis(1);

/// Whether a serialised message is a `notifications/progress`: Ferry writes a
/// notification's `method` right after `jsonrpc`, so one comparison of its opening bytes
/// tells (a message written otherwise is simply not treated specially).
fn is_progress(msg: &[u8]) -> bool {
    msg.starts_with(br#"{"jsonrpc":"2.0","method":"notifications/progress""#)
}

async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::Receiver<Bytes>,
) -> io::Result<()> {
    let mut out = tokio::io::BufWriter::with_capacity(64 * 1024, writer);
    while let Some(msg) = rx.recv().await {
        out.write_all(&msg).await?;
        out.write_all(b"\n").await?;
        // Write everything already queued before flushing once, except that a progress
        // notification goes out on its own, ahead of what follows: some clients (the
        // TypeScript SDK's stdio client among them) drop a progress notification that
        // arrives in the same read as the request's result.
        let mut progress = is_progress(&msg);
        while !progress {
            let Ok(more) = rx.try_recv() else { break };
            out.write_all(&more).await?;
            out.write_all(b"\n").await?;
            progress = is_progress(&more);
        }
        out.flush().await?;
        if progress {
            // Let the peer read it before the next message lands in the pipe.
            tokio::time::sleep(PROGRESS_GAP).await;
        }
    }
    out.flush().await?;
    out.shutdown().await.or(Ok(()))
}
