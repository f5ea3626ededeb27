//! `ferry-audit`: a black-box audit of an MCP server's Multi Round-Trip Requests (MRTR)
//! and `requestState` defences, over raw Streamable HTTP.
//!
//! The audit calls one tool that asks for input, answers it, and then attacks the round
//! trip the way a malicious client could: changed, cut, random, forged, replayed, expired
//! and garbage states, a state presented with other arguments, to another tool or by
//! another user, the state without its answers. It also reports the eras the server
//! serves (2026-07-28, 2025-11-25), its header rules and its Origin check. Every check has
//! a stable id, cites the section of the specification it comes from, and ends with a
//! [`Verdict`]; see [`catalogue::ALL`].
//!
//! ```no_run
//! use ferry_audit::{AuditConfig, Plan, Token};
//! use serde_json::json;
//!
//! # async fn audit() -> Result<(), ferry_audit::AuditError> {
//! let config = AuditConfig::new("http://127.0.0.1:3000/mcp", "confirm_delete")?
//!     .args(json!({"path": "notes.txt"}))?
//!     .token(Token::new("alice"))
//!     .token_b(Token::new("bob"));
//! println!("{}", Plan::new(&config));
//! let report = ferry_audit::run(&config).await?;
//! println!("{}", report.to_text());
//! assert!(!report.failed());
//! # Ok(()) }
//! ```
//!
//! The audit calls only the tool it is given (and `--other-tool`, when named). On a server
//! that passes, the tool runs to completion once; every attack that gets through runs it
//! once more, so audit a tool whose effect you can afford, on a server you may test.
#![forbid(unsafe_code)]

mod answers;
pub mod catalogue;
mod checks;
mod config;
mod ctx;
mod http;
mod plan;
mod report;
mod reveal;
mod rpc;
mod tamper;
mod walk;

use std::time::Instant;

use serde_json::{Map, Value, json};

pub use checks::Progress;
pub use config::{AuditConfig, AuditError, MAX_TTL, Token};
pub use plan::Plan;
pub use report::{CheckResult, FORMAT, Report, ServerInfo, Summary, Verdict, render_check};

use crate::checks::state::Armed;
use crate::checks::{Recorder, binding, era, headers, mrtr, state};
use crate::ctx::{Ctx, ToolInfo};
use crate::http::Prober;
use crate::rpc::{Answer, Request};

/// Runs the audit.
pub async fn run(config: &AuditConfig) -> Result<Report, AuditError> {
    run_with(config, |_| {}).await
}

/// Runs the audit, telling `observer` about each check as it finishes (and about the wait
/// past the state's expiry).
pub async fn run_with(
    config: &AuditConfig,
    mut observer: impl FnMut(Progress<'_>) + Send,
) -> Result<Report, AuditError> {
    let started = Instant::now();
    let prober = Prober::new(config)?;
    let mut ctx = Ctx::new(config.clone(), prober);
    let mut rec = Recorder::new(&mut observer);
    let eras = era::run(&ctx, &mut rec).await?;
    if eras.modern {
        list_tools(&mut ctx).await;
    }
    headers::run(&ctx, &eras, &mut rec).await;
    match mrtr::run(&ctx, &eras, &mut rec).await {
        Ok(ground) => state_checks(&ctx, &ground, &mut rec).await,
        Err(why) => {
            for c in catalogue::ALL.iter().filter(|c| c.id.starts_with("state.")) {
                rec.skip(c, &why);
            }
        }
    }
    let mut checks = rec.results;
    let order = |id: &str| catalogue::ALL.iter().position(|c| c.id == id);
    checks.sort_by_key(|c| order(c.id));
    Ok(Report {
        format: FORMAT,
        url: config.url.to_string(),
        tool: config.tool.clone(),
        other_tool: config.other_tool.clone(),
        server: eras.server,
        eras: eras.eras,
        tool_completions: ctx.completions(),
        requests: ctx.prober.sent(),
        duration_ms: started.elapsed().as_millis() as u64,
        summary: report::summarize(&checks),
        checks,
    })
}

async fn state_checks(ctx: &Ctx, ground: &mrtr::Ground, rec: &mut Recorder<'_>) {
    if ground.last_pending.state.is_none() {
        let why =
            "the server issues no requestState for this tool: its answers alone drive the call";
        for c in catalogue::ALL.iter().filter(|c| c.id.starts_with("state.")) {
            rec.skip(c, why);
        }
        return;
    }
    // These two first, while the baseline's state is surely within its lifetime.
    let state_optional = state::required(ctx, ground, rec).await;
    let armed = Armed {
        ground,
        state_optional,
    };
    binding::replay(ctx, &armed, rec).await;
    let aging = binding::start_aging(ctx, &armed).await;
    state::integrity(ctx, &armed, rec).await;
    binding::bindings(ctx, &armed, rec).await;
    binding::confidentiality(ctx, &armed, rec).await;
    binding::missing_answer(ctx, &armed, rec).await;
    state::garbage(ctx, &armed, rec).await;
    binding::expiry(ctx, &armed, aging, rec).await;
}

/// Reads `tools/list` (up to 20 pages) for the tool's schema, annotations and
/// `x-mcp-header` parameters.
async fn list_tools(ctx: &mut Ctx) {
    let mut cursor: Option<String> = None;
    let wanted = ctx.config.tool.clone();
    let other = ctx.config.other_tool.clone();
    for _ in 0..20 {
        let mut params = Map::new();
        if let Some(c) = &cursor {
            params.insert("cursor".into(), json!(c));
        }
        let reply = ctx.send(&Request::modern("tools/list", params)).await;
        let Answer::Complete { result, .. } = &reply.answer else {
            tracing::debug!(reply = %reply.describe(), "tools/list failed");
            return;
        };
        for t in result
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("");
            if name == wanted {
                ctx.tool = ToolInfo::from_listing(name, t);
            } else if other.as_deref() == Some(name) {
                ctx.other = Some(ToolInfo::from_listing(name, t));
            }
        }
        cursor = result
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if cursor.is_none() {
            return;
        }
    }
}
