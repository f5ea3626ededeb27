//! Load over stdio: the server is a child process fed newline-delimited JSON-RPC.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::{Instant, timeout, timeout_at};

use crate::stats::round;
use crate::{Error, bodies, procfs};

/// Settings of the throughput run.
pub struct Throughput {
    /// Requests kept in flight (1: sequential).
    pub window: usize,
    /// Time before measuring.
    pub warmup: Duration,
    /// Measured time.
    pub duration: Duration,
}

/// Settings of the flood.
pub struct Flood {
    /// How long to write without reading.
    pub duration: Duration,
    /// How long the server then gets to answer everything.
    pub drain: Duration,
    /// At most this many requests are written.
    pub max_requests: usize,
}

/// A reply line, as far as counting goes.
#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    id: Option<IgnoredAny>,
    #[serde(default)]
    result: Option<IgnoredAny>,
}

/// Starts the server command with piped stdin and stdout.
pub fn spawn(
    command: &[String],
    log: Option<&str>,
) -> Result<(Child, ChildStdin, ChildStdout), Error> {
    let stderr = match log {
        Some(path) => Stdio::from(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        ),
        None => Stdio::null(),
    };
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("starting {:?}: {e}", command[0]))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    Ok((child, stdin, stdout))
}

/// Closes stdin and gives the child two seconds to exit before killing it.
async fn finish(mut child: Child, stdin: Option<ChildStdin>) {
    drop(stdin);
    if timeout(Duration::from_secs(2), child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
}

/// Sends one echo call and waits (at most 30 s) for its reply, so that the measurement
/// starts once the server is up (an interpreter can take seconds to start).
async fn ready(stdin: &mut ChildStdin, reader: &mut BufReader<ChildStdout>) -> Result<(), Error> {
    let mut out = Vec::new();
    push_echo(&mut out, 0);
    stdin.write_all(&out).await?;
    stdin.flush().await?;
    let mut line = Vec::new();
    timeout(Duration::from_secs(30), async {
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).await? == 0 {
                return Err::<(), Error>("the server closed stdout before answering".into());
            }
            if serde_json::from_slice::<Line>(&line).is_ok_and(|l| l.id.is_some()) {
                return Ok(());
            }
        }
    })
    .await
    .map_err(|_| "the server did not answer within 30 s")?
}

/// Appends one echo request line.
fn push_echo(buf: &mut Vec<u8>, id: u64) {
    buf.extend_from_slice(bodies::echo(id, bodies::ECHO_TEXT).as_bytes());
    buf.push(b'\n');
}

/// Requests per second with `window` requests in flight.
pub async fn throughput(
    command: &[String],
    log: Option<&str>,
    settings: Throughput,
) -> Result<serde_json::Value, Error> {
    let (child, mut stdin, stdout) = spawn(command, log)?;
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    ready(&mut stdin, &mut reader).await?;
    let mut writer = BufWriter::with_capacity(1 << 16, stdin);
    let start = Instant::now();
    let measure_from = start + settings.warmup;
    let end = measure_from + settings.duration;
    let hard_end = end + Duration::from_secs(5);

    let mut next_id: u64 = 1;
    let mut out = Vec::with_capacity(512);
    for _ in 0..settings.window.max(1) {
        out.clear();
        push_echo(&mut out, next_id);
        writer.write_all(&out).await?;
        next_id += 1;
    }
    writer.flush().await?;
    let mut outstanding = settings.window.max(1);
    let (mut answered, mut errors) = (0u64, 0u64);
    let mut line = Vec::with_capacity(4096);
    while outstanding > 0 {
        line.clear();
        let read = timeout_at(hard_end, reader.read_until(b'\n', &mut line))
            .await
            .map_err(|_| "the server stopped answering")??;
        if read == 0 {
            return Err("the server closed stdout".into());
        }
        let parsed: Line =
            serde_json::from_slice(&line).map_err(|e| format!("bad reply line: {e}"))?;
        if parsed.id.is_none() {
            continue; // a notification
        }
        outstanding -= 1;
        let now = Instant::now();
        if now >= measure_from && now <= end {
            if parsed.result.is_some() {
                answered += 1
            } else {
                errors += 1
            }
        }
        if now < end {
            out.clear();
            push_echo(&mut out, next_id);
            writer.write_all(&out).await?;
            next_id += 1;
            outstanding += 1;
        }
        if reader.buffer().is_empty() {
            writer.flush().await?;
        }
    }
    finish(child, Some(writer.into_inner())).await;
    let seconds = settings.duration.as_secs_f64();
    Ok(json!({
        "scenario": "stdio",
        "window": settings.window,
        "seconds": seconds,
        "requests": answered,
        "requests_per_s": round(answered as f64 / seconds, 1),
        "errors": errors,
    }))
}

