//! A raw HTTP/1.1 client over `tokio::net::TcpStream` on 127.0.0.1, for tests that check
//! the bytes on the wire. Every read has a timeout, so a server that stalls fails a test
//! instead of hanging it.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use ferry_testkit::http::mcp_headers;
use ferry_testkit::rpc::{self, call};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::PATH;

/// The longest any single read or write may take.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// One client connection speaking raw HTTP/1.1.
pub struct Conn {
    pub stream: TcpStream,
    /// Bytes read and not yet consumed.
    pub buf: Vec<u8>,
    pub host: String,
}

/// A parsed response: status line, fields (names lowercased, in order) and the decoded
/// body.
#[derive(Debug)]
pub struct Resp {
    pub status_line: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    /// Every value of field `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The value of field `name`, which must appear at most once.
    pub fn header(&self, name: &str) -> Option<&str> {
        let all = self.all(name);
        assert!(
            all.len() <= 1,
            "{name} appears {} times: {self:?}",
            all.len()
        );
        all.first().copied()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// Exactly one `date` field, holding a valid HTTP-date (RFC 9110 §6.6.1).
    pub fn assert_one_date(&self) {
        let dates = self.all("date");
        assert_eq!(dates.len(), 1, "one date field: {self:?}");
        assert!(
            httpdate::parse_http_date(dates[0]).is_ok(),
            "not an HTTP-date: {:?}",
            dates[0]
        );
    }

    /// A JSON error reply: `application/json`, a length that matches the body, and a
    /// JSON-RPC error object with `code`.
    pub fn assert_rpc_error(&self, status: u16, code: i64) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.header("content-type"), Some("application/json"));
        assert_eq!(
            self.header("content-length"),
            Some(self.body.len().to_string().as_str())
        );
        let body = self.json();
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert_eq!(rpc::error_code(&body), code, "{body}");
        assert!(body["error"]["message"].is_string(), "{body}");
        self.assert_one_date();
    }
}

