//! Log lines on stderr: one per event the log filter lets through, as text or as a JSON
//! object, with the fields of the spans around it that the filter lets through too.
//!
//! The text layout is the familiar one of `tracing` programs:
//!
//! ```text
//! 2026-12-07T04:29:49.123456Z  INFO outer{n=1}:inner: my_app::db: connected pool=4
//! ```
//!
//! and the JSON one carries the same parts under `timestamp`, `level`, `fields`, `target`,
//! `span` (the innermost span) and `spans` (outermost first).

use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata};

use crate::filter::TargetFilter;

/// Lines longer than this are cut (with `…`): a runaway field cannot make one write
/// unbounded.
const MAX_LINE: usize = 64 * 1024;

/// Where finished lines go: each call gets one whole line, newline included.
pub(crate) type LineSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// The log side of the subscriber: which events and spans are logged, and how.
pub(crate) struct Logs {
    filter: TargetFilter,
    json: bool,
    ansi: bool,
    sink: LineSink,
}

impl Logs {
    /// Logs what `filter` enables to stderr, as JSON lines or as text (coloured when
    /// `ansi`).
    pub(crate) fn stderr(filter: TargetFilter, json: bool, ansi: bool) -> Self {
        Logs::new(
            filter,
            json,
            ansi,
            Arc::new(|line: &[u8]| {
                let _ = std::io::stderr().lock().write_all(line);
            }),
        )
    }

    /// Logs what `filter` enables to `sink`.
    pub(crate) fn new(filter: TargetFilter, json: bool, ansi: bool, sink: LineSink) -> Self {
        Logs {
            filter,
            json,
            ansi,
            sink,
        }
    }

    /// Whether events or spans of `meta` are logged.
    pub(crate) fn enables(&self, meta: &Metadata<'_>) -> bool {
        self.filter.enables(meta)
    }

    /// The most verbose level anything is logged at.
    pub(crate) fn max_level(&self) -> Option<tracing::level_filters::LevelFilter> {
        self.filter.max_level()
    }

    /// A logged span's fields, formatted once when it is made (and added to when it
    /// records more), in this log's syntax.
    pub(crate) fn span_fields(&self, values: &tracing::span::Record<'_>, out: &mut String) {
        let written = !out.is_empty();
        values.record(&mut Fields::new(out, self.json, self.ansi, written));
    }

