//! Authorization server metadata discovery: RFC 8414 `oauth-authorization-server` and
//! OpenID Connect Discovery, in the order of authorization-server-discovery.mdx
//! ("Authorization Server Metadata Discovery"), with the issuer checked against the
//! identifier the URL was built from.

use url::Url;

use crate::fetch::Fetcher;

/// What Ferry needs from an authorization server's metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServerMetadata {
    pub(crate) jwks_uri: Option<Url>,
    pub(crate) introspection_endpoint: Option<Url>,
}

/// The metadata URLs to try for `issuer`, in order.
pub(crate) fn candidates(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let origin = issuer.origin().ascii_serialization();
    let mut urls = Vec::new();
    if path.is_empty() {
        urls.push(format!("{origin}/.well-known/oauth-authorization-server"));
        urls.push(format!("{origin}/.well-known/openid-configuration"));
    } else {
        urls.push(format!(
            "{origin}/.well-known/oauth-authorization-server{path}"
        ));
        urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls.into_iter()
        .filter_map(|u| Url::parse(&u).ok())
        .collect()
}

/// Fetches the metadata of `issuer`: the first candidate document that answers and whose
/// `issuer` is exactly `issuer`. Documents naming another issuer are never used.
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<ServerMetadata, String> {
    let issuer_url = Url::parse(issuer).map_err(|e| format!("issuer {issuer}: {e}"))?;
    let mut failures = Vec::new();
    for url in candidates(&issuer_url) {
        let doc = match fetcher.get_json(&url).await {
            Ok(d) => d.json,
            Err(e) => {
                failures.push(e.0);
                continue;
            }
        };
        if doc.get("issuer").and_then(|v| v.as_str()) != Some(issuer) {
            failures.push(format!("{url}: names another issuer; not used"));
            continue;
        }
        let endpoint = |name: &str| -> Result<Option<Url>, String> {
            match doc.get(name).and_then(|v| v.as_str()) {
                None => Ok(None),
                Some(u) => crate::resource::secure_url(name, u)
                    .map(Some)
                    .map_err(|e| e.to_string()),
            }
        };
        return Ok(ServerMetadata {
            jwks_uri: endpoint("jwks_uri")?,
            introspection_endpoint: endpoint("introspection_endpoint")?,
        });
    }
    Err(format!(
        "no usable metadata for issuer {issuer}: {}",
        failures.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_order() {
        let c = |i: &str| {
            candidates(&Url::parse(i).unwrap())
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            c("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            c("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }
}
