//! A client for newline-delimited JSON-RPC (the stdio framing) over any pair of pipes.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::{check, within};

/// One end of a JSON-lines connection to a server.
///
/// Every line read is parsed and checked ([`check::received`]) against the request it
/// answers, found by id among the requests sent so far.
pub struct JsonLines<R, W> {
    reader: BufReader<R>,
    writer: Option<W>,
    sent: HashMap<String, String>,
    default_method: Option<String>,
    held: VecDeque<Value>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> JsonLines<R, W> {
    /// A client reading the server's output from `reader` and writing to its input.
    pub fn new(reader: R, writer: W) -> Self {
        JsonLines {
            reader: BufReader::new(reader),
            writer: Some(writer),
            sent: HashMap::new(),
            default_method: None,
            held: VecDeque::new(),
        }
    }

    /// Checks responses to requests this client did not send (another task wrote them)
    /// as responses to `method`.
    pub fn answering(mut self, method: &str) -> Self {
        self.default_method = Some(method.to_owned());
        self
    }

    /// Sends one message as one line.
    pub async fn send(&mut self, message: &Value) {
        if let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) {
            self.sent.insert(id.to_string(), method.to_owned());
        }
        let mut line = serde_json::to_vec(message).expect("serializable");
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Writes bytes as they are (add the newline yourself).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.writer.as_mut().expect("input already closed");
        within("writing to the server", async {
            w.write_all(bytes).await.expect("write to server");
            w.flush().await.expect("flush to server");
        })
        .await;
    }

    /// Closes the server's input (end of file).
    pub async fn close_input(&mut self) {
        if let Some(mut w) = self.writer.take() {
            let _ = w.shutdown().await;
        }
    }

    /// The next message, checked; `None` at the end of the output.
    pub async fn next(&mut self) -> Option<Value> {
        if let Some(v) = self.held.pop_front() {
            return Some(v);
        }
        self.read_line().await
    }

    async fn read_line(&mut self) -> Option<Value> {
        let mut line = Vec::new();
        let n = within(
            "a line from the server",
            self.reader.read_until(b'\n', &mut line),
        )
        .await
        .expect("read from server");
        if n == 0 {
            return None;
        }
        assert_eq!(
            line.pop(),
            Some(b'\n'),
            "the last message is not terminated by a newline"
        );
        let v = check::parse_line(&line);
        let method = match (v.get("id"), v.get("method")) {
            (Some(id), None) => self
                .sent
                .get(&id.to_string())
                .or(self.default_method.as_ref())
                .map(String::as_str),
            _ => None,
        };
        check::received(&v, method);
        Some(v)
    }

    /// The next message, which must exist.
    pub async fn recv(&mut self) -> Value {
        self.next().await.expect("the server closed its output")
    }

    /// The response with `id`, keeping other messages read meanwhile for [`Self::next`].
    pub async fn response(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        if let Some(i) = self
            .held
            .iter()
            .position(|m| m.get("id") == Some(&id) && m.get("method").is_none())
        {
            return self.held.remove(i).expect("present");
        }
        loop {
            let v = self
                .read_line()
                .await
                .unwrap_or_else(|| panic!("output ended before the response to {id}"));
            if v.get("id") == Some(&id) && v.get("method").is_none() {
                return v;
            }
            self.held.push_back(v);
        }
    }

    /// Sends a request and waits for its response.
    pub async fn ask(&mut self, request: &Value) -> Value {
        self.send(request).await;
        self.response(request["id"].clone()).await
    }

    /// Every remaining message until the server closes its output.
    pub async fn drain(&mut self) -> Vec<Value> {
        let mut all: Vec<Value> = self.held.drain(..).collect();
        while let Some(v) = self.read_line().await {
            all.push(v);
        }
        all
    }
}
