//! The hooks that give Ferry's `tracing` spans their OpenTelemetry parents, links and
//! context (W3C trace context, as carried in `_meta`).

use std::collections::HashMap;

use ferry_protocol::trace::{TraceContext, TraceHooks};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Installs the hooks (once per process; later calls change nothing).
pub(crate) fn install() {
    ferry_protocol::trace::install_hooks(TraceHooks {
        set_parent,
        add_link,
        context_of,
    });
}

fn extract(cx: &TraceContext) -> opentelemetry::Context {
    let mut carrier = HashMap::with_capacity(2);
    carrier.insert("traceparent".to_owned(), cx.traceparent.clone());
    if let Some(state) = &cx.tracestate {
        carrier.insert("tracestate".to_owned(), state.clone());
    }
    TraceContextPropagator::new().extract(&carrier)
}

fn set_parent(span: &tracing::Span, cx: &TraceContext) {
    let parent = extract(cx);
    if parent.span().span_context().is_valid() {
        // Fails only once the span has started: then it keeps its local parent.
        let _ = span.set_parent(parent);
    }
}

fn add_link(span: &tracing::Span, traceparent: &str) {
    let cx = extract(&TraceContext {
        traceparent: traceparent.to_owned(),
        tracestate: None,
    });
    let linked = cx.span().span_context().clone();
    if linked.is_valid() {
        span.add_link(linked);
    }
}

fn context_of(span: &tracing::Span) -> Option<TraceContext> {
    let cx = span.context();
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    Some(TraceContext {
        traceparent: carrier.remove("traceparent")?,
        tracestate: carrier.remove("tracestate").filter(|s| !s.is_empty()),
    })
}
