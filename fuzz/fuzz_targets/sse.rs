//! The client's `text/event-stream` parser (ferry-client `sse`), fed a server's bytes.
//!
//! The first input byte sets how the stream arrives (pieces of 1 to 32 bytes). Checks:
//! the events, the last event id and the retry delay do not depend on where the stream
//! was split; an event's data never passes the size limit; a stream written again from
//! the events parses back to the same events.
#![no_main]

use ferry_client::sse::{SseEvent, SseParser};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1024;

type Run = (
    Result<Vec<SseEvent>, ()>,
    Option<String>,
    Option<std::time::Duration>,
);

fn run<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Run {
    let mut parser = SseParser::new(LIMIT);
    let mut events = Vec::new();
    for piece in pieces {
        match parser.feed(piece) {
            Ok(more) => events.extend(more),
            Err(_) => return (Err(()), None, None),
        }
    }
    (
        Ok(events),
        parser.last_event_id().map(str::to_owned),
        parser.retry(),
    )
}

fn write(events: &[SseEvent]) -> Vec<u8> {
    let mut out = String::new();
    for e in events {
        if let Some(event) = &e.event {
            out.push_str(&format!("event: {event}\n"));
        }
        if let Some(id) = &e.id {
            out.push_str(&format!("id: {id}\n"));
        }
        if let Some(retry) = e.retry {
            out.push_str(&format!("retry: {}\n", retry.as_millis()));
        }
        for line in e.data.split('\n') {
            out.push_str(&format!("data: {line}\n"));
        }
        out.push('\n');
    }
    out.into_bytes()
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, stream)) = data.split_first() else {
        return;
    };
    let piece = usize::from(split % 32) + 1;
    let whole = run([stream]);
    let split_up = run(stream.chunks(piece));
    assert_eq!(whole, split_up, "split into {piece}-byte pieces vs whole");

    let (Ok(events), _, _) = whole else {
        return;
    };
    for e in &events {
        assert!(
            e.data.len() <= LIMIT,
            "an event of {} bytes passed the limit",
            e.data.len()
        );
    }
    // Only events with fields that survive a line of their own can be written again.
    let writable = events.iter().all(|e| {
        let line_safe = |s: &str| !s.contains(['\n', '\r']);
        !e.data.contains('\r')
            && e.event.as_deref().is_none_or(line_safe)
            && e.id.as_deref().is_none_or(line_safe)
    });
    if writable {
        let (again, _, _) = run([write(&events).as_slice()]);
        if let Ok(again) = again {
            assert_eq!(again, events, "events written again");
        }
    }
});
