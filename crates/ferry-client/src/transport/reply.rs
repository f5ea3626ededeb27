//! Sending an HTTP request and reading its response, through reqwest or, for plain-HTTP
//! servers, straight through hyper's pooled client.
//!
//! reqwest wraps every request in layers a JSON-RPC POST does not use (following
//! redirects, retries, proxy matching); following redirects alone parses the request's
//! URL twice per request. A client that talks to one `http://` server with no proxy
//! configured (a gateway's upstream, a sidecar) sends its POSTs through
//! [`DirectClient`] instead: the same hyper connection pool reqwest uses, without the
//! layers. The requests are still built with reqwest, so their headers and bodies are
//! the same either way.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::Body as _;
use hyper_util::client::legacy::Client as PooledClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, StatusCode, Url};

use crate::error::{Error, Result};

/// How long connecting to the server may take (as the reqwest client's
/// `connect_timeout`).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an idle pooled connection is kept (reqwest's default).
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The variables through which reqwest picks up a proxy for `http://` URLs.
const PROXY_VARIABLES: [&str; 4] = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/// hyper's pooled HTTP/1 client, for `http://` servers.
pub(crate) type DirectClient = PooledClient<HttpConnector, reqwest::Body>;

/// Whether the environment configures a proxy that reqwest would use for `http://`.
fn proxy_configured() -> bool {
    PROXY_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|value| !value.is_empty()))
}

/// The direct client for `url`, when requests to it may skip reqwest: a plain `http://`
/// URL, and no proxy configured in the environment (reqwest would honour it).
pub(crate) fn direct_client(url: &Url) -> Option<DirectClient> {
    if url.scheme() != "http" || proxy_configured() {
        return None;
    }
    let mut connector = HttpConnector::new();
    connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
    connector.set_nodelay(true);
    Some(
        PooledClient::builder(TokioExecutor::new())
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .pool_timer(TokioTimer::new())
            .build(connector),
    )
}

/// Sends the request `builder` holds, through `direct` when given.
pub(crate) async fn execute(
    direct: Option<&DirectClient>,
    builder: RequestBuilder,
    failure: &str,
) -> Result<Reply> {
    let Some(client) = direct else {
        return builder
            .send()
            .await
            .map(Reply::Reqwest)
            .map_err(|e| Error::transport_from(failure.to_owned(), e));
    };
    let request = builder
        .build()
        .and_then(http::Request::<reqwest::Body>::try_from)
        .map_err(|e| Error::transport_from(failure.to_owned(), e))?;
    client
        .request(request)
        .await
        .map(Reply::Direct)
        .map_err(|e| Error::transport_from(failure.to_owned(), e))
}

/// A response, from whichever client sent the request.
#[derive(Debug)]
pub(crate) enum Reply {
    /// Through reqwest.
    Reqwest(reqwest::Response),
    /// Through the [`DirectClient`].
    Direct(http::Response<hyper::body::Incoming>),
}

impl Reply {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Reply::Reqwest(r) => r.status(),
            Reply::Direct(r) => r.status(),
        }
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        match self {
            Reply::Reqwest(r) => r.headers(),
            Reply::Direct(r) => r.headers(),
        }
    }

    /// The body's length, when the server gave it.
    pub(crate) fn content_length(&self) -> Option<u64> {
        match self {
            Reply::Reqwest(r) => r.content_length(),
            Reply::Direct(r) => r.body().size_hint().exact(),
        }
    }

    /// The next piece of the body; `None` at its end.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>> {
        const FAILED: &str = "reading the response failed";
        match self {
            Reply::Reqwest(r) => r
                .chunk()
                .await
                .map_err(|e| Error::transport_from(FAILED, e)),
            Reply::Direct(r) => loop {
                match r.body_mut().frame().await {
                    None => return Ok(None),
                    Some(Err(e)) => return Err(Error::transport_from(FAILED, e)),
                    // Trailers carry no body.
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            return Ok(Some(data));
                        }
                    }
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_goes_direct() {
        let http = Url::parse("http://127.0.0.1:9/mcp").unwrap();
        assert_eq!(direct_client(&http).is_some(), !proxy_configured());
        let https = Url::parse("https://127.0.0.1:9/mcp").unwrap();
        assert!(direct_client(&https).is_none());
    }
}
