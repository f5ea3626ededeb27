//! [`LoopbackRedirect`]: the redirect of a native application (a CLI, a desktop app),
//! received on `http://127.0.0.1:<port>/callback` (RFC 8252 section 7.3; the MCP
//! authorization spec's client-registration.mdx lists loopback redirect URIs for local
//! clients).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

use crate::authorizer::{BoxFuture, RedirectHandler};
use crate::error::AuthError;

/// The largest request head read from the browser.
const MAX_HEAD: usize = 8 * 1024;
/// How long one browser connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

type Opener = dyn Fn(&Url) -> Result<(), AuthError> + Send + Sync;

/// Receives the authorization server's redirect on a loopback listener.
///
/// [`bind`](LoopbackRedirect::bind) takes a free port on 127.0.0.1 at once, so the
/// redirect URI is known before the client registers. Each
/// [`authorize`](RedirectHandler::authorize) calls the opener with the authorization URL
/// (open a browser, print the URL, or both), then waits for the browser to come back to
/// `/callback` with the same `state`, answers it with a short page, and returns the
/// callback URL. Other requests (a favicon, a stale tab) are answered and ignored. The
/// wait is bounded ([`timeout`](LoopbackRedirect::timeout), default 5 minutes).
///
/// ```no_run
/// use ferry_oauth::{AuthError, LoopbackRedirect, OAuthAuthorizer};
///
/// # fn run() -> Result<(), AuthError> {
/// let redirect = LoopbackRedirect::bind()?.on_open(|url| {
///     eprintln!("Open this page to sign in: {url}");
///     Ok(())
/// });
/// let oauth = OAuthAuthorizer::builder().redirect_handler(redirect).build()?;
/// # let _ = oauth;
/// # Ok(())
/// # }
/// ```
pub struct LoopbackRedirect {
    listener: std::net::TcpListener,
    port: u16,
    open: Arc<Opener>,
    timeout: Duration,
}

impl fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("port", &self.port)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Binds a free port on 127.0.0.1. The default opener prints the URL on stderr.
    pub fn bind() -> Result<Self, AuthError> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| AuthError::Redirect(format!("cannot listen on 127.0.0.1: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| AuthError::Redirect(e.to_string()))?
            .port();
        Ok(LoopbackRedirect {
            listener,
            port,
            open: Arc::new(|url: &Url| {
                eprintln!("Open this page to sign in: {url}");
                Ok(())
            }),
            timeout: Duration::from_secs(300),
        })
    }

    /// What to do with the authorization URL: open a browser, print it, or refuse (an
    /// error from the opener ends the authorization with it).
    pub fn on_open(
        mut self,
        open: impl Fn(&Url) -> Result<(), AuthError> + Send + Sync + 'static,
    ) -> Self {
        self.open = Arc::new(open);
        self
    }

    /// How long to wait for the browser to come back (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The port the redirect arrives on.
    pub fn port(&self) -> u16 {
        self.port
    }

    async fn wait(&self, expected_state: Option<&str>) -> Result<Url, AuthError> {
        let std_listener = self
            .listener
            .try_clone()
            .map_err(|e| AuthError::Redirect(e.to_string()))?;
        let listener =
            TcpListener::from_std(std_listener).map_err(|e| AuthError::Redirect(e.to_string()))?;
        loop {
            let (stream, _) = listener
                .accept()
                .await
                .map_err(|e| AuthError::Redirect(format!("accepting the redirect: {e}")))?;
            match tokio::time::timeout(READ_TIMEOUT, self.serve(stream, expected_state)).await {
                Ok(Ok(Some(url))) => return Ok(url),
                Ok(Ok(None)) => continue,
                Ok(Err(e)) => tracing::debug!(error = %e, "a redirect connection failed"),
                Err(_) => tracing::debug!("a redirect connection sent nothing in time"),
            }
        }
    }

    /// Answers one browser request; `Some` when it was the redirect.
    async fn serve(
        &self,
        mut stream: TcpStream,
        expected_state: Option<&str>,
    ) -> std::io::Result<Option<Url>> {
        let target = match read_target(&mut stream).await? {
            Some(t) => t,
            None => {
                respond(&mut stream, "400 Bad Request", "Not an HTTP request.").await?;
                return Ok(None);
            }
        };
        let base = format!("http://127.0.0.1:{}", self.port);
        let Ok(url) = Url::parse(&base).and_then(|b| b.join(&target)) else {
            respond(&mut stream, "400 Bad Request", "Not a URL.").await?;
            return Ok(None);
        };
        if url.path() != "/callback" {
            respond(&mut stream, "404 Not Found", "Nothing here.").await?;
            return Ok(None);
        }
        let param = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if expected_state.is_some() && param("state").as_deref() != expected_state {
            respond(
                &mut stream,
                "400 Bad Request",
                "This sign-in link is not the one the application is waiting for. Start again from the application.",
            )
            .await?;
            return Ok(None);
        }
        match param("error") {
            Some(error) => {
                let text = format!(
                    "Sign-in failed: {}. You can close this tab.",
                    escape(&error)
                );
                respond(&mut stream, "200 OK", &text).await?;
            }
            None => {
                respond(
                    &mut stream,
                    "200 OK",
                    "Signed in. You can close this tab and go back to the application.",
                )
                .await?;
            }
        }
        Ok(Some(url))
    }
}

