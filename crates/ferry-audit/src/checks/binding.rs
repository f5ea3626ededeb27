//! What a valid `requestState` must be bound to: one redemption, the arguments, the tool,
//! the user and a lifetime; what it must not reveal; and what it must not stand in for
//! (the answers).

use std::time::{Duration, Instant};

use rand::RngCore;
use serde_json::{Map, Value, json};

use super::Recorder;
use super::era::discover_request;
use super::state::{Armed, Outcome, fresh, judge};
use crate::catalogue::{
    STATE_BIND_ARGS, STATE_BIND_PRINCIPAL, STATE_BIND_TOOL, STATE_CONFIDENTIALITY, STATE_EXPIRY,
    STATE_MISSING_ANSWER, STATE_REPLAY,
};
use crate::ctx::Ctx;
use crate::http::Who;
use crate::report::{CheckResult, Verdict};
use crate::reveal;
use crate::rpc::Answer;
use crate::walk::{self, Pending, retry};

/// `state.replay`: the baseline's completing retry, sent again.
pub(crate) async fn replay(ctx: &Ctx, armed: &Armed<'_>, rec: &mut Recorder<'_>) {
    let reply = ctx.send(&armed.ground.last).await;
    let outcomes = [Outcome {
        label: "the second redemption".into(),
        reply: Ok(reply.clone()),
    }];
    let repeatable = ctx.tool.declared_repeatable();
    let soft = match (repeatable, armed.soft_reason()) {
        (Some(hint), _) => Some(format!(
            "{} declares {hint}: true, so a second run should change nothing; a tool whose state must be used once must enforce it server-side",
            ctx.tool.name
        )),
        (None, Some(why)) => Some(why.to_owned()),
        (None, None) => None,
    };
    let mut result = judge(
        &STATE_REPLAY,
        "the completed call's requestState and answers sent again",
        &outcomes,
        soft.as_deref(),
    );
    if result.verdict == Verdict::Fail {
        result.detail.push_str(&format!(
            "; {} does not declare readOnlyHint or idempotentHint, so a replay may run it twice",
            ctx.tool.name
        ));
    }
    rec.record(result);
}

/// The arguments with one value changed, for `state.bind.args`.
fn changed_args(ctx: &Ctx) -> Option<(Map<String, Value>, String)> {
    if let Some(a) = &ctx.config.changed_args {
        return Some((a.clone(), "the --changed-args arguments".into()));
    }
    let mut args = ctx.config.args.clone();
    for (k, v) in args.iter_mut() {
        let new = match v {
            Value::String(s) => Value::String(format!("{s}-ferry-audit")),
            Value::Number(n) if n.is_i64() => json!(n.as_i64().unwrap_or(0).wrapping_add(1)),
            Value::Bool(b) => Value::Bool(!*b),
            _ => continue,
        };
        let what = format!(
            "{k} changed from {} to {new}",
            crate::rpc::short(&v.to_string())
        );
        *v = new;
        return Some((args, what));
    }
    None
}

/// A free-form string property to carry a marker: present in the arguments (the marker
/// is appended) or optional in the schema (it is added).
fn marked_args(ctx: &Ctx, marker: &str) -> Option<(Map<String, Value>, String)> {
    let props = ctx
        .tool
        .schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let free = |name: &str| -> bool {
        let Some(props) = props else {
            return true;
        };
        props.get(name).is_some_and(|p| {
            p.get("type").and_then(Value::as_str) == Some("string")
                && ["enum", "const", "pattern", "format"]
                    .iter()
                    .all(|k| p.get(*k).is_none())
                && p.get("maxLength")
                    .and_then(Value::as_u64)
                    .is_none_or(|m| m >= 64)
        })
    };
    let mut args = ctx.config.args.clone();
    let present = args
        .iter()
        .find(|(k, v)| v.is_string() && free(k))
        .map(|(k, _)| k.clone());
    if let Some(k) = present {
        let old = args[&k].as_str().unwrap_or("").to_owned();
        args.insert(k.clone(), Value::String(format!("{old}-{marker}")));
        return Some((args, k));
    }
    let absent = props?
        .keys()
        .find(|k| !args.contains_key(*k) && free(k))?
        .clone();
    args.insert(absent.clone(), Value::String(marker.to_owned()));
    Some((args, absent))
}

