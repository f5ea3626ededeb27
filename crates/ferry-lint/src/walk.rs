//! Finding the files under the given paths (honouring `.gitignore`, `.ignore`, hidden
//! files, `node_modules` and `target`) and linting them on several threads.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use ignore::{DirEntry, WalkBuilder, WalkState};

use crate::file::{self, Outcome, Parsers};
use crate::language::Language;
use crate::report::{Note, NoteKind, Report};
use crate::{LintError, Linter};

/// Directories never entered below a given path: dependencies and build output.
const SKIPPED_DIRS: &[&str] = &["node_modules", "target"];

fn keep(entry: &DirEntry) -> bool {
    let skipped = entry.depth() > 0
        && entry.file_type().is_some_and(|t| t.is_dir())
        && entry
            .file_name()
            .to_str()
            .is_some_and(|n| SKIPPED_DIRS.contains(&n));
    !skipped
}

pub(crate) fn run(linter: &Linter, paths: &[PathBuf]) -> Result<Report, LintError> {
    let Some((first, rest)) = paths.split_first() else {
        return Ok(Report::default());
    };
    for path in paths {
        if let Err(source) = std::fs::metadata(path) {
            return Err(LintError::Path {
                path: path.clone(),
                source,
            });
        }
    }
    let mut builder = WalkBuilder::new(first);
    for path in rest {
        builder.add(path);
    }
    builder
        .hidden(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .threads(linter.threads)
        .filter_entry(keep);

    let (tx, rx) = mpsc::channel::<Outcome>();
    builder.build_parallel().run(|| {
        let tx = tx.clone();
        let mut parsers = Parsers::default();
        Box::new(move |entry| {
            if let Some(outcome) = visit(linter, &mut parsers, entry) {
                // The receiver lives until every visitor is done.
                let _ = tx.send(outcome);
            }
            WalkState::Continue
        })
    });
    drop(tx);

    let mut report = Report::default();
    for outcome in rx {
        match outcome {
            Outcome::Scanned {
                findings,
                lines,
                bytes,
            } => {
                report.files_scanned += 1;
                report.lines_scanned += lines;
                report.bytes_scanned += bytes;
                report.findings.extend(findings);
            }
            Outcome::Skipped(note) => report.notes.push(note),
        }
    }
    report.sort();
    Ok(report)
}

fn visit(
    linter: &Linter,
    parsers: &mut Parsers,
    entry: Result<DirEntry, ignore::Error>,
) -> Option<Outcome> {
    let entry = match entry {
        Ok(entry) => entry,
        Err(err) => {
            let path = error_path(&err).unwrap_or_default();
            return Some(Outcome::Skipped(Note {
                path,
                kind: NoteKind::Io,
                message: format!("skipped: {err}"),
            }));
        }
    };
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return None;
    }
    let path = entry.path();
    let language = Language::from_path(path)?;
    Some(lint_file(linter, parsers, path, language))
}

fn lint_file(linter: &Linter, parsers: &mut Parsers, path: &Path, language: Language) -> Outcome {
    let io_note = |err: std::io::Error| {
        Outcome::Skipped(Note {
            path: path.to_owned(),
            kind: NoteKind::Io,
            message: format!("skipped: {err}"),
        })
    };
    // The size is checked before the file is read, and the read is bounded as well (the
    // file may grow in between).
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > linter.max_file_bytes => {
            return Outcome::Skipped(Note {
                path: path.to_owned(),
                kind: NoteKind::TooLarge,
                message: format!(
                    "skipped: {} bytes, more than the limit of {} bytes",
                    meta.len(),
                    linter.max_file_bytes
                ),
            });
        }
        Ok(_) => {}
        Err(err) => return io_note(err),
    }
    let bytes = match read_bounded(path, linter.max_file_bytes) {
        Ok(bytes) => bytes,
        Err(err) => return io_note(err),
    };
    file::lint_bytes(linter, parsers, path, language, &bytes)
}

/// Reads at most `limit + 1` bytes, so an over-long file is seen as such.
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}
