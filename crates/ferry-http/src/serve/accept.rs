//! Taking connections off the listener: a cap on open connections, and accept errors
//! (out of file descriptors, above all) met with back-off and one log line per interval
//! instead of a spinning loop and a flooded log.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// At most one log line per this interval for a repeating condition.
const LOG_INTERVAL: Duration = Duration::from_secs(5);
/// The first pause after a failed accept; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(5);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How many connections beyond the cap may be open at once while they are answered 503.
const REFUSING: usize = 64;

/// The listener, taking connections off it whatever errors it meets.
pub(super) struct Acceptor {
    listener: TcpListener,
    backoff: Duration,
    failures: Throttle,
}

impl Acceptor {
    pub(super) fn new(listener: TcpListener) -> Acceptor {
        Acceptor {
            listener,
            backoff: MIN_BACKOFF,
            failures: Throttle::new(LOG_INTERVAL),
        }
    }

    /// The next connection. Accept errors never end serving: a connection that failed
    /// before it was taken is skipped; anything else (`EMFILE`, `ENFILE`, `ENOBUFS` ...)
    /// pauses accepting, longer each time up to a second, so that descriptors freed by
    /// closing connections can be used, and is logged at most once per 5 s with the
    /// count since the last line.
    pub(super) async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            match self.listener.accept().await {
                Ok(accepted) => {
                    self.backoff = MIN_BACKOFF;
                    return accepted;
                }
                Err(e) if skipped(&e) => continue,
                Err(e) => {
                    let pause = self.backoff;
                    tracing::debug!(error = %e, pause_ms = pause.as_millis(), "accept failed");
                    if let Some(failures) = self.failures.record(Instant::now()) {
                        tracing::warn!(
                            error = %e,
                            failures,
                            "accept failed; pausing accepts (failures since the last report, which come at most every 5 s)"
                        );
                    }
                    tokio::time::sleep(pause).await;
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

/// An error about one connection that the peer abandoned before it was accepted: skip
/// it and accept the next.
fn skipped(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}

/// Room for connections: `max` served, and a few more answered `503` (or waiting for the
/// slot of a connection closed to make room) while the server is full. Only the accept loop takes slots, so room it sees is still there once the
/// connection is in.
pub(super) struct Slots {
    serving: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
    max: usize,
    full: Throttle,
    room_made: Throttle,
}

/// What a new connection gets.
pub(super) enum Admission {
    /// Served; its slot is held for as long as it is open.
    Serve(OwnedSemaphorePermit),
    /// Answered `503` and closed: the server is full.
    Refuse(OwnedSemaphorePermit),
}

impl Slots {
    pub(super) fn new(max: usize) -> Slots {
        Slots {
            serving: Arc::new(Semaphore::new(max)),
            refusing: Arc::new(Semaphore::new(REFUSING)),
            max,
            full: Throttle::new(LOG_INTERVAL),
            room_made: Throttle::new(LOG_INTERVAL),
        }
    }

    /// Waits until a connection could be taken, served or refused: while even the
    /// refusals are at their limit, nothing is accepted and new connections wait in the
    /// listener's backlog.
    pub(super) async fn room(&self) {
        if self.serving.available_permits() > 0 || self.refusing.available_permits() > 0 {
            return;
        }
        tokio::select! {
            _ = self.serving.acquire() => {}
            _ = self.refusing.acquire() => {}
        }
    }

    /// A slot for a connection just accepted (after [`Slots::room`]).
    pub(super) fn admit(&mut self) -> Option<Admission> {
        if let Ok(slot) = self.serving.clone().try_acquire_owned() {
            return Some(Admission::Serve(slot));
        }
        let slot = self.refusing.clone().try_acquire_owned().ok()?;
        Some(Admission::Refuse(slot))
    }

    /// The slots of served connections, for a connection waiting for one to be freed.
    pub(super) fn serving_permits(&self) -> Arc<Semaphore> {
        self.serving.clone()
    }

    /// Counts a new connection served in place of a waiting one closed to make room.
    pub(super) fn made_room(&mut self) {
        if let Some(closed) = self.room_made.record(Instant::now()) {
            tracing::info!(
                max_connections = self.max,
                closed,
                "connection limit reached: connections waiting for a request are closed to make room (closed since the last report, which come at most every 5 s)"
            );
        }
    }

    /// Counts a new connection refused (`503`, or closed at once) while every served
    /// connection is busy.
    pub(super) fn refused(&mut self) {
        if let Some(refused) = self.full.record(Instant::now()) {
            tracing::warn!(
                max_connections = self.max,
                refused,
                "connection limit reached and every connection busy: new connections are answered 503 (refusals since the last report, which come at most every 5 s)"
            );
        }
    }

    /// Connections open and served now.
    #[cfg(test)]
    fn serving(&self) -> usize {
        self.max - self.serving.available_permits()
    }
}

/// Counts a repeating condition and says when to log it: at once the first time, then at
/// most once per interval, with the count since the last line. An interruption does not
/// reset it, so a condition that comes and goes (descriptors freed one at a time) is
/// still logged once per interval.
struct Throttle {
    interval: Duration,
    last_line: Option<Instant>,
    since_line: u64,
}

impl Throttle {
    fn new(interval: Duration) -> Throttle {
        Throttle {
            interval,
            last_line: None,
            since_line: 0,
        }
    }

    /// Counts one occurrence at `now`: the count since the last line, when a line is due.
    fn record(&mut self, now: Instant) -> Option<u64> {
        self.since_line += 1;
        if self
            .last_line
            .is_some_and(|at| now.duration_since(at) < self.interval)
        {
            return None;
        }
        self.last_line = Some(now);
        Some(std::mem::take(&mut self.since_line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_logged_once_per_interval_with_their_count() {
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let mut t = Throttle::new(Duration::from_secs(5));
        assert_eq!(t.record(at(0)), Some(1), "the first one at once");
        let mut lines = Vec::new();
        // A failure every 5 ms for 12 s: 2,400 failures, two more lines.
        for i in 1..2400 {
            if let Some(n) = t.record(at(i * 5)) {
                lines.push(n);
            }
        }
        assert_eq!(
            lines,
            [1000, 1000],
            "each counts every failure since the last"
        );
        // Quiet for a while, then once more: logged at once, with what went unreported.
        assert_eq!(t.record(at(20_000)), Some(400));
        assert_eq!(t.record(at(20_001)), None);
    }

    #[tokio::test]
    async fn slots_serve_up_to_the_cap_then_refuse_then_wait() {
        let mut slots = Slots::new(2);
        let mut served = Vec::new();
        for _ in 0..2 {
            slots.room().await;
            match slots.admit() {
                Some(Admission::Serve(p)) => served.push(p),
                _ => panic!("room to serve"),
            }
        }
        assert_eq!(slots.serving(), 2);
        let mut refused = Vec::new();
        for _ in 0..REFUSING {
            slots.room().await;
            match slots.admit() {
                Some(Admission::Refuse(p)) => refused.push(p),
                _ => panic!("full: refused"),
            }
        }
        // Full, refusals included: no room until a connection closes.
        let waiting = tokio::time::timeout(Duration::from_millis(50), slots.room()).await;
        assert!(waiting.is_err(), "no room while everything is taken");
        drop(served.pop());
        tokio::time::timeout(Duration::from_secs(1), slots.room())
            .await
            .expect("room once a connection closed");
        assert!(matches!(slots.admit(), Some(Admission::Serve(_))));
        drop(refused);
    }
}
