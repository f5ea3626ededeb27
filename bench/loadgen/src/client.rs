//! A lean HTTP/1.1 client on hyper's connection API, and the checks on MCP replies.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use tokio::net::TcpStream;

use crate::Error;
use crate::bodies::PROTOCOL_VERSION;

/// Where the server is: a loopback socket address and the endpoint's path, and the
/// bearer token every request carries when `LOADGEN_BEARER` is set (for a server that
/// requires authorization).
#[derive(Clone)]
pub struct Target {
    /// The server's address (always a loopback address).
    pub addr: SocketAddr,
    host: HeaderValue,
    path: String,
    authorization: Option<HeaderValue>,
}

impl Target {
    /// Parses `http://IP:PORT/path`; refuses anything but a loopback IP.
    pub fn parse(url: &str) -> Result<Self, Error> {
        let rest = url
            .strip_prefix("http://")
            .ok_or("the URL must start with http://")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let addr: SocketAddr = authority
            .parse()
            .map_err(|_| format!("{authority:?} is not IP:PORT"))?;
        if !addr.ip().is_loopback() {
            return Err(format!(
                "{addr} is not a loopback address; the benchmark only runs on loopback"
            )
            .into());
        }
        let authorization = match std::env::var("LOADGEN_BEARER") {
            Ok(token) if !token.is_empty() => {
                let mut value = HeaderValue::from_str(&format!("Bearer {token}"))?;
                value.set_sensitive(true);
                Some(value)
            }
            _ => None,
        };
        Ok(Self {
            addr,
            authorization,
            host: HeaderValue::from_str(authority)?,
            path: if path.is_empty() {
                "/".to_owned()
            } else {
                path.to_owned()
            },
        })
    }
}

/// One keep-alive HTTP/1.1 connection.
pub struct Conn {
    sender: SendRequest<Full<Bytes>>,
    target: Target,
}

impl Conn {
    /// Connects and starts the connection's task on the current runtime.
    pub async fn open(target: &Target) -> Result<Self, Error> {
        let stream = TcpStream::connect(target.addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Self {
            sender,
            target: target.clone(),
        })
    }

    /// Whether the connection can still carry requests.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// POSTs a JSON-RPC message with the MCP headers and returns the response head, its
    /// body left unread.
    pub async fn start(
        &mut self,
        method: &'static str,
        name: Option<&'static str>,
        body: String,
    ) -> Result<Response<Incoming>, Error> {
        let mut request = Request::post(self.target.path.as_str())
            .header(HOST, self.target.host.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(
                ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            )
            .header(
                "mcp-protocol-version",
                HeaderValue::from_static(PROTOCOL_VERSION),
            )
            .header("mcp-method", HeaderValue::from_static(method));
        if let Some(name) = name {
            request = request.header("mcp-name", HeaderValue::from_static(name));
        }
        if let Some(auth) = &self.target.authorization {
            request = request.header(hyper::header::AUTHORIZATION, auth.clone());
        }
        let request = request.body(Full::new(Bytes::from(body)))?;
        self.sender.ready().await?;
        Ok(self.sender.send_request(request).await?)
    }

    /// POSTs a JSON-RPC message and reads the whole response.
    pub async fn post(
        &mut self,
        method: &'static str,
        name: Option<&'static str>,
        body: String,
    ) -> Result<(StatusCode, Bytes), Error> {
        let response = self.start(method, name, body).await?;
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        Ok((status, bytes))
    }
}

/// A `tools/call` response, as far as the checks look.
#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(borrow, default)]
    result: Option<CallResult<'a>>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Vec<Block<'a>>,
    #[serde(rename = "requestState", borrow, default)]
    request_state: Option<Cow<'a, str>>,
    #[serde(rename = "inputRequests", borrow, default)]
    input_requests: Option<BTreeMap<Cow<'a, str>, IgnoredAny>>,
    #[serde(rename = "isError", default)]
    is_error: bool,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// What the first round of an MRTR call asked for.
pub struct InputRequired {
    /// The keys of `inputRequests`.
    pub keys: Vec<String>,
    /// The `requestState` to echo.
    pub state: String,
}

/// The complete result's single text block; an error for anything else.
fn complete_text(status: StatusCode, body: &[u8]) -> Result<String, Error> {
    let reply = parse(status, body)?;
    let result = reply.result.ok_or("no result")?;
    if result
        .result_type
        .as_deref()
        .is_some_and(|t| t != "complete")
        || result.is_error
    {
        return Err(format!(
            "not a complete, successful result: {}",
            String::from_utf8_lossy(body)
        )
        .into());
    }
    match result.content.as_slice() {
        [
            Block {
                kind,
                text: Some(text),
            },
        ] if kind == "text" => Ok(text.to_string()),
        _ => Err(format!("expected one text block: {}", String::from_utf8_lossy(body)).into()),
    }
}

fn parse(status: StatusCode, body: &[u8]) -> Result<Reply<'_>, Error> {
    if status != StatusCode::OK {
        return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(body)).into());
    }
    let reply: Reply<'_> = serde_json::from_slice(body)
        .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(body)))?;
    if let Some(error) = reply.error {
        return Err(format!("JSON-RPC error {}", error.get()).into());
    }
    Ok(reply)
}

/// Checks an echo reply: one text block with `sent`, the text sent.
pub fn expect_echo(status: StatusCode, body: &[u8], sent: &str) -> Result<(), Error> {
    let text = complete_text(status, body)?;
    if text == sent {
        Ok(())
    } else {
        let shown: String = text.chars().take(80).collect();
        Err(format!(
            "echo returned {shown:?} ({} bytes, {} sent)",
            text.len(),
            sent.len()
        )
        .into())
    }
}

/// Checks the first round of `confirm_delete`: an `input_required` result.
pub fn expect_input_required(status: StatusCode, body: &[u8]) -> Result<InputRequired, Error> {
    let reply = parse(status, body)?;
    let result = reply.result.ok_or("no result")?;
    if result.result_type.as_deref() != Some("input_required") {
        return Err(format!("expected input_required: {}", String::from_utf8_lossy(body)).into());
    }
    let keys: Vec<String> = result
        .input_requests
        .unwrap_or_default()
        .into_keys()
        .map(Cow::into_owned)
        .collect();
    let state = result
        .request_state
        .ok_or("input_required without requestState")?;
    if keys.is_empty() {
        return Err("input_required without inputRequests".into());
    }
    Ok(InputRequired {
        keys,
        state: state.into_owned(),
    })
}

/// Checks the last round of `confirm_delete`: the server says what it did with the path,
/// relative to its sandbox folder. The benchmark's paths name no file, so a real server
/// answers "Nothing deleted: PATH does not exist in DIR" (one `symlink_metadata`, no file
/// per call); "Deleted PATH (N bytes) from DIR" is accepted too.
pub fn expect_deleted(status: StatusCode, body: &[u8], path: &str) -> Result<(), Error> {
    let text = complete_text(status, body)?;
    let missing = format!("Nothing deleted: {path} does not exist in ");
    let deleted = format!("Deleted {path} (");
    if text.starts_with(&missing) || text.starts_with(&deleted) {
        Ok(())
    } else {
        Err(format!("confirm_delete returned {text:?}").into())
    }
}