impl Conn {
    pub async fn connect(addr: SocketAddr) -> Conn {
        assert!(addr.ip().is_loopback(), "tests only talk to 127.0.0.1");
        let stream = tokio::time::timeout(IO_TIMEOUT, TcpStream::connect(addr))
            .await
            .expect("connect timed out")
            .expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            buf: Vec::new(),
            host: addr.to_string(),
        }
    }

    pub async fn send(&mut self, bytes: &[u8]) {
        tokio::time::timeout(IO_TIMEOUT, self.stream.write_all(bytes))
            .await
            .expect("write timed out")
            .expect("write");
    }

    /// Reads more into the buffer: `Ok(0)` at end of stream.
    pub async fn fill(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 8192];
        let n = tokio::time::timeout(IO_TIMEOUT, self.stream.read(&mut chunk))
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "read timed out with {:?} buffered",
                    String::from_utf8_lossy(&self.buf)
                )
            })?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    pub async fn fill_some(&mut self) {
        match self.fill().await {
            Ok(0) => panic!(
                "connection closed with {:?} buffered",
                String::from_utf8_lossy(&self.buf)
            ),
            Ok(_) => {}
            Err(e) => panic!(
                "read failed ({e}) with {:?} buffered",
                String::from_utf8_lossy(&self.buf)
            ),
        }
    }

    /// Takes everything up to and including `pattern`.
    pub async fn take_through(&mut self, pattern: &[u8]) -> Vec<u8> {
        loop {
            if let Some(i) = find(&self.buf, pattern) {
                return self.buf.drain(..i + pattern.len()).collect();
            }
            self.fill_some().await;
        }
    }

    pub async fn take_exact(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            self.fill_some().await;
        }
        self.buf.drain(..n).collect()
    }

    /// Reads a status line and header section (RFC 9112 §2.1, §4, §5).
    pub async fn read_head(&mut self) -> Resp {
        let head = self.take_through(b"\r\n\r\n").await;
        let text = std::str::from_utf8(&head[..head.len() - 4]).expect("ASCII head");
        let mut lines = text.split("\r\n");
        let status_line = lines.next().expect("status line").to_owned();
        assert!(
            !text.replace("\r\n", "").contains('\n'),
            "bare LF in head: {text:?}"
        );
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default();
        assert!(
            version == "HTTP/1.1",
            "status line {status_line:?} (RFC 9110 §2.5: answer with HTTP/1.1)"
        );
        let code = parts.next().unwrap_or_default();
        assert_eq!(code.len(), 3, "status line {status_line:?}");
        let status = code
            .parse()
            .unwrap_or_else(|_| panic!("status {status_line:?}"));
        assert!(parts.next().is_some(), "no reason phrase: {status_line:?}");
        let headers = lines
            .map(|l| {
                let (name, value) = l
                    .split_once(':')
                    .unwrap_or_else(|| panic!("malformed field line {l:?}"));
                assert!(
                    !name.is_empty() && !name.contains(' '),
                    "malformed field name {l:?}"
                );
                (name.to_ascii_lowercase(), value.trim().to_owned())
            })
            .collect();
        Resp {
            status_line,
            status,
            headers,
            body: Vec::new(),
        }
    }

    /// Reads one chunk of a chunked body (RFC 9112 §7.1): its data, or `None` after the
    /// last chunk and the trailer section.
    pub async fn read_chunk(&mut self) -> Option<Vec<u8>> {
        let line = self.take_through(b"\r\n").await;
        let line = std::str::from_utf8(&line[..line.len() - 2]).expect("ASCII chunk line");
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16)
            .unwrap_or_else(|_| panic!("malformed chunk size line {line:?}"));
        if size == 0 {
            // Trailer section, ended by an empty line.
            while self.take_through(b"\r\n").await.len() > 2 {}
            return None;
        }
        let data = self.take_exact(size).await;
        assert_eq!(
            self.take_exact(2).await,
            b"\r\n",
            "chunk data not ended by CRLF"
        );
        Some(data)
    }

    /// Reads a whole response, its body framed as RFC 9112 §6.3 says.
    pub async fn read_response(&mut self) -> Resp {
        self.read_response_to(false).await
    }

    /// Reads the whole response to a HEAD request: never any body (RFC 9110 §9.3.2).
    pub async fn read_head_response(&mut self) -> Resp {
        self.read_response_to(true).await
    }

    pub async fn read_response_to(&mut self, head_request: bool) -> Resp {
        let mut r = self.read_head().await;
        let te = r.header("transfer-encoding").map(str::to_owned);
        let length = r.header("content-length").map(|v| {
            v.parse::<usize>()
                .unwrap_or_else(|_| panic!("malformed content-length {v:?}"))
        });
        assert!(
            te.is_none() || length.is_none(),
            "both transfer-encoding and content-length (RFC 9112 §6.2): {r:?}"
        );
        if head_request || r.status / 100 == 1 || r.status == 204 || r.status == 304 {
            return r;
        }
        if let Some(te) = te {
            assert_eq!(te, "chunked", "{r:?}");
            while let Some(data) = self.read_chunk().await {
                r.body.extend_from_slice(&data);
            }
        } else if let Some(n) = length {
            r.body = self.take_exact(n).await;
        } else {
            loop {
                match self.fill().await {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) => panic!("read to the end failed: {e}"),
                }
            }
            r.body = std::mem::take(&mut self.buf);
        }
        r
    }

    /// The server closed the connection: nothing more is buffered and a read ends the
    /// stream (a reset counts too: the peer is gone).
    pub async fn expect_closed(&mut self) {
        let n = self.fill().await;
        assert!(
            (self.buf.is_empty() && matches!(n, Ok(0))) || n.is_err(),
            "expected the connection to close, got {n:?} and {:?}",
            String::from_utf8_lossy(&self.buf)
        );
    }

    /// The connection is still open: nothing arrives within `wait`.
    pub async fn expect_open_and_quiet(&mut self, wait: Duration) {
        let mut byte = [0u8; 1];
        if let Ok(r) = tokio::time::timeout(wait, self.stream.peek(&mut byte)).await {
            panic!("expected an open, quiet connection, got {r:?}");
        }
        assert!(
            self.buf.is_empty(),
            "{:?}",
            String::from_utf8_lossy(&self.buf)
        );
    }

    /// A POST of `message` with the MCP headers a conforming client sends, `extra` fields,
    /// and a `Content-Length` body.
    pub fn post(&self, message: &Value, extra: &[(&str, &str)]) -> Vec<u8> {
        let body = serde_json::to_vec(message).expect("JSON");
        let mut out = post_head(&self.host, message, extra);
        out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// The response of one `echo` call on this connection, checked.
    pub async fn echo(&mut self, id: i64, text: &str) {
        let bytes = self.post(&echo(id, text), &[]);
        self.send(&bytes).await;
        let r = self.read_response().await;
        assert_echoed(&r, id, text);
    }
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The request line and fields of a POST of `message` to the endpoint, without the
/// framing field and without the final empty line.
pub fn post_head(host: &str, message: &Value, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut out = format!("POST {PATH} HTTP/1.1\r\nhost: {host}\r\n").into_bytes();
    for (name, value) in &mcp_headers(message) {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for (name, value) in extra {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    out
}

pub fn echo(id: i64, text: &str) -> Value {
    call(id, "echo", json!({"text": text}), json!({}))
}

pub fn assert_echoed(r: &Resp, id: i64, text: &str) {
    assert_eq!(r.status_line, "HTTP/1.1 200 OK", "{r:?}");
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body = r.json();
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(rpc::text(&body), text, "{body}");
}