/// Runs the three binding checks.
pub(crate) async fn bindings(ctx: &Ctx, armed: &Armed<'_>, rec: &mut Recorder<'_>) {
    let soft = armed.soft_reason();
    let g = armed.ground;

    match changed_args(ctx) {
        None => rec.skip(
            &STATE_BIND_ARGS,
            "no string, integer or boolean argument to change: give --changed-args",
        ),
        Some((changed, what)) => {
            // The changed arguments must be good on their own, or a refusal proves nothing.
            match walk::prepare(ctx, &ctx.tool, &changed, Who::A, 1).await {
                Err(e) => rec.skip(
                    &STATE_BIND_ARGS,
                    format!("the changed arguments ({what}) are not usable on their own ({e}): give --changed-args"),
                ),
                Ok(_) => {
                    let reply = match fresh(ctx, g).await {
                        Ok(p) => Ok(ctx
                            .send(&retry(ctx, &ctx.tool, &changed, &p, Who::A))
                            .await),
                        Err(e) => Err(e),
                    };
                    let outcomes = [Outcome {
                        label: what.clone(),
                        reply,
                    }];
                    rec.record(judge(
                        &STATE_BIND_ARGS,
                        &format!("the state presented with {what}"),
                        &outcomes,
                        soft,
                    ));
                }
            }
        }
    }

    match (&ctx.other, ctx.config.other_tool.as_deref()) {
        (Some(other), Some(name)) => {
            let other_args = &ctx.config.other_args;
            match walk::prepare(ctx, other, other_args, Who::A, 1).await {
                Err(e) => rec.skip(
                    &STATE_BIND_TOOL,
                    format!("{name} with --other-args does not ask for input ({e}), so it has no state to confuse"),
                ),
                Ok(_) => {
                    let reply = match fresh(ctx, g).await {
                        Ok(p) => {
                            let req = ctx.tool_call(
                                other,
                                other_args,
                                p.state.clone().map(Value::String),
                                Some(&p.answers),
                            );
                            Ok(ctx.send(&req).await)
                        }
                        Err(e) => Err(e),
                    };
                    let outcomes = [Outcome {
                        label: format!("tools/call of {name}"),
                        reply,
                    }];
                    rec.record(judge(
                        &STATE_BIND_TOOL,
                        &format!("the state of {} presented to {name}", ctx.tool.name),
                        &outcomes,
                        soft,
                    ));
                }
            }
        }
        _ => rec.skip(
            &STATE_BIND_TOOL,
            "presenting the state to another tool calls that tool: name one that is safe to call with --other-tool (and --other-args)",
        ),
    }

    principal(ctx, armed, rec).await;
}

async fn principal(ctx: &Ctx, armed: &Armed<'_>, rec: &mut Recorder<'_>) {
    if ctx.config.token.is_none() || ctx.config.token_b.is_none() {
        rec.skip(
            &STATE_BIND_PRINCIPAL,
            "needs two users: give --token (user A) and --token-b (user B)",
        );
        return;
    }
    let mut bogus = discover_request();
    bogus.who = Who::Bogus;
    let reply = ctx.send(&bogus).await;
    if !reply.refused() {
        rec.skip(
            &STATE_BIND_PRINCIPAL,
            format!(
                "the server accepted a made-up bearer token ({}), so it does not authenticate and there is no principal to bind to",
                reply.describe()
            ),
        );
        return;
    }
    let mut as_b = discover_request();
    as_b.who = Who::B;
    let reply = ctx.send(&as_b).await;
    if !reply.succeeded() {
        rec.skip(
            &STATE_BIND_PRINCIPAL,
            format!("user B's token was not accepted ({})", reply.describe()),
        );
        return;
    }
    let reply = match fresh(ctx, armed.ground).await {
        Ok(p) => Ok(ctx
            .send(&retry(ctx, &ctx.tool, &ctx.config.args, &p, Who::B))
            .await),
        Err(e) => Err(e),
    };
    let outcomes = [Outcome {
        label: "user B".into(),
        reply,
    }];
    rec.record(judge(
        &STATE_BIND_PRINCIPAL,
        "user A's state presented by user B",
        &outcomes,
        armed.soft_reason(),
    ));
}

/// `state.confidentiality`: a marker in an argument must not be readable in the state.
pub(crate) async fn confidentiality(ctx: &Ctx, armed: &Armed<'_>, rec: &mut Recorder<'_>) {
    let mut r = [0u8; 8];
    rand::rng().fill_bytes(&mut r);
    let marker: String = std::iter::once("ferryaudit".to_owned())
        .chain(r.iter().map(|b| format!("{b:02x}")))
        .collect();
    // Found in a state issued for the marked arguments (never answered), or else the
    // user's own string arguments in the baseline state.
    if let Some((args, field)) = marked_args(ctx, &marker) {
        let first = walk::prepare(ctx, &ctx.tool, &args, Who::A, 1).await;
        if let Ok(Pending {
            state: Some(state), ..
        }) = first
        {
            let found = reveal::find(&state, marker.as_bytes());
            rec.record(match found {
                Some(how) => CheckResult::new(
                    &STATE_CONFIDENTIALITY,
                    Verdict::Warn,
                    format!(
                        "a marker put in the argument {field:?} can be read in the requestState ({how}): whatever the server keeps there travels through the client readable"
                    ),
                )
                .with_data(json!({"field": field, "found": how})),
                None => CheckResult::new(
                    &STATE_CONFIDENTIALITY,
                    Verdict::Pass,
                    format!("a marker put in the argument {field:?} is not readable in the requestState (looked for it as is, in base64, base64url and hex, two layers deep)"),
                ),
            });
            return;
        }
    }
    let state = armed.ground.last_pending.state.clone().unwrap_or_default();
    let values: Vec<(&String, &str)> = ctx
        .config
        .args
        .iter()
        .filter_map(|(k, v)| v.as_str().filter(|s| s.len() >= 4).map(|s| (k, s)))
        .collect();
    if values.is_empty() {
        rec.skip(
            &STATE_CONFIDENTIALITY,
            "no string argument could carry a marker, and no argument is a string of 4 or more characters to look for",
        );
        return;
    }
    let found: Vec<String> = values
        .iter()
        .filter_map(|(k, v)| reveal::find(&state, v.as_bytes()).map(|how| format!("{k:?} ({how})")))
        .collect();
    rec.record(if found.is_empty() {
        CheckResult::new(
            &STATE_CONFIDENTIALITY,
            Verdict::Pass,
            "the string arguments are not readable in the requestState",
        )
    } else {
        CheckResult::new(
            &STATE_CONFIDENTIALITY,
            Verdict::Warn,
            format!(
                "the arguments can be read in the requestState: {}",
                found.join(", ")
            ),
        )
    });
}

