//! Metering per round trip: every round a call takes through the gateway is reserved
//! before it goes upstream and settled (or released) when it ends.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use serde::Serialize;

/// How a round ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundOutcome {
    /// The upstream answered with a complete result.
    Complete,
    /// The upstream needs input: the client will retry.
    InputRequired,
    /// The upstream started a task.
    Task,
    /// The upstream (or the gateway, for this round) answered with an error.
    Error,
}

impl RoundOutcome {
    /// Its label in the usage log and in metrics.
    pub fn label(self) -> &'static str {
        match self {
            RoundOutcome::Complete => "complete",
            RoundOutcome::InputRequired => "input_required",
            RoundOutcome::Task => "task",
            RoundOutcome::Error => "error",
        }
    }
}

/// A round about to go upstream.
#[derive(Debug, Clone, Serialize)]
pub struct RoundStart {
    /// The principal's id, if authenticated.
    pub principal: Option<String>,
    /// The upstream's name.
    pub upstream: String,
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: String,
    /// The tool or prompt name, or the resource URI, as the upstream knows it.
    pub tool: String,
    /// The logical call's id, shared by all its rounds.
    pub call_id: String,
    /// This round's number, from 1.
    pub round: u32,
}

/// A round that ended.
#[derive(Debug, Clone, Serialize)]
pub struct RoundRecord {
    /// When the round ended, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// What the round was.
    #[serde(flatten)]
    pub start: RoundStart,
    /// How it ended.
    pub outcome: RoundOutcome,
    /// The kinds of input the upstream asked for (`elicitation/form`,
    /// `elicitation/url`, `sampling`, `roots`), on `input_required`.
    pub input_kinds: Vec<String>,
    /// Bytes of the params sent upstream.
    pub request_bytes: usize,
    /// Bytes of the result (or error) that came back.
    pub response_bytes: usize,
    /// Time spent waiting for the upstream, in microseconds.
    pub latency_us: u64,
}

/// A meter's hold on one round, handed back to settle or release it.
#[derive(Debug)]
pub struct Reservation {
    /// The meter's own id for the hold.
    pub id: u64,
}

/// Why a meter refused a round (a quota, a budget).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct MeterRefusal(pub String);

/// Counts what goes through the gateway, one round trip at a time.
///
/// [`reserve`](Meter::reserve) runs before a round goes upstream and may refuse it;
/// then exactly one of [`settle`](Meter::settle) (the round ended, with its record) or
/// [`release`](Meter::release) (it never completed: the client went away, the gateway
/// refused it) follows. Calls are on the request path: keep them quick.
pub trait Meter: Send + Sync + 'static {
    /// Holds room for `round`, or refuses it.
    fn reserve(&self, round: &RoundStart) -> Result<Reservation, MeterRefusal>;
    /// Records a round that ended.
    fn settle(&self, reservation: Reservation, record: &RoundRecord);
    /// Drops the hold of a round that did not complete.
    fn release(&self, reservation: Reservation);
}

/// A meter that accepts everything and records nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoMeter;

impl Meter for NoMeter {
    fn reserve(&self, _round: &RoundStart) -> Result<Reservation, MeterRefusal> {
        Ok(Reservation { id: 0 })
    }
    fn settle(&self, _reservation: Reservation, _record: &RoundRecord) {}
    fn release(&self, _reservation: Reservation) {}
}

/// Appends one JSON line per settled round to a file (`ferry gateway --usage-log`).
///
/// Each line is written with one `write` on a file opened for appending, so lines of
/// concurrent rounds never interleave.
#[derive(Debug, Clone)]
pub struct JsonLinesMeter {
    file: Arc<Mutex<std::fs::File>>,
}

impl JsonLinesMeter {
    /// Opens (or creates) `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(JsonLinesMeter {
            file: Arc::new(Mutex::new(file)),
        })
    }
}

impl Meter for JsonLinesMeter {
    fn reserve(&self, _round: &RoundStart) -> Result<Reservation, MeterRefusal> {
        Ok(Reservation { id: 0 })
    }

    fn settle(&self, _reservation: Reservation, record: &RoundRecord) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        if let Err(e) = self.file.lock().write_all(&line) {
            tracing::warn!(error = %e, "usage log write failed");
        }
    }

    fn release(&self, _reservation: Reservation) {}
}

/// A reservation that is released if it is dropped unsettled (the client went away).
pub(crate) struct Held<'a> {
    meter: &'a dyn Meter,
    reservation: Option<Reservation>,
}

impl<'a> Held<'a> {
    pub(crate) fn new(meter: &'a dyn Meter, reservation: Reservation) -> Self {
        Held {
            meter,
            reservation: Some(reservation),
        }
    }

    pub(crate) fn settle(mut self, record: &RoundRecord) {
        if let Some(r) = self.reservation.take() {
            self.meter.settle(r, record);
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.reservation.take() {
            self.meter.release(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    struct Counting {
        settled: AtomicUsize,
        released: AtomicUsize,
    }

    impl Meter for Counting {
        fn reserve(&self, _round: &RoundStart) -> Result<Reservation, MeterRefusal> {
            Ok(Reservation { id: 7 })
        }
        fn settle(&self, reservation: Reservation, _record: &RoundRecord) {
            assert_eq!(reservation.id, 7);
            self.settled.fetch_add(1, Ordering::SeqCst);
        }
        fn release(&self, _reservation: Reservation) {
            self.released.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn start() -> RoundStart {
        RoundStart {
            principal: None,
            upstream: "a".into(),
            method: "tools/call".into(),
            tool: "t".into(),
            call_id: "c".into(),
            round: 1,
        }
    }

    #[test]
    fn a_dropped_hold_is_released_and_a_settled_one_is_not() {
        let meter = Counting::default();
        let held = Held::new(&meter, meter.reserve(&start()).unwrap());
        drop(held);
        let held = Held::new(&meter, meter.reserve(&start()).unwrap());
        held.settle(&RoundRecord {
            at_ms: 0,
            start: start(),
            outcome: RoundOutcome::Complete,
            input_kinds: vec![],
            request_bytes: 1,
            response_bytes: 2,
            latency_us: 3,
        });
        assert_eq!(meter.released.load(Ordering::SeqCst), 1);
        assert_eq!(meter.settled.load(Ordering::SeqCst), 1);
    }
}
