//! SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), for code-scanning
//! services and editors: one run, every rule described in `tool.driver.rules`, findings as
//! `results`, skipped files as `toolExecutionNotifications`.
//!
//! Columns are Unicode code points (`columnKind: "unicodeCodePoints"`); relative paths
//! stay relative (`uriBaseId: "%SRCROOT%"`), absolute ones become `file://` URIs.

use std::io::{self, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::output::{TOOL_NAME, TOOL_URI, TOOL_VERSION, severity};
use crate::report::{Finding, Note, Report};
use crate::rule::{Lifecycle, RULES, Rule, RuleId};

/// The SARIF 2.1.0 schema's URI, for `$schema`.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The report as a SARIF log.
pub fn to_value(report: &Report) -> Value {
    let rules: Vec<Value> = RULES.iter().map(rule).collect();
    let results: Vec<Value> = report.findings.iter().map(result).collect();
    let notifications: Vec<Value> = report.notes.iter().map(notification).collect();
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": TOOL_NAME,
                    "version": TOOL_VERSION,
                    "semanticVersion": TOOL_VERSION,
                    "informationUri": TOOL_URI,
                    "rules": rules,
                }
            },
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": notifications,
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}

fn rule(rule: &Rule) -> Value {
    let (status_tag, removal) = match rule.lifecycle {
        Lifecycle::Deprecated { removal_note, .. } => ("deprecated", removal_note),
        Lifecycle::Removed { removed_in, .. } => ("removed", removed_in),
    };
    let help = format!(
        "{} {}.\nMigration: {}.\nSee {}",
        rule.feature,
        rule.lifecycle.describe(),
        rule.migration,
        rule.help_uri
    );
    let markdown = format!(
        "**{}** is {}.\n\n**Migration:** {}.\n\nSee the [specification]({}).",
        rule.feature,
        rule.lifecycle.describe(),
        rule.migration,
        rule.help_uri
    );
    json!({
        "id": rule.id,
        "name": rule.name,
        "shortDescription": { "text": rule.summary },
        "fullDescription": { "text": format!("{} {} is {}.", rule.summary, rule.feature, rule.lifecycle.describe()) },
        "helpUri": rule.help_uri,
        "help": { "text": help, "markdown": markdown },
        "defaultConfiguration": { "level": severity(rule) },
        "properties": {
            "tags": ["mcp", status_tag],
            "status": rule.lifecycle.status(),
            "earliestRemoval": rule.lifecycle.earliest_removal(),
            "removal": removal,
            "migration": rule.migration,
        }
    })
}

fn result(f: &Finding) -> Value {
    let rule = f.rule();
    json!({
        "ruleId": rule.id,
        "ruleIndex": RuleId::ALL.iter().position(|r| *r == f.rule).unwrap_or(0),
        "level": severity(rule),
        "message": { "text": format!("{}. Migration: {}.", f.message, rule.migration) },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": artifact(&f.path),
                "region": {
                    "startLine": f.line,
                    "startColumn": f.column,
                    "endLine": f.end_line,
                    "endColumn": f.end_column,
                    "snippet": { "text": f.source_line },
                }
            }
        }],
        "properties": {
            "migration": rule.migration,
            "earliestRemoval": rule.lifecycle.earliest_removal(),
        }
    })
}

fn notification(note: &Note) -> Value {
    json!({
        "level": "note",
        "message": { "text": note.message },
        "locations": [{
            "physicalLocation": { "artifactLocation": artifact(&note.path) }
        }],
        "properties": { "kind": note.kind },
    })
}

fn artifact(path: &Path) -> Value {
    let display = path.to_string_lossy().replace('\\', "/");
    if path.is_absolute() {
        let with_slash = if display.starts_with('/') {
            display
        } else {
            format!("/{display}")
        };
        json!({ "uri": format!("file://{}", encode(&with_slash)) })
    } else {
        let relative = display.strip_prefix("./").unwrap_or(&display);
        json!({ "uri": encode(relative), "uriBaseId": "%SRCROOT%" })
    }
}

/// Percent-encodes everything but unreserved characters and `/`.
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Writes the SARIF log, pretty-printed, and a line break.
pub fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &to_value(report))?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_encoded() {
        assert_eq!(encode("src/my file.py"), "src/my%20file.py");
        assert_eq!(encode("a/é.ts"), "a/%C3%A9.ts");
        assert_eq!(
            artifact(Path::new("./x.py")),
            json!({"uri": "x.py", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact(Path::new("/tmp/a b.go")),
            json!({"uri": "file:///tmp/a%20b.go"})
        );
    }
}
