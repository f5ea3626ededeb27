//! Client registration (client-registration.mdx): pre-registered clients, Client ID
//! Metadata Documents, and Dynamic Client Registration (RFC 7591, deprecated fallback).

use serde::{Deserialize, Serialize};
use serde_json::json;
use url::Url;

use crate::error::AuthError;
use crate::http::{Http, is_loopback};
use crate::secret::Secret;

/// How a client id was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegistrationKind {
    /// Configured ahead of time.
    PreRegistered,
    /// An HTTPS URL naming a Client ID Metadata Document.
    MetadataDocument,
    /// Registered with RFC 7591.
    Dynamic,
}

/// A client id at one authorization server, with its credentials. Bound to the issuer
/// that issued it (client-registration.mdx, Authorization Server Binding).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisteredClient {
    /// The issuer this client belongs to.
    pub issuer: String,
    /// The client id.
    pub client_id: String,
    /// The client secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// The `token_endpoint_auth_method` registered, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// How it was obtained.
    pub kind: RegistrationKind,
}

/// A pre-registered client: a client id (and secret) obtained out of band.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticClient {
    /// The client id.
    pub client_id: String,
    /// The secret, for confidential clients.
    pub client_secret: Option<Secret>,
    /// The issuer it was registered with. When set, the client refuses to use it with
    /// any other authorization server; when unset it is used with whichever server the
    /// resource names.
    pub issuer: Option<String>,
    /// The registered `token_endpoint_auth_method`, if known.
    pub token_endpoint_auth_method: Option<String>,
}

impl StaticClient {
    /// A public client with this id.
    pub fn new(client_id: impl Into<String>) -> Self {
        StaticClient {
            client_id: client_id.into(),
            client_secret: None,
            issuer: None,
            token_endpoint_auth_method: None,
        }
    }

    /// With a client secret.
    pub fn secret(mut self, secret: impl Into<Secret>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// Registered with this issuer only.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// With a known `token_endpoint_auth_method`.
    pub fn auth_method(mut self, method: impl Into<String>) -> Self {
        self.token_endpoint_auth_method = Some(method.into());
        self
    }

    pub(crate) fn bind(&self, issuer: &str) -> Result<RegisteredClient, AuthError> {
        if let Some(configured) = &self.issuer
            && configured != issuer
        {
            return Err(AuthError::IssuerChanged {
                configured: configured.clone(),
                issuer: issuer.to_owned(),
            });
        }
        Ok(RegisteredClient {
            issuer: issuer.to_owned(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            token_endpoint_auth_method: self.token_endpoint_auth_method.clone(),
            kind: RegistrationKind::PreRegistered,
        })
    }
}

/// Checks a Client ID Metadata Document URL: HTTPS with a path
/// (client-registration.mdx, Implementation Requirements).
pub fn check_metadata_document_url(url: &str) -> Result<Url, AuthError> {
    let parsed = Url::parse(url).map_err(|e| AuthError::Config(format!("client id URL: {e}")))?;
    if parsed.scheme() != "https" || parsed.path().trim_matches('/').is_empty() {
        return Err(AuthError::Config(format!(
            "a client id metadata document URL must be https with a path, not {url}"
        )));
    }
    if parsed.fragment().is_some() {
        return Err(AuthError::Config(format!("{url} has a fragment")));
    }
    Ok(parsed)
}

/// The `application_type` for a redirect URI (client-registration.mdx, Application Type
/// and Redirect URI Constraints): `native` for loopback and private-use schemes, `web`
/// for remote HTTPS.
pub fn application_type_for(redirect_uri: &str) -> &'static str {
    match Url::parse(redirect_uri) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && !is_loopback(&u) => "web",
        _ => "native",
    }
}

/// The client metadata sent with Dynamic Client Registration (RFC 7591 section 2).
#[derive(Clone, Debug)]
pub(crate) struct RegistrationRequest<'a> {
    pub client_name: &'a str,
    pub redirect_uri: &'a str,
    pub grant_types: Vec<&'static str>,
    pub token_endpoint_auth_method: String,
    pub application_type: &'a str,
    pub scope: Option<String>,
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<Secret>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Registers with `endpoint` (RFC 7591 section 3).
pub(crate) async fn register(
    http: &Http,
    issuer: &str,
    endpoint: &Url,
    req: &RegistrationRequest<'_>,
) -> Result<RegisteredClient, AuthError> {
    let mut body = json!({
        "client_name": req.client_name,
        "redirect_uris": [req.redirect_uri],
        "grant_types": req.grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": req.token_endpoint_auth_method,
        "application_type": req.application_type,
    });
    if let Some(scope) = &req.scope {
        body["scope"] = json!(scope);
    }
    let reply = http
        .post_json(endpoint, &body, "dynamic client registration")
        .await?;
    if !reply.status.is_success() {
        let err: Option<serde_json::Value> = reply.json("registration error").ok();
        let field = |k: &str| {
            err.as_ref()
                .and_then(|e| e.get(k))
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        return Err(match field("error") {
            Some(error) => AuthError::OAuth {
                endpoint: "registration endpoint".into(),
                error,
                description: field("error_description"),
                status: reply.status.as_u16(),
            },
            None => AuthError::Status {
                context: "dynamic client registration".into(),
                status: reply.status.as_u16(),
            },
        });
    }
    let resp: RegistrationResponse = reply.json("registration response")?;
    if resp.client_id.is_empty() {
        return Err(AuthError::invalid(
            "registration response",
            "empty client_id",
        ));
    }
    Ok(RegisteredClient {
        issuer: issuer.to_owned(),
        client_id: resp.client_id,
        client_secret: resp.client_secret,
        token_endpoint_auth_method: resp
            .token_endpoint_auth_method
            .or_else(|| Some(req.token_endpoint_auth_method.clone())),
        kind: RegistrationKind::Dynamic,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_document_urls() {
        assert!(check_metadata_document_url("https://app.example.com/client.json").is_ok());
        assert!(check_metadata_document_url("https://app.example.com/").is_err());
        assert!(check_metadata_document_url("http://app.example.com/client.json").is_err());
        assert!(check_metadata_document_url("not a url").is_err());
    }

    #[test]
    fn application_types() {
        assert_eq!(
            application_type_for("http://127.0.0.1:4000/callback"),
            "native"
        );
        assert_eq!(application_type_for("http://localhost/cb"), "native");
        assert_eq!(application_type_for("com.example.app:/cb"), "native");
        assert_eq!(application_type_for("https://app.example.com/cb"), "web");
    }

    #[test]
    fn static_clients_are_bound_to_their_issuer() {
        let c = StaticClient::new("id").secret("s").issuer("https://as.one");
        assert!(c.bind("https://as.one").is_ok());
        assert!(matches!(
            c.bind("https://as.two"),
            Err(AuthError::IssuerChanged { .. })
        ));
        let any = StaticClient::new("id");
        assert_eq!(any.bind("https://as.two").unwrap().issuer, "https://as.two");
    }
}
