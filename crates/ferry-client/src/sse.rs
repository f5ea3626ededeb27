//! An incremental parser for `text/event-stream` (the WHATWG server-sent events format),
//! with a size limit.
//!
//! Feed it the bytes of a response as they arrive; it returns each complete event.
//! `event:`, `id:` and `retry:` fields are read, comment lines (starting with `:`) are
//! ignored, and several `data:` lines are joined with newlines. Lines may end with LF,
//! CRLF or CR, split anywhere across chunks.
//!
//! ```
//! use ferry_client::sse::SseParser;
//!
//! let mut parser = SseParser::new(1024);
//! let events = parser
//!     .feed(b": keep-alive\nid: 7\nretry: 500\ndata: {\"a\":\ndata: 1}\n\n")
//!     .unwrap();
//! assert_eq!(events[0].data, "{\"a\":\n1}");
//! assert_eq!(parser.last_event_id(), Some("7"));
//! assert_eq!(parser.retry(), Some(std::time::Duration::from_millis(500)));
//! ```

use std::time::Duration;

/// One server-sent event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (the event type), if the event had one.
    pub event: Option<String>,
    /// The `id:` field, if this event set one. The id in force for resumption is
    /// [`SseParser::last_event_id`].
    pub id: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The `retry:` field, if this event set one.
    pub retry: Option<Duration>,
}

/// The stream broke the parser's size limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a server-sent event exceeded {limit} bytes")]
pub struct SseTooLarge {
    /// The limit, in bytes.
    pub limit: usize,
}

