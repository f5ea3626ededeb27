//! Transports: how requests reach the server and answers come back.
//!
//! Each request becomes an [`Exchange`]: a stream of what the server sends for it
//! (notifications, and on legacy servers requests) ending with its response. Dropping an
//! unfinished exchange cancels the request: on HTTP the response stream is closed (and
//! legacy servers also get `notifications/cancelled`), on stdio
//! `notifications/cancelled {requestId}` is sent.

mod auth;
pub(crate) mod http;
mod lines;
mod reply;

pub(crate) use reply::{CONNECT_TIMEOUT, direct_client};
pub(crate) mod stdio;

use ferry_protocol::jsonrpc::{JsonRpcNotification, JsonRpcRequest, RequestId};
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::error::{Error, Result, RpcError};

/// How many messages of one exchange may wait to be read.
pub(crate) const EXCHANGE_QUEUE: usize = 64;

/// A request ready to send.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The JSON-RPC id.
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The serialized request.
    pub body: Vec<u8>,
    /// HTTP headers (ignored on stdio).
    pub headers: Vec<(String, String)>,
    /// The progress token in `_meta`, for routing progress on stdio.
    pub progress_token: Option<RequestId>,
    /// Whether the server is legacy (SSE resumption, cancellation notifications).
    pub legacy: bool,
}

/// Something the server sent for one exchange.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A notification (progress, log message, or a subscription's notification).
    Notification(JsonRpcNotification),
    /// A legacy server-to-client request on this request's stream.
    Request(JsonRpcRequest),
    /// The final result, as the server wrote it.
    Result(Box<RawValue>),
    /// The final error.
    Error(RpcError),
    /// The exchange failed locally.
    Failed(Error),
}

impl Incoming {
    fn is_final(&self) -> bool {
        matches!(
            self,
            Incoming::Result(_) | Incoming::Error(_) | Incoming::Failed(_)
        )
    }
}

type OnDrop = Box<dyn FnOnce(bool) + Send>;

/// The work that sends a request and reads what comes back for it, run by whoever
/// reads the exchange.
pub(crate) type Driver = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// The messages of one request, ending with its response. Dropping it before the
/// response cancels the request.
pub(crate) struct Exchange {
    rx: mpsc::Receiver<Incoming>,
    /// The request's own I/O (HTTP), which puts its messages in `rx`; done once `None`.
    driver: Option<Driver>,
    finished: bool,
    on_drop: Option<OnDrop>,
}

/// What a wait on a driven exchange saw first.
enum Woke {
    Message(Option<Incoming>),
    DriverDone,
}

impl Exchange {
    pub(crate) fn new(
        rx: mpsc::Receiver<Incoming>,
        on_drop: impl FnOnce(bool) + Send + 'static,
    ) -> Self {
        Exchange {
            rx,
            driver: None,
            finished: false,
            on_drop: Some(Box::new(on_drop)),
        }
    }

    /// An exchange whose messages `driver` produces while the exchange is read: the
    /// request's I/O runs in the reader's task, with no task of its own to schedule, and
    /// stops when the exchange is dropped.
    pub(crate) fn driven(
        rx: mpsc::Receiver<Incoming>,
        driver: Driver,
        on_drop: impl FnOnce(bool) + Send + 'static,
    ) -> Self {
        let mut exchange = Exchange::new(rx, on_drop);
        exchange.driver = Some(driver);
        exchange
    }

    /// The next message; `None` when the transport went away.
    pub(crate) async fn recv(&mut self) -> Option<Incoming> {
        let m = loop {
            let Some(driver) = self.driver.as_mut() else {
                break self.rx.recv().await;
            };
            // The driver first: when it finishes, its last message is already queued.
            let woke = tokio::select! {
                biased;
                () = driver => Woke::DriverDone,
                m = self.rx.recv() => Woke::Message(m),
            };
            match woke {
                Woke::Message(m) => break m,
                Woke::DriverDone => self.driver = None,
            }
        };
        if m.as_ref().is_none_or(Incoming::is_final) {
            self.finished = true;
        }
        m
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if let Some(f) = self.on_drop.take() {
            f(self.finished);
        }
    }
}

/// Messages that belong to no request: legacy server requests and notifications from the
/// GET stream or stdio, and stray notifications.
#[derive(Debug)]
pub(crate) enum Background {
    /// A server-to-client request to answer.
    Request(JsonRpcRequest),
    /// A notification.
    Notification(JsonRpcNotification),
}

/// The transports.
pub(crate) enum Transport {
    Http(http::HttpTransport),
    Stdio(Box<stdio::StdioTransport>),
}

impl Transport {
    /// Sends a request.
    pub(crate) async fn start(&self, out: Outgoing) -> Result<Exchange> {
        match self {
            Transport::Http(t) => t.start(out),
            Transport::Stdio(t) => t.start(out).await,
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, body: Vec<u8>, headers: Vec<(String, String)>) -> Result<()> {
        match self {
            Transport::Http(t) => t.post_no_answer(body, headers).await,
            Transport::Stdio(t) => t.write(body).await,
        }
    }

    /// Sends a JSON-RPC response to a legacy server's request.
    pub(crate) async fn respond(
        &self,
        body: Vec<u8>,
        headers: Vec<(String, String)>,
    ) -> Result<()> {
        self.notify(body, headers).await
    }

    /// Closes the connection (stdio: ends the server process as the spec says).
    pub(crate) async fn close(&self) -> Result<()> {
        match self {
            Transport::Http(t) => t.close().await,
            Transport::Stdio(t) => t.close().await,
        }
    }

    /// Whether this is Streamable HTTP.
    pub(crate) fn is_http(&self) -> bool {
        matches!(self, Transport::Http(_))
    }

    /// A name for the server when it does not describe itself.
    pub(crate) fn label(&self) -> String {
        match self {
            Transport::Http(t) => t.label(),
            Transport::Stdio(t) => t.label(),
        }
    }
}
