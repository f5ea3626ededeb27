//! Messages that belong to no request: legacy server requests and notifications from the
//! standalone GET stream or stdio.

use std::sync::Weak;

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::Inner;
use crate::answer;
use crate::transport::Background;

/// Handles background messages until the client goes away. Each server request is
/// answered on its own task, through the same input handler as everything else.
pub(crate) fn spawn(inner: Weak<Inner>, mut rx: mpsc::Receiver<Background>) -> AbortHandle {
    tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            let Some(inner) = inner.upgrade() else {
                return;
            };
            match m {
                Background::Notification(n) => inner.observe(&n),
                Background::Request(r) if inner.era() == crate::era::Era::Modern => {
                    tracing::warn!(
                        method = %r.method,
                        "ignoring a JSON-RPC request from a 2026-07-28 server, which may not send any"
                    );
                }
                Background::Request(r) => {
                    tokio::spawn(async move {
                        let response = {
                            let _busy = inner.gate.enter();
                            answer::server_request(&answer::Asker::client(&inner), &r, None).await
                        };
                        inner.send_response(response).await;
                    });
                }
            }
        }
    })
    .abort_handle()
}
