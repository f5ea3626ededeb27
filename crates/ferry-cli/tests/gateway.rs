//! `ferry gateway` as a program: a configuration file with an upstream whose credential
//! comes from an environment variable, `ferry` calling a tool through it, the usage log,
//! and a clear usage error without upstreams.

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use support::{Everything, ferry};

/// Kills the gateway when the test ends, passed or not.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn ferry_calls_a_tool_through_ferry_gateway() {
    let everything = Everything::start();
    let dir = tempfile::tempdir().unwrap();
    let usage = dir.path().join("usage.jsonl");
    let config = dir.path().join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nusage_log = {:?}\n[[upstream]]\nname = \"ev\"\nurl = {:?}\nbearer_env = \"FERRY_GATEWAY_EV_TOKEN\"\ndeny = [\"test_error_handling\"]\n",
            usage.display().to_string(),
            everything.url
        ),
    )
    .unwrap();
    let mut child = ferry()
        .args(["gateway", "--config"])
        .arg(&config)
        .env("FERRY_GATEWAY_EV_TOKEN", "ev-secret")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ferry gateway");
    let stderr = child.stderr.take().unwrap();
    let gateway = Running(child);
    let mut first = String::new();
    BufReader::new(stderr).read_line(&mut first).unwrap();
    assert!(!first.contains("ev-secret"), "{first}");
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://") && w.ends_with("/mcp"))
        .unwrap_or_else(|| panic!("the gateway names its endpoint: {first}"))
        .to_owned();

    let out = ferry()
        .args(["--url", &url, "call", "echo", "text=through the gateway"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("through the gateway"), "{stdout}");

    // A tool the upstream would run as a task (ferry declares the Tasks extension): the
    // gateway does not relay tasks/*, so the upstream answers through MRTR in full.
    let out = ferry()
        .args([
            "--url",
            &url,
            "call",
            "confirm_delete",
            "path=/tmp/x",
            "--answers",
            r#"{"confirm": true}"#,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Deleted /tmp/x\n");

    let out = ferry().args(["--url", &url, "tools"]).output().unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("echo") && !listed.contains("test_error_handling"),
        "{listed}"
    );

    let mut lines = 0;
    for _ in 0..50 {
        lines = std::fs::read_to_string(&usage)
            .unwrap_or_default()
            .lines()
            .count();
        if lines >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // One round for echo, two for confirm_delete (input_required, then complete).
    let log = std::fs::read_to_string(&usage).unwrap();
    assert_eq!(lines, 3, "{log}");
    assert_eq!(log.matches(r#""outcome":"complete""#).count(), 2, "{log}");
    assert_eq!(
        log.matches(r#""outcome":"input_required""#).count(),
        1,
        "{log}"
    );
    assert!(!log.contains(r#""outcome":"task""#), "{log}");
    drop(gateway);
}

#[test]
fn ferry_gateway_without_upstreams_is_a_usage_error() {
    let out = ferry().args(["gateway"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no upstream"), "{stderr}");
}
