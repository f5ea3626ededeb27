//! Response bodies: a single JSON object, nothing, or an SSE stream that drives the
//! request's handler while it is read.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use ferry_server::{ListenStream, Reply};
use futures::Stream;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::{Interval, MissedTickBehavior};

type ReplyFuture = Pin<Box<dyn Future<Output = Reply> + Send>>;

/// The body of every response the MCP endpoint sends.
pub struct McpBody {
    kind: Kind,
}

enum Kind {
    Full(Option<Bytes>),
    Sse(Box<SseState>),
    Channel(mpsc::Receiver<Bytes>),
    Listen(Box<ListenState>),
}

struct ListenState {
    stream: ListenStream,
    keep_alive: Interval,
    done: bool,
}

struct SseState {
    first: Option<Bytes>,
    rx: mpsc::Receiver<Bytes>,
    call: Option<ReplyFuture>,
    last: Option<Bytes>,
    keep_alive: Option<Interval>,
    done: bool,
}

impl McpBody {
    /// A body of these bytes.
    pub fn full(bytes: Bytes) -> Self {
        McpBody {
            kind: Kind::Full(Some(bytes)),
        }
    }

    /// An empty body.
    pub fn empty() -> Self {
        McpBody {
            kind: Kind::Full(None),
        }
    }

    /// A `subscriptions/listen` stream as SSE, with keep-alive comments every
    /// `keep_alive` while it is quiet.
    pub(crate) fn listen(stream: ListenStream, keep_alive: Duration) -> Self {
        let mut interval =
            tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive);
        interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
        McpBody {
            kind: Kind::Listen(Box::new(ListenState {
                stream,
                keep_alive: interval,
                done: false,
            })),
        }
    }

    /// A body of whatever arrives on `rx`, until it closes.
    pub(crate) fn stream(rx: mpsc::Receiver<Bytes>) -> Self {
        McpBody {
            kind: Kind::Channel(rx),
        }
    }

    /// An SSE stream: `first` (if any), then every message from `rx`, then the reply of
    /// `call` as the last event. Dropping the body drops `call`, cancelling the handler.
    pub(crate) fn sse(
        first: Option<Bytes>,
        rx: mpsc::Receiver<Bytes>,
        call: ReplyFuture,
        keep_alive: Option<Duration>,
    ) -> Self {
        let keep_alive = keep_alive.map(|d| {
            let mut i = tokio::time::interval_at(tokio::time::Instant::now() + d, d);
            i.set_missed_tick_behavior(MissedTickBehavior::Delay);
            i
        });
        McpBody {
            kind: Kind::Sse(Box::new(SseState {
                first: first.map(|m| event(&m)),
                rx,
                call: Some(call),
                last: None,
                keep_alive,
                done: false,
            })),
        }
    }
}

impl From<Bytes> for McpBody {
    /// A body of these bytes, as [`McpBody::full`] makes it.
    fn from(bytes: Bytes) -> Self {
        McpBody::full(bytes)
    }
}

/// One SSE event carrying one JSON-RPC message on a single `data:` line.
pub(crate) fn event(message: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(message.len() + 24);
    b.put_slice(b"event: message\ndata: ");
    b.put_slice(message);
    b.put_slice(b"\n\n");
    b.freeze()
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match &mut self.kind {
            Kind::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Sse(s) => s.poll_next(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
            Kind::Channel(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
            Kind::Listen(l) => {
                if l.done {
                    return Poll::Ready(None);
                }
                match Pin::new(&mut l.stream).poll_next(cx) {
                    Poll::Ready(Some(msg)) => {
                        return Poll::Ready(Some(Ok(Frame::data(event(&msg)))));
                    }
                    Poll::Ready(None) => {
                        l.done = true;
                        return Poll::Ready(None);
                    }
                    Poll::Pending => {}
                }
                if l.keep_alive.poll_tick(cx).is_ready() {
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b":\n\n")))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(b) => b.is_none(),
            Kind::Sse(s) => s.done,
            Kind::Channel(_) => false,
            Kind::Listen(l) => l.done,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Sse(_) | Kind::Channel(_) | Kind::Listen(_) => SizeHint::default(),
        }
    }
}

impl SseState {
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(first));
        }
        // Notifications sent before the reply are already queued: drain them first.
        if let Poll::Ready(Some(msg)) = self.rx.poll_recv(cx) {
            return Poll::Ready(Some(event(&msg)));
        }
        if let Some(call) = &mut self.call
            && let Poll::Ready(reply) = call.as_mut().poll(cx)
        {
            self.call = None;
            self.last = Some(event(&reply.body));
        }
        if self.call.is_none() {
            // The handler is done; anything it queued comes before the reply.
            if let Ok(msg) = self.rx.try_recv() {
                return Poll::Ready(Some(event(&msg)));
            }
            self.done = true;
            return Poll::Ready(self.last.take());
        }
        if let Some(k) = &mut self.keep_alive
            && k.poll_tick(cx).is_ready()
        {
            return Poll::Ready(Some(Bytes::from_static(b":\n\n")));
        }
        Poll::Pending
    }
}
