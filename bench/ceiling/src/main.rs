//! `ceiling`: the least an MCP server can do for the benchmark's requests, written
//! directly on hyper 1.x and serde_json. It is the reference the harness divides every
//! other server's figures by.
//!
//! It does what a conforming 2026-07-28 server must do for these requests and nothing
//! more: it parses the JSON-RPC body, checks the `MCP-Protocol-Version`, `Mcp-Method` and
//! `Mcp-Name` headers against it, and answers
//!
//! - `tools/call` `echo {text}` with the text as one text block;
//! - `tools/call` `confirm_delete {path}` in two rounds: an `input_required` result asking
//!   the boolean `confirm`, then, on the retry that echoes the (unsealed) `requestState`
//!   with the accepted answer, the final text;
//! - `subscriptions/listen` with a `text/event-stream` response that stays open.
//!
//! ```text
//! ceiling --http 127.0.0.1:PORT    # Streamable HTTP at http://127.0.0.1:PORT/mcp
//! ceiling --stdio                  # newline-delimited JSON-RPC on stdin/stdout
//! ```

mod mcp;

use std::convert::Infallible;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::mcp::{HeaderView, Outcome};

/// Largest request body the HTTP server reads.
const MAX_BODY: usize = 4 << 20;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The sandbox folder is made before serving, as ferry-everything's is.
    mcp::sandbox();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["--stdio"] => {
            let served = serve_stdio();
            mcp::remove_sandbox();
            served
        }
        ["--http", addr] => {
            let addr: SocketAddr = addr.parse().map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{addr}: {e}"))
            })?;
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?
                .block_on(serve_http(addr))
        }
        _ => {
            eprintln!("usage: ceiling --http ADDR | --stdio");
            std::process::exit(2);
        }
    }
}

/// Serves newline-delimited JSON-RPC on stdin/stdout until stdin closes. Responses are
/// flushed whenever no more input is already buffered, so pipelined requests share writes.
fn serve_stdio() -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(1 << 16, std::io::stdin());
    let mut output = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Outcome::Reply(_, body) = mcp::dispatch(&line, None) {
            output.write_all(&body)?;
            output.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

/// Accepts connections on `addr` and serves each with hyper's HTTP/1.1 server.
async fn serve_http(addr: SocketAddr) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    tokio::spawn(async {
        stopped().await;
        mcp::remove_sandbox();
        std::process::exit(0);
    });
    eprintln!(
        "ceiling: serving MCP at http://{}/mcp",
        listener.local_addr()?
    );
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // Out of descriptors or a connection reset before accept: keep serving.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(handle))
                .await;
        });
    }
}

/// Resolves on SIGTERM or SIGINT (never, if neither can be watched).
async fn stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}

/// The response body: a whole JSON document, or an open `subscriptions/listen` stream.
type ResponseBody = Either<Full<Bytes>, ListenStream>;

/// Answers one HTTP request.
async fn handle(request: Request<Incoming>) -> Result<Response<ResponseBody>, Infallible> {
    if request.uri().path() != "/mcp" {
        return Ok(plain(StatusCode::NOT_FOUND, "not found"));
    }
    if request.method() != Method::POST {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "POST only");
        response
            .headers_mut()
            .insert("allow", HeaderValue::from_static("POST"));
        return Ok(response);
    }
    let (parts, body) = request.into_parts();
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    if !header("content-type").is_some_and(|v| v.starts_with("application/json")) {
        return Ok(plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        ));
    }
    if !header("accept")
        .is_some_and(|v| v.contains("application/json") && v.contains("text/event-stream"))
    {
        return Ok(plain(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must list application/json and text/event-stream",
        ));
    }
    let view = HeaderView {
        protocol_version: header("mcp-protocol-version"),
        method: header("mcp-method"),
        name: header("mcp-name"),
    };
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(plain(StatusCode::PAYLOAD_TOO_LARGE, "body too large")),
    };
    Ok(match mcp::dispatch(&bytes, Some(&view)) {
        Outcome::Reply(status, json) => {
            let mut response = Response::new(Either::Left(Full::new(Bytes::from(json))));
            *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        Outcome::Accepted => {
            let mut response = Response::new(Either::Left(Full::new(Bytes::new())));
            *response.status_mut() = StatusCode::ACCEPTED;
            response
        }
        Outcome::Listen(event) => {
            let mut response = Response::new(Either::Right(ListenStream {
                first: Some(Bytes::from(event)),
            }));
            let headers = response.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            headers.insert("cache-control", HeaderValue::from_static("no-cache"));
            response
        }
    })
}

/// A plain-text response with `status`.
fn plain(status: StatusCode, text: &'static str) -> Response<ResponseBody> {
    let mut response = Response::new(Either::Left(Full::new(Bytes::from_static(text.as_bytes()))));
    *response.status_mut() = status;
    response
}

/// The body of a `subscriptions/listen` response: the acknowledgment, then nothing until
/// the client goes away (no notifications are ever due in the benchmark).
struct ListenStream {
    first: Option<Bytes>,
}

impl Body for ListenStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.first.take() {
            Some(event) => Poll::Ready(Some(Ok(Frame::data(event)))),
            // Never woken: hyper drops the stream when the connection closes.
            None => Poll::Pending,
        }
    }
}
