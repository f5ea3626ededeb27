//! Authorization for the `auth/*` scenarios: an [`OAuthAuthorizer`] configured from the
//! scenario name and `MCP_CONFORMANCE_CONTEXT`, and a headless redirect handler that
//! follows the authorization URL itself (the suite's authorization server redirects
//! straight back with the code).

use std::sync::Arc;

use ferry_client::ferry_oauth::{
    AuthError, BoxFuture, ClientKey, EnterpriseIdp, Grant, OAuthAuthorizer, RedirectHandler,
    Secret, StaticClient,
};
use reqwest::Url;
use serde_json::Value;

/// The client id metadata document URL the suite expects (`auth/basic-cimd`).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The authorizer for `scenario`, configured from `context`.
pub fn authorizer(scenario: &str, context: &Value) -> Result<OAuthAuthorizer, AuthError> {
    let s = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_owned);
    let need = |k: &str| {
        s(k).ok_or_else(|| AuthError::Config(format!("MCP_CONFORMANCE_CONTEXT has no {k}")))
    };
    let builder = OAuthAuthorizer::builder().client_name("ferry-conformance-client");
    let builder = match scenario {
        "auth/client-credentials-basic" => builder
            .grant(Grant::ClientCredentials)
            .static_client(StaticClient::new(need("client_id")?).secret(need("client_secret")?)),
        "auth/client-credentials-jwt" => {
            let alg = s("signing_algorithm").unwrap_or_else(|| "ES256".into());
            builder
                .grant(Grant::ClientCredentials)
                .static_client(StaticClient::new(need("client_id")?))
                .client_key(ClientKey::from_pem(&need("private_key_pem")?, &alg)?)
        }
        "auth/wif-jwt-bearer" => builder
            .grant(Grant::JwtBearer(Arc::new(Secret::new(need("valid_jwt")?))))
            .static_client(StaticClient::new(need("client_id")?)),
        "auth/enterprise-managed-authorization" => {
            let endpoint = Url::parse(&need("idp_token_endpoint")?)
                .map_err(|e| AuthError::Config(format!("idp_token_endpoint: {e}")))?;
            builder
                .grant(Grant::Enterprise(EnterpriseIdp {
                    token_endpoint: endpoint,
                    client: StaticClient::new(need("idp_client_id")?),
                    id_token: Arc::new(Secret::new(need("idp_id_token")?)),
                }))
                .static_client(StaticClient::new(need("client_id")?).secret(need("client_secret")?))
        }
        _ => {
            let mut b = builder
                .client_metadata_document(CLIENT_METADATA_URL)
                .redirect_handler(Headless::new()?);
            if let (Some(id), Some(secret)) = (s("client_id"), s("client_secret")) {
                let mut client = StaticClient::new(id).secret(secret);
                if let Some(issuer) = s("issuer") {
                    client = client.issuer(issuer);
                }
                b = b.static_client(client);
            }
            b
        }
    };
    builder.build()
}

/// Follows the authorization URL without a browser and returns the redirect.
struct Headless {
    http: reqwest::Client,
}

impl Headless {
    fn new() -> Result<Self, AuthError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| AuthError::Redirect(e.to_string()))?;
        Ok(Headless { http })
    }
}

impl RedirectHandler for Headless {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:8765/callback".into()
    }

    fn authorize<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Url, AuthError>> {
        Box::pin(async move {
            let resp = self
                .http
                .get(url.clone())
                .send()
                .await
                .map_err(|e| AuthError::Redirect(format!("authorization request: {e}")))?;
            if !resp.status().is_redirection() {
                return Err(AuthError::Redirect(format!(
                    "the authorization endpoint answered HTTP {} instead of redirecting",
                    resp.status().as_u16()
                )));
            }
            let location = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| AuthError::Redirect("a redirect without Location".into()))?;
            url.join(location)
                .map_err(|e| AuthError::Redirect(format!("Location: {e}")))
        })
    }
}
