//! OAuth 2.0 Protected Resource Metadata (RFC 9728), and a service that serves it at the
//! well-known URIs (authorization-server-discovery.mdx, "Protected Resource Metadata
//! Discovery Requirements").

use std::convert::Infallible;
use std::marker::PhantomData;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ALLOW,
    CACHE_CONTROL, CONTENT_TYPE,
};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use serde::Serialize;

use crate::error::ConfigError;
use crate::resource::{canonical_resource, secure_url};

/// The well-known URI suffix of RFC 9728 §3.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The `offline_access` scope, which a resource never advertises (authorization spec,
/// "Refresh Tokens").
const OFFLINE_ACCESS: &str = "offline_access";

/// The Protected Resource Metadata document of an MCP server.
///
/// ```
/// use ferry_auth::ResourceMetadata;
///
/// let m = ResourceMetadata::new("https://mcp.example.com/mcp")
///     .unwrap()
///     .authorization_server("https://auth.example.com")
///     .unwrap()
///     .scopes_supported(["mcp:tools", "offline_access"])
///     .resource_name("Example MCP server");
/// assert_eq!(m.url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
/// assert_eq!(m.root_url(), "https://mcp.example.com/.well-known/oauth-protected-resource");
/// let json = m.to_json();
/// assert_eq!(json["resource"], "https://mcp.example.com/mcp");
/// assert_eq!(json["scopes_supported"], serde_json::json!(["mcp:tools"]));
/// assert_eq!(json["bearer_methods_supported"], serde_json::json!(["header"]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourceMetadata {
    resource: String,
    authorization_servers: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scopes_supported: Vec<String>,
    bearer_methods_supported: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_documentation: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    dpop_signing_alg_values_supported: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    dpop_bound_access_tokens_required: bool,
}

impl ResourceMetadata {
    /// The metadata of the resource at `resource` (its canonical URI is used, see
    /// [`canonical_resource`]). Name at least one authorization server before serving it.
    pub fn new(resource: &str) -> Result<Self, ConfigError> {
        Ok(ResourceMetadata {
            resource: canonical_resource(resource)?,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            bearer_methods_supported: vec!["header".to_owned()],
            resource_name: None,
            resource_documentation: None,
            dpop_signing_alg_values_supported: Vec::new(),
            dpop_bound_access_tokens_required: false,
        })
    }

    /// Adds an authorization server (its issuer identifier), which must use `https`
    /// (plain `http` is accepted on loopback only).
    pub fn authorization_server(mut self, issuer: &str) -> Result<Self, ConfigError> {
        secure_url("authorization server", issuer)?;
        if !self.authorization_servers.iter().any(|a| a == issuer) {
            self.authorization_servers.push(issuer.to_owned());
        }
        Ok(self)
    }

    /// The scopes a client needs for basic use (`offline_access` is left out).
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes
            .into_iter()
            .map(Into::into)
            .filter(|s| !s.is_empty() && s != OFFLINE_ACCESS)
            .collect();
        self
    }

    /// A human-readable name for the resource.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// A page with documentation for developers.
    pub fn resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.resource_documentation = Some(url.into());
        self
    }

    /// Advertises DPoP (RFC 9449 §5.1): the proof algorithms accepted, and whether
    /// bound tokens are required.
    pub(crate) fn with_dpop(mut self, algs: Vec<String>, required: bool) -> Self {
        self.dpop_signing_alg_values_supported = algs;
        self.dpop_bound_access_tokens_required = required;
        self
    }

    /// The canonical resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The authorization servers.
    pub fn authorization_servers(&self) -> &[String] {
        &self.authorization_servers
    }

    /// The advertised scopes.
    pub fn scopes(&self) -> &[String] {
        &self.scopes_supported
    }

    /// The path of the metadata for this resource: the well-known suffix inserted before
    /// the resource's path (`/.well-known/oauth-protected-resource/mcp` for `/mcp`).
    pub fn path(&self) -> String {
        format!("{WELL_KNOWN}{}", self.resource_path())
    }

    /// The URL of the metadata, as named in `WWW-Authenticate` challenges
    /// (`resource_metadata`, RFC 9728 §5.1).
    pub fn url(&self) -> String {
        format!("{}{}", self.origin(), self.path())
    }

    /// The URL of the metadata at the host's root.
    pub fn root_url(&self) -> String {
        format!("{}{WELL_KNOWN}", self.origin())
    }

    /// The document as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// A tower service answering `GET` at both [`ResourceMetadata::path`] and the root
    /// well-known path, and `404` elsewhere.
    pub fn service<B>(&self) -> MetadataService<B> {
        MetadataService {
            inner: Arc::new(Served {
                paths: [self.path(), WELL_KNOWN.to_owned()],
                body: Bytes::from(serde_json::to_vec(self).unwrap_or_default()),
            }),
            _body: PhantomData,
        }
    }

    /// An axum router serving the metadata at both well-known paths, to merge into an
    /// app (`app.merge(metadata.router())`).
    #[cfg(feature = "axum")]
    pub fn router(&self) -> axum::Router {
        let svc = self.service::<axum::body::Body>();
        let mut router = axum::Router::new().route_service(WELL_KNOWN, svc.clone());
        let path = self.path();
        if path != WELL_KNOWN {
            router = router.route_service(&path, svc);
        }
        router
    }

    fn resource_path(&self) -> &str {
        let after_scheme = self.resource.split_once("://").map_or("", |(_, r)| r);
        after_scheme.find('/').map_or("", |i| &after_scheme[i..])
    }

    fn origin(&self) -> &str {
        let path = self.resource_path();
        &self.resource[..self.resource.len() - path.len()]
    }
}

