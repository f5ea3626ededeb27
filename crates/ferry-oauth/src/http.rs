//! The HTTP side of the flows: bounded bodies, time limits, no redirects, and the HTTPS
//! rule (OAuth 2.1 section 1.5: every authorization server endpoint is HTTPS; loopback
//! is allowed for local development and tests).

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use url::Url;

use crate::error::AuthError;

/// The most of a metadata document or token response that is read.
pub(crate) const MAX_BODY: usize = 256 * 1024;

/// A response, read whole.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON.
    pub fn json<T: DeserializeOwned>(&self, context: &str) -> Result<T, AuthError> {
        serde_json::from_slice(&self.body).map_err(|e| AuthError::invalid(context, e.to_string()))
    }

    /// The value of header `name`, if it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Which URLs the flows may talk to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UrlPolicy {
    /// HTTPS, or plain HTTP to a loopback host (`localhost`, `127.0.0.0/8`, `[::1]`).
    #[default]
    HttpsOrLoopback,
    /// Any HTTP or HTTPS URL. Only for tests on private networks.
    AllowHttp,
}

impl UrlPolicy {
    /// Refuses a URL the policy does not allow.
    pub fn check(self, url: &Url) -> Result<(), AuthError> {
        let refuse = |reason: &str| {
            Err(AuthError::InsecureUrl {
                url: url.to_string(),
                reason: reason.to_owned(),
            })
        };
        match url.scheme() {
            "https" => {}
            "http" if self == UrlPolicy::AllowHttp || is_loopback(url) => {}
            "http" => return refuse("authorization needs HTTPS outside loopback"),
            _ => return refuse("not an http(s) URL"),
        }
        if url.fragment().is_some() {
            return refuse("a URL with a fragment");
        }
        if !url.username().is_empty() || url.password().is_some() {
            return refuse("a URL with credentials");
        }
        Ok(())
    }
}

/// Whether the URL's host is a loopback name or address.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// A `reqwest` client for the flows, with the URL policy.
#[derive(Clone, Debug)]
pub(crate) struct Http {
    client: reqwest::Client,
    policy: UrlPolicy,
    timeout: Duration,
}

impl Http {
    pub fn new(client: reqwest::Client, policy: UrlPolicy, timeout: Duration) -> Self {
        Http {
            client,
            policy,
            timeout,
        }
    }

    /// A client that never follows redirects: a redirect is answered to the caller,
    /// which decides (the authorization endpoint's redirect is the callback).
    pub fn default_client() -> Result<reqwest::Client, AuthError> {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| AuthError::http("setting up HTTP", e))
    }

    pub fn policy(&self) -> UrlPolicy {
        self.policy
    }

    /// GETs `url` (JSON expected).
    pub async fn get(&self, url: &Url, context: &str) -> Result<Reply, AuthError> {
        self.policy.check(url)?;
        let req = self
            .client
            .request(Method::GET, url.clone())
            .header(ACCEPT, "application/json");
        self.send(req, context).await
    }

    /// POSTs a form to `url`, with extra headers.
    pub async fn post_form(
        &self,
        url: &Url,
        form: &[(&str, String)],
        headers: HeaderMap,
        context: &str,
    ) -> Result<Reply, AuthError> {
        self.policy.check(url)?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
            .finish();
        let req = self
            .client
            .request(Method::POST, url.clone())
            .headers(headers)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        self.send(req, context).await
    }

    /// POSTs JSON to `url`.
    pub async fn post_json(
        &self,
        url: &Url,
        body: &serde_json::Value,
        context: &str,
    ) -> Result<Reply, AuthError> {
        self.policy.check(url)?;
        let req = self
            .client
            .request(Method::POST, url.clone())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        self.send(req, context).await
    }

    async fn send(&self, req: reqwest::RequestBuilder, context: &str) -> Result<Reply, AuthError> {
        let mut resp = req
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| AuthError::http(context, e))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        if resp.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(AuthError::invalid(context, "the response is too large"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| AuthError::http(context, e))?
        {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(AuthError::invalid(context, "the response is too large"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Reply {
            status,
            headers,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_or_loopback() {
        let p = UrlPolicy::HttpsOrLoopback;
        for ok in [
            "https://as.example.com/",
            "http://localhost:3000/x",
            "http://127.0.0.1/",
            "http://127.9.9.9/",
            "http://[::1]:8080/",
        ] {
            assert!(p.check(&Url::parse(ok).unwrap()).is_ok(), "{ok}");
        }
        for bad in [
            "http://as.example.com/",
            "ftp://localhost/",
            "https://as.example.com/#frag",
            "https://user:pw@as.example.com/",
            "http://localhost.evil.com/",
        ] {
            assert!(p.check(&Url::parse(bad).unwrap()).is_err(), "{bad}");
        }
        assert!(
            UrlPolicy::AllowHttp
                .check(&Url::parse("http://as.example.com/").unwrap())
                .is_ok()
        );
    }
}
