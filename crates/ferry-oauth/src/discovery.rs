//! Discovery: from an MCP server URL to its authorization server's metadata
//! (authorization-server-discovery.mdx).
//!
//! 1. Protected Resource Metadata (RFC 9728): the `resource_metadata` URL of the 401's
//!    `WWW-Authenticate` when present; otherwise the well-known URI with the server's
//!    path inserted, then the one at the root.
//! 2. The metadata's `resource` must identify the server (RFC 9728 section 3.3).
//! 3. Authorization server metadata for the chosen issuer: RFC 8414 with path
//!    insertion, then OpenID Connect Discovery with path insertion, then with path
//!    appending (for an issuer without a path, the first two only). The document's
//!    `issuer` must be identical to the issuer the URL was built from.

use url::Url;

use crate::error::AuthError;
use crate::http::Http;
use crate::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};

const PRM_SUFFIX: &str = "/.well-known/oauth-protected-resource";
const OAUTH_SUFFIX: &str = "/.well-known/oauth-authorization-server";
const OIDC_SUFFIX: &str = "/.well-known/openid-configuration";

/// What discovery found for one MCP server.
#[derive(Clone, Debug)]
pub struct Discovered {
    /// The Protected Resource Metadata.
    pub resource: ProtectedResourceMetadata,
    /// Where it came from.
    pub resource_metadata_url: Url,
    /// The issuer chosen from `authorization_servers`.
    pub issuer: String,
    /// Its validated metadata.
    pub server: AuthorizationServerMetadata,
    /// Where that came from.
    pub server_metadata_url: Url,
}

/// The Protected Resource Metadata URLs to try for `server`, in order: the challenge's
/// `resource_metadata` alone when given, else path-inserted then root.
pub fn resource_metadata_urls(
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<Vec<Url>, AuthError> {
    if let Some(u) = from_challenge {
        let url = server.join(u).map_err(|e| {
            AuthError::invalid("resource_metadata in WWW-Authenticate", e.to_string())
        })?;
        return Ok(vec![url]);
    }
    let path = server.path().trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(well_known(server, PRM_SUFFIX, path));
    }
    out.push(well_known(server, PRM_SUFFIX, ""));
    Ok(out)
}

/// The authorization server metadata URLs to try for `issuer`, in the spec's order.
pub fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        return vec![
            well_known(issuer, OAUTH_SUFFIX, ""),
            well_known(issuer, OIDC_SUFFIX, ""),
        ];
    }
    let mut appended = issuer.clone();
    appended.set_path(&format!("{path}{OIDC_SUFFIX}"));
    appended.set_query(None);
    appended.set_fragment(None);
    vec![
        well_known(issuer, OAUTH_SUFFIX, path),
        well_known(issuer, OIDC_SUFFIX, path),
        appended,
    ]
}

fn well_known(base: &Url, suffix: &str, path: &str) -> Url {
    let mut u = base.clone();
    u.set_path(&format!("{suffix}{path}"));
    u.set_query(None);
    u.set_fragment(None);
    u
}

/// Whether the Protected Resource Metadata's `resource` identifies `server`: same
/// scheme, host and port (case-insensitively, as parsed), and a path equal to the
/// server's or a parent of it (a metadata document at the root describes the whole
/// origin).
pub fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    if r.fragment().is_some()
        || r.scheme() != server.scheme()
        || r.host() != server.host()
        || r.port_or_known_default() != server.port_or_known_default()
    {
        return false;
    }
    let want = r.path().trim_end_matches('/');
    let have = server.path().trim_end_matches('/');
    want.is_empty() || have == want || have.starts_with(&format!("{want}/"))
}