/// Writes requests as fast as the server takes them, reading nothing, for
/// `settings.duration`; then reads every answer. Reports the server's peak RSS.
pub async fn flood(
    command: &[String],
    log: Option<&str>,
    settings: Flood,
) -> Result<serde_json::Value, Error> {
    let (child, mut stdin, stdout) = spawn(command, log)?;
    let pid = child.id().ok_or("the server exited at once")?;
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    ready(&mut stdin, &mut reader).await?;
    let start = Instant::now();
    let flood_end = start + settings.duration;
    let drain_end = flood_end + settings.drain;

    // The writer: batches of requests until the flood ends. A batch blocked by the
    // server's back-pressure completes once the reader drains the replies.
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let written = written.clone();
        let max = settings.max_requests as u64;
        tokio::spawn(async move {
            let mut stdin = stdin;
            let mut batch = Vec::with_capacity(1 << 16);
            let mut id = 0u64;
            while Instant::now() < flood_end && id < max {
                batch.clear();
                for _ in 0..256 {
                    id += 1;
                    push_echo(&mut batch, id);
                }
                if stdin.write_all(&batch).await.is_err() {
                    break;
                }
                written.store(id, Ordering::Release);
            }
            let _ = stdin.flush().await;
            stdin
        })
    };

    // The sampler: the kernel's high-water mark, every 20 ms, until told to stop.
    let peak = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Acquire) {
                if let Some(kib) = procfs::peak_rss_kib(pid) {
                    peak.fetch_max(kib, Ordering::AcqRel);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };

    tokio::time::sleep_until(flood_end).await;
    let taken_during_flood = written.load(Ordering::Acquire);
    let rss_end_of_flood = procfs::rss_kib(pid).unwrap_or(0);

    // Drain: read replies until every written request is answered (or time runs out).
    let mut line = Vec::with_capacity(4096);
    let mut answered = 0u64;
    let mut complete = true;
    loop {
        if writer.is_finished() && answered >= written.load(Ordering::Acquire) {
            break;
        }
        line.clear();
        match timeout_at(drain_end, reader.read_until(b'\n', &mut line)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => {
                complete = false;
                break;
            }
            Ok(Ok(_)) => {
                if serde_json::from_slice::<Line>(&line).is_ok_and(|l| l.id.is_some()) {
                    answered += 1;
                }
            }
        }
    }
    // Final sample while the process is still alive, then stop everything.
    if let Some(kib) = procfs::peak_rss_kib(pid) {
        peak.fetch_max(kib, Ordering::AcqRel);
    }
    stop.store(true, Ordering::Release);
    let _ = sampler.await;
    let stdin = if writer.is_finished() {
        writer.await.ok()
    } else {
        writer.abort();
        None
    };
    finish(child, stdin).await;

    let mib = |kib: u64| round(kib as f64 / 1024.0, 1);
    Ok(json!({
        "scenario": "flood",
        "seconds": settings.duration.as_secs_f64(),
        "written": written.load(Ordering::Acquire),
        "written_while_not_reading": taken_during_flood,
        "answered": answered,
        "all_answered": complete,
        "rss_end_of_flood_mib": mib(rss_end_of_flood),
        "peak_rss_mib": mib(peak.load(Ordering::Acquire)),
    }))
}
