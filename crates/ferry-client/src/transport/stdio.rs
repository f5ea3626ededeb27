//! stdio: the server is a child process; one JSON-RPC message per line on its stdin and
//! stdout.
//!
//! Responses are matched by id, progress notifications by progress token, and
//! `subscriptions/listen` notifications by their `subscriptionId`. Cancelling sends
//! `notifications/cancelled`. Shutting down closes the server's stdin, waits, then sends
//! SIGTERM, waits again, then kills it.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferry_protocol::jsonrpc::{JsonRpcNotification, RequestId};
use ferry_protocol::{meta, notifications};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use super::lines::{Line, read_line};
use super::{Background, EXCHANGE_QUEUE, Exchange, Incoming, Outgoing};
use crate::error::{Error, Result, RpcError};
use ferry_protocol::jsonrpc::{JsonRpcErrorResponse, JsonRpcMessage, LenientMessage};

/// Settings of the stdio transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StdioOptions {
    /// The longest line read from the server; longer ones are skipped with a warning.
    /// Default 16 MiB.
    pub max_line_bytes: usize,
    /// How long the server may take to exit after its stdin is closed, before SIGTERM.
    /// Default 2 s.
    pub exit_grace: Duration,
    /// How long the server may take to exit after SIGTERM, before it is killed.
    /// Default 2 s.
    pub term_grace: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_line_bytes: 16 * 1024 * 1024,
            exit_grace: Duration::from_secs(2),
            term_grace: Duration::from_secs(2),
        }
    }
}

struct Route {
    tx: mpsc::Sender<Incoming>,
    progress_token: Option<RequestId>,
}

struct Shared {
    writer: mpsc::Sender<Vec<u8>>,
    routes: Mutex<HashMap<RequestId, Route>>,
    closed: AtomicBool,
    label: String,
}

/// The stdio transport.
pub(crate) struct StdioTransport {
    shared: Arc<Shared>,
    child: tokio::sync::Mutex<Option<Child>>,
    stop_writer: Mutex<Option<oneshot::Sender<()>>>,
    tasks: Vec<AbortHandle>,
    options: StdioOptions,
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl StdioTransport {
    /// Starts the server process.
    pub(crate) fn spawn(
        mut command: Command,
        options: StdioOptions,
        background: mpsc::Sender<Background>,
    ) -> Result<Self> {
        let label = std::path::Path::new(command.as_std().get_program())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "server".to_owned());
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| Error::transport_from(format!("could not start {label}"), e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Error::transport(
                "the server process has no stdin or stdout",
            ));
        };
        Ok(StdioTransport::over(
            Box::new(stdout),
            Box::new(stdin),
            label,
            Some(child),
            options,
            background,
        ))
    }

    /// Talks to a server over any pair of byte streams: an in-process server on a
    /// `tokio::io::duplex`, a socket, a pipe. Closing ends the writing half.
    pub(crate) fn connect(
        reader: Box<dyn AsyncRead + Send + Unpin>,
        writer: Box<dyn AsyncWrite + Send + Unpin>,
        options: StdioOptions,
        background: mpsc::Sender<Background>,
    ) -> Self {
        StdioTransport::over(
            reader,
            writer,
            "server".to_owned(),
            None,
            options,
            background,
        )
    }

    fn over(
        reader: Box<dyn AsyncRead + Send + Unpin>,
        writer: Box<dyn AsyncWrite + Send + Unpin>,
        label: String,
        child: Option<Child>,
        options: StdioOptions,
        background: mpsc::Sender<Background>,
    ) -> Self {
        let (lines, rx) = mpsc::channel(EXCHANGE_QUEUE);
        let (stop_tx, stop_rx) = oneshot::channel();
        let shared = Arc::new(Shared {
            writer: lines,
            routes: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            label,
        });
        let write_task = tokio::spawn(write_loop(writer, rx, stop_rx, shared.clone()));
        let read_task = tokio::spawn(read_loop(
            reader,
            shared.clone(),
            background,
            options.max_line_bytes,
        ));
        StdioTransport {
            shared,
            child: tokio::sync::Mutex::new(child),
            stop_writer: Mutex::new(Some(stop_tx)),
            tasks: vec![write_task.abort_handle(), read_task.abort_handle()],
            options,
        }
    }

    pub(crate) fn label(&self) -> String {
        self.shared.label.clone()
    }

    pub(crate) async fn start(&self, out: Outgoing) -> Result<Exchange> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        let (tx, rx) = mpsc::channel(EXCHANGE_QUEUE);
        self.shared.routes.lock().insert(
            out.id.clone(),
            Route {
                tx,
                progress_token: out.progress_token.clone(),
            },
        );
        let shared = self.shared.clone();
        let id = out.id.clone();
        let exchange = Exchange::new(rx, move |finished| {
            shared.routes.lock().remove(&id);
            if !finished && !shared.closed.load(Ordering::Acquire) {
                let cancel = serde_json::json!({
                    "jsonrpc": "2.0",
                    "method": notifications::CANCELLED,
                    "params": {"requestId": id.to_value(), "reason": "cancelled by the client"}
                });
                if shared
                    .writer
                    .try_send(cancel.to_string().into_bytes())
                    .is_err()
                {
                    let writer = shared.writer.clone();
                    if let Ok(rt) = tokio::runtime::Handle::try_current() {
                        rt.spawn(async move {
                            let _ = writer.send(cancel.to_string().into_bytes()).await;
                        });
                    }
                }
            }
        });
        self.write(out.body).await?;
        Ok(exchange)
    }

    /// Writes one message.
    pub(crate) async fn write(&self, line: Vec<u8>) -> Result<()> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        self.shared
            .writer
            .send(line)
            .await
            .map_err(|_| Error::transport("the server process is gone"))
    }

    /// Closes stdin, waits for the process, then SIGTERM, then SIGKILL.
    pub(crate) async fn close(&self) -> Result<()> {
        if let Some(stop) = self.stop_writer.lock().take() {
            let _ = stop.send(());
        }
        let Some(mut child) = self.child.lock().await.take() else {
            return Ok(());
        };
        if let Ok(status) = tokio::time::timeout(self.options.exit_grace, child.wait()).await {
            tracing::debug!(?status, "the server exited after its stdin closed");
            return Ok(());
        }
        terminate(&child);
        if let Ok(status) = tokio::time::timeout(self.options.term_grace, child.wait()).await {
            tracing::debug!(?status, "the server exited after SIGTERM");
            return Ok(());
        }
        tracing::warn!("the server ignored SIGTERM; killing it");
        child
            .kill()
            .await
            .map_err(|e| Error::transport_from("could not kill the server process", e))
    }
}