/// `state.missing_answer`: the state without its answers must be asked again.
pub(crate) async fn missing_answer(ctx: &Ctx, armed: &Armed<'_>, rec: &mut Recorder<'_>) {
    let p = match fresh(ctx, armed.ground).await {
        Ok(p) => p,
        Err(e) => {
            rec.skip(&STATE_MISSING_ANSWER, format!("could not prepare: {e}"));
            return;
        }
    };
    let req = ctx.tool_call(
        &ctx.tool,
        &ctx.config.args,
        p.state.clone().map(Value::String),
        None,
    );
    let reply = ctx.send(&req).await;
    let sent = "the requestState without inputResponses";
    rec.record(match &reply.answer {
        Answer::InputRequired { .. } => CheckResult::new(
            &STATE_MISSING_ANSWER,
            Verdict::Pass,
            format!("{sent}: asked again ({})", reply.describe()),
        ),
        Answer::Complete {
            is_error: false, ..
        } => CheckResult::new(
            &STATE_MISSING_ANSWER,
            Verdict::Fail,
            format!("{sent}: the call completed without the answer it asked for"),
        ),
        _ => CheckResult::new(
            &STATE_MISSING_ANSWER,
            Verdict::Warn,
            format!(
                "{sent}: {}; a missing answer calls for a new InputRequiredResult, not an error",
                reply.describe()
            ),
        ),
    });
}

/// A state prepared for the expiry check, and when.
pub(crate) struct Aging {
    pending: Result<Pending, String>,
    issued: Instant,
    ttl: Duration,
}

/// The margin past the lifetime: clocks and rounding to whole seconds.
fn margin(ttl: Duration) -> Duration {
    (ttl / 10).max(Duration::from_secs(2))
}

/// Prepares the expiry check's state, when `--ttl` was given.
pub(crate) async fn start_aging(ctx: &Ctx, armed: &Armed<'_>) -> Option<Aging> {
    let ttl = ctx.config.ttl?;
    let issued = Instant::now();
    let pending = fresh(ctx, armed.ground).await;
    Some(Aging {
        pending,
        issued,
        ttl,
    })
}

/// `state.expiry`: waits past the lifetime, then presents the state.
pub(crate) async fn expiry(
    ctx: &Ctx,
    armed: &Armed<'_>,
    aging: Option<Aging>,
    rec: &mut Recorder<'_>,
) {
    let Some(aging) = aging else {
        rec.skip(
            &STATE_EXPIRY,
            "give --ttl SECONDS (the server's requestState lifetime) to wait past it and test expiry",
        );
        return;
    };
    let p = match aging.pending {
        Ok(p) => p,
        Err(e) => {
            rec.skip(&STATE_EXPIRY, format!("could not prepare: {e}"));
            return;
        }
    };
    let due = aging.issued + aging.ttl + margin(aging.ttl);
    let now = Instant::now();
    if due > now {
        rec.waiting(due - now);
        tokio::time::sleep_until(tokio::time::Instant::from_std(due)).await;
    }
    let age = aging.issued.elapsed();
    let reply = ctx
        .send(&retry(ctx, &ctx.tool, &ctx.config.args, &p, Who::A))
        .await;
    let outcomes = [Outcome {
        label: format!("{:.1} s after it was issued", age.as_secs_f64()),
        reply: Ok(reply),
    }];
    rec.record(judge(
        &STATE_EXPIRY,
        &format!(
            "the state presented {:.1} s after it was issued, past the {} s lifetime",
            age.as_secs_f64(),
            aging.ttl.as_secs_f64()
        ),
        &outcomes,
        armed.soft_reason(),
    ));
}
