//! The `tracing` subscriber [`crate::Telemetry`] installs: one type that keeps the spans,
//! writes the log lines and records spans for OpenTelemetry, with no layers between.
//!
//! Each side has its own filter, and a span or event is kept when either wants it. A span
//! lives in a slot of a concurrent slab (its id is the slot's key), with its reference
//! count, its parent and, behind a lock of its own, what each side keeps of it: the
//! OpenTelemetry record, the formatted fields of a logged span. The spans a thread has
//! entered are a stack of that thread's, so entering and leaving one touches no shared
//! memory.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use sharded_slab::Slab;
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_core::span::Current;

use crate::logs::Logs;
use crate::spans::{SpanRecord, SpanRecorder};

/// Ferry's subscriber: logs and OpenTelemetry spans, each side optional.
pub(crate) struct Collector {
    /// Tells this subscriber's entries apart in the per-thread stacks (tests install
    /// several, one after another, on one thread).
    number: u64,
    logs: Option<Logs>,
    spans: Option<SpanRecorder>,
    slots: Slab<Slot>,
}

/// One live span.
struct Slot {
    meta: &'static Metadata<'static>,
    /// Handles to the span (its `Span`s and its children); it closes at zero.
    refs: AtomicUsize,
    /// The span it was made in (holding one of that span's references).
    parent: Option<Id>,
    kept: Mutex<Kept>,
}

/// What the two sides keep of a span.
struct Kept {
    /// For OpenTelemetry.
    record: Option<Box<SpanRecord>>,
    /// For log lines: the fields, formatted.
    log_fields: Option<String>,
}

/// The spans each thread is in, innermost last: (subscriber number, span).
type Stack = Vec<(u64, Id)>;

thread_local! {
    static STACK: RefCell<Stack> = const { RefCell::new(Vec::new()) };
    /// How many slot locks this thread holds.
    static HOLDING: Cell<u32> = const { Cell::new(0) };
}

/// A slot's lock, held.
struct Held<'a>(MutexGuard<'a, Kept>);

impl Slot {
    /// Locks what the sides keep of this span. A thread already holding a slot's lock
    /// is recording a value whose `Debug` or `Display` uses `tracing` itself (logs an
    /// event, makes or drops a span): it only tries, so it never waits on a lock it
    /// holds; what it then cannot lock goes unrecorded.
    fn lock(&self) -> Option<Held<'_>> {
        let nested = HOLDING.with(Cell::get) > 0;
        let guard = if nested {
            self.kept.try_lock().ok()?
        } else {
            self.kept.lock().ok()?
        };
        HOLDING.with(|h| h.set(h.get() + 1));
        Some(Held(guard))
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        HOLDING.with(|h| h.set(h.get().saturating_sub(1)));
    }
}

impl std::ops::Deref for Held<'_> {
    type Target = Kept;

    fn deref(&self) -> &Kept {
        &self.0
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Kept {
        &mut self.0
    }
}

impl Collector {
    /// A subscriber with these sides.
    pub(crate) fn new(logs: Option<Logs>, spans: Option<SpanRecorder>) -> Self {
        static NUMBER: AtomicU64 = AtomicU64::new(1);
        Collector {
            number: NUMBER.fetch_add(1, Ordering::Relaxed),
            logs,
            spans,
            slots: Slab::new(),
        }
    }

    fn wanted(&self, meta: &Metadata<'_>) -> (bool, bool) {
        (
            self.logs.as_ref().is_some_and(|l| l.enables(meta)),
            self.spans.as_ref().is_some_and(|s| s.enables(meta)),
        )
    }

    /// The innermost span this thread is in, by this subscriber.
    fn current(&self) -> Option<Id> {
        STACK.with(|s| {
            s.borrow()
                .iter()
                .rev()
                .find(|(n, _)| *n == self.number)
                .map(|(_, id)| id.clone())
        })
    }

    /// The span a new span or an event belongs to: the one given, the current one, or
    /// none.
    fn parent_of(&self, explicit: Option<&Id>, contextual: bool) -> Option<Id> {
        match explicit {
            Some(id) => Some(id.clone()),
            None if contextual => self.current(),
            None => None,
        }
    }

