//! `requestState` integrity: answers without it, changed, cut, random, forged and garbage
//! states, each presented with the answers that complete the call.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use super::Recorder;
use super::era::discover_request;
use super::mrtr::Ground;
use crate::catalogue::{
    CheckInfo, STATE_GARBAGE, STATE_INTEGRITY_BITFLIP, STATE_INTEGRITY_FORGE,
    STATE_INTEGRITY_RANDOM, STATE_INTEGRITY_TRUNCATE, STATE_REQUIRED,
};
use crate::ctx::Ctx;
use crate::http::Who;
use crate::report::{CheckResult, Verdict};
use crate::rpc::{Answer, Reply};
use crate::tamper;
use crate::walk::{self, Pending};

/// What the state checks know before they start.
pub(crate) struct Armed<'g> {
    pub(crate) ground: &'g Ground,
    /// Set when the answers alone complete the call (state.required warned): an attack
    /// that is "accepted" may then show only that the state is ignored.
    pub(crate) state_optional: bool,
}

impl Armed<'_> {
    pub(crate) fn soft_reason(&self) -> Option<&'static str> {
        self.state_optional.then_some(
            "the server also completes the call without any requestState (state.required), so this may show only that the state is ignored",
        )
    }
}

/// How one attack came out.
pub(crate) struct Outcome {
    pub(crate) label: String,
    pub(crate) reply: Result<Reply, String>,
}

/// Judges attacks that must all be turned away: any success fails (or warns, with
/// `soft`), a request that got no answer warns, and otherwise the check passes.
pub(crate) fn judge(
    check: &CheckInfo,
    what: &str,
    outcomes: &[Outcome],
    soft: Option<&str>,
) -> CheckResult {
    let mut accepted = Vec::new();
    let mut unclear = Vec::new();
    let mut refusals = BTreeSet::new();
    let mut not_run = Vec::new();
    for o in outcomes {
        match &o.reply {
            Err(why) => not_run.push(format!("{}: {why}", o.label)),
            Ok(r) if r.succeeded() => accepted.push(o.label.clone()),
            Ok(r) if matches!(r.answer, Answer::Failed(_)) => {
                unclear.push(format!("{}: {}", o.label, r.describe()))
            }
            Ok(r) => {
                refusals.insert(r.describe());
            }
        }
    }
    let run = outcomes.len() - not_run.len();
    if run == 0 {
        return CheckResult::new(
            check,
            Verdict::Skip,
            format!("could not prepare the attack: {}", not_run.join("; ")),
        );
    }
    let data = json!({
        "attempts": outcomes.iter().map(|o| json!({
            "what": o.label,
            "outcome": match &o.reply {
                Ok(r) => r.describe(),
                Err(e) => format!("not run: {e}"),
            },
        })).collect::<Vec<_>>(),
    });
    let result = if !accepted.is_empty() {
        let text = if outcomes.len() == 1 {
            format!("{what}: accepted (the call completed)")
        } else {
            format!(
                "{what}: accepted (the call completed) for {}",
                accepted.join(", ")
            )
        };
        match soft {
            Some(why) => CheckResult::new(check, Verdict::Warn, format!("{text}; but {why}")),
            None => CheckResult::new(check, Verdict::Fail, text),
        }
    } else if !unclear.is_empty() {
        CheckResult::new(
            check,
            Verdict::Warn,
            format!(
                "{what}: not accepted, but not refused either: {}",
                unclear.join("; ")
            ),
        )
    } else {
        let seen: Vec<String> = refusals.into_iter().collect();
        CheckResult::new(
            check,
            Verdict::Pass,
            format!("{what}: {run} of {run} refused ({})", seen.join("; ")),
        )
    };
    result.with_data(data)
}

/// A fresh state of the audited tool's last round, as user A.
pub(crate) async fn fresh(ctx: &Ctx, ground: &Ground) -> Result<Pending, String> {
    walk::prepare(ctx, &ctx.tool, &ctx.config.args, Who::A, ground.rounds).await
}

/// Presents a changed version of a fresh state, with the answers.
async fn present_changed(
    ctx: &Ctx,
    ground: &Ground,
    change: impl Fn(&str) -> Vec<(String, String)>,
) -> Vec<Outcome> {
    let mut out = Vec::new();
    let first = match fresh(ctx, ground).await {
        Ok(p) => p,
        Err(e) => {
            return vec![Outcome {
                label: "a fresh state".into(),
                reply: Err(e),
            }];
        }
    };
    let Some(state) = first.state.clone() else {
        return vec![Outcome {
            label: "a fresh state".into(),
            reply: Err("the server issued no requestState".into()),
        }];
    };
    let variants = change(&state);
    let mut pending = Some(first);
    for (i, (first_label, _)) in variants.iter().enumerate() {
        // Each variant is made from its own fresh state (a server may retire a state that
        // was presented once); the first reuses the state the variants came from.
        let p = match pending.take() {
            Some(p) => p,
            None => match fresh(ctx, ground).await {
                Ok(p) => p,
                Err(e) => {
                    out.push(Outcome {
                        label: first_label.clone(),
                        reply: Err(e),
                    });
                    continue;
                }
            },
        };
        let Some(s) = p.state.as_deref() else {
            continue;
        };
        let (label, changed) = match change(s).into_iter().nth(i) {
            Some(v) => v,
            None => continue,
        };
        let req = ctx.tool_call(
            &ctx.tool,
            &ctx.config.args,
            Some(Value::String(changed)),
            Some(&p.answers),
        );
        out.push(Outcome {
            label,
            reply: Ok(ctx.send(&req).await),
        });
    }
    out
}

