//! The body of a request as [`crate::serve`] hands it to services.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// Errors a request body can end with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request body: the bytes Ferry's HTTP/1.1 connection already read (it reads each
/// body whole, within the size and time limits, before the service runs), or hyper's
/// streaming body on HTTP/2 connections.
///
/// Services written for any `http_body::Body` (axum routers, [`crate::McpService`]) take
/// it as they are.
pub struct RequestBody {
    inner: Inner,
}

enum Inner {
    Whole(Option<Bytes>),
    Hyper(hyper::body::Incoming),
}

impl RequestBody {
    /// A body of these bytes.
    pub fn from_bytes(bytes: Bytes) -> Self {
        RequestBody {
            inner: Inner::Whole((!bytes.is_empty()).then_some(bytes)),
        }
    }

    /// An empty body.
    pub fn empty() -> Self {
        RequestBody {
            inner: Inner::Whole(None),
        }
    }

    /// hyper's streaming body.
    pub(crate) fn hyper(body: hyper::body::Incoming) -> Self {
        RequestBody {
            inner: Inner::Hyper(body),
        }
    }
}

impl std::fmt::Debug for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Whole(b) => f
                .debug_struct("RequestBody")
                .field("len", &b.as_ref().map_or(0, Bytes::len))
                .finish(),
            Inner::Hyper(_) => f.debug_struct("RequestBody").finish_non_exhaustive(),
        }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.inner {
            Inner::Whole(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Inner::Hyper(b) => Pin::new(b).poll_frame(cx).map_err(Into::into),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            Inner::Whole(b) => b.is_none(),
            Inner::Hyper(b) => b.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Inner::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Inner::Hyper(b) => b.size_hint(),
        }
    }
}