    /// Writes `event` as one line; `scope` gives the names and formatted fields of the
    /// logged spans around it, outermost first.
    pub(crate) fn event(&self, event: &Event<'_>, scope: &[(&'static str, String)]) {
        thread_local! {
            static LINE: RefCell<String> = const { RefCell::new(String::new()) };
        }
        LINE.with(|cell| {
            // A log line written while formatting one (a field's `Debug` that logs) gets
            // a buffer of its own.
            let mut fresh = String::new();
            let mut held = cell.try_borrow_mut();
            let line = match held.as_deref_mut() {
                Ok(buf) => buf,
                Err(_) => &mut fresh,
            };
            line.clear();
            let meta = normalized(event);
            if self.json {
                self.json_line(line, event, &meta, scope);
            } else {
                self.text_line(line, event, &meta, scope);
            }
            if line.len() > MAX_LINE {
                let mut end = MAX_LINE;
                while !line.is_char_boundary(end) {
                    end -= 1;
                }
                line.truncate(end);
                line.push('…');
            }
            line.push('\n');
            (self.sink)(line.as_bytes());
            if line.capacity() > 4 * 1024 {
                *line = String::new();
            }
        });
    }

    fn text_line(
        &self,
        line: &mut String,
        event: &Event<'_>,
        meta: &EventMeta<'_>,
        scope: &[(&'static str, String)],
    ) {
        let (dim, bold, reset) = if self.ansi {
            ("\x1b[2m", "\x1b[1m", "\x1b[0m")
        } else {
            ("", "", "")
        };
        line.push_str(dim);
        push_timestamp(line, SystemTime::now());
        line.push_str(reset);
        line.push(' ');
        if self.ansi {
            line.push_str(level_color(meta.level));
        }
        let _ = write!(line, "{:>5}", meta.level.as_str());
        line.push_str(reset);
        line.push(' ');
        for (name, fields) in scope {
            line.push_str(bold);
            line.push_str(name);
            line.push_str(reset);
            if !fields.is_empty() {
                line.push_str(bold);
                line.push('{');
                line.push_str(reset);
                line.push_str(fields);
                line.push_str(bold);
                line.push('}');
                line.push_str(reset);
            }
            line.push_str(dim);
            line.push(':');
            line.push_str(reset);
        }
        if !scope.is_empty() {
            line.push(' ');
        }
        line.push_str(dim);
        line.push_str(&meta.target);
        line.push(':');
        line.push_str(reset);
        line.push(' ');
        event.record(&mut Fields::new(line, false, self.ansi, false));
    }

    fn json_line(
        &self,
        line: &mut String,
        event: &Event<'_>,
        meta: &EventMeta<'_>,
        scope: &[(&'static str, String)],
    ) {
        line.push_str("{\"timestamp\":\"");
        push_timestamp(line, SystemTime::now());
        line.push_str("\",\"level\":\"");
        line.push_str(meta.level.as_str());
        line.push_str("\",\"fields\":{");
        event.record(&mut Fields::new(line, true, false, false));
        line.push_str("},\"target\":");
        push_json_str(line, &meta.target);
        if let Some((name, fields)) = scope.last() {
            line.push_str(",\"span\":");
            push_json_span(line, name, fields);
            line.push_str(",\"spans\":[");
            for (i, (name, fields)) in scope.iter().enumerate() {
                if i > 0 {
                    line.push(',');
                }
                push_json_span(line, name, fields);
            }
            line.push(']');
        }
        line.push('}');
    }
}

/// The target and level a line shows: an event forwarded from the `log` crate shows the
/// `log` record's target, not the forwarder's.
struct EventMeta<'a> {
    target: std::borrow::Cow<'a, str>,
    level: &'a Level,
}

fn normalized<'a>(event: &'a Event<'a>) -> EventMeta<'a> {
    let meta = event.metadata();
    let mut target = None;
    if meta.fields().field("log.target").is_some() {
        struct LogTarget<'b>(&'b mut Option<String>);
        impl Visit for LogTarget<'_> {
            fn record_str(&mut self, field: &Field, value: &str) {
                if field.name() == "log.target" {
                    *self.0 = Some(value.to_owned());
                }
            }
            fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
        }
        event.record(&mut LogTarget(&mut target));
    }
    EventMeta {
        target: target.map_or(
            std::borrow::Cow::Borrowed(meta.target()),
            std::borrow::Cow::Owned,
        ),
        level: meta.level(),
    }
}

fn level_color(level: &Level) -> &'static str {
    match *level {
        Level::TRACE => "\x1b[35m",
        Level::DEBUG => "\x1b[34m",
        Level::INFO => "\x1b[32m",
        Level::WARN => "\x1b[33m",
        Level::ERROR => "\x1b[31m",
    }
}

/// A span in a JSON line: its name and its fields (already a JSON object's members).
fn push_json_span(line: &mut String, name: &str, fields: &str) {
    line.push('{');
    line.push_str(fields);
    if !fields.is_empty() {
        line.push(',');
    }
    line.push_str("\"name\":");
    push_json_str(line, name);
    line.push('}');
}

/// Appends `s` as a JSON string.
pub(crate) fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push_str(escape);
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends `time` in RFC 3339, UTC, to the microsecond: `2026-12-07T04:29:49.123456Z`.
pub(crate) fn push_timestamp(out: &mut String, time: SystemTime) {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    ferry_protocol::time::push_timestamp(out, since, 6);
}

/// Writes fields in a line's syntax: `message` first as plain text, then `name=value`
/// (text) or `"name":value` (JSON members). Fields of the `log` forwarder are left out.
struct Fields<'a> {
    out: &'a mut String,
    json: bool,
    ansi: bool,
    /// Whether something was written (a separator goes before the next field).
    written: bool,
}

impl<'a> Fields<'a> {
    /// Fields appended to `out`; `written` says whether it holds fields already (a
    /// span's fields recorded after it was made continue its list).
    fn new(out: &'a mut String, json: bool, ansi: bool, written: bool) -> Self {
        Fields {
            out,
            json,
            ansi,
            written,
        }
    }

    fn name(&mut self, field: &Field) {
        let name = field.name();
        let name = name.strip_prefix("r#").unwrap_or(name);
        if self.written {
            self.out.push(if self.json { ',' } else { ' ' });
        }
        self.written = true;
        if self.json {
            push_json_str(self.out, name);
            self.out.push(':');
        } else {
            if self.ansi {
                self.out.push_str("\x1b[3m");
            }
            self.out.push_str(name);
            if self.ansi {
                self.out.push_str("\x1b[0m");
            }
            self.out.push('=');
        }
    }