/// Fetches and validates the Protected Resource Metadata of `server`.
pub(crate) async fn fetch_resource_metadata(
    http: &Http,
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<(ProtectedResourceMetadata, Url), AuthError> {
    let urls = resource_metadata_urls(server, from_challenge)?;
    let mut tried = Vec::new();
    for url in urls {
        tried.push(url.to_string());
        let reply = http.get(&url, "protected resource metadata").await?;
        if !reply.status.is_success() {
            tracing::debug!(url = %url, status = reply.status.as_u16(), "no protected resource metadata here");
            continue;
        }
        let prm: ProtectedResourceMetadata = reply.json("protected resource metadata")?;
        if !resource_matches(&prm.resource, server) {
            return Err(AuthError::ResourceMismatch {
                resource: prm.resource,
                server: server.to_string(),
            });
        }
        if prm.authorization_servers.is_empty() {
            return Err(AuthError::invalid(
                "protected resource metadata",
                "authorization_servers is empty",
            ));
        }
        return Ok((prm, url));
    }
    Err(AuthError::NoResourceMetadata {
        server: server.to_string(),
        tried,
    })
}

/// Fetches the metadata of `issuer`, trying each well-known URL in order, and checks
/// that the document names exactly that issuer.
pub(crate) async fn fetch_server_metadata(
    http: &Http,
    issuer: &str,
) -> Result<(AuthorizationServerMetadata, Url), AuthError> {
    let issuer_url = Url::parse(issuer)
        .map_err(|e| AuthError::invalid("authorization server issuer", e.to_string()))?;
    http.policy().check(&issuer_url)?;
    if issuer_url.query().is_some() {
        return Err(AuthError::invalid(
            "authorization server issuer",
            "an issuer has no query (RFC 8414 section 2)",
        ));
    }
    let mut tried = Vec::new();
    for url in server_metadata_urls(&issuer_url) {
        tried.push(url.to_string());
        let reply = http.get(&url, "authorization server metadata").await?;
        if !reply.status.is_success() {
            tracing::debug!(url = %url, status = reply.status.as_u16(), "no authorization server metadata here");
            continue;
        }
        let meta: AuthorizationServerMetadata = reply.json("authorization server metadata")?;
        if meta.issuer != issuer {
            return Err(AuthError::IssuerMismatch {
                expected: issuer.to_owned(),
                found: meta.issuer,
                url: url.to_string(),
            });
        }
        return Ok((meta, url));
    }
    Err(AuthError::NoServerMetadata {
        issuer: issuer.to_owned(),
        tried,
    })
}

/// Runs the whole discovery for `server`.
pub(crate) async fn discover(
    http: &Http,
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<Discovered, AuthError> {
    let (resource, resource_metadata_url) =
        fetch_resource_metadata(http, server, from_challenge).await?;
    // RFC 9728 section 7.6 leaves the choice to the client: the first listed.
    let issuer = resource.authorization_servers[0].clone();
    let (server_meta, server_metadata_url) = fetch_server_metadata(http, &issuer).await?;
    Ok(Discovered {
        resource,
        resource_metadata_url,
        issuer,
        server: server_meta,
        server_metadata_url,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn resource_metadata_order() {
        let urls = resource_metadata_urls(&u("https://ex.com/public/mcp"), None).unwrap();
        let urls: Vec<_> = urls.iter().map(Url::as_str).collect();
        assert_eq!(
            urls,
            [
                "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
                "https://ex.com/.well-known/oauth-protected-resource"
            ]
        );
        let root = resource_metadata_urls(&u("https://ex.com/"), None).unwrap();
        assert_eq!(root.len(), 1);
        let header =
            resource_metadata_urls(&u("https://ex.com/mcp"), Some("https://ex.com/custom.json"))
                .unwrap();
        assert_eq!(header, vec![u("https://ex.com/custom.json")]);
    }

    #[test]
    fn server_metadata_order() {
        let with_path: Vec<_> = server_metadata_urls(&u("https://auth.ex.com/tenant1"))
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            with_path,
            [
                "https://auth.ex.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.ex.com/.well-known/openid-configuration/tenant1",
                "https://auth.ex.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let root: Vec<_> = server_metadata_urls(&u("https://auth.ex.com"))
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            root,
            [
                "https://auth.ex.com/.well-known/oauth-authorization-server",
                "https://auth.ex.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resource_identity() {
        let server = u("https://mcp.ex.com/server/mcp");
        assert!(resource_matches("https://mcp.ex.com/server/mcp", &server));
        assert!(resource_matches("HTTPS://MCP.EX.COM/server/mcp", &server));
        assert!(resource_matches("https://mcp.ex.com", &server));
        assert!(resource_matches("https://mcp.ex.com:443/server", &server));
        assert!(!resource_matches("https://evil.example.com/mcp", &server));
        assert!(!resource_matches("https://mcp.ex.com/serv", &server));
        assert!(!resource_matches(
            "https://mcp.ex.com/server/mcp/x",
            &server
        ));
        assert!(!resource_matches("http://mcp.ex.com/server/mcp", &server));
        assert!(!resource_matches(
            "https://mcp.ex.com:8443/server/mcp",
            &server
        ));
        assert!(!resource_matches(
            "https://mcp.ex.com/server/mcp#f",
            &server
        ));
        assert!(!resource_matches("mcp.ex.com", &server));
    }
}
