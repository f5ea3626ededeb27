//! The three report formats: compiler-style text (exact), JSON (its documented shape) and
//! SARIF 2.1.0, validated against the official SARIF 2.1.0 JSON schema. The schema comes
//! from the `serde-sarif` crate's published source (a dev-dependency), found through
//! `cargo metadata`: nothing is fetched from the web and no copy is kept here.

use std::path::{Path, PathBuf};
use std::process::Command;

use ferry_lint::output::{json, sarif, text};
use ferry_lint::{Language, Linter, Note, NoteKind, Report};
use serde_json::Value;

const SOURCE: &str = "\
from mcp.server.fastmcp import Context

async def tool(ctx: Context) -> str:
\tawait ctx.session.send_ping()
\tawait ctx.info(\"hi\")
";

fn report() -> Report {
    let findings = Linter::new()
        .lint_source(Path::new("src/my tool.py"), Language::Python, SOURCE)
        .unwrap();
    Report {
        findings,
        notes: vec![Note {
            path: PathBuf::from("vendor/app.min.js"),
            kind: NoteKind::Minified,
            message: "skipped: looks minified or generated (a line of 30000 bytes)".into(),
        }],
        files_scanned: 1,
        lines_scanned: 5,
        bytes_scanned: SOURCE.len() as u64,
    }
}

#[test]
fn text_reads_like_a_compiler() {
    let mut out = Vec::new();
    text::write(
        &report(),
        &mut out,
        text::TextOptions {
            color: false,
            summary: true,
        },
    )
    .unwrap();
    let expected = "\
error[mcp-ping]: `ctx.session.send_ping(…)` sends a ping request
 --> src/my tool.py:4:20
  |
4 |     await ctx.session.send_ping()
  |                       ^^^^^^^^^
  = note: ping is removed in 2026-07-28 (SEP-2575)
  = help: migration: Remove the ping: 2026-07-28 is stateless, there is no connection to keep alive; an ordinary request (e.g. `server/discover`) shows whether a server answers
  = help: https://modelcontextprotocol.io/specification/2026-07-28/changelog

warning[mcp-logging]: `ctx.info(…)` sends a protocol log message to the client (notifications/message)
 --> src/my tool.py:5:12
  |
5 |     await ctx.info(\"hi\")
  |               ^^^^
  = note: Logging is deprecated since 2026-07-28 (SEP-2577); earliest removal: First revision released on or after 2027-07-28
  = help: migration: Log to `stderr` for stdio transports; use OpenTelemetry for observability
  = help: https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging

note: vendor/app.min.js: skipped: looks minified or generated (a line of 30000 bytes)
2 findings (mcp-logging: 1, mcp-ping: 1) in 1 file (5 lines); 1 file skipped
";
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[test]
fn colours_only_when_asked() {
    let mut out = Vec::new();
    let options = text::TextOptions {
        color: true,
        summary: false,
    };
    text::write(&report(), &mut out, options).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("\x1b[1;31merror[mcp-ping]\x1b[0m"), "{out}");
}

#[test]
fn json_has_the_documented_shape() {
    let mut out = Vec::new();
    json::write(&report(), &mut out).unwrap();
    let value: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(value["version"], 1);
    assert_eq!(value["tool"]["name"], "ferry-lint");
    let findings = value["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2);
    let ping = &findings[0];
    assert_eq!(ping["ruleId"], "mcp-ping");
    assert_eq!(ping["severity"], "error");
    assert_eq!(ping["path"], "src/my tool.py");
    assert_eq!(
        (
            &ping["line"],
            &ping["column"],
            &ping["endLine"],
            &ping["endColumn"]
        ),
        (&4.into(), &20.into(), &4.into(), &29.into())
    );
    assert_eq!(ping["sourceLine"], "\tawait ctx.session.send_ping()");
    assert_eq!(ping["status"], "removed");
    assert_eq!(ping["removedIn"], "2026-07-28");
    assert_eq!(ping["earliestRemoval"], Value::Null);
    let logging = &findings[1];
    assert_eq!(logging["ruleId"], "mcp-logging");
    assert_eq!(logging["severity"], "warning");
    assert_eq!(logging["status"], "deprecated");
    assert_eq!(logging["deprecatedSince"], "2026-07-28");
    assert_eq!(logging["earliestRemoval"], "2027-07-28");
    assert_eq!(logging["record"], "SEP-2577");
    assert_eq!(
        logging["migration"],
        "Log to `stderr` for stdio transports; use OpenTelemetry for observability"
    );
    assert_eq!(value["notes"][0]["kind"], "minified");
    assert_eq!(value["summary"]["findings"], 2);
    assert_eq!(value["summary"]["filesSkipped"], 1);
    assert_eq!(value["summary"]["byRule"]["mcp-ping"], 1);
}

/// The official SARIF 2.1.0 schema, from the serde-sarif crate's source in the registry.
fn sarif_schema() -> Value {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .expect("serde-sarif is a dev-dependency");
    let dir = Path::new(package["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_owned();
    let path = dir.join("src/schema.json");
    let mut schema: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap();
    // The published schema's `language` patterns (of `run` and `toolComponent`) have a
    // lone `]`, a literal under ECMA-262's Annex B that the validator's pattern check
    // refuses. Escaping it keeps the same language; nothing we emit sets `language`.
    let fixed = escape_lone_bracket(&mut schema);
    assert_eq!(fixed, 2, "the schema's language patterns changed");
    assert_eq!(
        schema["title"],
        "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    );
    schema
}

const LANGUAGE_PATTERN: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";

fn escape_lone_bracket(value: &mut Value) -> usize {
    match value {
        Value::Object(map) => {
            let mut n = 0;
            for (key, v) in map.iter_mut() {
                if key == "pattern" && v == LANGUAGE_PATTERN {
                    *v = Value::from(LANGUAGE_PATTERN.replace("}]?", "}\\]?"));
                    n += 1;
                } else {
                    n += escape_lone_bracket(v);
                }
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(escape_lone_bracket).sum(),
        _ => 0,
    }
}

fn assert_valid_sarif(log: &Value) {
    let schema = sarif_schema();
    // Draft 7, as the schema declares, with formats asserted (uri, uri-reference,
    // date-time).
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "SARIF schema violations: {errors:#?}");
    // The same log reads back into serde-sarif's types, generated from that schema.
    let typed: serde_sarif::sarif::Sarif = serde_json::from_value(log.clone()).unwrap();
    assert_eq!(typed.runs.len(), 1);
}

#[test]
fn sarif_is_valid_against_the_official_schema() {
    let mut out = Vec::new();
    sarif::write(&report(), &mut out).unwrap();
    let log: Value = serde_json::from_slice(&out).unwrap();
    assert_valid_sarif(&log);

    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "ferry-lint");
    assert_eq!(run["tool"]["driver"]["rules"].as_array().unwrap().len(), 10);
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["ruleId"], "mcp-ping");
    assert_eq!(results[0]["level"], "error");
    let rule_index = results[0]["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(run["tool"]["driver"]["rules"][rule_index]["id"], "mcp-ping");
    let location = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "src/my%20tool.py");
    assert_eq!(location["region"]["startLine"], 4);
    assert_eq!(location["region"]["startColumn"], 20);
    assert_eq!(results[1]["properties"]["earliestRemoval"], "2027-07-28");
    let notes = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(notes.len(), 1);
}

#[test]
fn sarif_of_a_clean_run_and_of_every_fixture_is_valid() {
    let mut empty = Vec::new();
    sarif::write(&Report::default(), &mut empty).unwrap();
    assert_valid_sarif(&serde_json::from_slice(&empty).unwrap());

    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let report = Linter::new().lint_paths(&[fixtures]).unwrap();
    assert!(report.findings.len() > 90, "{}", report.findings.len());
    let mut out = Vec::new();
    sarif::write(&report, &mut out).unwrap();
    let log: Value = serde_json::from_slice(&out).unwrap();
    assert_valid_sarif(&log);
    let uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        ["uri"]
        .as_str()
        .unwrap();
    assert!(uri.starts_with("file:///"), "{uri}");
}

/// The schema check can fail: a log with a wrong level or a line 0 is refused.
#[test]
fn the_schema_check_refuses_a_broken_log() {
    let mut out = Vec::new();
    sarif::write(&report(), &mut out).unwrap();
    let log: Value = serde_json::from_slice(&out).unwrap();
    let schema = sarif_schema();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    assert!(validator.is_valid(&log));
    let mut bad_level = log.clone();
    bad_level["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!validator.is_valid(&bad_level));
    let mut bad_line = log;
    bad_line["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    assert!(!validator.is_valid(&bad_line));
}
