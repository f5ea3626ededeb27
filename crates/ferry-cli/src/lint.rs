//! `ferry lint`: finds deprecated and removed MCP features in source code (ferry-lint).

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use ferry_lint::output::{json, sarif, text};
use ferry_lint::{Linter, RULES, RuleId};

/// Exit codes of `ferry lint`.
mod exit {
    /// Findings (without `--warn`).
    pub const FINDINGS: u8 = 1;
    /// A path that cannot be read, or output that cannot be written.
    pub const ERROR: u8 = 2;
}

/// Report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Compiler-style text.
    Text,
    /// JSON (see the ferry-lint crate's documentation for the shape).
    Json,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
}

/// `ferry lint`.
#[derive(Args, Debug)]
pub struct LintArgs {
    /// Files and directories to search (directories honour .gitignore and .ignore, and
    /// skip hidden entries, node_modules and target).
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// How to print the report (the global --json means --format json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Exit 0 even when something is found.
    #[arg(long)]
    pub warn: bool,

    /// Only these rules (repeatable, or comma-separated), e.g. --rule mcp-sampling.
    #[arg(long = "rule", value_name = "RULE", value_delimiter = ',')]
    pub rules: Vec<RuleId>,

    /// Leave out these rules (repeatable, or comma-separated).
    #[arg(long = "exclude-rule", value_name = "RULE", value_delimiter = ',')]
    pub exclude_rules: Vec<RuleId>,

    /// Skip files larger than this many bytes (with a note).
    #[arg(long, value_name = "BYTES", default_value_t = Linter::DEFAULT_MAX_FILE_BYTES)]
    pub max_file_size: u64,

    /// Threads to read files on (0: one per core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// List the rules with their migrations and exit.
    #[arg(long)]
    pub list_rules: bool,
}

/// Runs `ferry lint`; returns the exit code.
pub fn run(args: &LintArgs, json_flag: bool) -> u8 {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if args.list_rules {
        return finish(list_rules(&mut out));
    }
    let linter = Linter::new()
        .only(&args.rules)
        .exclude(&args.exclude_rules)
        .max_file_bytes(args.max_file_size)
        .threads(args.threads);
    let report = match linter.lint_paths(&args.paths) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("ferry lint: error: {err}");
            return exit::ERROR;
        }
    };
    let format = if json_flag { Format::Json } else { args.format };
    let written = match format {
        Format::Text => {
            let color = console::colors_enabled();
            let options = text::TextOptions {
                color,
                summary: true,
            };
            text::write(&report, &mut out, options)
        }
        Format::Json => json::write(&report, &mut out),
        Format::Sarif => sarif::write(&report, &mut out),
    };
    let code = finish(written.and_then(|()| out.flush()));
    if code != 0 {
        return code;
    }
    if report.findings.is_empty() || args.warn {
        0
    } else {
        exit::FINDINGS
    }
}

fn finish(result: io::Result<()>) -> u8 {
    match result {
        Ok(()) => 0,
        // A closed pipe (`ferry lint | head`) is not an error of ours.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("ferry lint: error: cannot write the report: {e}");
            exit::ERROR
        }
    }
}

fn list_rules(out: &mut dyn Write) -> io::Result<()> {
    for rule in &RULES {
        writeln!(out, "{}  {}", rule.id, rule.summary)?;
        writeln!(out, "    {} is {}", rule.feature, rule.lifecycle.describe())?;
        writeln!(out, "    migration: {}", rule.migration)?;
    }
    Ok(())
}