    fn skip(field: &Field) -> bool {
        field.name().starts_with("log.")
    }

    /// A raw value: a number or `true`/`false`, the same in both syntaxes.
    fn raw(&mut self, field: &Field, value: impl std::fmt::Display) {
        if Self::skip(field) {
            return;
        }
        self.name(field);
        let _ = write!(self.out, "{value}");
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.json {
            // Text: the message as it is, any other text quoted, as `Debug` gives them.
            if field.name() == "message" {
                self.record_debug(field, &format_args!("{value}"));
            } else {
                self.record_debug(field, &value);
            }
        } else if !Self::skip(field) {
            self.name(field);
            push_json_str(self.out, value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if Self::skip(field) {
            return;
        }
        if field.name() == "message" && !self.json {
            if self.written {
                self.out.push(' ');
            }
            self.written = true;
            let _ = write!(self.out, "{value:?}");
            return;
        }
        self.name(field);
        if self.json {
            push_json_str(self.out, &format!("{value:?}"));
        } else {
            let _ = write!(self.out, "{value:?}");
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.raw(field, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.raw(field, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.raw(field, value);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if value.is_finite() || !self.json {
            self.raw(field, value);
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let mut text = value.to_string();
        let mut source = value.source();
        while let Some(s) = source {
            let _ = write!(text, ": {s}");
            source = s.source();
        }
        self.record_debug(field, &format_args!("{text}"));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn timestamps_are_to_the_microsecond() {
        let mut s = String::new();
        push_timestamp(
            &mut s,
            UNIX_EPOCH + std::time::Duration::from_micros(1_796_617_789_123_456),
        );
        assert_eq!(s, "2026-12-07T04:29:49.123456Z");
    }

    #[test]
    fn json_strings_are_escaped() {
        let mut s = String::new();
        push_json_str(&mut s, "a\"b\\c\nd\u{1}é");
        assert_eq!(s, r#""a\"b\\c\nd\u0001é""#);
    }

    /// Events become lines with the logged spans around them, in both syntaxes; a span
    /// the filter leaves out is not shown.
    #[test]
    fn events_become_lines() {
        for json in [false, true] {
            let lines = Arc::new(Mutex::new(Vec::<String>::new()));
            let out = lines.clone();
            let logs = Logs::new(
                TargetFilter::new("info,quiet=off".parse().expect("directives")),
                json,
                false,
                Arc::new(move |l: &[u8]| {
                    out.lock()
                        .expect("lines")
                        .push(String::from_utf8_lossy(l).into_owned())
                }),
            );
            let collector = crate::collector::Collector::new(Some(logs), None);
            tracing::subscriber::with_default(collector, || {
                let outer =
                    tracing::info_span!("outer", n = 1, who = "me", late = tracing::field::Empty);
                outer.record("late", 2);
                let _o = outer.enter();
                let hidden = tracing::info_span!(target: "quiet", "hidden");
                let _h = hidden.enter();
                tracing::info!(count = 3, ok = true, name = "x\"y", "hello {}", "world");
                tracing::debug!("not logged");
            });
            let lines = lines.lock().expect("lines");
            assert_eq!(lines.len(), 1, "{lines:?}");
            let line = &lines[0];
            assert!(line.ends_with('\n'));
            if json {
                let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                assert_eq!(v["level"], "INFO");
                assert_eq!(v["fields"]["message"], "hello world");
                assert_eq!(v["fields"]["count"], 3);
                assert_eq!(v["fields"]["ok"], true);
                assert_eq!(v["fields"]["name"], "x\"y");
                assert_eq!(v["span"]["name"], "outer");
                assert_eq!(v["span"]["n"], 1);
                assert_eq!(v["span"]["late"], 2);
                assert_eq!(v["spans"].as_array().map(Vec::len), Some(1));
                assert!(v["target"].as_str().is_some_and(|t| t.contains("logs")));
            } else {
                let (stamp, rest) = line.split_once(' ').expect("a timestamp");
                assert_eq!(stamp.len(), 27, "{line}");
                assert!(
                    rest.starts_with(" INFO outer{n=1 who=\"me\" late=2}: "),
                    "{line}"
                );
                assert!(
                    rest.ends_with(": hello world count=3 ok=true name=\"x\\\"y\"\n"),
                    "{line}"
                );
            }
        }
    }
}
