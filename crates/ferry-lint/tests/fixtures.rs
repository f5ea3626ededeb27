//! Every fixture, in every language, gives exactly the findings listed here: each rule
//! fires where the fixture uses the feature, and none of the look-alikes (the standard
//! library's logging, functions of the user's own named `sample`, comments, docstrings,
//! strings that merely contain a method name) fires.

use std::collections::BTreeSet;
use std::path::Path;

use ferry_lint::{Language, Linter, RuleId};

type Expected = &'static [(&'static str, usize, usize)];

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Lints a fixture and checks its findings against `expected` (rule, line, column).
fn check(name: &str, expected: Expected) -> Vec<ferry_lint::Finding> {
    let source = fixture(name);
    let language = Language::from_path(Path::new(name)).expect("a known language");
    let findings = Linter::new()
        .lint_source(Path::new(name), language, &source)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let got: Vec<(&str, usize, usize)> = findings
        .iter()
        .map(|f| (f.rule.as_str(), f.line, f.column))
        .collect();
    assert_eq!(got, expected, "{name}: findings differ");

    // Each finding carries its line and the registry's migration.
    let lines: Vec<&str> = source.lines().collect();
    for f in &findings {
        assert_eq!(f.source_line, lines[f.line - 1], "{name}:{}", f.line);
        assert!(!f.rule().migration.is_empty());
        assert!(!f.message.is_empty());
    }

    // Nothing below the look-alike marker fires.
    let marker = lines
        .iter()
        .position(|l| l.contains("---- look-alikes"))
        .map(|i| i + 1);
    if let Some(marker) = marker {
        for f in &findings {
            assert!(
                f.line < marker,
                "{name}:{}: a look-alike fired: {f:?}",
                f.line
            );
        }
    }
    findings
}

/// The rules a set of findings covers.
fn rules(findings: &[ferry_lint::Finding]) -> BTreeSet<RuleId> {
    findings.iter().map(|f| f.rule).collect()
}

fn all_rules() -> BTreeSet<RuleId> {
    RuleId::ALL.into_iter().collect()
}

#[test]
fn python_sdk_and_fastmcp() {
    let findings = check(
        "server.py",
        &[
            ("mcp-session-id", 16, 25),
            ("mcp-logging", 21, 15),
            ("mcp-logging", 22, 15),
            ("mcp-logging", 23, 15),
            ("mcp-sampling", 24, 32),
            ("mcp-include-context", 27, 25),
            ("mcp-roots", 29, 31),
            ("mcp-server-request-outside-mrtr", 30, 24),
            ("mcp-ping", 31, 23),
            ("mcp-logging", 32, 23),
            ("mcp-sampling", 38, 23),
            ("mcp-session-id", 39, 22),
            ("mcp-ping", 44, 43),
            ("mcp-server-request-outside-mrtr", 45, 32),
            ("mcp-server-request-outside-mrtr", 46, 19),
            ("mcp-elicitation-id", 47, 48),
            ("mcp-session-id", 48, 16),
            ("mcp-roots", 53, 37),
            ("mcp-http-sse-transport", 57, 16),
            ("mcp-sampling", 58, 46),
            ("mcp-roots", 58, 81),
            ("mcp-logging", 59, 23),
            ("mcp-http-sse-transport", 62, 7),
            ("mcp-http-sse-transport", 63, 17),
            ("mcp-dcr", 64, 45),
            ("mcp-http-sse-transport", 65, 19),
            ("mcp-dcr", 69, 15),
        ],
    );
    assert_eq!(rules(&findings), all_rules());
}

