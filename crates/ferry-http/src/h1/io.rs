//! The connection's socket: reads that hold no buffer while nothing arrives, whole writes,
//! and the staged close.

use std::io;
use std::task::Poll;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::AsyncRead;
use tokio::net::TcpStream;

use super::encode;

/// How much is read at a time.
pub(super) const READ_CHUNK: usize = 4096;
/// How much of the next pipelined requests is read while a response is pending.
const READ_AHEAD: usize = 64 * 1024;
/// How long, and how many bytes, a closing connection keeps reading what the peer sends.
const LINGER_TIME: Duration = Duration::from_millis(500);
const LINGER_BYTES: usize = 256 * 1024;

thread_local! {
    /// Where each worker thread reads the start of requests, so an idle connection holds
    /// no read buffer and a read costs no zeroing.
    pub(super) static SCRATCH: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0; READ_CHUNK].into_boxed_slice());
}

/// One HTTP/1.1 connection's socket and what it read ahead.
pub(super) struct Conn {
    pub stream: TcpStream,
    /// Bytes read and not yet consumed. Empty, with no allocation, between requests
    /// whenever it can be.
    pub buf: BytesMut,
}

impl Conn {
    pub(super) fn new(stream: TcpStream) -> Conn {
        Conn {
            stream,
            buf: BytesMut::new(),
        }
    }

    /// Reads more into the buffer: `Ok(0)` at end of stream. Without room already
    /// reserved it reads into the thread's scratch buffer first, so a wake-up with nothing
    /// to read (or the end of the stream) allocates nothing.
    ///
    /// Reads go through `poll_read`, which takes a read that did not fill the buffer as
    /// proof that the socket is drained: the next wait goes straight to the reactor
    /// instead of first making a `recv` that would only say `EAGAIN` (one system call
    /// fewer per request).
    pub(super) async fn fill(&mut self) -> io::Result<usize> {
        let Conn { stream, buf } = self;
        std::future::poll_fn(|cx| {
            let mut stream = std::pin::Pin::new(&mut *stream);
            if buf.capacity() - buf.len() >= READ_CHUNK {
                return tokio_util::io::poll_read_buf(stream, cx, buf);
            }
            SCRATCH.with_borrow_mut(|scratch| {
                let mut read = tokio::io::ReadBuf::new(&mut scratch[..]);
                match stream.as_mut().poll_read(cx, &mut read) {
                    Poll::Ready(Ok(())) => {
                        buf.extend_from_slice(read.filled());
                        Poll::Ready(Ok(read.filled().len()))
                    }
                    Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                    Poll::Pending => Poll::Pending,
                }
            })
        })
        .await
    }

    /// While a response is pending or streaming: reads ahead (bounded) and completes once
    /// the peer has closed or reset the connection. Never completes while the peer stays.
    pub(super) async fn peer_gone(&mut self) {
        loop {
            if self.buf.len() >= READ_AHEAD {
                // Enough of the next requests is queued; stop reading (back-pressure).
                return std::future::pending().await;
            }
            match self.fill().await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    }

    pub(super) async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            match self.stream.try_write(data) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.stream.writable().await?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Writes a response taken from [`encode::borrow_out`], then gives the buffer back.
    pub(super) async fn write_out(&self, out: Vec<u8>) -> io::Result<()> {
        let written = self.write_all(&out).await;
        encode::return_out(out);
        written
    }

    /// Closes in stages (RFC 9112 §9.6): the write side first, then whatever the peer
    /// still sends is read and dropped for a moment, so that unread bytes do not turn the
    /// close into a reset that could destroy the response before the peer reads it.
    pub(super) async fn close(mut self) {
        let _ = tokio::io::AsyncWriteExt::shutdown(&mut self.stream).await;
        let drain = async {
            let mut left = LINGER_BYTES;
            loop {
                if self.stream.readable().await.is_err() {
                    return;
                }
                let read =
                    SCRATCH.with_borrow_mut(|scratch| self.stream.try_read(&mut scratch[..]));
                match read {
                    Ok(0) => return,
                    Ok(n) if n >= left => return,
                    Ok(n) => left -= n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => return,
                }
            }
        };
        let _ = tokio::time::timeout(LINGER_TIME, drain).await;
    }
}
