//! W3C trace context in `_meta` (basic/index.mdx, "`_meta`": the keys `traceparent`,
//! `tracestate` and `baggage` are reserved for it), and the hooks that tie it to spans.
//!
//! Ferry's libraries emit spans through `tracing` only. Parenting a span on a received
//! `traceparent`, linking it to another span, or reading a span's own context needs an
//! OpenTelemetry layer; the crate that sets one up (ferry-otel) installs [`TraceHooks`]
//! once, and without them every function here does nothing.

use std::sync::OnceLock;

use crate::meta::Meta;

/// `_meta` key of the W3C `traceparent`.
pub const TRACEPARENT: &str = "traceparent";
/// `_meta` key of the W3C `tracestate`.
pub const TRACESTATE: &str = "tracestate";
/// `_meta` key of the W3C `baggage`.
pub const BAGGAGE: &str = "baggage";

/// A span's context in W3C form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// The `traceparent` value (`00-<trace id>-<span id>-<flags>`).
    pub traceparent: String,
    /// The `tracestate` value, if any.
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// The trace id (32 hex digits) of a well-formed `traceparent`.
    pub fn trace_id(&self) -> Option<&str> {
        let mut parts = self.traceparent.split('-');
        let _version = parts.next()?;
        parts.next().filter(|t| t.len() == 32)
    }
}

/// What an OpenTelemetry integration does for Ferry's spans.
#[derive(Clone, Copy)]
pub struct TraceHooks {
    /// Parents `span` on the remote context in `traceparent` (and `tracestate`).
    pub set_parent: fn(&tracing::Span, &TraceContext),
    /// Adds a link from `span` to the span named by `traceparent`.
    pub add_link: fn(&tracing::Span, &str),
    /// The context of `span`, to send to a peer or carry to a later round.
    pub context_of: fn(&tracing::Span) -> Option<TraceContext>,
}

impl std::fmt::Debug for TraceHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceHooks")
    }
}

static HOOKS: OnceLock<TraceHooks> = OnceLock::new();

/// Installs the hooks for the life of the process; `false` if some were installed
/// already (the first stay).
pub fn install_hooks(hooks: TraceHooks) -> bool {
    HOOKS.set(hooks).is_ok()
}

/// The installed hooks, if any.
pub fn hooks() -> Option<&'static TraceHooks> {
    HOOKS.get()
}

/// Reads the trace context from a request's `_meta` (non-string values are ignored).
pub fn from_meta(meta: &Meta) -> Option<TraceContext> {
    let traceparent = meta.get(TRACEPARENT)?.as_str()?;
    Some(TraceContext {
        traceparent: traceparent.to_owned(),
        tracestate: meta
            .get(TRACESTATE)
            .and_then(|v| v.as_str())
            .map(str::to_owned),
    })
}

/// Writes `cx` into `meta`, replacing what was there.
pub fn to_meta(cx: &TraceContext, meta: &mut Meta) {
    meta.insert(TRACEPARENT.into(), cx.traceparent.clone().into());
    match &cx.tracestate {
        Some(s) if !s.is_empty() => {
            meta.insert(TRACESTATE.into(), s.clone().into());
        }
        _ => {
            meta.remove(TRACESTATE);
        }
    }
}

/// Parents `span` on `cx`, when hooks are installed and the span is recorded.
pub fn set_parent(span: &tracing::Span, cx: &TraceContext) {
    if let Some(h) = hooks()
        && !span.is_disabled()
    {
        (h.set_parent)(span, cx);
    }
}

/// Links `span` to the span named by `traceparent`, when hooks are installed.
pub fn add_link(span: &tracing::Span, traceparent: &str) {
    if let Some(h) = hooks()
        && !span.is_disabled()
    {
        (h.add_link)(span, traceparent);
    }
}

/// The context of `span`, when hooks are installed and the span is recorded.
pub fn context_of(span: &tracing::Span) -> Option<TraceContext> {
    let h = hooks()?;
    if span.is_disabled() {
        return None;
    }
    (h.context_of)(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trip() {
        let cx = TraceContext {
            traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
            tracestate: Some("congo=t61rcWkgMzE".into()),
        };
        let mut meta = Meta::new();
        to_meta(&cx, &mut meta);
        assert_eq!(from_meta(&meta), Some(cx.clone()));
        assert_eq!(cx.trace_id(), Some("0af7651916cd43dd8448eb211c80319c"));
        meta.insert(TRACEPARENT.into(), 7.into());
        assert_eq!(from_meta(&meta), None);
    }
}
