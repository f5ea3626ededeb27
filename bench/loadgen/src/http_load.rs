//! Closed-loop HTTP load: `connections` keep-alive connections, each sending its next
//! call as soon as the previous one is answered, for a fixed time; or, with a `rate`,
//! paced: each connection starts its calls at even intervals, so that all together start
//! about `rate` calls a second (a soak's steady load rather than a benchmark's most).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde_json::json;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout_at};

use crate::client::{self, Conn, Target};
use crate::stats::{self, micros, round};
use crate::{Error, bodies};

/// Which call to repeat.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `tools/call echo`: one HTTP request per call.
    Echo,
    /// `tools/call confirm_delete` in two rounds, the elicitation accepted: two HTTP
    /// requests per call.
    Mrtr,
}

impl Kind {
    fn requests_per_call(self) -> u64 {
        match self {
            Kind::Echo => 1,
            Kind::Mrtr => 2,
        }
    }
}

/// How hard and how long.
pub struct Settings {
    /// Concurrent connections, each with one call in flight.
    pub connections: usize,
    /// Time before measuring (calls in it are not counted).
    pub warmup: Duration,
    /// Measured time.
    pub duration: Duration,
    /// When not 0, stop once this many calls have been started (for instruction counts
    /// under a profiler, where a fixed amount of work matters more than a fixed time).
    pub calls: u64,
    /// When not 0, calls started per second over all connections (at most).
    pub rate: f64,
    /// The text each echo call sends and expects back.
    pub text: String,
}

/// What all connections saw.
#[derive(Default)]
struct Tally {
    started: u64,
    calls: u64,
    errors: u64,
    latencies_us: Vec<u32>,
    first_error: Option<String>,
}

impl Tally {
    fn error(&mut self, e: &Error) {
        self.errors += 1;
        self.first_error.get_or_insert_with(|| e.to_string());
    }
}

/// Runs the load and returns the JSON summary.
pub async fn run(
    target: Target,
    kind: Kind,
    settings: Settings,
) -> Result<serde_json::Value, Error> {
    let start = Instant::now();
    let measure_from = start + settings.warmup;
    let end = measure_from + settings.duration;
    // Calls still in flight at the end get this long before they are abandoned.
    let hard_end = end + Duration::from_secs(5);
    let tally = Rc::new(RefCell::new(Tally::default()));
    let text: Rc<str> = settings.text.as_str().into();
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let mut tasks = JoinSet::new();
            for connection in 0..settings.connections {
                let (target, tally, text) = (target.clone(), tally.clone(), text.clone());
                let window = (measure_from, end, settings.calls);
                let pace = pace(settings.rate, settings.connections);
                tasks.spawn_local(async move {
                    let work = drive(connection, &target, kind, window, pace, &tally, &text);
                    let _ = timeout_at(hard_end, work).await;
                });
            }
            while tasks.join_next().await.is_some() {}
        })
        .await;
    let mut tally = tally.take();
    let seconds = settings.duration.as_secs_f64();
    let calls_per_s = tally.calls as f64 / seconds;
    Ok(json!({
        "scenario": if kind == Kind::Echo { "echo" } else { "mrtr" },
        "connections": settings.connections,
        "seconds": seconds,
        "calls": tally.calls,
        "calls_per_s": round(calls_per_s, 1),
        "http_per_s": round(calls_per_s * kind.requests_per_call() as f64, 1),
        "p50_ms": stats::percentile_ms(&mut tally.latencies_us, 0.50).map(|v| round(v, 3)),
        "p99_ms": stats::percentile_ms(&mut tally.latencies_us, 0.99).map(|v| round(v, 3)),
        "errors": tally.errors,
        "first_error": tally.first_error,
    }))
}

/// The interval between one connection's calls at `rate` calls a second over all
/// `connections`; `None` for no pacing.
fn pace(rate: f64, connections: usize) -> Option<Duration> {
    (rate > 0.0).then(|| Duration::from_secs_f64(connections.max(1) as f64 / rate))
}

/// One connection's loop: call, record, repeat until `end` (waiting for the next start
/// when paced); reconnect after errors.
async fn drive(
    connection: usize,
    target: &Target,
    kind: Kind,
    (measure_from, end, limit): (Instant, Instant, u64),
    pace: Option<Duration>,
    tally: &RefCell<Tally>,
    text: &str,
) {
    let mut conn: Option<Conn> = None;
    let mut n: u64 = 0;
    let mut next_start = Instant::now();
    while Instant::now() < end {
        if let Some(interval) = pace {
            tokio::time::sleep_until(next_start).await;
            // A call that overran its slot starts the next at once, without a burst after.
            next_start = (next_start + interval).max(Instant::now());
            if Instant::now() >= end {
                break;
            }
        }
        {
            let mut tally = tally.borrow_mut();
            if limit > 0 && tally.started >= limit {
                break;
            }
            tally.started += 1;
        }
        let c = match conn.as_mut().filter(|c| !c.is_closed()) {
            Some(c) => c,
            None => match Conn::open(target).await {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    tally.borrow_mut().error(&e);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        n += 1;
        let id = n * 2;
        let began = Instant::now();
        let outcome = match kind {
            Kind::Echo => echo(c, id, text).await,
            Kind::Mrtr => mrtr(c, id, &format!("bench-{connection}-{n}.txt")).await,
        };
        let finished = Instant::now();
        let mut tally = tally.borrow_mut();
        match outcome {
            Ok(()) if began >= measure_from && finished <= end => {
                tally.calls += 1;
                tally.latencies_us.push(micros(finished - began));
            }
            Ok(()) => {}
            Err(e) => {
                tally.error(&e);
                conn = None;
            }
        }
    }
}

/// One echo call of `text`.
async fn echo(conn: &mut Conn, id: u64, text: &str) -> Result<(), Error> {
    let (status, body) = conn
        .post("tools/call", Some("echo"), bodies::echo(id, text))
        .await?;
    client::expect_echo(status, &body, text)
}

/// One two-round `confirm_delete` call, the confirmation accepted.
async fn mrtr(conn: &mut Conn, id: u64, path: &str) -> Result<(), Error> {
    let (status, body) = conn
        .post(
            "tools/call",
            Some("confirm_delete"),
            bodies::confirm(id, path),
        )
        .await?;
    let asked = client::expect_input_required(status, &body)?;
    let retry = bodies::confirm_retry(
        id + 1,
        path,
        asked.keys.iter().map(String::as_str),
        &asked.state,
    );
    let (status, body) = conn
        .post("tools/call", Some("confirm_delete"), retry)
        .await?;
    client::expect_deleted(status, &body, path)
}

/// One full MRTR call on a fresh connection, for `check`.
pub async fn mrtr_once(target: &Target) -> Result<(), Error> {
    let mut conn = Conn::open(target).await?;
    mrtr(&mut conn, 1, "bench-check.txt").await
}

/// One echo call on a fresh connection, for `check`.
pub async fn echo_once(target: &Target) -> Result<(), Error> {
    let mut conn = Conn::open(target).await?;
    echo(&mut conn, 1, bodies::ECHO_TEXT).await
}
