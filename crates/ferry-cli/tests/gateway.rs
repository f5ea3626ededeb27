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

    // A tool the upstream runs as a task (ferry declares the Tasks extension): the gateway
    // relays it, and ferry follows the task and answers its question through it.
    let out = ferry()
        .args([
            "--url",
            &url,
            "call",
            "confirm_delete",
            "path=notes.txt",
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
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Deleted notes.txt ("), "{text}");

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
        if lines >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // One round for echo (complete), one for confirm_delete, which became a task; the
    // task's own requests (tasks/get, tasks/update) are not rounds of a call.
    let log = std::fs::read_to_string(&usage).unwrap();
    assert_eq!(lines, 2, "{log}");
    assert_eq!(log.matches(r#""outcome":"complete""#).count(), 1, "{log}");
    assert_eq!(log.matches(r#""outcome":"task""#).count(), 1, "{log}");
    drop(gateway);
}

#[test]
fn ferry_gateway_without_upstreams_is_a_usage_error() {
    let out = ferry().args(["gateway"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no upstream"), "{stderr}");
}

/// With the standard `OTEL_*` variables the gateway exports its spans, and a call through
/// it is one trace: `ferry call --trace`'s client span, the gateway's server span parented
/// on it (the trace context crossed in `_meta`), and the gateway's own client span for the
/// upstream round, on a real OTLP receiver (rotel).
#[test]
fn a_call_through_the_gateway_is_one_trace() {
    let Some(receiver) = ferry_testkit::otlp::Receiver::start() else {
        return;
    };
    const CLI: &str = "ferry-cli-under-test";
    const GATEWAY: &str = "ferry-gateway-under-test";
    let otel = |cmd: &mut std::process::Command, service: &str| {
        cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint)
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
            .env("OTEL_SERVICE_NAME", service)
            .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    };
    let everything = Everything::start();
    let mut cmd = ferry();
    cmd.args([
        "gateway",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &everything.url,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    otel(&mut cmd, GATEWAY);
    let mut child = cmd.spawn().expect("start ferry gateway");
    let stderr = child.stderr.take().unwrap();
    let gateway = Running(child);
    let mut first = String::new();
    BufReader::new(stderr).read_line(&mut first).unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://") && w.ends_with("/mcp"))
        .unwrap_or_else(|| panic!("the gateway names its endpoint: {first}"))
        .to_owned();

    let mut cmd = ferry();
    cmd.args(["--url", &url, "call", "--trace", "echo", "text=traced"]);
    otel(&mut cmd, CLI);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let trace_id = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("trace id: "))
        .unwrap_or_else(|| panic!("--trace prints the trace id: {stderr}"))
        .to_owned();
    // SIGTERM: the gateway drains and flushes its exporter on the way out.
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &gateway.0.id().to_string()])
        .status();

    let name = "tools/call echo";
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let spans = loop {
        let (spans, _) = ferry_testkit::otlp::parse(&receiver.text());
        let spans: Vec<_> = spans
            .into_iter()
            .filter(|s| s.trace_id == trace_id && s.name == name)
            .collect();
        if spans.iter().filter(|s| s.service == GATEWAY).count() >= 2
            || std::time::Instant::now() > deadline
        {
            break spans;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let find = |service: &str, kind: &str| {
        spans
            .iter()
            .find(|s| s.service == service && s.kind == kind)
            .unwrap_or_else(|| panic!("a {kind} span of {service} in trace {trace_id}: {spans:#?}"))
    };
    let client = find(CLI, "SPAN_KIND_CLIENT");
    let served = find(GATEWAY, "SPAN_KIND_SERVER");
    let upstream = find(GATEWAY, "SPAN_KIND_CLIENT");
    assert_eq!(
        served.parent_id, client.id,
        "the gateway parents on the client"
    );
    assert_eq!(
        served
            .attributes
            .get("gen_ai.tool.name")
            .map(String::as_str),
        Some("echo")
    );
    assert_eq!(upstream.trace_id, client.trace_id);
    assert_ne!(upstream.id, served.id);
    drop(gateway);
}
