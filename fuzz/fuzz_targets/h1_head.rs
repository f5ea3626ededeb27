//! The HTTP/1.1 request-head parser of ferry-http's own connection (`h1::parse`).
//!
//! Checks: a parsed head takes no more than its input and no more than the head limit; a
//! body taken with the head is exactly `Content-Length` long; an HTTP/1.1 head has a Host
//! field; a head cut short by one byte is never complete; and the head, written out again
//! in canonical form, parses to the same method, target, fields and framing.
#![no_main]

use ferry_http::fuzzing::{HeadOutcome, ParsedHead, parse_request_head};
use libfuzzer_sys::fuzz_target;

const MAX_HEAD: usize = 4096;
const MAX_BODY: usize = 1024;

fn write_head(head: &ParsedHead) -> Vec<u8> {
    let version = if head.http11 { "HTTP/1.1" } else { "HTTP/1.0" };
    let mut out = format!("{} {} {version}\r\n", head.method, head.uri).into_bytes();
    for (name, value) in &head.fields {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

fuzz_target!(|data: &[u8]| {
    let HeadOutcome::Parsed(head) = parse_request_head(data, MAX_HEAD, MAX_BODY) else {
        return;
    };
    assert!(head.consumed <= data.len());
    let head_len = match &head.body {
        Some(body) => {
            assert_eq!(
                Some(body.len()),
                head.length,
                "a body taken whole has its length"
            );
            assert!(body.len() <= MAX_BODY);
            head.consumed - body.len()
        }
        None => head.consumed,
    };
    assert!(
        head_len <= MAX_HEAD,
        "a head of {head_len} bytes passed the limit"
    );
    assert_eq!(
        data[head_len..head.consumed],
        head.body.clone().unwrap_or_default()[..]
    );
    if head.http11 {
        assert!(
            head.fields.iter().any(|(n, _)| n == "host"),
            "HTTP/1.1 without Host"
        );
    }
    assert!(
        !matches!(
            parse_request_head(&data[..head_len - 1], MAX_HEAD, MAX_BODY),
            HeadOutcome::Parsed(_)
        ),
        "a head one byte short parsed"
    );

    let written = write_head(&head);
    match parse_request_head(&written, usize::MAX, MAX_BODY) {
        HeadOutcome::Parsed(again) => {
            assert_eq!(again.method, head.method);
            assert_eq!(again.uri, head.uri);
            assert_eq!(again.http11, head.http11);
            assert_eq!(again.fields, head.fields);
            assert_eq!(again.length, head.length);
            assert_eq!(again.expect_continue, head.expect_continue);
            assert_eq!(again.consumed, written.len());
        }
        other => panic!(
            "the head written again ({:?}) parsed as {other:?}",
            String::from_utf8_lossy(&written)
        ),
    }
});
