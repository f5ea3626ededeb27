//! Settings of the Streamable HTTP transport.

use std::time::Duration;

/// Which `Origin` and `Host` values are accepted (DNS rebinding protection, transports/streamable-http.mdx). A request whose `Origin` is present and not allowed gets 403, as does one
/// whose `Host` is not allowed.
#[derive(Clone, Debug)]
pub struct OriginPolicy {
    origins: Allowed,
    hosts: Allowed,
}

#[derive(Clone, Debug)]
enum Allowed {
    Any,
    Localhost,
    List(Vec<String>),
}

impl Default for OriginPolicy {
    /// Local only: origins and hosts must be `localhost`, `127.0.0.1` or `[::1]` (any
    /// port). Right for servers bound to loopback, the default.
    fn default() -> Self {
        OriginPolicy::localhost()
    }
}

impl OriginPolicy {
    /// Only local origins and hosts (any port).
    pub fn localhost() -> Self {
        OriginPolicy {
            origins: Allowed::Localhost,
            hosts: Allowed::Localhost,
        }
    }

    /// Accepts these origins (e.g. `https://app.example.com`) and any `Host`. Requests
    /// without an `Origin` (non-browser clients) are always accepted.
    pub fn origins<I: IntoIterator<Item = S>, S: Into<String>>(origins: I) -> Self {
        OriginPolicy {
            origins: Allowed::List(
                origins
                    .into_iter()
                    .map(|s| s.into().to_ascii_lowercase())
                    .collect(),
            ),
            hosts: Allowed::Any,
        }
    }

    /// Also restricts `Host` to these names (with or without port).
    pub fn with_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        self.hosts = Allowed::List(
            hosts
                .into_iter()
                .map(|s| s.into().to_ascii_lowercase())
                .collect(),
        );
        self
    }

    /// Accepts any origin and host. Only behind a proxy that checks them.
    pub fn any() -> Self {
        OriginPolicy {
            origins: Allowed::Any,
            hosts: Allowed::Any,
        }
    }

    pub(crate) fn origin_ok(&self, origin: &str) -> bool {
        let origin = origin.to_ascii_lowercase();
        match &self.origins {
            Allowed::Any => true,
            Allowed::Localhost => {
                let rest = origin
                    .strip_prefix("http://")
                    .or_else(|| origin.strip_prefix("https://"));
                rest.is_some_and(is_local)
            }
            Allowed::List(list) => list.iter().any(|o| o == origin.trim_end_matches('/')),
        }
    }

    pub(crate) fn host_ok(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        match &self.hosts {
            Allowed::Any => true,
            Allowed::Localhost => is_local(&host),
            Allowed::List(list) => list.iter().any(|h| *h == host || *h == strip_port(&host)),
        }
    }
}

fn strip_port(hostport: &str) -> &str {
    if let Some(rest) = hostport.strip_prefix('[') {
        return rest
            .split(']')
            .next()
            .map_or(hostport, |h| &hostport[..h.len() + 2]);
    }
    hostport.rsplit_once(':').map_or(hostport, |(h, p)| {
        if p.bytes().all(|b| b.is_ascii_digit()) {
            h
        } else {
            hostport
        }
    })
}

fn is_local(hostport: &str) -> bool {
    matches!(strip_port(hostport), "localhost" | "127.0.0.1" | "[::1]")
}

/// Settings of an MCP endpoint.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// Origin and Host checks. Default: local only.
    pub origins: OriginPolicy,
    /// Largest request body accepted, in bytes (413 above). Default 4 MiB.
    pub max_body_bytes: usize,
    /// How long a request's handler may run before it is cancelled with an error.
    /// `subscriptions/listen` streams are not limited. Default 5 minutes.
    pub request_timeout: Duration,
    /// How long reading a request body may take (408 after). Default 30 s.
    pub body_timeout: Duration,
    /// Interval of SSE keep-alive comments on long streams. Default 15 s.
    pub keep_alive: Duration,
    /// How many notifications may wait for a slow SSE reader before the handler waits.
    pub stream_buffer: usize,
    /// Also accept HTTP/2 with prior knowledge (h2c) on plain TCP. Off by default: MCP
    /// clients speak HTTP/1.1 to `http://` endpoints, and sniffing for HTTP/2 costs every
    /// connection a larger read buffer (HTTP/2 over TLS is negotiated by the TLS
    /// terminator in front of the server).
    pub http2: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            origins: OriginPolicy::default(),
            max_body_bytes: 4 * 1024 * 1024,
            request_timeout: Duration::from_secs(300),
            body_timeout: Duration::from_secs(30),
            keep_alive: Duration::from_secs(15),
            stream_buffer: 32,
            http2: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_policy() {
        let p = OriginPolicy::localhost();
        assert!(p.origin_ok("http://localhost:3000"));
        assert!(p.origin_ok("http://127.0.0.1"));
        assert!(p.origin_ok("https://[::1]:8443"));
        assert!(!p.origin_ok("http://evil.example.com"));
        assert!(!p.origin_ok("http://localhost.evil.com"));
        assert!(!p.origin_ok("null"));
        assert!(p.host_ok("localhost:8080"));
        assert!(p.host_ok("127.0.0.1:1"));
        assert!(p.host_ok("[::1]:9"));
        assert!(!p.host_ok("evil.example.com"));
    }

    #[test]
    fn listed_origins() {
        let p = OriginPolicy::origins(["https://app.example.com"]);
        assert!(p.origin_ok("https://APP.example.com"));
        assert!(!p.origin_ok("https://other.example.com"));
        assert!(p.host_ok("anything"));
        let p = p.with_hosts(["mcp.example.com"]);
        assert!(p.host_ok("mcp.example.com:443"));
        assert!(!p.host_ok("evil.com"));
    }
}
