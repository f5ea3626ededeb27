//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`); not a public API.

pub use crate::h1::fuzzing::{
    ChunkedOutcome, HeadOutcome, ParsedHead, decode_chunked, parse_request_head,
};
