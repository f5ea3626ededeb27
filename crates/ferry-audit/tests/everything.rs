//! The audit against Ferry's own server, ferry-everything, in-process on 127.0.0.1: it
//! must pass every check that applies.

mod support;

use std::time::Duration;

use ferry_audit::{AuditConfig, Token, Verdict};
use serde_json::json;
use support::{EVERYTHING_TTL, everything, everything_with, others_pass};

/// Checks that cannot apply to confirm_delete on ferry-everything: its state is sealed
/// (no JSON to edit) and it mirrors no argument into a header.
const NOT_APPLICABLE: &[&str] = &["state.integrity.forge", "http.header.param_mismatch"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_delete_passes_every_check() {
    let server = everything().await;
    let config = AuditConfig::new(&server.url, "confirm_delete")
        .unwrap()
        .args(json!({"path": "report.txt"}))
        .unwrap()
        .token(Token::new("alice-token"))
        .token_b(Token::new("bob-token"))
        .other_tool("generate_image", json!({"prompt": "a lighthouse"}))
        .unwrap()
        .ttl(EVERYTHING_TTL)
        .unwrap()
        .request_timeout(Duration::from_secs(10));
    let report = ferry_audit::run(&config).await.expect("the audit runs");
    others_pass(&report, &[], NOT_APPLICABLE);
    assert!(!report.failed());
    assert_eq!(report.eras, ["2026-07-28", "2025-11-25"]);
    assert_eq!(report.server.as_ref().unwrap().name, "ferry-everything");
    // confirm_delete ran once, in the baseline; no attack got through.
    assert_eq!(report.tool_completions, 1, "{}", report.to_text());
    let garbage = report.check("state.garbage").unwrap();
    let max = garbage.data.as_ref().unwrap()["maxLatencyMs"]
        .as_u64()
        .unwrap();
    assert!(max < 2000, "{max} ms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_questions_in_one_round_and_the_skips_say_why() {
    let server = everything().await;
    // Anonymous, no second user, no ttl, no other tool: those checks are skipped.
    let config = AuditConfig::new(&server.url, "generate_image")
        .unwrap()
        .args(json!({"prompt": "a lighthouse"}))
        .unwrap()
        .answers(json!({"aspect_ratio": "1:1"}))
        .unwrap()
        .request_timeout(Duration::from_secs(10));
    let report = ferry_audit::run(&config).await.expect("the audit runs");
    let skipped = [
        "state.bind.tool",
        "state.bind.principal",
        "state.expiry",
        "state.integrity.forge",
        "http.header.param_mismatch",
    ];
    // generate_image's state is not single-use, and the tool declares neither
    // readOnlyHint nor idempotentHint: a replay spends a second generation.
    others_pass(&report, &["state.replay"], &skipped);
    assert_eq!(
        report.verdict("state.replay"),
        Some(Verdict::Fail),
        "{}",
        report.to_text()
    );
    assert_eq!(report.tool_completions, 2, "the baseline and the replay");
    for id in skipped {
        let c = report.check(id).unwrap();
        assert_eq!(c.verdict, Verdict::Skip, "{id}");
        assert!(!c.detail.is_empty());
    }
    assert!(
        report
            .check("state.expiry")
            .unwrap()
            .detail
            .contains("--ttl")
    );
    assert!(
        report
            .check("state.bind.principal")
            .unwrap()
            .detail
            .contains("--token-b")
    );
    let roundtrip = report.check("mrtr.roundtrip").unwrap();
    assert!(
        roundtrip.detail.contains("aspect_ratio+go_ahead"),
        "{}",
        roundtrip.detail
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_does_not_exist_fails_the_round_trip_and_nothing_else_runs() {
    let server = everything().await;
    let config = AuditConfig::new(&server.url, "no_such_tool")
        .unwrap()
        .request_timeout(Duration::from_secs(10));
    let report = ferry_audit::run(&config).await.expect("the audit runs");
    assert_eq!(report.verdict("mrtr.roundtrip"), Some(Verdict::Fail));
    assert!(report.failed());
    assert_eq!(report.tool_completions, 0);
    for c in report.checks.iter().filter(|c| c.id.starts_with("state.")) {
        assert_eq!(c.verdict, Verdict::Skip, "{}", c.id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_the_tool_refuses_fail_the_round_trip_with_its_message() {
    let server = everything().await;
    let config = AuditConfig::new(&server.url, "confirm_delete")
        .unwrap()
        .request_timeout(Duration::from_secs(10));
    let report = ferry_audit::run(&config).await.expect("the audit runs");
    let c = report.check("mrtr.roundtrip").unwrap();
    assert_eq!(c.verdict, Verdict::Fail);
    assert!(
        c.detail.contains("error result") && c.detail.contains("Invalid arguments"),
        "{}",
        c.detail
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_listening_is_an_error_not_a_report() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let config = AuditConfig::new(&url, "t")
        .unwrap()
        .request_timeout(Duration::from_secs(5));
    let err = ferry_audit::run(&config).await.unwrap_err();
    assert!(
        matches!(err, ferry_audit::AuditError::Unreachable { .. }),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_wants_a_token_is_told_apart_from_a_failing_one() {
    let server = everything_with(true).await;
    let config = AuditConfig::new(&server.url, "confirm_delete")
        .unwrap()
        .args(json!({"path": "x.txt"}))
        .unwrap()
        .request_timeout(Duration::from_secs(5));
    let err = ferry_audit::run(&config).await.unwrap_err();
    assert!(
        matches!(err, ferry_audit::AuditError::Unauthorized { status: 401 }),
        "{err}"
    );
    // With the token, the audit runs.
    let report = ferry_audit::run(&config.token(Token::new("alice-token")))
        .await
        .expect("the audit runs");
    assert_eq!(report.verdict("mrtr.roundtrip"), Some(Verdict::Pass));
}
