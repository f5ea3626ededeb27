//! The Streamable HTTP rules: the standard headers must match the body, and a foreign
//! `Origin` gets 403.
//!
//! The mismatched requests are safe to send: a mismatched `Mcp-Method` names
//! `tools/list`, a mismatched `Mcp-Name` names a tool that does not exist, and the body is
//! the named tool's first round, which only asks.

use serde_json::Value;

use super::era::{close_session, discover_request};
use super::{Recorder, judge_header_rule};
use crate::catalogue::{
    CheckInfo, HEADER_METHOD_MISMATCH, HEADER_METHOD_MISSING, HEADER_NAME_MISMATCH,
    HEADER_NAME_MISSING, HEADER_PARAM_MISMATCH, HEADER_VERSION_MISMATCH, HEADER_VERSION_MISSING,
    HTTP_ORIGIN,
};
use crate::checks::era::Eras;
use crate::ctx::Ctx;
use crate::report::{CheckResult, Verdict};
use crate::rpc::{Answer, Header, LEGACY, Request};

/// The tool name a mismatched `Mcp-Name` carries: no server has it.
pub(crate) const NO_SUCH_TOOL: &str = "ferry-audit-no-such-tool";

const HEADER_CHECKS: &[&CheckInfo] = &[
    &HEADER_VERSION_MISSING,
    &HEADER_VERSION_MISMATCH,
    &HEADER_METHOD_MISSING,
    &HEADER_METHOD_MISMATCH,
    &HEADER_NAME_MISSING,
    &HEADER_NAME_MISMATCH,
    &HEADER_PARAM_MISMATCH,
];

/// A different value of the same type, for a mismatched `Mcp-Param-*`.
fn other_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(format!("{s}-ferry-audit")),
        Value::Bool(b) => Some((!b).to_string()),
        Value::Number(n) => n.as_i64().map(|i| (i.wrapping_add(1)).to_string()),
        _ => None,
    }
}

pub(crate) async fn run(ctx: &Ctx, eras: &Eras, rec: &mut Recorder<'_>) {
    if eras.modern {
        header_rules(ctx, rec).await;
    } else {
        for c in HEADER_CHECKS {
            rec.skip(
                c,
                "the server does not serve 2026-07-28, whose header rules these are",
            );
        }
    }
    origin(ctx, eras, rec).await;
}

async fn header_rules(ctx: &Ctx, rec: &mut Recorder<'_>) {
    let mut r = discover_request();
    r.version_header = Header::Omit;
    let reply = ctx.send(&r).await;
    let sent = "server/discover without MCP-Protocol-Version";
    rec.record(if reply.status == Some(400) && reply.refused() {
        CheckResult::new(
            &HEADER_VERSION_MISSING,
            Verdict::Pass,
            format!("{sent}: refused ({})", reply.describe()),
        )
    } else if reply.refused() {
        CheckResult::new(
            &HEADER_VERSION_MISSING,
            Verdict::Warn,
            format!(
                "{sent}: refused, but with {}; the rule asks for HTTP 400",
                reply.describe()
            ),
        )
    } else {
        CheckResult::new(
            &HEADER_VERSION_MISSING,
            Verdict::Fail,
            format!(
                "{sent}: {}; a modern request without the header must be refused",
                reply.describe()
            ),
        )
    });

    let mut r = discover_request();
    r.version_header = Header::Set(LEGACY.into());
    let reply = ctx.send(&r).await;
    rec.record(judge_header_rule(
        &HEADER_VERSION_MISMATCH,
        "MCP-Protocol-Version: 2025-11-25 on a 2026-07-28 body",
        &reply,
    ));

    let mut r = discover_request();
    r.method_header = Header::Omit;
    let reply = ctx.send(&r).await;
    rec.record(judge_header_rule(
        &HEADER_METHOD_MISSING,
        "server/discover without Mcp-Method",
        &reply,
    ));

    let first_round = || ctx.tool_call(&ctx.tool, &ctx.config.args, None, None);
    let tool = &ctx.tool.name;

    let mut r = first_round();
    r.method_header = Header::Set("tools/list".into());
    let reply = ctx.send(&r).await;
    rec.record(judge_header_rule(
        &HEADER_METHOD_MISMATCH,
        &format!("tools/call of {tool} with Mcp-Method: tools/list"),
        &reply,
    ));

    let mut r = first_round();
    r.name_header = Header::Omit;
    let reply = ctx.send(&r).await;
    rec.record(judge_header_rule(
        &HEADER_NAME_MISSING,
        &format!("tools/call of {tool} without Mcp-Name"),
        &reply,
    ));

    let mut r = first_round();
    r.name_header = Header::Set(NO_SUCH_TOOL.into());
    let reply = ctx.send(&r).await;
    rec.record(judge_header_rule(
        &HEADER_NAME_MISMATCH,
        &format!("tools/call of {tool} with Mcp-Name: {NO_SUCH_TOOL}"),
        &reply,
    ));

    param_mismatch(ctx, first_round(), rec).await;
}

async fn param_mismatch(ctx: &Ctx, mut r: Request, rec: &mut Recorder<'_>) {
    let args = Value::Object(ctx.config.args.clone());
    let target = ctx.tool.params.iter().find_map(|p| {
        let v = p.extract(&args)?;
        Some((p, other_value(v)?))
    });
    let Some((param, wrong)) = target else {
        let why = if ctx.tool.params.is_empty() {
            format!("{} declares no x-mcp-header parameter", ctx.tool.name)
        } else {
            "the arguments give no value to an x-mcp-header parameter".to_owned()
        };
        rec.skip(&HEADER_PARAM_MISMATCH, why);
        return;
    };
    let encoded = ferry_protocol::headers::encode_value(&wrong).into_owned();
    for h in &mut r.param_headers {
        if h.0 == param.header {
            h.1 = encoded.clone();
        }
    }
    let reply = ctx.send(&r).await;
    rec.record(judge_header_rule(
        &HEADER_PARAM_MISMATCH,
        &format!("Mcp-Param-{} differing from the argument", param.name),
        &reply,
    ));
}

async fn origin(ctx: &Ctx, eras: &Eras, rec: &mut Recorder<'_>) {
    let foreign = ctx.config.foreign_origin.clone();
    let mut r = if eras.modern {
        discover_request()
    } else if !eras.eras.is_empty() {
        Request::initialize()
    } else {
        rec.skip(&HTTP_ORIGIN, "the server serves neither era");
        return;
    };
    r.extra_headers.push(("origin".into(), foreign.clone()));
    let reply = ctx.send(&r).await;
    if let (Some(session), Answer::Complete { .. }) = (&reply.session_id, &reply.answer) {
        close_session(ctx, session, LEGACY).await;
    }
    let sent = format!("{} with Origin: {foreign}", r.method);
    rec.record(if reply.status == Some(403) {
        CheckResult::new(
            &HTTP_ORIGIN,
            Verdict::Pass,
            format!("{sent}: refused ({})", reply.describe()),
        )
    } else {
        CheckResult::new(
            &HTTP_ORIGIN,
            Verdict::Fail,
            format!(
                "{sent}: {}; a foreign Origin must get HTTP 403 (DNS rebinding)",
                reply.describe()
            ),
        )
    });
}