#[cfg(unix)]
fn terminate(child: &Child) {
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid
        && let Err(e) = rustix::process::kill_process(pid, rustix::process::Signal::TERM)
    {
        tracing::debug!(error = %e, "SIGTERM failed");
    }
}

#[cfg(not(unix))]
fn terminate(_child: &Child) {}

async fn write_loop(
    mut stdin: Box<dyn AsyncWrite + Send + Unpin>,
    mut rx: mpsc::Receiver<Vec<u8>>,
    mut stop: oneshot::Receiver<()>,
    shared: Arc<Shared>,
) {
    loop {
        let line = tokio::select! {
            biased;
            _ = &mut stop => break,
            line = rx.recv() => match line {
                Some(l) => l,
                None => break,
            },
        };
        let written = async {
            stdin.write_all(&line).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        if let Err(e) = written.await {
            tracing::debug!(error = %e, "writing to the server failed");
            break;
        }
    }
    shared.closed.store(true, Ordering::Release);
    let _ = stdin.shutdown().await;
}

async fn read_loop(
    stdout: Box<dyn AsyncRead + Send + Unpin>,
    shared: Arc<Shared>,
    background: mpsc::Sender<Background>,
    max_line: usize,
) {
    let mut reader = BufReader::new(stdout);
    loop {
        let line = match read_line(&mut reader, max_line).await {
            Ok(Line::Complete(l)) => l,
            Ok(Line::TooLong) => {
                tracing::warn!(limit = max_line, "skipping a message longer than the limit");
                continue;
            }
            Ok(Line::Eof) => break,
            Err(e) => {
                tracing::debug!(error = %e, "reading from the server failed");
                break;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message = match JsonRpcMessage::parse_lenient_raw(&line) {
            Some(LenientMessage::Result { id, result }) => {
                route(&shared, &id, Incoming::Result(result)).await;
                continue;
            }
            Some(LenientMessage::Other(m)) => Some(m),
            None => None,
        };
        match message {
            Some(JsonRpcMessage::Error(JsonRpcErrorResponse {
                id: Some(id),
                error,
                ..
            })) => {
                route(&shared, &id, Incoming::Error(RpcError::new(error, None))).await;
            }
            Some(JsonRpcMessage::Error(JsonRpcErrorResponse {
                id: None, error, ..
            })) => {
                tracing::warn!(code = %error.code, message = %error.message, "the server reported an error for no request");
            }
            Some(JsonRpcMessage::Notification(n)) => {
                dispatch_notification(&shared, &background, n).await
            }
            Some(JsonRpcMessage::Request(r)) => {
                if background.send(Background::Request(r)).await.is_err() {
                    break;
                }
            }
            // `parse_lenient_raw` reads every result response as one.
            Some(JsonRpcMessage::Result(_)) => {}
            None => {
                tracing::warn!("ignoring a line from the server that is not a JSON-RPC message")
            }
        }
    }
    shared.closed.store(true, Ordering::Release);
    // Dropping the routes ends every open exchange.
    shared.routes.lock().clear();
}

async fn route(shared: &Shared, id: &RequestId, m: Incoming) {
    let tx = shared.routes.lock().get(id).map(|r| r.tx.clone());
    match tx {
        Some(tx) => {
            let _ = tx.send(m).await;
        }
        None => tracing::debug!(%id, "ignoring a message for a request no longer waiting"),
    }
}

async fn dispatch_notification(
    shared: &Shared,
    background: &mpsc::Sender<Background>,
    n: JsonRpcNotification,
) {
    let params = n.params.as_ref();
    let target = match n.method.as_str() {
        notifications::PROGRESS => params
            .and_then(|p| p.get("progressToken"))
            .and_then(RequestId::from_value)
            .and_then(|token| {
                shared
                    .routes
                    .lock()
                    .iter()
                    .find(|(_, r)| r.progress_token.as_ref() == Some(&token))
                    .map(|(id, _)| id.clone())
            }),
        notifications::CANCELLED => params
            .and_then(|p| p.get("requestId"))
            .and_then(RequestId::from_value),
        _ => params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(meta::SUBSCRIPTION_ID))
            .and_then(RequestId::from_value),
    };
    let tx = target.and_then(|id| shared.routes.lock().get(&id).map(|r| r.tx.clone()));
    match tx {
        Some(tx) => {
            let _ = tx.send(Incoming::Notification(n)).await;
        }
        None if n.method == notifications::PROGRESS || n.method == notifications::CANCELLED => {}
        None => {
            if let Err(mpsc::error::TrySendError::Full(_)) =
                background.try_send(Background::Notification(n))
            {
                tracing::warn!("dropping a server notification: too many are waiting");
            }
        }
    }
}
