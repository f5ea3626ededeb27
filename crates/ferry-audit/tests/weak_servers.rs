//! The audit against small servers with one defence missing each: the matching check
//! fails (or warns, where the specification leaves it to the server), the others pass.

mod support;

use ferry_audit::Verdict::{Fail, Pass, Warn};
use support::weak::{Flaws, Seal};
use support::{expect, others_pass, weak, weak_config};

async fn audit(flaws: Flaws) -> ferry_audit::Report {
    let server = weak(flaws).await;
    ferry_audit::run(&weak_config(&server.url))
        .await
        .expect("the audit runs")
}

/// The checks that cannot apply to the weak servers: their states carry no readable JSON
/// when sealed with an AEAD.
const SKIPS: &[&str] = &["state.integrity.forge"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_every_defence_passes() {
    let report = audit(Flaws::none()).await;
    others_pass(&report, &[], SKIPS);
    assert!(!report.failed());
    assert_eq!(report.eras, ["2026-07-28"]);
    // The baseline only: every attack was refused.
    assert_eq!(report.tool_completions, 1, "{}", report.to_text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_json_state_is_forged() {
    let report = audit(Flaws {
        seal: Seal::Plain,
        ..Flaws::none()
    })
    .await;
    expect(
        &report,
        &[
            ("state.integrity.forge", Fail),
            ("state.confidentiality", Warn),
        ],
    );
    // A changed byte lands in the JSON's letters and digits: some fields are checked
    // (the tool, the arguments), others are not (the id, the expiry), so where it lands
    // decides; the byte check is not asserted.
    others_pass(
        &report,
        &[
            "state.integrity.forge",
            "state.confidentiality",
            "state.integrity.bitflip",
        ],
        &[],
    );
    assert!(report.failed());
    let found = report.check("state.confidentiality").unwrap();
    assert!(found.detail.contains("in plain text"), "{}", found.detail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authenticated_but_readable_state_only_warns() {
    let report = audit(Flaws {
        seal: Seal::Readable,
        ..Flaws::none()
    })
    .await;
    expect(
        &report,
        &[
            ("state.confidentiality", Warn),
            ("state.integrity.forge", Pass),
        ],
    );
    others_pass(&report, &["state.confidentiality"], &[]);
    assert!(!report.failed());
    let found = report.check("state.confidentiality").unwrap();
    assert!(found.detail.contains("base64url"), "{}", found.detail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unbound_state_is_accepted_for_other_arguments_tools_and_users() {
    let report = audit(Flaws {
        bind: false,
        ..Flaws::none()
    })
    .await;
    let bound = ["state.bind.args", "state.bind.tool", "state.bind.principal"];
    expect(&report, &bound.map(|id| (id, Fail)));
    others_pass(&report, &bound, SKIPS);
    // The baseline, and once for each binding that let the state through.
    assert_eq!(report.tool_completions, 4, "{}", report.to_text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_without_expiry_outlives_its_ttl() {
    let report = audit(Flaws {
        expiry: false,
        ..Flaws::none()
    })
    .await;
    expect(&report, &[("state.expiry", Fail)]);
    others_pass(&report, &["state.expiry"], SKIPS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_redeemable_twice_is_replayed() {
    let report = audit(Flaws {
        single_use: false,
        ..Flaws::none()
    })
    .await;
    expect(&report, &[("state.replay", Fail)]);
    let replay = report.check("state.replay").unwrap();
    assert!(
        replay.detail.contains("idempotentHint"),
        "{}",
        replay.detail
    );
    others_pass(&report, &["state.replay"], SKIPS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_answer_that_goes_ahead_fails() {
    let report = audit(Flaws {
        reask_missing: false,
        ..Flaws::none()
    })
    .await;
    expect(&report, &[("state.missing_answer", Fail)]);
    others_pass(&report, &["state.missing_answer"], SKIPS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_that_are_not_checked_fail_their_rules() {
    let report = audit(Flaws {
        check_headers: false,
        ..Flaws::none()
    })
    .await;
    let rules = [
        "http.header.version_mismatch",
        "http.header.method_missing",
        "http.header.method_mismatch",
        "http.header.name_missing",
        "http.header.name_mismatch",
        "http.header.param_mismatch",
    ];
    expect(&report, &rules.map(|id| (id, Fail)));
    // A missing MCP-Protocol-Version is still refused.
    expect(&report, &[("http.header.version_missing", Pass)]);
    others_pass(&report, &rules, SKIPS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_that_is_served_fails() {
    let report = audit(Flaws {
        check_origin: false,
        ..Flaws::none()
    })
    .await;
    expect(&report, &[("http.origin", Fail)]);
    others_pass(&report, &["http.origin"], SKIPS);
}
