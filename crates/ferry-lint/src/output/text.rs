//! Compiler-style text, like rustc and clippy:
//!
//! ```text
//! warning[mcp-sampling]: `ctx.session.create_message(…)` sends a sampling request (sampling/createMessage)
//!  --> server.py:12:23
//!    |
//! 12 |     await ctx.session.create_message(messages=messages, max_tokens=100)
//!    |                       ^^^^^^^^^^^^^^
//!    = note: Sampling is deprecated since 2026-07-28 (SEP-2577); earliest removal: First revision released on or after 2027-07-28
//!    = help: migration: Integrate directly with LLM provider APIs
//!    = help: https://modelcontextprotocol.io/specification/2026-07-28/client/sampling
//! ```

use std::io::{self, Write};

use crate::output::severity;
use crate::report::{Finding, Report};

/// How text is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// ANSI colours.
    pub color: bool,
    /// A closing summary line.
    pub summary: bool,
}

struct Paint {
    on: bool,
}

impl Paint {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

/// Writes every finding, then the notes on skipped files, then (if asked) a summary.
pub fn write(report: &Report, out: &mut dyn Write, options: TextOptions) -> io::Result<()> {
    let paint = Paint { on: options.color };
    for finding in &report.findings {
        write_finding(finding, out, options.color)?;
        writeln!(out)?;
    }
    for note in &report.notes {
        writeln!(
            out,
            "{}: {}: {}",
            paint.paint("1;32", "note"),
            note.display_path(),
            note.message
        )?;
    }
    if options.summary {
        writeln!(out, "{}", summary(report))?;
    }
    Ok(())
}

/// Writes one finding (with ANSI colours if `color`).
pub fn write_finding(finding: &Finding, out: &mut dyn Write, color: bool) -> io::Result<()> {
    let paint = Paint { on: color };
    let rule = finding.rule();
    let level = severity(rule);
    let level_code = if level == "error" { "1;31" } else { "1;33" };
    let gutter = finding.line.to_string().len();
    let pad = " ".repeat(gutter);
    let bar = paint.paint("1;34", "|");
    writeln!(
        out,
        "{}{} {}",
        paint.paint(level_code, &format!("{level}[{}]", rule.id)),
        paint.paint("1", ":"),
        paint.paint("1", &finding.message)
    )?;
    writeln!(
        out,
        "{pad}{} {}:{}:{}",
        paint.paint("1;34", "-->"),
        finding.display_path(),
        finding.line,
        finding.column
    )?;
    writeln!(out, "{pad} {bar}")?;
    let (shown, start, width) = underline(finding);
    writeln!(
        out,
        "{} {bar} {shown}",
        paint.paint("1;34", &finding.line.to_string())
    )?;
    writeln!(
        out,
        "{pad} {bar} {}{}",
        " ".repeat(start),
        paint.paint(level_code, &"^".repeat(width))
    )?;
    writeln!(
        out,
        "{pad} {} {}: {} is {}",
        paint.paint("1;34", "="),
        paint.paint("1", "note"),
        rule.feature,
        rule.lifecycle.describe()
    )?;
    writeln!(
        out,
        "{pad} {} {}: migration: {}",
        paint.paint("1;34", "="),
        paint.paint("1", "help"),
        rule.migration
    )?;
    writeln!(
        out,
        "{pad} {} {}: {}",
        paint.paint("1;34", "="),
        paint.paint("1", "help"),
        rule.help_uri
    )
}

/// The source line as shown (tabs as four spaces, control characters as `?`), and where
/// the carets start and how many there are.
fn underline(finding: &Finding) -> (String, usize, usize) {
    let mut shown = String::with_capacity(finding.source_line.len());
    let mut start = None;
    let mut end = None;
    let last = if finding.end_line == finding.line {
        finding.end_column
    } else {
        usize::MAX
    };
    for (i, c) in finding.source_line.chars().enumerate() {
        let column = i + 1;
        if column == finding.column {
            start = Some(shown.chars().count());
        }
        if column == last {
            end = Some(shown.chars().count());
        }
        match c {
            '\t' => shown.push_str("    "),
            c if c.is_control() => shown.push('?'),
            c => shown.push(c),
        }
    }
    let len = shown.chars().count();
    let start = start.unwrap_or(len);
    let end = end.unwrap_or(len).max(start + 1);
    (shown, start, end - start)
}

/// One line: findings by rule, files and lines read, files skipped.
pub fn summary(report: &Report) -> String {
    let n = report.findings.len();
    let mut line = match n {
        0 => "no deprecated MCP features found".to_owned(),
        1 => "1 finding".to_owned(),
        n => format!("{n} findings"),
    };
    let counts = report.counts();
    if !counts.is_empty() {
        let parts: Vec<String> = counts
            .iter()
            .map(|(rule, count)| format!("{rule}: {count}"))
            .collect();
        line.push_str(&format!(" ({})", parts.join(", ")));
    }
    line.push_str(&format!(
        " in {} file{} ({} line{})",
        report.files_scanned,
        if report.files_scanned == 1 { "" } else { "s" },
        report.lines_scanned,
        if report.lines_scanned == 1 { "" } else { "s" }
    ));
    if !report.notes.is_empty() {
        line.push_str(&format!(
            "; {} file{} skipped",
            report.notes.len(),
            if report.notes.len() == 1 { "" } else { "s" }
        ));
    }
    line
}