impl RedirectHandler for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a Url,
    ) -> BoxFuture<'a, Result<Url, AuthError>> {
        Box::pin(async move {
            let state = authorization_url
                .query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned());
            (self.open)(authorization_url)?;
            tokio::time::timeout(self.timeout, self.wait(state.as_deref()))
                .await
                .map_err(|_| {
                    AuthError::Redirect(format!(
                        "the browser did not come back within {} s",
                        self.timeout.as_secs()
                    ))
                })?
        })
    }
}

/// The request target of a `GET` request head, read up to its end (bounded).
async fn read_target(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(Some(target.to_owned())),
        _ => Ok(None),
    }
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>Sign-in</title>\
         <p style=\"font-family:sans-serif;margin:3em\">{text}</p>"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nreferrer-policy: no-referrer\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

fn escape(text: &str) -> String {
    text.chars()
        .take(200)
        .map(|c| match c {
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '&' => "&amp;".to_owned(),
            '"' => "&quot;".to_owned(),
            c if c.is_control() => String::new(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        s.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .expect("write");
        let mut out = String::new();
        s.read_to_string(&mut out).await.expect("read");
        out
    }

    #[tokio::test]
    async fn waits_for_the_callback_with_the_right_state() {
        let redirect = LoopbackRedirect::bind()
            .expect("bind")
            .on_open(|_| Ok(()))
            .timeout(Duration::from_secs(10));
        let port = redirect.port();
        assert_eq!(
            redirect.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let auth = Url::parse("https://as.example/authorize?state=s1&client_id=c").unwrap();
        let browser = tokio::spawn(async move {
            let favicon = get(port, "/favicon.ico").await;
            let stale = get(port, "/callback?code=old&state=s0").await;
            let done = get(port, "/callback?code=abc&state=s1&iss=x").await;
            (favicon, stale, done)
        });
        let url = redirect.authorize(&auth).await.expect("redirect received");
        assert_eq!(url.path(), "/callback");
        assert!(url.query().unwrap().contains("code=abc"));
        let (favicon, stale, done) = browser.await.unwrap();
        assert!(favicon.starts_with("HTTP/1.1 404"), "{favicon}");
        assert!(stale.starts_with("HTTP/1.1 400"), "{stale}");
        assert!(done.starts_with("HTTP/1.1 200") && done.contains("Signed in"));
    }

    #[tokio::test]
    async fn an_error_redirect_is_shown_escaped_and_returned() {
        let redirect = LoopbackRedirect::bind().expect("bind").on_open(|_| Ok(()));
        let port = redirect.port();
        let auth = Url::parse("https://as.example/authorize?state=s").unwrap();
        let browser =
            tokio::spawn(
                async move { get(port, "/callback?error=%3Cb%3Eaccess_denied&state=s").await },
            );
        let url = redirect.authorize(&auth).await.expect("returned");
        assert!(url.query().unwrap().contains("error="));
        let page = browser.await.unwrap();
        assert!(page.contains("&lt;b&gt;access_denied"), "{page}");
    }

    #[tokio::test]
    async fn the_wait_is_bounded_and_the_opener_can_refuse() {
        let redirect = LoopbackRedirect::bind()
            .expect("bind")
            .on_open(|_| Ok(()))
            .timeout(Duration::from_millis(100));
        let auth = Url::parse("https://as.example/authorize?state=s").unwrap();
        let err = redirect.authorize(&auth).await.expect_err("times out");
        assert!(err.to_string().contains("did not come back"), "{err}");
        let refusing = LoopbackRedirect::bind()
            .expect("bind")
            .on_open(|_| Err(AuthError::Redirect("sign in with `app login`".into())));
        let err = refusing.authorize(&auth).await.expect_err("refused");
        assert!(err.to_string().contains("app login"), "{err}");
    }
}