/// An incremental server-sent events parser.
#[derive(Debug)]
pub struct SseParser {
    limit: usize,
    line: Vec<u8>,
    pending_cr: bool,
    first_line: bool,
    data: String,
    event: Option<String>,
    id: Option<String>,
    event_retry: Option<Duration>,
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl SseParser {
    /// A parser that refuses events (and lines) larger than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        SseParser {
            limit,
            line: Vec::new(),
            pending_cr: false,
            first_line: true,
            data: String::new(),
            event: None,
            id: None,
            event_retry: None,
            last_event_id: None,
            retry: None,
        }
    }

    /// Parses the next chunk of the stream, returning the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseTooLarge> {
        let mut out = Vec::new();
        for &b in chunk {
            if std::mem::take(&mut self.pending_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\n' => self.end_line(&mut out)?,
                b'\r' => {
                    self.pending_cr = true;
                    self.end_line(&mut out)?;
                }
                _ => {
                    if self.line.len() + self.data.len() >= self.limit {
                        return Err(SseTooLarge { limit: self.limit });
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(out)
    }

    /// The last event id the stream set (kept across events), for `Last-Event-ID`.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection delay the stream last asked for with `retry:`.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Forgets a partly received event, keeping the last event id and retry delay (used
    /// when a stream breaks and a new one continues it).
    pub fn reset_stream(&mut self) {
        self.line.clear();
        self.pending_cr = false;
        self.first_line = true;
        self.data.clear();
        self.event = None;
        self.id = None;
        self.event_retry = None;
    }

    /// Ends a line. Its bytes were counted against the limit as they came, but invalid
    /// UTF-8 grows once replaced (one byte becomes three), so the data is checked again.
    fn end_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseTooLarge> {
        let raw = std::mem::take(&mut self.line);
        let mut line = String::from_utf8_lossy(&raw).into_owned();
        if std::mem::take(&mut self.first_line) && line.starts_with('\u{feff}') {
            line.drain(..'\u{feff}'.len_utf8());
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(SseTooLarge { limit: self.limit });
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => {
                self.id = Some(value.to_owned());
                self.last_event_id = Some(value.to_owned());
            }
            "retry" if !value.is_empty() && value.bytes().all(|c| c.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    let d = Duration::from_millis(ms);
                    self.retry = Some(d);
                    self.event_retry = Some(d);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        let id = self.id.take();
        let retry = self.event_retry.take();
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        out.push(SseEvent {
            event,
            id,
            data,
            retry,
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn invalid_utf8_cannot_grow_an_event_past_the_limit() {
        // 400 invalid bytes are 1,200 bytes once each is replaced with U+FFFD.
        let mut parser = super::SseParser::new(1024);
        let mut stream = b"data: ".to_vec();
        stream.extend_from_slice(&[0xff; 400]);
        stream.extend_from_slice(b"\n\n");
        assert!(parser.feed(&stream).is_err());
        let mut parser = super::SseParser::new(1024);
        let events = parser.feed(b"data: \xff\xff\n\n").unwrap();
        assert_eq!(events[0].data, "\u{fffd}\u{fffd}");
    }

    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> (Vec<SseEvent>, SseParser) {
        let mut p = SseParser::new(1 << 16);
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.feed(c).unwrap());
        }
        (out, p)
    }

    #[test]
    fn fields_and_comments() {
        let (events, p) =
            parse_all(&[b": comment\nevent: message\nid: e1\nretry: 250\ndata: {\"x\":1}\n\n"]);
        assert_eq!(
            events,
            vec![SseEvent {
                event: Some("message".into()),
                id: Some("e1".into()),
                data: "{\"x\":1}".into(),
                retry: Some(Duration::from_millis(250)),
            }]
        );
        assert_eq!(p.last_event_id(), Some("e1"));
        assert_eq!(p.retry(), Some(Duration::from_millis(250)));
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let (events, _) = parse_all(&[b"data: a\ndata:b\ndata:  c\n\n"]);
        assert_eq!(events[0].data, "a\nb\n c");
    }

    #[test]
    fn line_endings_split_across_chunks() {
        let (events, _) = parse_all(&[
            b"data: one\r",
            b"\n\r",
            b"\ndata: two\r\r",
            b"data: three\n",
            b"\n",
        ]);
        let data: Vec<_> = events.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["one", "two", "three"]);
    }

    #[test]
    fn byte_at_a_time() {
        let text = b"id: 1\ndata: hello\n\nid: 2\ndata: world\n\n";
        let chunks: Vec<&[u8]> = text.chunks(1).collect();
        let (events, p) = parse_all(&chunks);
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].data, "world");
        assert_eq!(p.last_event_id(), Some("2"));
    }

    #[test]
    fn priming_event_with_empty_data() {
        let (events, p) = parse_all(&[b"id: event-1\nretry: 500\ndata: \n\n"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "");
        assert_eq!(p.last_event_id(), Some("event-1"));
        assert_eq!(p.retry(), Some(Duration::from_millis(500)));
    }

    #[test]
    fn events_without_data_are_not_dispatched_but_set_the_id() {
        let (events, p) = parse_all(&[b"id: 9\nevent: ping\n\n:\n\n"]);
        assert!(events.is_empty());
        assert_eq!(p.last_event_id(), Some("9"));
    }

    #[test]
    fn ignores_bad_retry_and_unknown_fields() {
        let (events, p) = parse_all(&[b"retry: 1x\nfoo: bar\nretry\ndata\n\n"]);
        assert_eq!(events[0].data, "");
        assert_eq!(p.retry(), None);
    }

    #[test]
    fn strips_a_leading_bom_and_one_space_only() {
        let (events, _) = parse_all(&[b"\xef\xbb\xbfdata:  x\n\n"]);
        assert_eq!(events[0].data, " x");
    }

    #[test]
    fn incomplete_event_at_end_is_not_dispatched() {
        let (events, _) = parse_all(&[b"data: partial\n"]);
        assert!(events.is_empty());
    }

    #[test]
    fn enforces_the_limit() {
        let mut p = SseParser::new(16);
        assert!(p.feed(b"data: 0123456789\n").is_ok());
        assert_eq!(
            p.feed(b"data: 0123456789\n"),
            Err(SseTooLarge { limit: 16 })
        );
        let mut p = SseParser::new(8);
        assert!(p.feed(b": a comment that never ends").is_err());
    }
}
