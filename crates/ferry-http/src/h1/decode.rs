//! Request bodies framed by `Transfer-Encoding: chunked` (RFC 9112 §7.1), decoded as they
//! arrive. (A `Content-Length` body needs no decoding: the connection takes that many
//! bytes.)

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::{Fail, bad_request, too_large};

/// Longest chunk-size or trailer line.
const MAX_CHUNK_LINE: usize = 4096;

/// Incremental decoder of a chunked body.
#[derive(Default)]
pub(super) struct Chunked {
    state: ChunkState,
}

#[derive(Default)]
enum ChunkState {
    #[default]
    Size,
    Data(usize),
    DataEnd,
    Trailers,
}

impl Chunked {
    /// Moves what it can from `input` to `body`, refusing a body over `max` bytes: `true`
    /// once the body is complete.
    pub(super) fn decode(
        &mut self,
        input: &mut BytesMut,
        body: &mut BytesMut,
        max: usize,
    ) -> Result<bool, Fail> {
        loop {
            match self.state {
                ChunkState::Size => {
                    let Some(line) = take_line(input)? else {
                        return Ok(false);
                    };
                    let size = line
                        .split(|&b| b == b';')
                        .next()
                        .unwrap_or_default()
                        .trim_ascii();
                    if size.is_empty() || size.len() > 15 || !size.iter().all(u8::is_ascii_hexdigit)
                    {
                        return Err(bad_request("Bad request: malformed chunk size"));
                    }
                    let size = usize::from_str_radix(std::str::from_utf8(size).unwrap_or("0"), 16)
                        .map_err(|_| bad_request("Bad request: malformed chunk size"))?;
                    if size == 0 {
                        self.state = ChunkState::Trailers;
                    } else if body.len().saturating_add(size) > max {
                        return Err(too_large());
                    } else {
                        body.reserve(size);
                        self.state = ChunkState::Data(size);
                    }
                }
                ChunkState::Data(left) => {
                    if input.is_empty() {
                        return Ok(false);
                    }
                    let n = left.min(input.len());
                    body.put_slice(&input[..n]);
                    input.advance(n);
                    self.state = if n == left {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(left - n)
                    };
                }
                ChunkState::DataEnd => {
                    if input.len() < 2 {
                        return Ok(false);
                    }
                    if &input[..2] != b"\r\n" {
                        return Err(bad_request("Bad request: malformed chunk"));
                    }
                    input.advance(2);
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailers => {
                    let Some(line) = take_line(input)? else {
                        return Ok(false);
                    };
                    if line.is_empty() {
                        return Ok(true);
                    }
                    // Trailer fields are read and dropped.
                }
            }
        }
    }
}

/// Takes one CRLF-terminated line off the front of `input`, without its CRLF. A line is
/// too long by its own length, whether its line feed has arrived or not, so the verdict
/// does not depend on how the peer split the bytes.
fn take_line(input: &mut BytesMut) -> Result<Option<Bytes>, Fail> {
    match memchr::memchr(b'\n', input) {
        Some(i) if i > MAX_CHUNK_LINE => Err(bad_request("Bad request: chunk line too long")),
        Some(i) => {
            if i == 0 || input[i - 1] != b'\r' {
                return Err(bad_request("Bad request: malformed chunk line"));
            }
            let line = input.split_to(i + 1).freeze();
            Ok(Some(line.slice(..i - 1)))
        }
        None if input.len() > MAX_CHUNK_LINE => {
            Err(bad_request("Bad request: chunk line too long"))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use http::StatusCode;

    use super::*;
    use crate::h1::Rejection;

    fn decode_all(input: &[u8], max: usize) -> Result<Option<Vec<u8>>, Fail> {
        let mut d = Chunked::default();
        let mut body = BytesMut::new();
        // Feed one byte at a time: every state must resume where it stopped.
        let mut pending = BytesMut::new();
        for &b in input {
            pending.put_u8(b);
            if d.decode(&mut pending, &mut body, max)? {
                return Ok(Some(body.to_vec()));
            }
        }
        Ok(None)
    }

    fn refused_with(input: &[u8], max: usize) -> Option<StatusCode> {
        match decode_all(input, max) {
            Err(Fail::Reject(Rejection { status, .. })) => Some(status),
            _ => None,
        }
    }

    #[test]
    fn chunked_bodies_decode_byte_by_byte() {
        let body = decode_all(
            b"5;ext=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: y\r\n\r\n",
            64,
        )
        .ok()
        .flatten();
        assert_eq!(body.as_deref(), Some(&b"hello, world!!!"[..]));
        assert_eq!(
            decode_all(b"0\r\n\r\n", 64).ok().flatten().as_deref(),
            Some(&b""[..])
        );
        assert!(decode_all(b"5\r\nhello\r\n", 64).ok().flatten().is_none());
    }

    #[test]
    fn malformed_or_oversized_chunks_are_refused() {
        for bad in [
            &b"zz\r\nhello\r\n0\r\n\r\n"[..],
            b"5\r\nhelloXX0\r\n\r\n",
            b"5\nhello\r\n",
            b"\r\n",
        ] {
            assert_eq!(
                refused_with(bad, 64),
                Some(StatusCode::BAD_REQUEST),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(
            refused_with(b"41\r\n", 64),
            Some(StatusCode::PAYLOAD_TOO_LARGE)
        );
        assert_eq!(
            refused_with(b"ffffffffffffffffff\r\n", 64),
            Some(StatusCode::BAD_REQUEST)
        );
    }

    /// Found by the `h1_chunked` fuzz target: a trailer line over the limit was refused
    /// when it arrived in pieces but taken when it arrived whole with its line feed.
    #[test]
    fn an_overlong_line_is_refused_however_it_arrives() {
        let mut input = b"0\r\nX-Long: ".to_vec();
        input.resize(input.len() + MAX_CHUNK_LINE, b'a');
        input.extend_from_slice(b"\r\n\r\n");
        assert_eq!(refused_with(&input, 64), Some(StatusCode::BAD_REQUEST));
        let mut whole = BytesMut::from(&input[..]);
        let refused = Chunked::default().decode(&mut whole, &mut BytesMut::new(), 64);
        assert!(
            matches!(refused, Err(Fail::Reject(Rejection { status, .. })) if status == StatusCode::BAD_REQUEST)
        );
        // A line of exactly the limit is still taken, either way.
        let mut input = b"0\r\n".to_vec();
        input.resize(input.len() + MAX_CHUNK_LINE - 1, b'a');
        input.extend_from_slice(b"\r\n\r\n");
        assert_eq!(
            decode_all(&input, 64).ok().flatten().as_deref(),
            Some(&b""[..])
        );
        let mut whole = BytesMut::from(&input[..]);
        assert!(matches!(
            Chunked::default().decode(&mut whole, &mut BytesMut::new(), 64),
            Ok(true)
        ));
    }
}
