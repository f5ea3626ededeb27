//! The round trip itself: the tool asks, the audit answers, the call completes; the
//! `InputRequiredResult` is well formed; undeclared capabilities are not asked for.

use serde_json::{Value, json};

use super::Recorder;
use crate::catalogue::{MRTR_CAPABILITIES, MRTR_INPUT_REQUIRED, MRTR_ROUNDTRIP};
use crate::checks::era::Eras;
use crate::ctx::Ctx;
use crate::report::{CheckResult, Verdict};
use crate::rpc::{Answer, MODERN, Request, meta};
use crate::walk::{self, Baseline, Pending};

/// What the state checks build on: a walk of the tool that completed.
pub(crate) struct Ground {
    /// How many rounds the tool asks.
    pub(crate) rounds: usize,
    /// The last round of the baseline, as answered.
    pub(crate) last_pending: Pending,
    /// The retry that completed the baseline.
    pub(crate) last: Box<Request>,
}

/// Problems with an `InputRequiredResult` (mrtr.mdx, InputRequiredResult and Server
/// Requirements).
fn shape_problems(result: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let requests = result.get("inputRequests");
    let state = result.get("requestState");
    if requests.is_none() && state.is_none() {
        problems.push("it has neither inputRequests nor requestState".to_owned());
    }
    if state.is_some_and(|s| !s.is_string()) {
        problems.push("requestState is not a string".to_owned());
    }
    match requests {
        None => {}
        Some(Value::Object(map)) => {
            for (key, req) in map {
                let method = req.get("method").and_then(Value::as_str);
                let params = req.get("params");
                match method {
                    Some("elicitation/create") => {
                        let mode = params
                            .and_then(|p| p.get("mode"))
                            .and_then(Value::as_str)
                            .unwrap_or("form");
                        let ok = match mode {
                            "form" => params
                                .and_then(|p| p.get("requestedSchema"))
                                .is_some_and(Value::is_object),
                            "url" => params
                                .and_then(|p| p.get("url"))
                                .is_some_and(Value::is_string),
                            _ => false,
                        };
                        if !ok {
                            problems.push(format!(
                                "{key:?} is a malformed elicitation/create (mode {mode:?})"
                            ));
                        }
                    }
                    Some("sampling/createMessage") | Some("roots/list") => {}
                    other => problems.push(format!(
                        "{key:?} has method {:?}, which is not an input request",
                        other.unwrap_or("(none)")
                    )),
                }
            }
        }
        Some(_) => problems.push("inputRequests is not an object".to_owned()),
    }
    problems
}