    fn key(id: &Id) -> usize {
        // Ids are keys plus one (an id is never zero); a key is below `usize::MAX`.
        usize::try_from(id.into_u64().saturating_sub(1)).unwrap_or(usize::MAX)
    }

    /// Runs `f` on the OpenTelemetry record of span `id`, if it has one.
    pub(crate) fn with_record<R>(
        &self,
        id: &Id,
        f: impl FnOnce(&mut SpanRecord) -> R,
    ) -> Option<R> {
        let slot = self.slots.get(Self::key(id))?;
        let mut kept = slot.lock()?;
        kept.record.as_deref_mut().map(f)
    }

    /// What a span made under `slot`'s span inherits: from the nearest recorded span up.
    fn inherited<'a>(
        &'a self,
        mut slot: sharded_slab::Entry<'a, Slot>,
    ) -> Option<crate::spans::Inherited> {
        loop {
            if let Some(kept) = slot.lock()
                && let Some(r) = &kept.record
            {
                return Some(r.inherited());
            }
            let parent = slot.parent.clone()?;
            slot = self.slots.get(Self::key(&parent))?;
        }
    }

    /// The logged spans from `innermost` outwards, as (name, formatted fields),
    /// outermost first.
    fn log_scope(&self, innermost: Option<Id>) -> Vec<(&'static str, String)> {
        let mut scope = Vec::new();
        let mut next = innermost;
        // A span tree deeper than this is cut: a log line stays bounded.
        while let Some(id) = next
            && scope.len() < 64
        {
            let Some(slot) = self.slots.get(Self::key(&id)) else {
                break;
            };
            if let Some(kept) = slot.lock()
                && let Some(fields) = &kept.log_fields
            {
                scope.push((slot.meta.name(), fields.clone()));
            }
            next = slot.parent.clone();
        }
        scope.reverse();
        scope
    }

    /// Drops one reference to span `id`; the last one closes it, and drops its
    /// reference to its parent in turn. Returns whether `id` closed.
    fn release(&self, id: &Id) -> bool {
        let mut next = Some(id.clone());
        let mut first = true;
        let mut closed = false;
        while let Some(id) = next.take() {
            let key = Self::key(&id);
            let Some(slot) = self.slots.get(key) else {
                break;
            };
            if slot.refs.fetch_sub(1, Ordering::AcqRel) != 1 {
                break;
            }
            let record = slot.lock().and_then(|mut k| k.record.take());
            next = slot.parent.clone();
            drop(slot);
            self.slots.remove(key);
            if let (Some(spans), Some(record)) = (&self.spans, record) {
                spans.close(record);
            }
            closed |= first;
            first = false;
        }
        closed
    }
}

impl Subscriber for Collector {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        match self.wanted(meta) {
            (false, false) => Interest::never(),
            _ => Interest::always(),
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        let (log, span) = self.wanted(meta);
        log || span
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        let log = self.logs.as_ref().and_then(Logs::max_level);
        let span = self.spans.as_ref().and_then(SpanRecorder::max_level);
        Some(
            log.unwrap_or(LevelFilter::OFF)
                .max(span.unwrap_or(LevelFilter::OFF)),
        )
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let meta = attrs.metadata();
        let (log, span) = self.wanted(meta);
        let parent = self.parent_of(attrs.parent(), attrs.is_contextual());
        // The child holds a reference to its parent, so the scope above it stays
        // readable while it lives.
        // One look at the parent's slot serves both.
        let mut inherited = None;
        let parent = parent.filter(|p| {
            let Some(slot) = self.slots.get(Self::key(p)) else {
                return false;
            };
            slot.refs.fetch_add(1, Ordering::Relaxed);
            if span && self.spans.is_some() {
                inherited = self.inherited(slot);
            }
            true
        });
        let record = match &self.spans {
            Some(spans) if span => Some(spans.open(attrs, inherited)),
            _ => None,
        };
        let log_fields = match &self.logs {
            Some(logs) if log => {
                let mut fields = String::new();
                logs.span_fields(&Record::new(attrs.values()), &mut fields);
                Some(fields)
            }
            _ => None,
        };
        let slot = Slot {
            meta,
            refs: AtomicUsize::new(1),
            parent,
            kept: Mutex::new(Kept { record, log_fields }),
        };
        match self.slots.insert(slot) {
            Some(key) => Id::from_u64(key as u64 + 1),
            // The slab is full (billions of live spans): the span goes unrecorded, under
            // an id no slot will ever have.
            None => Id::from_u64(u64::MAX),
        }
    }

