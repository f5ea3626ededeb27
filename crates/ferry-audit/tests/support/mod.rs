//! What the audit's tests share: a router served on 127.0.0.1 for the length of a test,
//! ferry-everything built in-process, and the weak servers.
#![allow(dead_code)]

pub mod weak;

use std::time::Duration;

use ferry_audit::{AuditConfig, Report, Token, Verdict};
use ferry_everything::app::{StaticTokens, app};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use ferry_testkit::serve::Background;

/// An endpoint on an ephemeral port of 127.0.0.1 (`url` is its `/mcp`); stops when
/// dropped.
pub type Served = Background;

/// Serves `app` (with `/mcp` in it) until the result is dropped.
pub async fn serve(app: axum::Router) -> Served {
    Background::router(app, "/mcp").await
}

/// The lifetime ferry-everything's states get in these tests.
pub const EVERYTHING_TTL: Duration = Duration::from_secs(2);

/// ferry-everything with two users, alice (`alice-token`) and bob (`bob-token`), and
/// states that live [`EVERYTHING_TTL`].
pub async fn everything() -> Served {
    everything_with(false).await
}

/// ferry-everything as [`everything`], refusing requests without a valid token when
/// `require_auth`.
pub async fn everything_with(require_auth: bool) -> Served {
    let everything = build(Options {
        state_ttl: EVERYTHING_TTL,
        ..Options::default()
    })
    .expect("ferry-everything builds");
    let tokens = StaticTokens::new()
        .with("alice", "alice-token")
        .with("bob", "bob-token");
    serve(
        app(everything, HttpConfig::default(), tokens, require_auth)
            .expect("the application builds"),
    )
    .await
}

/// A weak server.
pub async fn weak(flaws: weak::Flaws) -> Served {
    serve(weak::router(flaws)).await
}

/// The audit of a weak server's `delete_file`, with both users, `rename_file` as the
/// other tool and the state's lifetime.
pub fn weak_config(url: &str) -> AuditConfig {
    AuditConfig::new(url, "delete_file")
        .unwrap()
        .args(serde_json::json!({"path": "/tmp/report.txt"}))
        .unwrap()
        .token(Token::new("token-a"))
        .token_b(Token::new("token-b"))
        .other_tool("rename_file", serde_json::json!({"from": "/tmp/a"}))
        .unwrap()
        .ttl(Duration::from_millis(weak::TTL_MS))
        .unwrap()
        .request_timeout(Duration::from_secs(10))
}

/// Asserts each check's verdict, showing the whole report when one differs.
pub fn expect(report: &Report, expected: &[(&str, Verdict)]) {
    for (id, want) in expected {
        let got = report.verdict(id);
        assert_eq!(
            got,
            Some(*want),
            "{id}: expected {want:?}\n{}",
            report.to_text()
        );
    }
}

/// Asserts every check not named in `except` passed or was skipped for one of `skips`.
pub fn others_pass(report: &Report, except: &[&str], skips: &[&str]) {
    for c in &report.checks {
        if except.contains(&c.id) {
            continue;
        }
        let ok =
            c.verdict == Verdict::Pass || (c.verdict == Verdict::Skip && skips.contains(&c.id));
        assert!(
            ok,
            "{} is {:?}: {}\n{}",
            c.id,
            c.verdict,
            c.detail,
            report.to_text()
        );
    }
}
