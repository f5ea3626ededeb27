//! The grants, and the client registration and token endpoint they use.

use url::Url;

use super::engine::with_offline_access;
use super::{Grant, OAuthAuthorizer};
use crate::code_flow::PendingAuthorization;
use crate::discovery::Discovered;
use crate::error::AuthError;
use crate::jwt::DpopKey;
use crate::registration::{
    RegisteredClient, RegistrationKind, RegistrationRequest, application_type_for, register,
};
use crate::store::IssuerRecord;
use crate::token::{ClientAuthMethod, JWT_BEARER, TOKEN_EXCHANGE, TokenCall, Tokens};

const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

impl OAuthAuthorizer {
    /// Runs the configured grant.
    pub(super) async fn grant(
        &self,
        d: &Discovered,
        resource: &str,
        scopes: Vec<String>,
        dpop: Option<&DpopKey>,
    ) -> Result<Tokens, AuthError> {
        match &self.config.grant {
            Grant::AuthorizationCode => self.authorization_code(d, resource, scopes, dpop).await,
            Grant::ClientCredentials => {
                let client = self.client_for(d, None).await?;
                let mut params = vec![("grant_type", "client_credentials".to_owned())];
                push_scope(&mut params, &scopes);
                params.push(("resource", resource.to_owned()));
                let call = self.token_call(d, Some(&client), dpop, "token endpoint")?;
                call.request(params, &scopes).await
            }
            Grant::JwtBearer(assertion) => {
                let assertion = assertion.assertion()?;
                let client = match &self.config.static_client {
                    Some(s) => Some(s.bind(&d.issuer)?),
                    None => None,
                };
                self.jwt_bearer(
                    d,
                    client.as_ref(),
                    assertion.expose(),
                    resource,
                    &scopes,
                    dpop,
                )
                .await
            }
            Grant::Enterprise(idp) => {
                let id_token = idp.id_token.assertion()?;
                let idp_client = RegisteredClient {
                    issuer: idp.token_endpoint.to_string(),
                    client_id: idp.client.client_id.clone(),
                    client_secret: idp.client.client_secret.clone(),
                    token_endpoint_auth_method: idp.client.token_endpoint_auth_method.clone(),
                    kind: RegistrationKind::PreRegistered,
                };
                let method = ClientAuthMethod::choose(
                    idp_client.token_endpoint_auth_method.as_deref(),
                    idp_client.client_secret.is_some(),
                    false,
                    &[],
                );
                let exchange = TokenCall {
                    http: &self.http,
                    endpoint: idp.token_endpoint.clone(),
                    issuer: idp.token_endpoint.as_str(),
                    client: Some(&idp_client),
                    method,
                    key: None,
                    dpop: None,
                    nonces: &self.nonces,
                    label: "identity provider token endpoint",
                };
                let mut params = vec![
                    ("grant_type", TOKEN_EXCHANGE.to_owned()),
                    ("requested_token_type", ID_JAG.to_owned()),
                    ("audience", d.issuer.clone()),
                    ("resource", resource.to_owned()),
                ];
                push_scope(&mut params, &scopes);
                params.push(("subject_token", id_token.expose().to_owned()));
                params.push(("subject_token_type", ID_TOKEN.to_owned()));
                let jag = exchange.exchange(params, ID_JAG).await?;
                let client = self.client_for(d, None).await?;
                self.jwt_bearer(d, Some(&client), jag.expose(), resource, &scopes, dpop)
                    .await
            }
        }
    }

    /// RFC 7523 section 2.1: the assertion is the grant.
    async fn jwt_bearer(
        &self,
        d: &Discovered,
        client: Option<&RegisteredClient>,
        assertion: &str,
        resource: &str,
        scopes: &[String],
        dpop: Option<&DpopKey>,
    ) -> Result<Tokens, AuthError> {
        let mut params = vec![
            ("grant_type", JWT_BEARER.to_owned()),
            ("assertion", assertion.to_owned()),
        ];
        push_scope(&mut params, scopes);
        params.push(("resource", resource.to_owned()));
        let call = self.token_call(d, client, dpop, "token endpoint")?;
        call.request(params, scopes).await
    }

    async fn authorization_code(
        &self,
        d: &Discovered,
        resource: &str,
        scopes: Vec<String>,
        dpop: Option<&DpopKey>,
    ) -> Result<Tokens, AuthError> {
        let redirect = self.config.redirect.as_ref().ok_or_else(|| {
            AuthError::Config("the authorization code grant needs a redirect handler".into())
        })?;
        let redirect_uri = redirect.redirect_uri();
        let scopes = with_offline_access(scopes, self.config.refresh_tokens, &d.server);
        let client = self.client_for(d, Some(&redirect_uri)).await?;
        let pending = PendingAuthorization::begin(
            &d.server,
            &client.client_id,
            &redirect_uri,
            &scopes,
            resource,
        )?;
        self.http.policy().check(pending.url())?;
        let callback = redirect.authorize(pending.url()).await?;
        let code = pending.finish(&callback)?;
        let call = self.token_call(d, Some(&client), dpop, "token endpoint")?;
        call.request(
            vec![
                ("grant_type", "authorization_code".into()),
                ("code", code.code.expose().to_owned()),
                ("redirect_uri", code.redirect_uri.clone()),
                ("code_verifier", code.code_verifier.expose().to_owned()),
                ("resource", resource.to_owned()),
            ],
            &code.scopes,
        )
        .await
    }

