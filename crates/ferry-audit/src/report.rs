//! What an audit found: one result per check, and the report's JSON and text forms.
//!
//! The JSON form is stable (`"format": "ferry-audit/1"`); fields are only ever added.

use serde::Serialize;
use serde_json::Value;

use crate::catalogue::{CheckInfo, Citation};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The server did what the specification asks.
    Pass,
    /// A weakness the specification leaves to the server's judgement (a readable state,
    /// a replay of a tool declared idempotent, a SHOULD not followed).
    Warn,
    /// The server broke a rule of the specification that applies here.
    Fail,
    /// Not tested; the detail says why.
    Skip,
}

impl Verdict {
    /// The worse of two verdicts (fail over warn over pass; skip counts as pass).
    pub fn worst(self, other: Verdict) -> Verdict {
        let rank = |v: Verdict| match v {
            Verdict::Pass | Verdict::Skip => 0,
            Verdict::Warn => 1,
            Verdict::Fail => 2,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }

    /// `PASS`, `WARN`, `FAIL`, `SKIP`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
            Verdict::Skip => "SKIP",
        }
    }
}

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    /// The stable id, e.g. `state.replay`.
    pub id: &'static str,
    /// What the server must do.
    pub title: &'static str,
    /// The verdict.
    pub verdict: Verdict,
    /// What was sent and seen, or why the check was skipped.
    pub detail: String,
    /// The sections of the specification the check derives from.
    pub cites: &'static [Citation],
    /// Measurements and evidence (latencies, where a value was found), when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl CheckResult {
    /// A result for `check`.
    pub fn new(check: &CheckInfo, verdict: Verdict, detail: impl Into<String>) -> Self {
        CheckResult {
            id: check.id,
            title: check.title,
            verdict,
            detail: detail.into(),
            cites: check.cites,
            data: None,
        }
    }

    /// Adds measurements or evidence.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// The server's name and version, as it reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
}

/// How many checks ended each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Passed.
    pub pass: usize,
    /// Warned.
    pub warn: usize,
    /// Failed.
    pub fail: usize,
    /// Skipped.
    pub skip: usize,
}

/// Everything an audit found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `ferry-audit/1`: the shape of this report.
    pub format: &'static str,
    /// The MCP endpoint audited.
    pub url: String,
    /// The tool called.
    pub tool: String,
    /// The second tool named with `--other-tool`, if any.
    pub other_tool: Option<String>,
    /// Who the server says it is.
    pub server: Option<ServerInfo>,
    /// The protocol revisions it serves: `2026-07-28` (server/discover, per-request
    /// `_meta`) and the version `initialize` negotiates (e.g. `2025-11-25`).
    pub eras: Vec<String>,
    /// How many times the tool (or the other tool) ran to completion during the audit:
    /// once on a server that passes, once more for each attack it let through.
    pub tool_completions: u32,
    /// How many requests were sent.
    pub requests: u32,
    /// How long the audit took, in milliseconds.
    pub duration_ms: u64,
    /// Every check, in catalogue order.
    pub checks: Vec<CheckResult>,
    /// The counts of each verdict.
    pub summary: Summary,
}

/// The value of [`Report::format`].
pub const FORMAT: &str = "ferry-audit/1";

impl Report {
    /// Whether any check failed.
    pub fn failed(&self) -> bool {
        self.summary.fail > 0
    }

    /// The result of the check with this id.
    pub fn check(&self, id: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// The verdict of the check with this id.
    pub fn verdict(&self, id: &str) -> Option<Verdict> {
        self.check(id).map(|c| c.verdict)
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }

    /// The closing lines of the text report: who the server is, the eras, the counts.
    pub fn text_summary(&self) -> String {
        let mut out = String::new();
        let server = match &self.server {
            Some(s) => format!("{} {}", s.name, s.version),
            None => "(the server did not say who it is)".into(),
        };
        out.push_str(&format!("\nServer: {server}\n"));
        let eras = if self.eras.is_empty() {
            "none recognised".to_owned()
        } else {
            self.eras.join(", ")
        };
        out.push_str(&format!("Eras served: {eras}\n"));
        let runs = match self.tool_completions {
            0 => "never".to_owned(),
            1 => "once".to_owned(),
            n => format!("{n} times"),
        };
        out.push_str(&format!(
            "{} requests in {:.1} s; the tool ran to completion {runs}\n",
            self.requests,
            self.duration_ms as f64 / 1000.0,
        ));
        let s = self.summary;
        out.push_str(&format!(
            "{} passed, {} failed, {} warned, {} skipped\n",
            s.pass, s.fail, s.warn, s.skip
        ));
        out
    }

    /// The whole report as text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for c in &self.checks {
            out.push_str(&render_check(c));
        }
        out.push_str(&self.text_summary());
        out
    }
}

/// One check as text: the verdict and id, the detail, and the cited sections.
pub fn render_check(c: &CheckResult) -> String {
    let mut out = format!("{:<5} {}\n", c.verdict.label(), c.id);
    for line in c.detail.lines() {
        out.push_str(&format!("      {}\n", clean(line)));
    }
    let cites: Vec<String> = c
        .cites
        .iter()
        .map(|x| format!("{}, {}", x.page, x.heading))
        .collect();
    out.push_str(&format!("      spec: {}\n", cites.join("; ")));
    out
}

/// Text from the server, safe for a terminal: control characters escaped.
pub(crate) fn clean(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

pub(crate) fn summarize(checks: &[CheckResult]) -> Summary {
    let mut s = Summary::default();
    for c in checks {
        match c.verdict {
            Verdict::Pass => s.pass += 1,
            Verdict::Warn => s.warn += 1,
            Verdict::Fail => s.fail += 1,
            Verdict::Skip => s.skip += 1,
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;

    #[test]
    fn the_json_shape_is_stable() {
        let checks = vec![
            CheckResult::new(&catalogue::STATE_REPLAY, Verdict::Fail, "accepted twice")
                .with_data(serde_json::json!({"second": "complete"})),
            CheckResult::new(&catalogue::STATE_EXPIRY, Verdict::Skip, "no --ttl"),
        ];
        let report = Report {
            format: FORMAT,
            url: "http://127.0.0.1:1/mcp".into(),
            tool: "t".into(),
            other_tool: None,
            server: None,
            eras: vec!["2026-07-28".into()],
            tool_completions: 2,
            requests: 9,
            duration_ms: 10,
            summary: summarize(&checks),
            checks,
        };
        let v: Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(v["format"], "ferry-audit/1");
        assert_eq!(v["toolCompletions"], 2);
        assert_eq!(v["otherTool"], Value::Null);
        assert_eq!(v["checks"][0]["id"], "state.replay");
        assert_eq!(v["checks"][0]["verdict"], "fail");
        assert_eq!(
            v["checks"][0]["cites"][0]["page"],
            "basic/patterns/mrtr.mdx"
        );
        assert_eq!(v["checks"][1]["verdict"], "skip");
        assert!(v["checks"][1].get("data").is_none());
        assert_eq!(v["summary"]["fail"], 1);
        assert!(report.failed());
        assert!(report.to_text().contains("FAIL  state.replay"));
    }

    #[test]
    fn server_text_cannot_drive_the_terminal() {
        assert_eq!(clean("a\u{1b}[31mb"), "a\\u{1b}[31mb");
    }
}
