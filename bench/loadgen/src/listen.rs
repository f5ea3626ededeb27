//! Many open `subscriptions/listen` streams, then the server's resident memory.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::StatusCode;
use serde_json::json;
use tokio::sync::{Semaphore, watch};
use tokio::time::{Instant, timeout_at};

use crate::client::{Conn, Target};
use crate::stats::round;
use crate::{Error, bodies, procfs};

/// How many streams and how long to try.
pub struct Settings {
    /// Streams to open, one connection each (HTTP/1.1).
    pub streams: usize,
    /// The server's process id, for its memory.
    pub pid: u32,
    /// Streams being opened at once.
    pub open_concurrency: usize,
    /// Time allowed for opening them all.
    pub timeout: Duration,
    /// Wait after the last one opened, before reading the memory.
    pub settle: Duration,
}

/// Opens the streams, holds them, reads the server's RSS, and closes them.
pub async fn run(target: Target, settings: Settings) -> Result<serde_json::Value, Error> {
    if procfs::rss_kib(settings.pid).is_none() {
        return Err(format!("no process {}", settings.pid).into());
    }
    let rss_before = procfs::rss_kib(settings.pid).unwrap_or(0);
    let start = Instant::now();
    let deadline = start + settings.timeout;
    let opened = Rc::new(Cell::new(0usize));
    let failed = Rc::new(Cell::new(0usize));
    let first_error: Rc<Cell<Option<String>>> = Rc::new(Cell::new(None));
    let gate = Rc::new(Semaphore::new(settings.open_concurrency.max(1)));
    let (close, closed) = watch::channel(false);

    let local = tokio::task::LocalSet::new();
    let outcome = local
        .run_until(async {
            for id in 0..settings.streams {
                let (target, gate, opened, failed, first_error) = (
                    target.clone(),
                    gate.clone(),
                    opened.clone(),
                    failed.clone(),
                    first_error.clone(),
                );
                let mut closed = closed.clone();
                tokio::task::spawn_local(async move {
                    let Ok(permit) = gate.acquire().await else {
                        return;
                    };
                    match timeout_at(deadline, open(&target, id as u64)).await {
                        Ok(Ok(held)) => {
                            drop(permit);
                            opened.set(opened.get() + 1);
                            // Hold the stream (and its connection) until told to close.
                            let _ = closed.wait_for(|closed| *closed).await;
                            drop(held);
                        }
                        Ok(Err(e)) => {
                            failed.set(failed.get() + 1);
                            let previous = first_error.take();
                            first_error.set(previous.or(Some(e.to_string())));
                        }
                        Err(_) => failed.set(failed.get() + 1),
                    }
                });
            }
            // Wait until every stream is open or has failed, within the time limit.
            while opened.get() + failed.get() < settings.streams && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let open_seconds = start.elapsed().as_secs_f64();
            tokio::time::sleep(settings.settle).await;
            let rss = procfs::rss_kib(settings.pid);
            let peak = procfs::peak_rss_kib(settings.pid);
            let _ = close.send(true);
            (open_seconds, rss, peak)
        })
        .await;
    let (open_seconds, rss, peak) = outcome;
    let rss = rss.ok_or("the server exited while the streams were open")?;
    let mib = |kib: u64| round(kib as f64 / 1024.0, 1);
    let opened = opened.get();
    Ok(json!({
        "scenario": "listen",
        "streams": settings.streams,
        "opened": opened,
        "failed": failed.get(),
        "first_error": first_error.take(),
        "open_seconds": round(open_seconds, 2),
        "rss_before_mib": mib(rss_before),
        "rss_mib": mib(rss),
        "peak_rss_mib": peak.map(mib),
        "kib_per_stream": if opened > 0 { round(rss.saturating_sub(rss_before) as f64 / opened as f64, 2) } else { 0.0 },
    }))
}

/// What keeps a stream open: its connection and its unread body.
type Held = (Conn, hyper::body::Incoming);

/// Opens one stream: a 200 `text/event-stream` response and its first event.
async fn open(target: &Target, id: u64) -> Result<Held, Error> {
    let mut conn = Conn::open(target).await?;
    let response = conn
        .start("subscriptions/listen", None, bodies::listen(id))
        .await?;
    let is_sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if response.status() != StatusCode::OK || !is_sse {
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        return Err(format!("HTTP {status}, not an event stream: {text}").into());
    }
    let mut body = response.into_body();
    // The first data frame: the acknowledgment (or a keep-alive comment).
    loop {
        match body.frame().await {
            Some(Ok(frame)) if frame.data_ref().is_some_and(|d| !d.is_empty()) => break,
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(e.into()),
            None => return Err("the listen stream ended at once".into()),
        }
    }
    Ok((conn, body))
}

/// Opens one stream and checks that it is acknowledged, for `check`.
pub async fn open_once(target: &Target) -> Result<(), Error> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let _held = timeout_at(deadline, open(target, 1))
        .await
        .map_err(|_| "no acknowledgment within 5 s")??;
    Ok(())
}