pub(crate) async fn run(ctx: &Ctx, eras: &Eras, rec: &mut Recorder<'_>) -> Result<Ground, String> {
    if !eras.modern {
        let why = format!("the server does not serve {MODERN}, where MRTR lives");
        for c in [&MRTR_ROUNDTRIP, &MRTR_INPUT_REQUIRED, &MRTR_CAPABILITIES] {
            rec.skip(c, &why);
        }
        return Err(why);
    }
    let tool = &ctx.tool.name;
    let listed = if ctx.tool.listed {
        String::new()
    } else {
        format!(" ({tool} is not in tools/list)")
    };
    let ground = match walk::baseline(ctx).await {
        Baseline::Completed {
            rounds,
            last,
            reply,
        } => {
            let keys: Vec<String> = rounds
                .iter()
                .map(|r| r.requests.keys().cloned().collect::<Vec<_>>().join("+"))
                .collect();
            let ended = if reply.succeeded() {
                "completed"
            } else {
                "ended with isError: true"
            };
            rec.record(
                CheckResult::new(
                    &MRTR_ROUNDTRIP,
                    Verdict::Pass,
                    format!(
                        "{tool} asked in {} round{} ({}) and, answered, {ended}{listed}",
                        rounds.len(),
                        if rounds.len() == 1 { "" } else { "s" },
                        keys.join(", then ")
                    ),
                )
                .with_data(json!({"rounds": rounds.len(), "answers": rounds.iter().map(|r| &r.answers).collect::<Vec<_>>()})),
            );
            let problems = shape_problems(&rounds[0].result);
            rec.record(if problems.is_empty() {
                CheckResult::new(&MRTR_INPUT_REQUIRED, Verdict::Pass, "well formed")
            } else {
                CheckResult::new(&MRTR_INPUT_REQUIRED, Verdict::Fail, problems.join("; "))
            });
            if !reply.succeeded() {
                let why = format!(
                    "the answered call ended with isError: true, so a refusal cannot be told from success; give --answers that let {tool} succeed"
                );
                rec.skip(&MRTR_CAPABILITIES, &why);
                return Err(why);
            }
            let n = rounds.len();
            Ground {
                rounds: n,
                last_pending: rounds.into_iter().last().ok_or("no round")?,
                last,
            }
        }
        Baseline::NoAsk(reply) => {
            let why = format!(
                "{tool} completed without asking for input ({}), so there is no round trip to audit",
                reply.describe()
            );
            for c in [&MRTR_ROUNDTRIP, &MRTR_INPUT_REQUIRED, &MRTR_CAPABILITIES] {
                rec.skip(c, &why);
            }
            return Err(why);
        }
        Baseline::Stopped { round, why } => {
            rec.record(CheckResult::new(
                &MRTR_ROUNDTRIP,
                Verdict::Fail,
                format!(
                    "round {round} of {tool}: {why}{listed}; check --tool, --args and --answers"
                ),
            ));
            let why = "the round trip did not complete".to_owned();
            rec.skip(&MRTR_INPUT_REQUIRED, &why);
            rec.skip(&MRTR_CAPABILITIES, &why);
            return Err(why);
        }
    };
    capabilities(ctx, rec).await;
    Ok(ground)
}

async fn capabilities(ctx: &Ctx, rec: &mut Recorder<'_>) {
    let mut req = ctx.tool_call(&ctx.tool, &ctx.config.args, None, None);
    req.meta = Some(meta(MODERN, json!({})));
    let reply = ctx.send(&req).await;
    let sent = format!(
        "tools/call of {} declaring no client capabilities",
        ctx.tool.name
    );
    let result = match &reply.answer {
        Answer::Error { code: -32021, .. } if reply.status == Some(400) => CheckResult::new(
            &MRTR_CAPABILITIES,
            Verdict::Pass,
            format!("{sent}: {}", reply.describe()),
        ),
        Answer::InputRequired { result } => {
            let kinds: Vec<String> = result
                .get("inputRequests")
                .and_then(Value::as_object)
                .map(|m| {
                    m.values()
                        .filter_map(|r| r.get("method").and_then(Value::as_str).map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            if kinds.is_empty() {
                CheckResult::new(
                    &MRTR_CAPABILITIES,
                    Verdict::Pass,
                    format!("{sent}: an InputRequiredResult without inputRequests"),
                )
            } else {
                CheckResult::new(
                    &MRTR_CAPABILITIES,
                    Verdict::Fail,
                    format!("{sent}: it still asked for {}", kinds.join(", ")),
                )
            }
        }
        Answer::Complete { .. } => CheckResult::new(
            &MRTR_CAPABILITIES,
            Verdict::Pass,
            format!("{sent}: it completed without asking ({})", reply.describe()),
        ),
        _ => CheckResult::new(
            &MRTR_CAPABILITIES,
            Verdict::Warn,
            format!(
                "{sent}: {}; a missing capability calls for MissingRequiredClientCapability (-32021, HTTP 400)",
                reply.describe()
            ),
        ),
    };
    rec.record(result);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_input_required_results_are_named() {
        assert!(
            shape_problems(&json!({"resultType": "input_required", "requestState": "x"}))
                .is_empty()
        );
        let p = shape_problems(&json!({"resultType": "input_required"}));
        assert_eq!(p, ["it has neither inputRequests nor requestState"]);
        let p = shape_problems(
            &json!({"inputRequests": {"a": {"method": "tools/call"}}, "requestState": 5}),
        );
        assert_eq!(p.len(), 2);
        let p = shape_problems(
            &json!({"inputRequests": {"a": {"method": "elicitation/create", "params": {"mode": "form"}}}}),
        );
        assert_eq!(p.len(), 1);
    }
}
