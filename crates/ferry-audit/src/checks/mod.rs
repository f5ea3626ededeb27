//! The checks, grouped as the report lists them: eras, HTTP rules, the MRTR round trip,
//! and the `requestState` defences.

pub(crate) mod binding;
pub(crate) mod era;
pub(crate) mod headers;
pub(crate) mod mrtr;
pub(crate) mod state;

use std::time::Duration;

use crate::catalogue::CheckInfo;
use crate::report::{CheckResult, Verdict};
use crate::rpc::Reply;

/// What the run reports as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// A check finished.
    Check(&'a CheckResult),
    /// The audit waits this long (past the state's expiry).
    Waiting(Duration),
}

/// Collects results and tells the observer about each.
pub(crate) struct Recorder<'o> {
    pub(crate) results: Vec<CheckResult>,
    observer: &'o mut (dyn FnMut(Progress<'_>) + Send),
}

impl<'o> Recorder<'o> {
    pub(crate) fn new(observer: &'o mut (dyn FnMut(Progress<'_>) + Send)) -> Self {
        Recorder {
            results: Vec::new(),
            observer,
        }
    }

    pub(crate) fn record(&mut self, result: CheckResult) {
        (self.observer)(Progress::Check(&result));
        self.results.push(result);
    }

    pub(crate) fn skip(&mut self, check: &CheckInfo, why: impl Into<String>) {
        self.record(CheckResult::new(check, Verdict::Skip, why));
    }

    pub(crate) fn waiting(&mut self, d: Duration) {
        (self.observer)(Progress::Waiting(d));
    }
}

/// Judges a header rule: refused with HTTP 400 and -32020 passes; another refusal warns
/// (the mismatch was not served, but not refused as the rule words it); anything served
/// fails.
pub(crate) fn judge_header_rule(check: &CheckInfo, sent: &str, reply: &Reply) -> CheckResult {
    let seen = reply.describe();
    if reply.is_400_with(-32020) {
        CheckResult::new(check, Verdict::Pass, format!("{sent}: refused ({seen})"))
    } else if reply.refused() {
        CheckResult::new(
            check,
            Verdict::Warn,
            format!(
                "{sent}: refused, but with {seen}; the rule asks for HTTP 400 and JSON-RPC -32020 (HeaderMismatch)"
            ),
        )
    } else if reply.timed_out() {
        CheckResult::new(check, Verdict::Fail, format!("{sent}: {seen}"))
    } else {
        CheckResult::new(
            check,
            Verdict::Fail,
            format!("{sent}: served ({seen}); it must be refused with HTTP 400 and -32020"),
        )
    }
}
