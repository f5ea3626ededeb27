//! Finds uses of deprecated and removed Model Context Protocol features in source code.
//!
//! MCP revision 2026-07-28 deprecates sampling, roots, protocol logging and dynamic client
//! registration, keeps the HTTP+SSE transport and `includeContext` values deprecated, and
//! removes `ping`, sessions (`Mcp-Session-Id`), URL elicitation's `elicitationId` with
//! `notifications/elicitation/complete`, and server-initiated requests outside Multi
//! Round-Trip Requests. `ferry-lint` finds them in Python, TypeScript, JavaScript, Rust and
//! Go by syntax tree ([tree-sitter]): it looks at calls, string literals, keys and names in
//! the shapes the MCP SDKs use, never at raw text, so comments, docstrings, the language's
//! own logging and look-alike names do not fire.
//!
//! Each [`Finding`] names its [`Rule`] (a stable id such as `mcp-sampling`), where it is,
//! and the migration and earliest removal from the specification's deprecation registry.
//! [`output`] writes reports as compiler-style text, JSON or SARIF 2.1.0.
//!
//! ```
//! use ferry_lint::{Language, Linter, RuleId};
//!
//! let source = r#"
//! from mcp.server.fastmcp import Context, FastMCP
//!
//! async def summarize(text: str, ctx: Context) -> str:
//!     await ctx.info("summarizing")          # protocol logging
//!     logging.info("summarizing")           # the standard library: fine
//!     return text
//! "#;
//! let findings = Linter::new()
//!     .lint_source("server.py".as_ref(), Language::Python, source)
//!     .unwrap();
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].rule, RuleId::Logging);
//! assert_eq!((findings[0].line, findings[0].column), (5, 15));
//! assert_eq!(findings[0].rule().lifecycle.earliest_removal(), Some("2027-07-28"));
//! ```
//!
//! [tree-sitter]: https://tree-sitter.github.io/
#![forbid(unsafe_code)]

mod file;
mod language;
pub mod output;
mod report;
mod rule;
mod scan;
mod syntax;
mod tables;
mod walk;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use language::Language;
pub use report::{Finding, Note, NoteKind, Report};
pub use rule::{Lifecycle, REGISTRY_URI, RULES, Rule, RuleId, UnknownRule};

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum LintError {
    /// A path given to [`Linter::lint_paths`] cannot be read.
    #[error("{}: {source}", path.display())]
    Path {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A source given to [`Linter::lint_source`] was skipped (syntax error, too large,
    /// minified).
    #[error("{}: {}", note.path.display(), note.message)]
    Skipped {
        /// Why.
        note: Note,
    },
}

/// Settings of a run: which rules, and the limits on each file.
#[derive(Debug, Clone)]
pub struct Linter {
    enabled: [bool; RuleId::ALL.len()],
    max_file_bytes: u64,
    parse_timeout: Duration,
    threads: usize,
}

impl Default for Linter {
    fn default() -> Self {
        Linter::new()
    }
}

impl Linter {
    /// The default size limit: files larger than 1 MiB are skipped with a note.
    pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

    /// Every rule, the default limits, and as many threads as the machine has.
    pub fn new() -> Linter {
        Linter {
            enabled: [true; RuleId::ALL.len()],
            max_file_bytes: Self::DEFAULT_MAX_FILE_BYTES,
            parse_timeout: Duration::from_secs(5),
            threads: 0,
        }
    }

    /// Only these rules (an empty list keeps every rule).
    pub fn only(mut self, rules: &[RuleId]) -> Linter {
        if !rules.is_empty() {
            self.enabled = [false; RuleId::ALL.len()];
            for rule in rules {
                self.enabled[*rule as usize] = true;
            }
        }
        self
    }

    /// Leaves these rules out.
    pub fn exclude(mut self, rules: &[RuleId]) -> Linter {
        for rule in rules {
            self.enabled[*rule as usize] = false;
        }
        self
    }

    /// Skips files larger than this many bytes (with a note).
    pub fn max_file_bytes(mut self, bytes: u64) -> Linter {
        self.max_file_bytes = bytes;
        self
    }

    /// Gives up on a file whose parse takes longer than this (with a note).
    pub fn parse_timeout(mut self, limit: Duration) -> Linter {
        self.parse_timeout = limit;
        self
    }

    /// Lints on this many threads (0: as many as the machine has).
    pub fn threads(mut self, threads: usize) -> Linter {
        self.threads = threads;
        self
    }

    /// Is this rule on?
    pub fn enabled(&self, rule: RuleId) -> bool {
        self.enabled[rule as usize]
    }

    /// Lints one source text; `path` is only used in the findings.
    pub fn lint_source(
        &self,
        path: &Path,
        language: Language,
        source: &str,
    ) -> Result<Vec<Finding>, LintError> {
        let mut parsers = file::Parsers::default();
        if source.len() as u64 > self.max_file_bytes {
            return match file::lint_bytes(self, &mut parsers, path, language, source.as_bytes()) {
                file::Outcome::Skipped(note) => Err(LintError::Skipped { note }),
                file::Outcome::Scanned { findings, .. } => Ok(findings),
            };
        }
        match file::lint_str(self, &mut parsers, path, language, source) {
            file::Outcome::Scanned { findings, .. } => Ok(findings),
            file::Outcome::Skipped(note) => Err(LintError::Skipped { note }),
        }
    }

    /// Lints files and directories. Directories are walked honouring `.gitignore`,
    /// `.ignore` and `.git/info/exclude`, skipping hidden entries, `node_modules` and
    /// `target`; files are read on several threads. Files that cannot be read or parsed
    /// become [`Note`]s; a path that does not exist is an error.
    pub fn lint_paths(&self, paths: &[PathBuf]) -> Result<Report, LintError> {
        walk::run(self, paths)
    }
}