/// `state.required`: the last round's answers without the state.
pub(crate) async fn required(ctx: &Ctx, ground: &Ground, rec: &mut Recorder<'_>) -> bool {
    let p = match fresh(ctx, ground).await {
        Ok(p) => p,
        Err(e) => {
            rec.skip(&STATE_REQUIRED, format!("could not prepare: {e}"));
            return false;
        }
    };
    let req = ctx.tool_call(&ctx.tool, &ctx.config.args, None, Some(&p.answers));
    let reply = ctx.send(&req).await;
    let sent = "the answers without the requestState";
    if reply.succeeded() {
        rec.record(CheckResult::new(
            &STATE_REQUIRED,
            Verdict::Warn,
            format!("{sent}: the call completed, so the answers alone authorise it and the requestState guards nothing here"),
        ));
        true
    } else if matches!(reply.answer, Answer::Failed(_)) {
        rec.record(CheckResult::new(
            &STATE_REQUIRED,
            Verdict::Warn,
            format!("{sent}: {}", reply.describe()),
        ));
        false
    } else {
        rec.record(CheckResult::new(
            &STATE_REQUIRED,
            Verdict::Pass,
            format!("{sent}: not completed ({})", reply.describe()),
        ));
        false
    }
}

/// The four integrity checks.
pub(crate) async fn integrity(ctx: &Ctx, armed: &Armed<'_>, rec: &mut Recorder<'_>) {
    let soft = armed.soft_reason();
    let g = armed.ground;
    let flips = present_changed(ctx, g, tamper::bitflips).await;
    rec.record(judge(
        &STATE_INTEGRITY_BITFLIP,
        "states with one byte changed",
        &flips,
        soft,
    ));
    let cuts = present_changed(ctx, g, tamper::truncations).await;
    rec.record(judge(
        &STATE_INTEGRITY_TRUNCATE,
        "truncated states",
        &cuts,
        soft,
    ));
    let random = present_changed(ctx, g, |s| {
        vec![(
            "random content of the same shape".to_owned(),
            tamper::random_like(s),
        )]
    })
    .await;
    rec.record(judge(
        &STATE_INTEGRITY_RANDOM,
        "a random state",
        &random,
        soft,
    ));
    let state = g.last_pending.state.as_deref().unwrap_or("");
    if tamper::forgeries(state).is_empty() {
        rec.skip(
            &STATE_INTEGRITY_FORGE,
            "the state carries no readable JSON to edit (the byte checks cover it)",
        );
    } else {
        let forged = present_changed(ctx, g, tamper::forgeries).await;
        rec.record(judge(
            &STATE_INTEGRITY_FORGE,
            "edited states",
            &forged,
            soft,
        ));
    }
}

/// `state.garbage`: each garbage value refused within the latency bound, and the server
/// still serving afterwards.
pub(crate) async fn garbage(ctx: &Ctx, armed: &Armed<'_>, rec: &mut Recorder<'_>) {
    let bound = ctx.config.latency_bound;
    let answers = &armed.ground.last_pending.answers;
    let mut outcomes = Vec::new();
    let mut slow = Vec::new();
    let mut server_errors = Vec::new();
    let mut max = Duration::ZERO;
    let mut timings = Vec::new();
    for (what, value) in tamper::garbage() {
        let mut req = ctx.tool_call(&ctx.tool, &ctx.config.args, Some(value), Some(answers));
        req.timeout = Some(bound + Duration::from_secs(1));
        let reply = ctx.send(&req).await;
        let took = reply.elapsed;
        if let Some(t) = took {
            max = max.max(t);
            if t > bound {
                slow.push(format!("{what} ({} ms)", t.as_millis()));
            }
        }
        if reply.timed_out() {
            slow.push(format!("{what} (no answer)"));
        }
        if reply.status.is_some_and(|s| s >= 500) {
            server_errors.push(format!("{what} (HTTP {})", reply.status.unwrap_or(500)));
        }
        timings.push(json!({"what": what, "ms": took.map(|t| t.as_millis() as u64), "outcome": reply.describe()}));
        outcomes.push(Outcome {
            label: what.to_owned(),
            reply: Ok(reply),
        });
    }
    let alive = ctx.send(&discover_request()).await;
    let mut result = judge(
        &STATE_GARBAGE,
        "garbage states",
        &outcomes,
        armed.soft_reason(),
    );
    let mut add = |verdict: Verdict, text: String| {
        result.verdict = result.verdict.worst(verdict);
        result.detail.push_str(&format!("; {text}"));
    };
    if !slow.is_empty() {
        add(
            Verdict::Fail,
            format!("slower than {} ms: {}", bound.as_millis(), slow.join(", ")),
        );
    }
    if !server_errors.is_empty() {
        add(
            Verdict::Warn,
            format!("answered with a server error: {}", server_errors.join(", ")),
        );
    }
    if alive.succeeded() {
        add(
            Verdict::Pass,
            "the server still answers server/discover".into(),
        );
    } else {
        add(
            Verdict::Fail,
            format!("afterwards server/discover answered {}", alive.describe()),
        );
    }
    result.data = Some(json!({
        "latencyBoundMs": bound.as_millis() as u64,
        "maxLatencyMs": max.as_millis() as u64,
        "attempts": timings,
    }));
    rec.record(result);
}
