//! Bounded HTTP requests to an authorization server: time-limited, size-limited, no
//! redirects (a redirect could lead to keys or metadata of another host).

use std::time::Duration;

use http::header::CACHE_CONTROL;
use url::Url;

use crate::error::ConfigError;

/// Largest document read from an authorization server.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// A failed request, described without secrets.
#[derive(Debug)]
pub(crate) struct FetchError(pub(crate) String);

/// A JSON document and the `max-age` it may be cached for, if the server said.
pub(crate) struct Fetched {
    pub(crate) json: serde_json::Value,
    pub(crate) max_age: Option<Duration>,
    pub(crate) no_store: bool,
}

#[derive(Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    /// A client with a 5 s timeout and no redirects, or `client` as given.
    pub(crate) fn new(client: Option<reqwest::Client>) -> Result<Self, ConfigError> {
        let client = match client {
            Some(c) => c,
            None => reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(5))
                .connect_timeout(Duration::from_secs(3))
                .user_agent(concat!("ferry-auth/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| ConfigError::Setting(format!("HTTP client: {e}")))?,
        };
        Ok(Fetcher { client })
    }

    /// `GET url`, expecting a JSON document.
    pub(crate) async fn get_json(&self, url: &Url) -> Result<Fetched, FetchError> {
        let res = self
            .client
            .get(url.clone())
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| FetchError(format!("GET {url}: {}", without_url(&e))))?;
        read_json(url, res).await
    }

    /// `POST url` with a form body, optionally with HTTP Basic client credentials.
    pub(crate) async fn post_form(
        &self,
        url: &Url,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<Fetched, FetchError> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut req = self
            .client
            .post(url.clone())
            .header(http::header::ACCEPT, "application/json")
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        if let Some((id, secret)) = basic {
            // RFC 6749 §2.3.1: both parts form-urlencoded before Basic encoding.
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            req = req.basic_auth(enc(id), Some(enc(secret)));
        }
        let res = req
            .send()
            .await
            .map_err(|e| FetchError(format!("POST {url}: {}", without_url(&e))))?;
        read_json(url, res).await
    }
}

/// A reqwest error without the URL (which the caller names once).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    kind.to_owned()
}

async fn read_json(url: &Url, mut res: reqwest::Response) -> Result<Fetched, FetchError> {
    let status = res.status();
    if !status.is_success() {
        return Err(FetchError(format!("{url}: HTTP {status}")));
    }
    let cache = res
        .headers()
        .get(CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let max_age = cache.split(',').find_map(|d| {
        d.trim()
            .strip_prefix("max-age=")
            .and_then(|n| n.trim_matches('"').parse::<u64>().ok())
            .map(Duration::from_secs)
    });
    let no_store = cache
        .split(',')
        .any(|d| matches!(d.trim(), "no-store" | "no-cache"));
    if res
        .content_length()
        .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
    {
        return Err(FetchError(format!("{url}: document too large")));
    }
    let mut body = Vec::new();
    while let Some(chunk) = res
        .chunk()
        .await
        .map_err(|e| FetchError(format!("{url}: {}", without_url(&e))))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(FetchError(format!("{url}: document too large")));
        }
        body.extend_from_slice(&chunk);
    }
    let json = serde_json::from_slice(&body)
        .map_err(|_| FetchError(format!("{url}: not a JSON document")))?;
    Ok(Fetched {
        json,
        max_age,
        no_store,
    })
}
