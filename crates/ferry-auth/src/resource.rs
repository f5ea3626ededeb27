//! Canonical resource URIs (authorization spec, "Canonical Server URI"; RFC 8707 §2) and
//! the comparisons built on them: token audiences and DPoP `htu` values.

use url::Url;

use crate::error::ConfigError;

/// The canonical form of a resource URI: an absolute `http(s)` URI without fragment or
/// query, scheme and host in lowercase, the default port left out, and no trailing slash
/// (except the lone `/` of an empty path, which is dropped too).
///
/// ```
/// use ferry_auth::canonical_resource;
///
/// assert_eq!(canonical_resource("HTTPS://MCP.Example.com:443/mcp/").unwrap(), "https://mcp.example.com/mcp");
/// assert_eq!(canonical_resource("https://mcp.example.com/").unwrap(), "https://mcp.example.com");
/// assert!(canonical_resource("mcp.example.com").is_err());
/// assert!(canonical_resource("https://mcp.example.com#x").is_err());
/// ```
pub fn canonical_resource(uri: &str) -> Result<String, ConfigError> {
    let url = Url::parse(uri).map_err(|e| ConfigError::Resource(format!("{uri}: {e}")))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(ConfigError::Resource(format!(
            "{uri}: the scheme must be https (or http on loopback)"
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ConfigError::Resource(format!("{uri}: no host")));
    }
    if url.fragment().is_some() {
        return Err(ConfigError::Resource(format!(
            "{uri}: a fragment is not allowed"
        )));
    }
    if url.query().is_some() {
        return Err(ConfigError::Resource(format!(
            "{uri}: a query is not allowed"
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ConfigError::Resource(format!(
            "{uri}: credentials are not allowed"
        )));
    }
    Ok(canonical_of(&url))
}

/// `url` in canonical form (the `url` crate already lowercases scheme and host and drops
/// default ports); query and fragment are left out.
fn canonical_of(url: &Url) -> String {
    let mut s = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        s.push(':');
        s.push_str(&port.to_string());
    }
    s.push_str(url.path().trim_end_matches('/'));
    s
}

/// Whether a token's audience value names the resource whose canonical URI is
/// `canonical`. Scheme and host compare without case (the spec asks servers to accept
/// uppercase), default ports are ignored and one trailing slash is tolerated; the path
/// otherwise compares exactly.
pub(crate) fn audience_matches(audience: &str, canonical: &str) -> bool {
    if audience == canonical {
        return true;
    }
    let Ok(url) = Url::parse(audience) else {
        return false;
    };
    if url.fragment().is_some()
        || url.query().is_some()
        || !matches!(url.scheme(), "https" | "http")
    {
        return false;
    }
    canonical_of(&url) == canonical
}

/// The DPoP `htu` form of a URI (RFC 9449 §4.3): parsed and normalised (case of scheme
/// and host, default port, dot segments), query and fragment stripped, an empty path
/// written `/`.
pub(crate) fn normalise_htu(uri: &str) -> Option<String> {
    let mut url = Url::parse(uri).ok()?;
    if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
        return None;
    }
    url.set_query(None);
    url.set_fragment(None);
    if !url.username().is_empty() || url.password().is_some() {
        return None;
    }
    Some(url.to_string())
}

/// Whether `host` is a loopback name or address, where plain `http` is allowed.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Checks that `uri` is an `https` URL, or `http` on a loopback host (authorization
/// security considerations, "Communication Security").
pub(crate) fn secure_url(what: &str, uri: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(uri).map_err(|e| ConfigError::Url(format!("{what} {uri}: {e}")))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(ConfigError::Url(format!(
            "{what} {uri}: must use https (plain http only on loopback)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audiences() {
        let c = canonical_resource("https://mcp.example.com/mcp").unwrap();
        for ok in [
            "https://mcp.example.com/mcp",
            "HTTPS://MCP.EXAMPLE.COM/mcp",
            "https://mcp.example.com/mcp/",
            "https://mcp.example.com:443/mcp",
        ] {
            assert!(audience_matches(ok, &c), "{ok}");
        }
        for bad in [
            "https://mcp.example.com/MCP",
            "https://mcp.example.com",
            "https://mcp.example.com/mcp/x",
            "https://mcp.example.com/mcp?x=1",
            "https://mcp.example.com/mcp#f",
            "http://mcp.example.com/mcp",
            "https://mcp.example.com:8443/mcp",
            "mcp.example.com/mcp",
            "https://evil.example.com/mcp",
            "",
        ] {
            assert!(!audience_matches(bad, &c), "{bad}");
        }
        let root = canonical_resource("https://mcp.example.com").unwrap();
        assert!(audience_matches("https://mcp.example.com/", &root));
        assert!(audience_matches("https://Mcp.Example.Com", &root));
    }

    #[test]
    fn htu_values() {
        assert_eq!(
            normalise_htu("HTTPS://Server.Example.com:443/mcp?a=b#c").as_deref(),
            Some("https://server.example.com/mcp")
        );
        assert_eq!(
            normalise_htu("https://server.example.com").as_deref(),
            Some("https://server.example.com/")
        );
        assert_eq!(
            normalise_htu("https://server.example.com/a/../mcp").as_deref(),
            Some("https://server.example.com/mcp")
        );
        assert!(normalise_htu("ftp://x/y").is_none());
        assert!(normalise_htu("/mcp").is_none());
    }

    #[test]
    fn secure_urls() {
        assert!(secure_url("issuer", "https://as.example.com").is_ok());
        assert!(secure_url("issuer", "http://127.0.0.1:9000").is_ok());
        assert!(secure_url("issuer", "http://localhost:9000").is_ok());
        assert!(secure_url("issuer", "http://[::1]:9000").is_ok());
        assert!(secure_url("issuer", "http://as.example.com").is_err());
        assert!(secure_url("issuer", "ftp://as.example.com").is_err());
    }
}
