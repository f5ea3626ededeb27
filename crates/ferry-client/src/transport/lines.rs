//! Reading newline-delimited messages with a size limit.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One read from [`read_line`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line, without its line ending.
    Complete(Vec<u8>),
    /// A line longer than the limit; it was skipped.
    TooLong,
    /// The end of the input.
    Eof,
}

/// Reads one line of at most `max` bytes. Longer lines are consumed and reported as
/// [`Line::TooLong`] without being buffered.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> io::Result<Line> {
    let mut buf = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete(finish(buf))
            });
        }
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i, true),
            None => (available.len(), false),
        };
        if !too_long {
            if buf.len() + take > max {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(&available[..take]);
            }
        }
        reader.consume(if done { take + 1 } else { take });
        if done {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete(finish(buf))
            });
        }
    }
}

fn finish(mut buf: Vec<u8>) -> Vec<u8> {
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    #[tokio::test]
    async fn reads_lines_and_skips_long_ones() {
        let input: &[u8] = b"short\r\nthis line is far too long\nok\nlast";
        let mut r = BufReader::with_capacity(4, input);
        assert_eq!(
            read_line(&mut r, 10).await.unwrap(),
            Line::Complete(b"short".to_vec())
        );
        assert_eq!(read_line(&mut r, 10).await.unwrap(), Line::TooLong);
        assert_eq!(
            read_line(&mut r, 10).await.unwrap(),
            Line::Complete(b"ok".to_vec())
        );
        assert_eq!(
            read_line(&mut r, 10).await.unwrap(),
            Line::Complete(b"last".to_vec())
        );
        assert_eq!(read_line(&mut r, 10).await.unwrap(), Line::Eof);
    }
}
