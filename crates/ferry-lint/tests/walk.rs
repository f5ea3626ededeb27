//! Walking directories: `.gitignore`, `.ignore`, hidden entries, `node_modules` and
//! `target` are left out; files that are too large, minified, not UTF-8 or do not parse
//! become notes; results do not depend on the number of threads.

use std::fs;
use std::path::{Path, PathBuf};

use ferry_lint::{Linter, NoteKind, RuleId};

const PING: &str = "const request = { method: \"ping\" };\n";

fn write(root: &Path, rel: &str, contents: impl AsRef<[u8]>) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "generated/\n*.gen.js\n");
    write(root, ".ignore", "scratch.ts\n");
    write(root, "src/app.js", PING);
    write(root, "src/nested/deep.ts", PING);
    write(root, "src/app.gen.js", PING);
    write(root, "generated/out.js", PING);
    write(root, "scratch.ts", PING);
    write(root, ".hidden/x.js", PING);
    write(root, "node_modules/pkg/index.js", PING);
    write(
        root,
        "target/debug/build.rs",
        "fn f() { let m = \"sampling/createMessage\"; }\n",
    );
    write(root, "README.md", "sampling/createMessage\n");
    write(root, "sub/.gitignore", "local.py\n");
    write(root, "sub/local.py", "x = {\"method\": \"ping\"}\n");
    write(root, "sub/kept.py", "x = {\"method\": \"ping\"}\n");
    dir
}

#[test]
fn ignore_files_hidden_entries_and_dependencies_are_left_out() {
    let dir = tree();
    let report = Linter::new().lint_paths(&[dir.path().to_owned()]).unwrap();
    let files: Vec<String> = report
        .findings
        .iter()
        .map(|f| relative(dir.path(), &f.path))
        .collect();
    assert_eq!(files, ["src/app.js", "src/nested/deep.ts", "sub/kept.py"]);
    assert!(report.findings.iter().all(|f| f.rule == RuleId::Ping));
    assert_eq!(report.files_scanned, 3);
    assert_eq!(report.lines_scanned, 3);
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

#[test]
fn a_file_named_on_the_command_line_is_read_even_if_ignored() {
    let dir = tree();
    let report = Linter::new()
        .lint_paths(&[dir.path().join("scratch.ts")])
        .unwrap();
    assert_eq!(report.findings.len(), 1);
}

#[test]
fn unreadable_files_become_notes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "ok.py", "x = {\"method\": \"ping\"}\n");
    write(root, "latin1.py", b"x = '\xe9'\n");
    write(root, "broken.go", "package x\nfunc f( {\n");
    write(root, "big.ts", format!("// {}\n", "x".repeat(2_000)));
    write(
        root,
        "bundle.js",
        format!("var a={};\n", "\"k\":1,".repeat(5_000)).replace("{}", "{ }"),
    );
    let report = Linter::new()
        .max_file_bytes(1_000)
        .lint_paths(&[root.to_owned()])
        .unwrap();
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.files_scanned, 1);
    let notes: Vec<(String, NoteKind)> = report
        .notes
        .iter()
        .map(|n| (relative(root, &n.path), n.kind))
        .collect();
    assert_eq!(
        notes,
        [
            ("big.ts".to_owned(), NoteKind::TooLarge),
            ("broken.go".to_owned(), NoteKind::ParseError),
            ("bundle.js".to_owned(), NoteKind::TooLarge),
            ("latin1.py".to_owned(), NoteKind::NotUtf8),
        ]
    );
    // With a larger limit the bundle is recognised as minified.
    let report = Linter::new().lint_paths(&[root.to_owned()]).unwrap();
    let bundle = report
        .notes
        .iter()
        .find(|n| n.path.ends_with("bundle.js"))
        .unwrap();
    assert_eq!(bundle.kind, NoteKind::Minified);
    let broken = report
        .notes
        .iter()
        .find(|n| n.path.ends_with("broken.go"))
        .unwrap();
    assert!(
        broken.message.contains("go syntax error at 2:"),
        "{}",
        broken.message
    );
}

#[test]
fn a_missing_path_is_an_error() {
    let err = Linter::new()
        .lint_paths(&[PathBuf::from("/nonexistent/ferry-lint-test")])
        .unwrap_err();
    assert!(matches!(err, ferry_lint::LintError::Path { .. }), "{err}");
}

#[test]
fn threads_do_not_change_the_report() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let one = Linter::new()
        .threads(1)
        .lint_paths(std::slice::from_ref(&fixtures))
        .unwrap();
    let four = Linter::new().threads(4).lint_paths(&[fixtures]).unwrap();
    assert_eq!(one, four);
    assert_eq!(one.files_scanned, 6);
}