    /// The client id at this authorization server (client-registration.mdx): the
    /// pre-registered one, else one registered earlier with this issuer, else the Client
    /// ID Metadata Document URL when the server accepts it, else Dynamic Client
    /// Registration.
    pub(super) async fn client_for(
        &self,
        d: &Discovered,
        redirect_uri: Option<&str>,
    ) -> Result<RegisteredClient, AuthError> {
        let cfg = &self.config;
        if let Some(s) = &cfg.static_client {
            return s.bind(&d.issuer);
        }
        let record = cfg.store.load(&d.issuer)?;
        if let Some(c) = record.as_ref().and_then(|r| r.client.clone())
            && c.issuer == d.issuer
        {
            return Ok(c);
        }
        if let Some(url) = &cfg.metadata_document
            && d.server.supports_client_id_metadata_documents()
        {
            return Ok(RegisteredClient {
                issuer: d.issuer.clone(),
                client_id: url.clone(),
                client_secret: None,
                token_endpoint_auth_method: Some(
                    if cfg.client_key.is_some() {
                        "private_key_jwt"
                    } else {
                        "none"
                    }
                    .into(),
                ),
                kind: RegistrationKind::MetadataDocument,
            });
        }
        let Some(endpoint) = &d.server.registration_endpoint else {
            return Err(AuthError::NoRegistration {
                issuer: d.issuer.clone(),
                reason: "no pre-registered client, no client id metadata document support, no registration endpoint".into(),
            });
        };
        let Some(redirect_uri) = redirect_uri else {
            return Err(AuthError::NoRegistration {
                issuer: d.issuer.clone(),
                reason: "dynamic registration needs a redirect URI".into(),
            });
        };
        let endpoint = Url::parse(endpoint)
            .map_err(|e| AuthError::invalid("registration_endpoint", e.to_string()))?;
        let methods = &d.server.token_endpoint_auth_methods_supported;
        let method = match methods {
            None => "none",
            Some(m) if m.iter().any(|x| x == "none") => "none",
            Some(m) => m
                .iter()
                .map(String::as_str)
                .find(|x| matches!(*x, "client_secret_basic" | "client_secret_post"))
                .unwrap_or("none"),
        };
        let mut grant_types = vec!["authorization_code"];
        // Ask for refresh tokens only where the server says it issues them (when it
        // says): a server may refuse a registration naming a grant it does not know.
        let refresh_offered = d
            .server
            .grant_types_supported
            .as_ref()
            .is_none_or(|g| g.iter().any(|x| x == "refresh_token"));
        if cfg.refresh_tokens && refresh_offered {
            grant_types.push("refresh_token");
        }
        let application_type = cfg
            .application_type
            .clone()
            .unwrap_or_else(|| application_type_for(redirect_uri).to_owned());
        let req = RegistrationRequest {
            client_name: &cfg.client_name,
            redirect_uri,
            grant_types,
            token_endpoint_auth_method: method.to_owned(),
            application_type: &application_type,
            scope: None,
        };
        let client = register(&self.http, &d.issuer, &endpoint, &req).await?;
        let mut rec = record.unwrap_or_else(|| IssuerRecord::new(d.issuer.clone()));
        rec.client = Some(client.clone());
        cfg.store.save(&rec)?;
        Ok(client)
    }

    /// A call of the authorization server's token endpoint for `client`.
    pub(super) fn token_call<'a>(
        &'a self,
        d: &'a Discovered,
        client: Option<&'a RegisteredClient>,
        dpop: Option<&'a DpopKey>,
        label: &'a str,
    ) -> Result<TokenCall<'a>, AuthError> {
        let endpoint = d.server.token_endpoint.as_deref().ok_or_else(|| {
            AuthError::invalid("authorization server metadata", "no token_endpoint")
        })?;
        let endpoint = Url::parse(endpoint)
            .map_err(|e| AuthError::invalid("token_endpoint", e.to_string()))?;
        let method = match client {
            Some(c) => ClientAuthMethod::choose(
                c.token_endpoint_auth_method.as_deref(),
                c.client_secret.is_some(),
                self.config.client_key.is_some(),
                &d.server.token_auth_methods(),
            ),
            None => ClientAuthMethod::None,
        };
        Ok(TokenCall {
            http: &self.http,
            endpoint,
            issuer: &d.issuer,
            client,
            method,
            key: self.config.client_key.as_ref(),
            dpop,
            nonces: &self.nonces,
            label,
        })
    }
}

fn push_scope(params: &mut Vec<(&'static str, String)>, scopes: &[String]) {
    if !scopes.is_empty() {
        params.push(("scope", scopes.join(" ")));
    }
}