#[test]
fn typescript_sdk() {
    let findings = check(
        "client.ts",
        &[
            ("mcp-sampling", 18, 21),
            ("mcp-roots", 18, 35),
            ("mcp-sampling", 20, 26),
            ("mcp-roots", 21, 26),
            ("mcp-logging", 22, 14),
            ("mcp-ping", 23, 14),
            ("mcp-http-sse-transport", 24, 26),
            ("mcp-logging", 26, 86),
            ("mcp-logging", 27, 33),
            ("mcp-sampling", 30, 37),
            ("mcp-include-context", 33, 21),
            ("mcp-roots", 35, 41),
            ("mcp-logging", 36, 23),
            ("mcp-server-request-outside-mrtr", 37, 38),
            ("mcp-elicitation-id", 37, 65),
            ("mcp-session-id", 38, 20),
            ("mcp-ping", 39, 41),
            ("mcp-session-id", 44, 3),
            ("mcp-http-sse-transport", 48, 9),
            ("mcp-http-sse-transport", 49, 10),
            ("mcp-session-id", 50, 25),
            ("mcp-dcr", 51, 20),
        ],
    );
    assert_eq!(rules(&findings), all_rules());
}

#[test]
fn javascript_commonjs_and_jsx() {
    let mut findings = check(
        "server.js",
        &[
            ("mcp-logging", 8, 21),
            ("mcp-ping", 11, 26),
            ("mcp-ping", 15, 10),
            ("mcp-roots", 20, 26),
            ("mcp-logging", 23, 16),
            ("mcp-logging", 24, 39),
            ("mcp-sampling", 25, 31),
            ("mcp-include-context", 25, 92),
            ("mcp-server-request-outside-mrtr", 26, 31),
            ("mcp-elicitation-id", 27, 39),
            ("mcp-session-id", 28, 27),
            ("mcp-http-sse-transport", 33, 11),
            ("mcp-http-sse-transport", 34, 27),
            ("mcp-http-sse-transport", 37, 12),
            ("mcp-dcr", 38, 12),
        ],
    );
    assert_eq!(rules(&findings), all_rules());
    // JSX text and attributes that mention ping or sampling are not calls.
    findings.extend(check(
        "panel.jsx",
        &[("mcp-ping", 6, 12), ("mcp-roots", 7, 12)],
    ));
}

#[test]
fn rust_rmcp() {
    let findings = check(
        "server.rs",
        &[
            ("mcp-logging", 14, 57),
            ("mcp-logging", 19, 14),
            ("mcp-ping", 21, 14),
            ("mcp-sampling", 25, 14),
            ("mcp-roots", 27, 14),
            ("mcp-sampling", 33, 10),
            ("mcp-include-context", 35, 53),
            ("mcp-roots", 39, 22),
            ("mcp-logging", 40, 10),
            ("mcp-server-request-outside-mrtr", 41, 23),
            ("mcp-ping", 42, 51),
            ("mcp-session-id", 43, 18),
            ("mcp-http-sse-transport", 44, 18),
            ("mcp-elicitation-id", 45, 33),
            ("mcp-dcr", 46, 59),
            ("mcp-dcr", 47, 23),
            ("mcp-sampling", 52, 9),
            ("mcp-ping", 53, 9),
        ],
    );
    assert_eq!(rules(&findings), all_rules());
}

#[test]
fn go_sdk_and_mcp_go() {
    let findings = check(
        "server.go",
        &[
            ("mcp-sampling", 17, 26),
            ("mcp-include-context", 19, 19),
            ("mcp-roots", 21, 19),
            ("mcp-logging", 22, 11),
            ("mcp-ping", 23, 11),
            ("mcp-server-request-outside-mrtr", 24, 20),
            ("mcp-server-request-outside-mrtr", 25, 17),
            ("mcp-elicitation-id", 25, 60),
            ("mcp-session-id", 26, 11),
            ("mcp-http-sse-transport", 32, 17),
            ("mcp-http-sse-transport", 33, 14),
            ("mcp-http-sse-transport", 34, 16),
            ("mcp-logging", 35, 25),
            ("mcp-sampling", 37, 3),
            ("mcp-roots", 39, 33),
            ("mcp-dcr", 40, 63),
            ("mcp-dcr", 41, 27),
            ("mcp-elicitation-id", 42, 35),
            ("mcp-session-id", 47, 18),
            ("mcp-ping", 51, 7),
            ("mcp-logging", 53, 7),
        ],
    );
    assert_eq!(rules(&findings), all_rules());
}

