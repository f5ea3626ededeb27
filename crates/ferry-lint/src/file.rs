//! Linting one file: limits, parsing, scanning, and turning hits into findings.

use std::path::Path;
use std::time::{Duration, Instant};

use tree_sitter::{Node, Parser};

use crate::Linter;
use crate::language::Language;
use crate::report::{Finding, Note, NoteKind};
use crate::scan::{self, Hit};

/// A line longer than this marks a file as minified or generated.
pub(crate) const MAX_LINE_BYTES: usize = 20_000;

/// What became of one file.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Read and searched.
    Scanned {
        findings: Vec<Finding>,
        lines: u64,
        bytes: u64,
    },
    /// Skipped.
    Skipped(Note),
}

/// Parsers, one per language, made when first needed (one set per thread).
#[derive(Default)]
pub(crate) struct Parsers {
    parsers: Vec<(Language, Parser)>,
}

impl Parsers {
    fn get(&mut self, language: Language) -> Option<&mut Parser> {
        if let Some(i) = self.parsers.iter().position(|(l, _)| *l == language) {
            return Some(&mut self.parsers[i].1);
        }
        let mut parser = Parser::new();
        // A grammar that the tree-sitter runtime refuses leaves the language unread.
        parser.set_language(&language.grammar()).ok()?;
        self.parsers.push((language, parser));
        self.parsers.last_mut().map(|(_, p)| p)
    }
}

fn note(path: &Path, kind: NoteKind, message: String) -> Outcome {
    Outcome::Skipped(Note {
        path: path.to_owned(),
        kind,
        message,
    })
}

/// Lints bytes read from `path`.
pub(crate) fn lint_bytes(
    linter: &Linter,
    parsers: &mut Parsers,
    path: &Path,
    language: Language,
    bytes: &[u8],
) -> Outcome {
    if bytes.len() as u64 > linter.max_file_bytes {
        return note(
            path,
            NoteKind::TooLarge,
            format!(
                "skipped: {} bytes, more than the limit of {} bytes",
                bytes.len(),
                linter.max_file_bytes
            ),
        );
    }
    let source = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            return note(
                path,
                NoteKind::NotUtf8,
                format!(
                    "skipped: not UTF-8 (invalid byte at offset {})",
                    e.valid_up_to()
                ),
            );
        }
    };
    lint_str(linter, parsers, path, language, source)
}

/// Lints source text.
pub(crate) fn lint_str(
    linter: &Linter,
    parsers: &mut Parsers,
    path: &Path,
    language: Language,
    source: &str,
) -> Outcome {
    let longest = source.split('\n').map(str::len).max().unwrap_or(0);
    if longest > MAX_LINE_BYTES {
        return note(
            path,
            NoteKind::Minified,
            format!("skipped: looks minified or generated (a line of {longest} bytes)"),
        );
    }
    let Some(parser) = parsers.get(language) else {
        return note(
            path,
            NoteKind::ParseError,
            format!("skipped: no {} grammar could be loaded", language.name()),
        );
    };
    let tree = parse(parser, source, linter.parse_timeout);
    let Some(tree) = tree else {
        return note(
            path,
            NoteKind::ParseTimeout,
            format!(
                "skipped: parsing took longer than {} ms",
                linter.parse_timeout.as_millis()
            ),
        );
    };
    let root = tree.root_node();
    if root.has_error() {
        let (line, column) = first_error(root)
            .map(|n| position(source, n.start_byte(), n.start_position().row))
            .unwrap_or((1, 1));
        return note(
            path,
            NoteKind::ParseError,
            format!(
                "skipped: {} syntax error at {line}:{column}",
                language.name()
            ),
        );
    }
    let findings = scan::scan(&tree, source, language)
        .into_iter()
        .filter(|hit| linter.enabled(hit.rule))
        .map(|hit| finding(path, source, hit))
        .collect();
    Outcome::Scanned {
        findings,
        lines: count_lines(source),
        bytes: source.len() as u64,
    }
}

/// Parses within the time limit; `None` when it ran out.
fn parse(parser: &mut Parser, source: &str, limit: Duration) -> Option<tree_sitter::Tree> {
    let started = Instant::now();
    let bytes = source.as_bytes();
    let mut progress = |_: &tree_sitter::ParseState| started.elapsed() > limit;
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
    let tree = parser.parse_with_options(
        &mut |offset, _| bytes.get(offset..).unwrap_or(&[]),
        None,
        Some(options),
    );
    if tree.is_none() {
        // A cancelled parse leaves state behind; the next file starts afresh.
        parser.reset();
    }
    tree
}

/// The first error or missing node, in source order.
fn first_error(root: Node<'_>) -> Option<Node<'_>> {
    let mut node = root;
    'down: loop {
        if node.is_error() || node.is_missing() {
            return Some(node);
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if child.has_error() {
                node = child;
                continue 'down;
            }
        }
        return None;
    }
}

fn count_lines(source: &str) -> u64 {
    let newlines = source.bytes().filter(|b| *b == b'\n').count() as u64;
    if source.is_empty() || source.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// 1-based line and column (in Unicode scalar values) of a byte offset on a 0-based row.
fn position(source: &str, byte: usize, row: usize) -> (usize, usize) {
    let line_start = source[..byte].rfind('\n').map_or(0, |i| i + 1);
    (row + 1, source[line_start..byte].chars().count() + 1)
}

/// The longest source line a finding carries; longer lines are cut (at a character).
const MAX_SOURCE_LINE: usize = 400;

fn finding(path: &Path, source: &str, hit: Hit) -> Finding {
    let (line, column) = position(source, hit.start_byte, hit.start.row);
    let (end_line, end_column) = position(source, hit.end_byte, hit.end.row);
    let line_start = hit.start_byte - (column_bytes(source, hit.start_byte));
    let rest = &source[line_start..];
    let mut text = rest.split('\n').next().unwrap_or("").trim_end_matches('\r');
    if text.len() > MAX_SOURCE_LINE {
        let mut cut = MAX_SOURCE_LINE;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text = &text[..cut];
    }
    Finding {
        rule: hit.rule,
        path: path.to_owned(),
        line,
        column,
        end_line,
        end_column,
        source_line: text.to_owned(),
        message: hit.message,
    }
}

/// How many bytes of its line come before `byte`.
fn column_bytes(source: &str, byte: usize) -> usize {
    byte - source[..byte].rfind('\n').map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_like_editors_do() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
    }

    #[test]
    fn columns_count_characters() {
        let src = "é = \"ping\"\n";
        assert_eq!(position(src, src.find('"').unwrap(), 0), (1, 5));
    }
}
