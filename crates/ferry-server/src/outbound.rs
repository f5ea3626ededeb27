//! Where a request's notifications go while it runs.

use bytes::Bytes;
use ferry_protocol::common::ProgressToken;
use ferry_protocol::jsonrpc::encode_notification;
use ferry_protocol::notifications::{self, ProgressNotificationParams};
use parking_lot::Mutex;
use tokio::sync::mpsc;

/// The channel a running request writes its notifications to (progress, log messages,
/// subscription events). Each item is one serialized JSON-RPC notification.
///
/// A transport creates one per request that may stream: a per-request SSE stream on HTTP,
/// the shared stdout writer on stdio. [`Outbound::none`] discards everything, for
/// requests that cannot stream.
#[derive(Clone, Debug, Default)]
pub struct Outbound {
    tx: Option<mpsc::Sender<Bytes>>,
}

impl Outbound {
    /// An outbound that discards notifications.
    pub fn none() -> Self {
        Outbound { tx: None }
    }

    /// An outbound feeding a bounded channel. A full channel makes the sender wait, so a
    /// reader that stops reading slows the request down instead of growing memory.
    pub fn channel(tx: mpsc::Sender<Bytes>) -> Self {
        Outbound { tx: Some(tx) }
    }

    /// Whether notifications go anywhere.
    pub fn is_open(&self) -> bool {
        self.tx.as_ref().is_some_and(|t| !t.is_closed())
    }

    /// Sends one serialized notification if there is room now, without waiting. Returns
    /// `false` when it was not sent (no room, or the receiver is gone).
    pub(crate) fn try_send(&self, message: Bytes) -> bool {
        self.tx
            .as_ref()
            .is_some_and(|tx| tx.try_send(message).is_ok())
    }

    /// Sends one serialized notification. Returns `false` when the receiver is gone (the
    /// client disconnected).
    pub async fn send(&self, message: Bytes) -> bool {
        match &self.tx {
            Some(tx) => tx.send(message).await.is_ok(),
            None => false,
        }
    }
}

/// One request's progress reports: each must exceed the one before (progress.mdx).
#[derive(Debug, Default)]
pub(crate) struct ProgressReports {
    last: Mutex<Option<f64>>,
}

impl ProgressReports {
    /// The `notifications/progress` for `progress` under `token`, or `None` (logged at
    /// debug level) when it does not exceed the last one reported.
    pub(crate) fn next(
        &self,
        token: &ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Option<Bytes> {
        {
            let mut last = self.last.lock();
            if last.is_some_and(|l| progress <= l) {
                tracing::debug!(progress, "progress must increase; notification dropped");
                return None;
            }
            *last = Some(progress);
        }
        let params = ProgressNotificationParams {
            meta: None,
            progress_token: token.clone(),
            progress,
            total,
            message: message.map(str::to_owned),
        };
        Some(Bytes::from(encode_notification(
            notifications::PROGRESS,
            &params,
        )))
    }
}
