//! JSON: one object per run, in a shape that only grows (new fields may be added; existing
//! ones keep their names and meaning while `version` is 1).
//!
//! ```json
//! {
//!   "version": 1,
//!   "tool": { "name": "ferry-lint", "version": "0.1.0" },
//!   "findings": [
//!     {
//!       "ruleId": "mcp-sampling",
//!       "severity": "warning",
//!       "path": "server.py",
//!       "line": 12, "column": 23, "endLine": 12, "endColumn": 37,
//!       "sourceLine": "    await ctx.session.create_message(messages=messages, max_tokens=100)",
//!       "message": "`ctx.session.create_message(…)` sends a sampling request (sampling/createMessage)",
//!       "feature": "Sampling",
//!       "status": "deprecated",
//!       "deprecatedSince": "2026-07-28",
//!       "removedIn": null,
//!       "record": "SEP-2577",
//!       "earliestRemoval": "2027-07-28",
//!       "removalNote": "First revision released on or after 2027-07-28",
//!       "migration": "Integrate directly with LLM provider APIs",
//!       "helpUri": "https://modelcontextprotocol.io/specification/2026-07-28/client/sampling"
//!     }
//!   ],
//!   "notes": [ { "path": "vendor/app.min.js", "kind": "minified", "message": "skipped: ..." } ],
//!   "summary": { "findings": 1, "filesScanned": 3, "linesScanned": 120, "filesSkipped": 1,
//!                "byRule": { "mcp-sampling": 1 } }
//! }
//! ```
//!
//! Lines and columns are 1-based; columns count Unicode scalar values; `endColumn` is just
//! past the match. `severity` is `error` for features 2026-07-28 removed and `warning` for
//! deprecated ones. `kind` of a note is one of `parse-error`, `parse-timeout`, `not-utf8`,
//! `too-large`, `minified`, `io`.

use std::io::{self, Write};

use serde_json::{Map, Value, json};

use crate::output::{TOOL_NAME, TOOL_VERSION, severity};
use crate::report::{Finding, Report};
use crate::rule::Lifecycle;

/// The report as a JSON value.
pub fn to_value(report: &Report) -> Value {
    let findings: Vec<Value> = report.findings.iter().map(finding).collect();
    let notes: Vec<Value> = report
        .notes
        .iter()
        .map(|n| json!({ "path": n.display_path(), "kind": n.kind, "message": n.message }))
        .collect();
    let by_rule: Map<String, Value> = report
        .counts()
        .into_iter()
        .map(|(rule, n)| (rule.as_str().to_owned(), json!(n)))
        .collect();
    json!({
        "version": 1,
        "tool": { "name": TOOL_NAME, "version": TOOL_VERSION },
        "findings": findings,
        "notes": notes,
        "summary": {
            "findings": report.findings.len(),
            "filesScanned": report.files_scanned,
            "linesScanned": report.lines_scanned,
            "filesSkipped": report.notes.len(),
            "byRule": by_rule,
        },
    })
}

fn finding(f: &Finding) -> Value {
    let rule = f.rule();
    let (since, removed_in, record, removal_note) = match rule.lifecycle {
        Lifecycle::Deprecated {
            since,
            record,
            removal_note,
            ..
        } => (Some(since), None, record, Some(removal_note)),
        Lifecycle::Removed { removed_in, record } => (None, Some(removed_in), record, None),
    };
    json!({
        "ruleId": rule.id,
        "severity": severity(rule),
        "path": f.display_path(),
        "line": f.line,
        "column": f.column,
        "endLine": f.end_line,
        "endColumn": f.end_column,
        "sourceLine": f.source_line,
        "message": f.message,
        "feature": rule.feature,
        "status": rule.lifecycle.status(),
        "deprecatedSince": since,
        "removedIn": removed_in,
        "record": record,
        "earliestRemoval": rule.lifecycle.earliest_removal(),
        "removalNote": removal_note,
        "migration": rule.migration,
        "helpUri": rule.help_uri,
    })
}

/// Writes the report as pretty-printed JSON and a line break.
pub fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &to_value(report))?;
    writeln!(out)
}
