//! Ferry's HTTP/1.1 server connection (RFC 9112), used by [`crate::serve`] for every
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
//! the body's length is known and chunked otherwise. A connection may wait `idle_timeout`
//! for a request's first byte (when new, and between requests) and is closed after; a
//! request head must arrive within `head_timeout` of its first byte and its body within
//! `body_timeout` (408 after). A peer that closes its connection drops the request's
//! future and its response body, which cancels the handler behind them.
//!
//! Malformed input is refused with a [`Rejection`] (a status and a reason), which the
//! caller renders as a response; the connection then closes: after a framing error
//! nothing later on the connection can be trusted.
//!
//! The parts, as hyper splits its `proto/h1`: [`parse`] reads request heads, [`decode`]
//! chunked bodies, [`encode`] writes response heads and chunks, [`io`] owns the socket
//! (reads without a held buffer, writes, the staged close), and [`conn`] is the
//! connection loop that ties them together.

mod conn;
mod decode;
mod encode;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzzing;
mod io;
mod parse;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::StatusCode;

use crate::config::HttpConfig;

pub(crate) use conn::{refuse, serve_connection};

/// Limits of one connection, from a checked [`HttpConfig`] (so every deadline they make is
/// within the clock's range).
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
    /// Time a connection may wait for the first byte of a request.
    pub idle_timeout: Duration,
}

impl Limits {
    /// The connection limits of `config`.
    pub(crate) fn of(config: &HttpConfig) -> Limits {
        Limits {
            max_head_bytes: config.max_head_bytes(),
            max_body_bytes: config.max_body_bytes(),
            head_timeout: config.head_timeout(),
            body_timeout: config.body_timeout(),
            idle_timeout: config.idle_timeout(),
        }
    }
}

/// What the server sees of one connection from outside: whether it is waiting for the
/// first byte of a request (new, or idle between kept-alive requests), and whether it has
/// ever sent one. A connection that waits can be closed to make room for a new one
/// without losing anything: no request is under way on it.
#[derive(Debug, Default)]
pub(crate) struct Presence {
    waiting: AtomicBool,
    served: AtomicBool,
}

impl Presence {
    /// Whether the connection waits for a request now.
    pub(crate) fn waiting(&self) -> bool {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Whether a request ever arrived on the connection.
    pub(crate) fn served(&self) -> bool {
        self.served.load(Ordering::Relaxed)
    }

    /// Sets both flags, for tests of what watches them.
    #[cfg(test)]
    pub(crate) fn set_for_test(&self, waiting: bool, served: bool) {
        self.waiting.store(waiting, Ordering::Relaxed);
        self.served.store(served, Ordering::Relaxed);
    }

    fn set_waiting(&self, waiting: bool) {
        self.waiting.store(waiting, Ordering::Relaxed);
        if !waiting {
            self.served.store(true, Ordering::Relaxed);
        }
    }
}

/// A request the connection refuses to serve: the status to answer with and why. The
/// connection closes after the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    /// The response's status.
    pub status: StatusCode,
    /// What was wrong, for the peer.
    pub reason: &'static str,
}

/// Why reading a request stopped the connection.
#[derive(Debug)]
enum Fail {
    /// The socket failed or the peer vanished mid-request: nothing to answer.
    Io,
    /// The request is unacceptable: answer this and close.
    Reject(Rejection),
}

impl From<std::io::Error> for Fail {
    fn from(_: std::io::Error) -> Self {
        Fail::Io
    }
}

fn reject(status: StatusCode, reason: &'static str) -> Fail {
    Fail::Reject(Rejection { status, reason })
}

fn bad_request(reason: &'static str) -> Fail {
    reject(StatusCode::BAD_REQUEST, reason)
}

fn head_too_large() -> Fail {
    reject(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        "Request header fields too large",
    )
}

fn too_large() -> Fail {
    reject(
        StatusCode::PAYLOAD_TOO_LARGE,
        "Payload too large: the message exceeds the size limit",
    )
}
