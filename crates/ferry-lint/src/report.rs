//! What a run finds: findings, notes on skipped files, and counts.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::rule::{Rule, RuleId};

/// One use of a deprecated or removed feature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The rule that matched.
    pub rule: RuleId,
    /// The file, as given or as found under a given directory.
    pub path: PathBuf,
    /// 1-based line of the start.
    pub line: usize,
    /// 1-based column of the start, in Unicode scalar values.
    pub column: usize,
    /// 1-based line of the end.
    pub end_line: usize,
    /// 1-based column just past the end, in Unicode scalar values.
    pub end_column: usize,
    /// The text of the start line (without its line break).
    pub source_line: String,
    /// What was found, e.g. "`ctx.session.create_message(…)` sends a sampling request".
    pub message: String,
}

impl Finding {
    /// The rule's description: feature, lifecycle and migration.
    pub fn rule(&self) -> &'static Rule {
        self.rule.rule()
    }

    /// The path with `/` separators, as reports show it.
    pub fn display_path(&self) -> String {
        display_path(&self.path)
    }
}

/// Why a file was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoteKind {
    /// The file has syntax errors.
    ParseError,
    /// Parsing took longer than the limit.
    ParseTimeout,
    /// The file is not UTF-8.
    NotUtf8,
    /// The file is larger than the size limit.
    TooLarge,
    /// The file looks minified or generated (very long lines).
    Minified,
    /// The file or directory could not be read.
    Io,
}

/// A file that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    /// The file (or directory).
    pub path: PathBuf,
    /// Why it was skipped.
    pub kind: NoteKind,
    /// Details for people.
    pub message: String,
}

impl Note {
    /// The path with `/` separators.
    pub fn display_path(&self) -> String {
        display_path(&self.path)
    }
}

/// The outcome of a run over files and directories.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Findings, ordered by path, line and column.
    pub findings: Vec<Finding>,
    /// Skipped files, ordered by path.
    pub notes: Vec<Note>,
    /// Files read and searched.
    pub files_scanned: usize,
    /// Lines in those files.
    pub lines_scanned: u64,
    /// Bytes in those files.
    pub bytes_scanned: u64,
}

impl Report {
    /// Sorts findings and notes into their stable order.
    pub fn sort(&mut self) {
        self.findings.sort_by(|a, b| {
            (&a.path, a.line, a.column, a.rule).cmp(&(&b.path, b.line, b.column, b.rule))
        });
        self.notes.sort_by(|a, b| a.path.cmp(&b.path));
    }

    /// How many findings each rule has, in rule order, leaving out rules without any.
    pub fn counts(&self) -> Vec<(RuleId, usize)> {
        RuleId::ALL
            .into_iter()
            .map(|id| (id, self.findings.iter().filter(|f| f.rule == id).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

fn display_path(path: &Path) -> String {
    let s = path.to_string_lossy();
    let s = s.strip_prefix("./").unwrap_or(&s);
    if std::path::MAIN_SEPARATOR == '/' {
        s.to_owned()
    } else {
        s.replace(std::path::MAIN_SEPARATOR, "/")
    }
}
