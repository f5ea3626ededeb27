//! OpenTelemetry export on a real OTLP receiver: the `rotel` collector (PyPI `rotel`,
//! its `rotel-agent` binary) listens on loopback and prints every span and metric it
//! receives. A two-round `confirm_delete` from Ferry's client (exporting from this test
//! process) against a real `ferry-everything` process (exporting from the environment)
//! must arrive as one trace: client and server spans, the server spans parented on the
//! client's, the two rounds sharing a call id and linked, the convention's attributes,
//! and the duration histograms.
//!
//! Skipped when `rotel-agent` cannot be found, except under `FERRY_CI`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::{Client, FnHandler};
use ferry_otel::{ExportConfig, Protocol, Telemetry};
use ferry_testkit::otlp::{Receiver, Span, parse};
use ferry_testkit::services::{free_port, wait_for_port};
use serde_json::json;
use tracing::Instrument as _;

/// A child process killed when dropped, and the sandbox folder it worked in (removed
/// after it: a killed server cannot remove a temporary one of its own).
struct Running {
    child: Child,
    _sandbox: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `ferry-everything --http` on a free port with `args` and `env` (logging at
/// `warn`, nothing inherited about export) and waits until it listens; its port.
fn start_server(args: &[&str], env: &[(&str, &str)]) -> (Running, u16) {
    let port = free_port();
    let sandbox = tempfile::tempdir().expect("a sandbox folder");
    let mut command = Command::new(env!("CARGO_BIN_EXE_ferry-everything"));
    command
        .args(["--http", &format!("127.0.0.1:{port}")])
        .arg("--sandbox")
        .arg(sandbox.path())
        .args(args)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let server = Running {
        child: command.spawn().expect("start ferry-everything"),
        _sandbox: sandbox,
    };
    assert!(
        wait_for_port(port, Duration::from_secs(20)),
        "ferry-everything did not start on {port}"
    );
    (server, port)
}

fn confirming() -> FnHandler {
    FnHandler::new().on_form(|req| {
        let mut content = BTreeMap::new();
        for field in req.fields() {
            if field.name == "confirm" {
                content.insert("confirm".to_owned(), ElicitValue::Bool(true));
            }
        }
        std::future::ready(ElicitResult::accept(content))
    })
}

const SERVER: &str = "ferry-everything-under-test";
const CLIENT: &str = "ferry-otel-test-client";
const NAME: &str = "tools/call confirm_delete";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_round_call_arrives_as_one_linked_trace() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let endpoint = receiver.endpoint.clone();

    let (mut server, port) = start_server(
        &["--drain-grace", "0"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_SERVICE_NAME", SERVER),
            ("OTEL_METRIC_EXPORT_INTERVAL", "500"),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    );

    let telemetry = Telemetry::new(CLIENT)
        .export(ExportConfig::to_endpoint(&endpoint, Protocol::HttpProtobuf))
        .log_filter("warn")
        .init()
        .expect("telemetry");
    assert!(telemetry.exporting());
    let client = Client::builder()
        .http(format!("http://127.0.0.1:{port}/mcp"))
        .input_handler(confirming())
        // Plain MRTR rounds, no task.
        .tasks(false)
        .build()
        .await
        .expect("connects");
    let root = tracing::info_span!("test.confirm_delete");
    let result = client
        .call_tool("confirm_delete", json!({"path": "old-notes.txt"}))
        .instrument(root.clone())
        .await
        .expect("the call completes");
    assert!(result.is_error != Some(true), "{result:?}");
    // A tool error (isError) and a JSON-RPC error, in the same trace.
    let failed = client
        .call_tool("test_error_handling", json!({}))
        .instrument(root.clone())
        .await
        .expect("a tool error is a result");
    assert_eq!(failed.is_error, Some(true));
    let unknown = client
        .call_tool("no_such_tool", json!({}))
        .instrument(root.clone())
        .await
        .expect_err("an unknown tool is a JSON-RPC error");
    let unknown_code = unknown.rpc().expect("a JSON-RPC error").code.0.to_string();
    let trace_id = ferry_client::ferry_protocol::trace::context_of(&root)
        .and_then(|cx| cx.trace_id().map(str::to_owned))
        .expect("the call has a trace id");
    drop(root);
    let _ = client.close().await;
    // Flushes the client's spans and metrics.
    drop(telemetry);
    // SIGTERM: the server drains and flushes its exporters on the way out.
    let _ = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && server.child.try_wait().ok().flatten().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }

    // Everything expected, or the deadline.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (spans, metrics) = loop {
        let (spans, metrics) = parse(&receiver.text());
        let servers = spans
            .iter()
            .filter(|s| s.service == SERVER && s.trace_id == trace_id && s.name == NAME)
            .count();
        let done = servers >= 2
            && metrics.contains(&(SERVER.to_owned(), "mcp.server.operation.duration".into()))
            && metrics.contains(&(CLIENT.to_owned(), "mcp.client.operation.duration".into()));
        if done || Instant::now() > deadline {
            break (spans, metrics);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let dump = || receiver.text();

    let in_trace: Vec<&Span> = spans.iter().filter(|s| s.trace_id == trace_id).collect();
    let client_spans: Vec<&Span> = in_trace
        .iter()
        .copied()
        .filter(|s| s.service == CLIENT && s.name == NAME)
        .collect();
    let mut server_spans: Vec<&Span> = in_trace
        .iter()
        .copied()
        .filter(|s| s.service == SERVER && s.name == NAME)
        .collect();
    assert_eq!(
        client_spans.len(),
        2,
        "two client spans (first call and retry) in trace {trace_id}:\n{}",
        dump()
    );
    assert_eq!(
        server_spans.len(),
        2,
        "two server spans in trace {trace_id}:\n{}",
        dump()
    );
    for s in &client_spans {
        assert_eq!(s.kind, "SPAN_KIND_CLIENT", "{s:?}");
        assert_eq!(
            s.attributes.get("mcp.method.name").map(String::as_str),
            Some("tools/call")
        );
    }
    let client_ids: BTreeSet<&str> = client_spans.iter().map(|s| s.id.as_str()).collect();
    for s in &server_spans {
        assert_eq!(s.kind, "SPAN_KIND_SERVER", "{s:?}");
        assert!(
            client_ids.contains(s.parent_id.as_str()),
            "the server span's parent is a client span: {s:?}"
        );
        let a = |k: &str| s.attributes.get(k).map(String::as_str);
        assert_eq!(a("mcp.method.name"), Some("tools/call"), "{s:?}");
        assert_eq!(a("gen_ai.tool.name"), Some("confirm_delete"), "{s:?}");
        assert_eq!(a("gen_ai.operation.name"), Some("execute_tool"), "{s:?}");
        assert_eq!(a("mcp.protocol.version"), Some("2026-07-28"), "{s:?}");
        assert_eq!(a("network.transport"), Some("tcp"), "{s:?}");
        assert!(a("jsonrpc.request.id").is_some(), "{s:?}");
        assert!(a("error.type").is_none(), "{s:?}");
        assert_eq!(s.status, "STATUS_CODE_UNSET", "{s:?}");
        assert!(
            !s.start.is_empty() && s.start.len() == s.end.len() && s.start <= s.end,
            "a span ends after it starts: {s:?}"
        );
    }
    let server_span = |name: &str| {
        in_trace
            .iter()
            .find(|s| s.service == SERVER && s.name == name)
            .unwrap_or_else(|| panic!("a server span {name}:\n{}", dump()))
    };
    let tool_error = server_span("tools/call test_error_handling");
    assert_eq!(
        tool_error.attributes.get("error.type").map(String::as_str),
        Some("tool_error")
    );
    assert_eq!(tool_error.status, "STATUS_CODE_ERROR", "{tool_error:?}");
    let rpc_error = server_span("tools/call no_such_tool");
    assert_eq!(
        rpc_error.attributes.get("error.type"),
        Some(&unknown_code),
        "{rpc_error:?}"
    );
    assert_eq!(rpc_error.status, "STATUS_CODE_ERROR", "{rpc_error:?}");
    server_spans.sort_by_key(|s| s.attributes.get("ferry.mcp.call.round").cloned());
    let (first, second) = (server_spans[0], server_spans[1]);
    assert_eq!(
        first
            .attributes
            .get("ferry.mcp.call.round")
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        second
            .attributes
            .get("ferry.mcp.call.round")
            .map(String::as_str),
        Some("2")
    );
    let call_id = first.attributes.get("ferry.mcp.call.id");
    assert!(call_id.is_some_and(|c| c.len() >= 16), "{first:?}");
    assert_eq!(second.attributes.get("ferry.mcp.call.id"), call_id);
    assert!(
        second.links.contains(&first.id),
        "round two links to round one ({}): {second:?}\n{}",
        first.id,
        dump()
    );
    for (service, metric) in [
        (SERVER, "mcp.server.operation.duration"),
        (SERVER, "ferry.mcp.server.requests"),
        (SERVER, "ferry.mcp.server.call.rounds"),
        (CLIENT, "mcp.client.operation.duration"),
    ] {
        assert!(
            metrics.contains(&(service.to_owned(), metric.to_owned())),
            "{service} sent {metric}: {metrics:?}"
        );
    }
}

/// OTLP over gRPC (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`): a call's server span reaches the
/// receiver's gRPC endpoint with its attributes and the service's name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_are_exported_over_grpc_too() {
    const GRPC_SERVER: &str = "ferry-everything-over-grpc";
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let (mut server, port) = start_server(
        &["--drain-grace", "0"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.grpc_endpoint),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_SERVICE_NAME", GRPC_SERVER),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    );
    let client = Client::builder()
        .http(format!("http://127.0.0.1:{port}/mcp"))
        .build()
        .await
        .expect("connects");
    client
        .call_tool("echo", json!({"text": "over grpc"}))
        .await
        .expect("echo");
    let _ = client.close().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    let echo = loop {
        let (spans, _) = parse(&receiver.text());
        if let Some(s) = spans
            .into_iter()
            .find(|s| s.service == GRPC_SERVER && s.name == "tools/call echo")
        {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "no echo span over gRPC:\n{}",
            receiver.text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(echo.kind, "SPAN_KIND_SERVER", "{echo:?}");
    assert_eq!(
        echo.attributes.get("gen_ai.tool.name").map(String::as_str),
        Some("echo")
    );
    let _ = server.child.kill();
}

/// `--metrics` serves Prometheus text at `GET /metrics` (no OTLP export needed): after an
/// echo, a refused `requestState` and a listen stream, the counts are there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_text_at_get_metrics() {
    let (_server, port) = start_server(&["--metrics"], &[]);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let http = reqwest::Client::new();
    let post = |name: &str, params: serde_json::Value| {
        let mut params = params;
        params["name"] = json!(name);
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        http.post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", name)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
            .send()
    };
    let echo = post("echo", json!({"arguments": {"text": "hi"}}))
        .await
        .expect("echo");
    assert_eq!(echo.status(), 200);
    let forged = post(
        "confirm_delete",
        json!({"arguments": {"path": "/tmp/x"}, "requestState": "not-a-sealed-state",
            "inputResponses": {}}),
    )
    .await
    .expect("a forged state is answered");
    let body = forged.text().await.unwrap_or_default();
    assert!(body.contains("requestState"), "{body}");

    let text = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("text");
    for needle in [
        "mcp_server_operation_duration",
        "mcp_method_name=\"tools/call\"",
        "ferry_mcp_server_requests",
        "ferry_outcome=\"ok\"",
        "ferry_mcp_server_request_state_refusals",
    ] {
        assert!(text.contains(needle), "{needle} in:\n{text}");
    }
}