    fn record(&self, id: &Id, values: &Record<'_>) {
        let Some(slot) = self.slots.get(Self::key(id)) else {
            return;
        };
        let Some(mut kept) = slot.lock() else {
            return;
        };
        let kept = &mut *kept;
        if let (Some(spans), Some(record)) = (&self.spans, kept.record.as_mut()) {
            spans.record(record, values);
        }
        if let (Some(logs), Some(fields)) = (&self.logs, kept.log_fields.as_mut()) {
            logs.span_fields(values, fields);
        }
    }

    fn record_follows_from(&self, id: &Id, follows: &Id) {
        let (Some(spans), Some(link)) = (&self.spans, self.with_record(follows, |r| r.link()))
        else {
            return;
        };
        self.with_record(id, |r| spans.follows(r, link));
    }

    fn event(&self, event: &Event<'_>) {
        let (log, span) = self.wanted(event.metadata());
        let parent = self.parent_of(event.parent(), event.is_contextual());
        if let Some(spans) = &self.spans
            && span
        {
            spans.measure_event(event);
            if let Some(id) = &parent {
                self.with_record(id, |r| spans.event(r, event));
            }
        }
        if let Some(logs) = &self.logs
            && log
        {
            logs.event(event, &self.log_scope(parent));
        }
    }

    fn enter(&self, id: &Id) {
        // Only a live span is entered (its handle holds a reference), so the stack needs
        // no reference of its own, nor a look at the slot.
        STACK.with(|s| s.borrow_mut().push((self.number, id.clone())));
    }

    fn exit(&self, id: &Id) {
        STACK.with(|s| {
            let mut stack = s.borrow_mut();
            if let Some(at) = stack
                .iter()
                .rposition(|(n, entered)| *n == self.number && entered == id)
            {
                stack.remove(at);
            }
        });
    }

    fn current_span(&self) -> Current {
        let current = self.current().and_then(|id| {
            let meta = self.slots.get(Self::key(&id))?.meta;
            Some((id, meta))
        });
        match current {
            Some((id, meta)) => Current::new(id, meta),
            None => Current::none(),
        }
    }

    fn clone_span(&self, id: &Id) -> Id {
        if let Some(slot) = self.slots.get(Self::key(id)) {
            slot.refs.fetch_add(1, Ordering::Relaxed);
        }
        id.clone()
    }

    fn try_close(&self, id: Id) -> bool {
        self.release(&id)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::export::Batcher;
    use crate::filter::TargetFilter;

    /// A dispatch of a collector without logs whose spans go to the returned batcher.
    fn exporting() -> (Arc<Batcher>, tracing::Dispatch) {
        let batcher = Arc::new(Batcher::new(64, 64));
        let collector = Collector::new(None, Some(SpanRecorder::exporting_to(&batcher)));
        (batcher, tracing::Dispatch::new(collector))
    }

    /// A span closes when its last handle goes, children first; a child keeps its
    /// parent open; every slot is freed.
    #[test]
    fn spans_close_when_their_last_handle_goes() {
        let (batcher, dispatch) = exporting();
        let mut ids = Vec::new();
        tracing::dispatcher::with_default(&dispatch, || {
            let outer = tracing::info_span!("outer");
            ids.extend(outer.id());
            let copy = outer.clone();
            let inner = outer.in_scope(|| tracing::info_span!("inner"));
            ids.extend(inner.id());
            drop(outer);
            assert!(batcher.take().is_empty(), "a copy is still held");
            drop(copy);
            assert!(batcher.take().is_empty(), "the child holds its parent");
            let current = inner.in_scope(tracing::Span::current);
            assert_eq!(current.id(), inner.id());
            drop(current);
            drop(inner);
            let closed = batcher.take();
            let names: Vec<&str> = closed.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(names, ["inner", "outer"]);
            assert_eq!(closed[0].parent_span_id, closed[1].span_id);
            assert_eq!(closed[0].trace_id, closed[1].trace_id);
        });
        let collector = dispatch.downcast_ref::<Collector>().expect("ours");
        assert_eq!(ids.len(), 2);
        for id in &ids {
            assert!(collector.slots.get(Collector::key(id)).is_none(), "freed");
        }
        STACK.with(|s| assert!(s.borrow().is_empty()));
    }

    /// A span's record, once the span closed and was queued, serves the thread's next
    /// span: no record is allocated per span.
    #[test]
    fn a_thread_reuses_the_record_of_the_span_it_closed() {
        let (batcher, dispatch) = exporting();
        let collector = dispatch.downcast_ref::<Collector>().expect("ours");
        let at = |span: &tracing::Span| {
            let id = span.id().expect("recorded");
            collector
                .with_record(&id, |r| std::ptr::from_ref::<SpanRecord>(r) as usize)
                .expect("a record")
        };
        tracing::dispatcher::with_default(&dispatch, || {
            let first = tracing::info_span!("first", n = 1);
            let address = at(&first);
            drop(first);
            let second = tracing::info_span!("second", n = 2);
            assert_eq!(at(&second), address);
        });
        let sent = batcher.take();
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[1].name, "second");
        assert_eq!(
            sent[1].attributes.len(),
            1,
            "emptied before it was used again"
        );
    }

