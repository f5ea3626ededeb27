//! The chunked request-body decoder of ferry-http's own connection (`h1::decode`).
//!
//! The first input byte sets how the rest arrives (pieces of 1 to 16 bytes), as a TCP
//! peer may split it anywhere. Checks: the verdict does not depend on the split (the same
//! body and leftover bytes, or the same refusal); no body is ever longer than the limit;
//! a decoded body, written again as one chunk, decodes to itself with nothing left over.
#![no_main]

use ferry_http::fuzzing::{ChunkedOutcome, decode_chunked};
use libfuzzer_sys::fuzz_target;

const MAX_BODY: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&split, input)) = data.split_first() else {
        return;
    };
    let piece = usize::from(split % 16) + 1;
    let pieces: Vec<&[u8]> = input.chunks(piece).collect();
    let split_up = decode_chunked(&pieces, MAX_BODY);
    let whole = decode_chunked(&[input], MAX_BODY);

    match &whole {
        ChunkedOutcome::Complete { body, .. } | ChunkedOutcome::Incomplete(body) => {
            assert!(
                body.len() <= MAX_BODY,
                "a body of {} bytes passed the limit",
                body.len()
            );
        }
        ChunkedOutcome::Refused(status) => assert!(matches!(status, 400 | 413), "status {status}"),
    }
    assert_eq!(split_up, whole, "split into {piece}-byte pieces vs whole");

    if let ChunkedOutcome::Complete { body, .. } = whole {
        let mut again = format!("{:x}\r\n", body.len()).into_bytes();
        if !body.is_empty() {
            again.extend_from_slice(&body);
            again.extend_from_slice(b"\r\n0\r\n");
        }
        again.extend_from_slice(b"\r\n");
        assert_eq!(
            decode_chunked(&[&again], MAX_BODY),
            ChunkedOutcome::Complete {
                body,
                rest: Vec::new()
            }
        );
    }
});