struct Served {
    paths: [String; 2],
    body: Bytes,
}

/// Serves a [`ResourceMetadata`] document (see [`ResourceMetadata::service`]), with
/// `Access-Control-Allow-Origin: *` so browser-based clients can read it.
pub struct MetadataService<B> {
    inner: Arc<Served>,
    _body: PhantomData<fn() -> B>,
}

impl<B> Clone for MetadataService<B> {
    fn clone(&self) -> Self {
        MetadataService {
            inner: self.inner.clone(),
            _body: PhantomData,
        }
    }
}

impl<B> std::fmt::Debug for MetadataService<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetadataService")
            .field("paths", &self.inner.paths)
            .finish()
    }
}

impl<ReqBody, B: From<Bytes>> tower_service::Service<Request<ReqBody>> for MetadataService<B> {
    type Response = Response<B>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<B>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let path = req.uri().path();
        let known = self.inner.paths.iter().any(|p| p == path);
        let (status, body) = if !known {
            (StatusCode::NOT_FOUND, Bytes::new())
        } else if req.method() == Method::GET {
            (StatusCode::OK, self.inner.body.clone())
        } else if req.method() == Method::HEAD {
            (StatusCode::OK, Bytes::new())
        } else if req.method() == Method::OPTIONS {
            (StatusCode::NO_CONTENT, Bytes::new())
        } else {
            (StatusCode::METHOD_NOT_ALLOWED, Bytes::new())
        };
        let mut res = Response::new(B::from(body));
        *res.status_mut() = status;
        if known {
            let h = res.headers_mut();
            h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
            h.insert(ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
            if status == StatusCode::OK {
                h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                h.insert(
                    CACHE_CONTROL,
                    HeaderValue::from_static("public, max-age=300"),
                );
            } else if status == StatusCode::NO_CONTENT {
                h.insert(
                    ACCESS_CONTROL_ALLOW_METHODS,
                    HeaderValue::from_static("GET, HEAD, OPTIONS"),
                );
                h.insert(
                    ACCESS_CONTROL_ALLOW_HEADERS,
                    HeaderValue::from_static("mcp-protocol-version"),
                );
            }
        }
        std::future::ready(Ok(res))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_for_paths_and_roots() {
        let m = ResourceMetadata::new("https://mcp.example.com/public/mcp").unwrap();
        assert_eq!(m.path(), "/.well-known/oauth-protected-resource/public/mcp");
        assert_eq!(
            m.url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp"
        );
        let root = ResourceMetadata::new("https://MCP.example.com:8443/").unwrap();
        assert_eq!(root.resource(), "https://mcp.example.com:8443");
        assert_eq!(root.path(), WELL_KNOWN);
        assert_eq!(
            root.url(),
            "https://mcp.example.com:8443/.well-known/oauth-protected-resource"
        );
        assert_eq!(root.url(), root.root_url());
    }

    #[test]
    fn document_fields() {
        let m = ResourceMetadata::new("http://127.0.0.1:8080/mcp")
            .unwrap()
            .authorization_server("http://127.0.0.1:9000")
            .unwrap()
            .authorization_server("http://127.0.0.1:9000")
            .unwrap()
            .scopes_supported(["a", "offline_access", ""])
            .resource_documentation("https://docs.example.com")
            .with_dpop(vec!["ES256".into()], true);
        let j = m.to_json();
        assert_eq!(
            j,
            serde_json::json!({
                "resource": "http://127.0.0.1:8080/mcp",
                "authorization_servers": ["http://127.0.0.1:9000"],
                "scopes_supported": ["a"],
                "bearer_methods_supported": ["header"],
                "resource_documentation": "https://docs.example.com",
                "dpop_signing_alg_values_supported": ["ES256"],
                "dpop_bound_access_tokens_required": true
            })
        );
        assert!(
            ResourceMetadata::new("http://127.0.0.1/mcp")
                .unwrap()
                .authorization_server("http://auth.example.com")
                .is_err(),
            "an authorization server off loopback must use https"
        );
    }
}