    /// A value whose `Debug` uses `tracing` while it is recorded (logs an event in the
    /// span being recorded, makes and drops a span) neither deadlocks nor is lost
    /// beyond what it cannot reach.
    #[test]
    fn values_that_trace_while_recorded_do_not_deadlock() {
        struct Chatty;
        impl std::fmt::Debug for Chatty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                tracing::info!("formatting");
                drop(tracing::info_span!("inside"));
                f.write_str("chatty")
            }
        }
        let batcher = Arc::new(Batcher::new(64, 64));
        let lines = Arc::new(Mutex::new(0usize));
        let count = lines.clone();
        let logs = Logs::new(
            TargetFilter::new("info".parse().expect("directives")),
            false,
            false,
            Arc::new(move |_: &[u8]| *count.lock().expect("count") += 1),
        );
        let collector = Collector::new(Some(logs), Some(SpanRecorder::exporting_to(&batcher)));
        tracing::subscriber::with_default(collector, || {
            // `tracing` itself drops events made inside a dispatch of the thread's
            // default subscriber (the span made below, the last event), and a callsite
            // first reached there stays off. Reached here first, the event inside
            // `Debug` is on: recording a span's value (a direct call, not a dispatch)
            // then delivers it while the span's slot is locked.
            let _ = format!("{Chatty:?}");
            let span = tracing::info_span!("outer", made = ?Chatty, late = tracing::field::Empty);
            let _in = span.enter();
            span.record("late", tracing::field::debug(Chatty));
            tracing::info!(value = ?Chatty, "event");
        });
        let spans = batcher.take();
        let outer = spans.iter().find(|s| s.name == "outer").expect("outer");
        assert!(
            format!("{:?}", outer.attributes).contains("chatty"),
            "{outer:?}"
        );
        // The first line, the last event's, and at least one from inside `record`.
        let n = *lines.lock().expect("count");
        assert!(n >= 3, "{n} lines");
    }

    /// Spans entered on one thread are that thread's current spans only, and leaving
    /// them out of order leaves the stack right.
    #[test]
    fn the_current_span_is_per_thread() {
        let (_batcher, dispatch) = exporting();
        tracing::dispatcher::with_default(&dispatch, || {
            let a = tracing::info_span!("a");
            let b = tracing::info_span!("b");
            let ea = a.enter();
            let eb = b.enter();
            let elsewhere = {
                let dispatch = dispatch.clone();
                std::thread::spawn(move || {
                    tracing::dispatcher::with_default(&dispatch, || {
                        tracing::Span::current().is_none()
                    })
                })
                .join()
                .expect("thread")
            };
            assert!(elsewhere);
            drop(ea);
            assert_eq!(tracing::Span::current().id(), b.id());
            drop(eb);
            assert!(tracing::Span::current().is_none());
        });
    }
}
