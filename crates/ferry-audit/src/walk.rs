//! Walking a tool's rounds: the baseline (ask, answer, until the result), and fresh
//! states for each attack (the same rounds again, stopping before the last answer).

use serde_json::{Map, Value};

use crate::ctx::{Ctx, ToolInfo};
use crate::http::Who;
use crate::rpc::{Answer, Reply, Request};

/// The most rounds a tool may ask before the audit gives up on it.
pub(crate) const MAX_ROUNDS: usize = 8;

/// A round ready to be answered: the state to echo and the answers to give.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    /// The `requestState`, when the server issued one.
    pub(crate) state: Option<String>,
    /// The `inputRequests`.
    pub(crate) requests: Map<String, Value>,
    /// The answers the audit gives them.
    pub(crate) answers: Map<String, Value>,
    /// The whole `InputRequiredResult`.
    pub(crate) result: Value,
}

/// How the baseline ended.
pub(crate) enum Baseline {
    /// The tool asked `rounds.len()` times and then completed.
    Completed {
        rounds: Vec<Pending>,
        /// The retry that completed the call (sent again by the replay check).
        last: Box<Request>,
        reply: Reply,
    },
    /// The tool completed without asking.
    NoAsk(Reply),
    /// The walk stopped: in which round (1-based), and why.
    Stopped { round: usize, why: String },
}

fn pending_from(ctx: &Ctx, result: &Value) -> Result<Pending, String> {
    let requests = result
        .get("inputRequests")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let answers = ctx.book.answer_all(&requests)?;
    Ok(Pending {
        state: result
            .get("requestState")
            .and_then(Value::as_str)
            .map(str::to_owned),
        requests,
        answers,
        result: result.clone(),
    })
}

/// A retry answering `pending`.
pub(crate) fn retry(
    ctx: &Ctx,
    tool: &ToolInfo,
    args: &Map<String, Value>,
    pending: &Pending,
    who: Who,
) -> Request {
    let mut req = ctx.tool_call(
        tool,
        args,
        pending.state.clone().map(Value::String),
        Some(&pending.answers),
    );
    req.who = who;
    req
}

/// Calls the tool and answers every round until it completes.
pub(crate) async fn baseline(ctx: &Ctx) -> Baseline {
    let args = &ctx.config.args;
    let mut req = ctx.tool_call(&ctx.tool, args, None, None);
    let mut rounds: Vec<Pending> = Vec::new();
    loop {
        let reply = ctx.send(&req).await;
        match &reply.answer {
            Answer::InputRequired { result } => {
                if rounds.len() >= MAX_ROUNDS {
                    return Baseline::Stopped {
                        round: rounds.len() + 1,
                        why: format!("the tool still asked after {MAX_ROUNDS} rounds"),
                    };
                }
                let pending = match pending_from(ctx, result) {
                    Ok(p) => p,
                    Err(why) => {
                        return Baseline::Stopped {
                            round: rounds.len() + 1,
                            why,
                        };
                    }
                };
                req = retry(ctx, &ctx.tool, args, &pending, Who::A);
                rounds.push(pending);
            }
            Answer::Complete {
                is_error: true,
                result,
            } if rounds.is_empty() => {
                return Baseline::Stopped {
                    round: 1,
                    why: format!(
                        "the tool answered with an error result: {}",
                        error_text(result)
                    ),
                };
            }
            Answer::Complete { .. } if rounds.is_empty() => return Baseline::NoAsk(reply),
            Answer::Complete { .. } => {
                return Baseline::Completed {
                    rounds,
                    last: Box::new(req),
                    reply,
                };
            }
            _ => {
                return Baseline::Stopped {
                    round: rounds.len() + 1,
                    why: format!("the server answered {}", reply.describe()),
                };
            }
        }
    }
}

/// Calls `tool` with `args` as `who` and answers the first `rounds - 1` rounds, leaving
/// the last one pending: a fresh state for one attack.
pub(crate) async fn prepare(
    ctx: &Ctx,
    tool: &ToolInfo,
    args: &Map<String, Value>,
    who: Who,
    rounds: usize,
) -> Result<Pending, String> {
    let mut req = ctx.tool_call(tool, args, None, None);
    req.who = who;
    for round in 1..=rounds.max(1) {
        let reply = ctx.send(&req).await;
        let Answer::InputRequired { result } = &reply.answer else {
            return Err(format!(
                "round {round} of {} answered {}",
                tool.name,
                reply.describe()
            ));
        };
        let pending = pending_from(ctx, result)?;
        if round >= rounds {
            return Ok(pending);
        }
        req = retry(ctx, tool, args, &pending, who);
    }
    Err("no round to prepare".into())
}

/// The text of an error result, shortened.
fn error_text(result: &Value) -> String {
    let text: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    if text.is_empty() {
        "(no text)".to_owned()
    } else {
        crate::rpc::short(&text.join(" "))
    }
}
