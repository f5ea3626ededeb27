//! Entry points for the fuzz targets (feature `fuzzing`): the request-head parser and
//! the chunked-body decoder, driven the way the connection drives them, with what they
//! produced returned as plain values the targets can check.

use std::time::Duration;

use bytes::BytesMut;

use super::decode::Chunked;
use super::parse::{Framing, parse_head};
use super::{Fail, Limits};

/// What [`parse_request_head`] made of its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadOutcome {
    /// The head is not complete yet.
    Partial,
    /// The head was refused with this status.
    Refused(u16),
    /// The head was read.
    Parsed(ParsedHead),
}

/// A request head as the parser read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedHead {
    /// The method.
    pub method: String,
    /// The request target.
    pub uri: String,
    /// HTTP/1.1 (otherwise HTTP/1.0).
    pub http11: bool,
    /// The fields, in order: lower-case name and raw value.
    pub fields: Vec<(String, Vec<u8>)>,
    /// Bytes of the input taken.
    pub consumed: usize,
    /// The body length, or `None` for a chunked body.
    pub length: Option<usize>,
    /// Whether the client waits for `100 Continue`.
    pub expect_continue: bool,
    /// The body, when it came whole with the head.
    pub body: Option<Vec<u8>>,
}

fn limits(max_head_bytes: usize, max_body_bytes: usize) -> Limits {
    Limits {
        max_head_bytes,
        max_body_bytes,
        head_timeout: Duration::from_secs(10),
        body_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
    }
}

fn status(fail: Fail) -> u16 {
    match fail {
        Fail::Reject(r) => r.status.as_u16(),
        // The parsers never do I/O; 0 says so if that ever changes.
        Fail::Io => 0,
    }
}

/// Parses a request head at the start of `buf` under these limits.
pub fn parse_request_head(buf: &[u8], max_head_bytes: usize, max_body_bytes: usize) -> HeadOutcome {
    match parse_head(buf, &limits(max_head_bytes, max_body_bytes)) {
        Ok(None) => HeadOutcome::Partial,
        Err(fail) => HeadOutcome::Refused(status(fail)),
        Ok(Some(head)) => {
            let request = head.request;
            HeadOutcome::Parsed(ParsedHead {
                method: request.method().as_str().to_owned(),
                uri: request.uri().to_string(),
                http11: request.version() == http::Version::HTTP_11,
                fields: request
                    .headers()
                    .iter()
                    .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
                    .collect(),
                consumed: head.consumed,
                length: match head.framing {
                    Framing::Length(n) => Some(n),
                    Framing::Chunked => None,
                },
                expect_continue: head.expect_continue,
                body: head.body.map(|b| b.to_vec()),
            })
        }
    }
}

/// What [`decode_chunked`] made of its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkedOutcome {
    /// The input ended before the body did; this much body was decoded.
    Incomplete(Vec<u8>),
    /// The body was refused with this status.
    Refused(u16),
    /// The whole body, and the bytes after it (the next pipelined request).
    Complete {
        /// The decoded body.
        body: Vec<u8>,
        /// Input left after the body's last line.
        rest: Vec<u8>,
    },
}

/// Decodes a chunked body that arrives in `pieces`, as the connection does: each piece is
/// appended to the input, then the decoder takes what it can.
pub fn decode_chunked(pieces: &[&[u8]], max_body_bytes: usize) -> ChunkedOutcome {
    let mut decoder = Chunked::default();
    let mut input = BytesMut::new();
    let mut body = BytesMut::new();
    for (i, piece) in pieces.iter().enumerate() {
        input.extend_from_slice(piece);
        match decoder.decode(&mut input, &mut body, max_body_bytes) {
            Ok(true) => {
                // What follows the body stays for the next request, later pieces included.
                let mut rest = input.to_vec();
                pieces[i + 1..]
                    .iter()
                    .for_each(|p| rest.extend_from_slice(p));
                return ChunkedOutcome::Complete {
                    body: body.to_vec(),
                    rest,
                };
            }
            Ok(false) => {}
            Err(fail) => return ChunkedOutcome::Refused(status(fail)),
        }
    }
    ChunkedOutcome::Incomplete(body.to_vec())
}
