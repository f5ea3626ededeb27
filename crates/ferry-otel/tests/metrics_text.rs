//! The metrics layer reads Ferry's request spans and events: spans made with the targets
//! and fields ferry-server uses, measured and rendered as Prometheus text, with OTLP
//! export off.

use ferry_otel::{ExportConfig, Protocol, SERVER_REQUEST_TARGET, STATE_TARGET, Telemetry};

#[test]
fn request_spans_become_metrics() {
    let off = ExportConfig {
        enabled: false,
        protocol: Protocol::HttpProtobuf,
        service_name: None,
        endpoint: None,
    };
    let telemetry = Telemetry::new("metrics-test")
        .export(off)
        .prometheus(true)
        .log_filter("off")
        .init()
        .expect("telemetry");
    assert!(!telemetry.exporting());
    let text = telemetry.metrics_text().expect("prometheus on");

    for (round, input_required) in [(1u64, true), (2, false)] {
        let span = tracing::info_span!(
            target: SERVER_REQUEST_TARGET,
            "mcp.server.request",
            mcp.method.name = "tools/call",
            gen_ai.tool.name = "confirm_delete",
            error.type = tracing::field::Empty,
            ferry.mcp.call.round = round,
            ferry.mcp.input_required = tracing::field::Empty,
        );
        if input_required {
            span.record("ferry.mcp.input_required", true);
        }
        drop(span);
    }
    let failed = tracing::info_span!(
        target: SERVER_REQUEST_TARGET,
        "mcp.server.request",
        mcp.method.name = "tools/call",
        error.type = tracing::field::Empty,
    );
    failed.record("error.type", "-32602");
    drop(failed);
    tracing::debug!(target: STATE_TARGET, reason = "expired", "requestState refused");
    // Requests that repeat an attribute set are measured through the instruments bound
    // to it: each one counts.
    for _ in 0..3 {
        let _echo = tracing::info_span!(
            target: SERVER_REQUEST_TARGET,
            "mcp.server.request",
            mcp.method.name = "tools/call",
            gen_ai.tool.name = "echo",
            error.type = tracing::field::Empty,
        );
    }

    let out = text.render();
    for needle in [
        "mcp_server_operation_duration_seconds_count{",
        "gen_ai_tool_name=\"confirm_delete\"",
        "error_type=\"-32602\"",
        "ferry_outcome=\"input_required\"",
        "ferry_outcome=\"error\"",
        "ferry_mcp_server_call_rounds_count{",
        "ferry_refusal_reason=\"expired\"",
    ] {
        assert!(out.contains(needle), "{needle} in:\n{out}");
    }
    let echoes = out
        .lines()
        .find(|l| {
            l.starts_with("mcp_server_operation_duration_seconds_count{")
                && l.contains("gen_ai_tool_name=\"echo\"")
        })
        .expect("echo durations");
    assert!(echoes.trim_end().ends_with(" 3"), "{echoes}");
    let ok = out
        .lines()
        .find(|l| l.starts_with("ferry_mcp_server_requests") && l.contains("ferry_outcome=\"ok\""))
        .expect("ok requests");
    // The three echoes and the second round of `confirm_delete`.
    assert!(ok.trim_end().ends_with(" 4"), "{ok}");
    // One completed call, of two rounds.
    let rounds = out
        .lines()
        .find(|l| l.starts_with("ferry_mcp_server_call_rounds_sum"))
        .expect("rounds sum");
    assert!(rounds.trim_end().ends_with(" 2"), "{rounds}");

    // Past the cap of bound attribute sets, requests are measured with the same
    // attributes, each resolved per request.
    for i in 0..260 {
        let _call = tracing::info_span!(
            target: SERVER_REQUEST_TARGET,
            "mcp.server.request",
            mcp.method.name = "tools/call",
            gen_ai.tool.name = format!("tool{i}").as_str(),
            error.type = tracing::field::Empty,
        );
    }
    let out = text.render();
    let last = out
        .lines()
        .find(|l| {
            l.starts_with("mcp_server_operation_duration_seconds_count{")
                && l.contains("gen_ai_tool_name=\"tool259\"")
        })
        .expect("a duration past the cap");
    assert!(last.trim_end().ends_with(" 1"), "{last}");
    let ok = out
        .lines()
        .find(|l| l.starts_with("ferry_mcp_server_requests") && l.contains("ferry_outcome=\"ok\""))
        .expect("ok requests");
    assert!(ok.trim_end().ends_with(" 264"), "{ok}");
}