/// SDK shapes need an MCP import: the same calls in a file that imports no MCP library
/// are someone else's `ping`, `info` and `create_message`.
#[test]
fn sdk_shapes_need_an_mcp_import() {
    let python = "\
import redis

async def f(session, client):
    await session.create_message(x)
    client.ping()
    await session.send_ping()
";
    let findings = Linter::new()
        .lint_source(Path::new("a.py"), Language::Python, python)
        .unwrap();
    assert_eq!(findings, []);
    let with_import = format!("from mcp import ClientSession\n{python}");
    let findings = Linter::new()
        .lint_source(Path::new("a.py"), Language::Python, &with_import)
        .unwrap();
    let got: Vec<(RuleId, usize)> = findings.iter().map(|f| (f.rule, f.line)).collect();
    assert_eq!(
        got,
        [(RuleId::Sampling, 5), (RuleId::Ping, 6), (RuleId::Ping, 7)]
    );
    // Protocol strings fire without an import.
    let js = "const request = { method: \"sampling/createMessage\" };\n";
    let findings = Linter::new()
        .lint_source(Path::new("a.js"), Language::JavaScript, js)
        .unwrap();
    assert_eq!(findings.len(), 1);
    assert_eq!((findings[0].line, findings[0].column), (1, 27));
}

#[test]
fn rules_can_be_chosen() {
    let source = fixture("server.py");
    let path = Path::new("server.py");
    let only = Linter::new()
        .only(&[RuleId::Ping, RuleId::Roots])
        .lint_source(path, Language::Python, &source)
        .unwrap();
    assert_eq!(
        rules(&only),
        [RuleId::Roots, RuleId::Ping].into_iter().collect()
    );
    let without = Linter::new()
        .exclude(&[RuleId::Logging])
        .lint_source(path, Language::Python, &source)
        .unwrap();
    assert!(without.iter().all(|f| f.rule != RuleId::Logging));
    assert_eq!(without.len(), 27 - 5);
}

#[test]
fn a_syntax_error_is_a_note_not_a_panic() {
    let err = Linter::new()
        .lint_source(
            Path::new("broken.ts"),
            Language::TypeScript,
            "const x = server.createMessage({;\n",
        )
        .unwrap_err();
    let ferry_lint::LintError::Skipped { note } = err else {
        panic!("not a skip: {err:?}")
    };
    assert_eq!(note.kind, ferry_lint::NoteKind::ParseError);
    assert!(note.message.contains("1:"), "{}", note.message);
}

#[test]
fn columns_count_characters_not_bytes() {
    let source = "const é = { method: \"ping\" }; // é\n";
    let findings = Linter::new()
        .lint_source(Path::new("a.ts"), Language::TypeScript, source)
        .unwrap();
    assert_eq!(findings.len(), 1);
    assert_eq!((findings[0].column, findings[0].end_column), (21, 27));
}

/// Deeply nested expressions end in a finding or a note, never a stack overflow.
#[test]
fn deep_nesting_is_no_crash() {
    let depth = 50_000;
    let source = format!(
        "from mcp import ClientSession\nx = {}session{}.send_ping()\n",
        "(\n".repeat(depth),
        ")\n".repeat(depth)
    );
    let result = Linter::new().lint_source(Path::new("deep.py"), Language::Python, &source);
    match result {
        Ok(findings) => {
            assert_eq!(findings.len(), 1);
            assert_eq!(findings[0].rule, RuleId::Ping);
        }
        Err(ferry_lint::LintError::Skipped { note }) => {
            assert_ne!(note.kind, ferry_lint::NoteKind::Minified, "{note:?}")
        }
        Err(other) => panic!("{other}"),
    }
}
