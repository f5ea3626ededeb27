//! The token endpoint: grants, client authentication, DPoP proofs with the server's
//! nonce, and the response (RFC 6749 section 5; OAuth 2.1 section 3.2).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::AuthError;
use crate::http::{Http, Reply};
use crate::jwt::{ClientKey, DpopKey, Nonces, now};
use crate::registration::RegisteredClient;
use crate::secret::Secret;

/// `grant_type` for RFC 7523 JWT bearer grants.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` for RFC 8693 token exchange.
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How the access token is presented to the resource server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TokenType {
    /// `Authorization: Bearer` (RFC 6750).
    Bearer,
    /// `Authorization: DPoP` with a proof (RFC 9449 section 7.1).
    #[serde(rename = "DPoP")]
    Dpop,
}

/// Tokens from one authorization server for one resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The access token.
    pub access_token: Secret,
    /// How to present it.
    pub token_type: TokenType,
    /// When it expires (seconds since the Unix epoch), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// The scopes granted (the response's `scope`, else those requested).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The scopes requested.
    #[serde(default)]
    pub requested_scopes: Vec<String>,
    /// The DPoP key the token is bound to (PKCS#8 DER, base64), for DPoP tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

impl Tokens {
    /// Whether the access token has expired, or expires within `margin` seconds.
    pub fn expired(&self, margin: u64) -> bool {
        self.expires_at.is_some_and(|t| now() + margin >= t)
    }
}

/// A client authentication method at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAuthMethod {
    /// A public client: `client_id` in the body.
    None,
    /// HTTP Basic with the form-encoded id and secret (RFC 6749 section 2.3.1).
    SecretBasic,
    /// `client_id` and `client_secret` in the body.
    SecretPost,
    /// A signed assertion (RFC 7523 section 2.2).
    PrivateKeyJwt,
}

impl ClientAuthMethod {
    /// The method's registered name.
    pub fn name(self) -> &'static str {
        match self {
            ClientAuthMethod::None => "none",
            ClientAuthMethod::SecretBasic => "client_secret_basic",
            ClientAuthMethod::SecretPost => "client_secret_post",
            ClientAuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "none" => ClientAuthMethod::None,
            "client_secret_basic" => ClientAuthMethod::SecretBasic,
            "client_secret_post" => ClientAuthMethod::SecretPost,
            "private_key_jwt" => ClientAuthMethod::PrivateKeyJwt,
            _ => return None,
        })
    }

    /// Picks the method: the one registered if the client can use it, else the first of
    /// the server's `supported` list the client can use (a key prefers
    /// `private_key_jwt`, a secret `client_secret_basic` then `client_secret_post`),
    /// else `none`.
    pub fn choose(
        registered: Option<&str>,
        has_secret: bool,
        has_key: bool,
        supported: &[String],
    ) -> Self {
        let usable = |m: ClientAuthMethod| match m {
            ClientAuthMethod::None => true,
            ClientAuthMethod::SecretBasic | ClientAuthMethod::SecretPost => has_secret,
            ClientAuthMethod::PrivateKeyJwt => has_key,
        };
        if let Some(m) = registered.and_then(Self::from_name)
            && usable(m)
        {
            return m;
        }
        let listed = |m: ClientAuthMethod| supported.iter().any(|s| s == m.name());
        let mut preference = Vec::new();
        if has_key {
            preference.push(ClientAuthMethod::PrivateKeyJwt);
        }
        if has_secret {
            preference.extend([ClientAuthMethod::SecretBasic, ClientAuthMethod::SecretPost]);
        }
        preference.push(ClientAuthMethod::None);
        preference
            .iter()
            .copied()
            .find(|m| listed(*m))
            .or_else(|| preference.first().copied())
            .unwrap_or(ClientAuthMethod::None)
    }
}

/// One call of a token endpoint.
pub(crate) struct TokenCall<'a> {
    pub http: &'a Http,
    pub endpoint: Url,
    /// The issuer: the `aud` of client assertions.
    pub issuer: &'a str,
    pub client: Option<&'a RegisteredClient>,
    pub method: ClientAuthMethod,
    pub key: Option<&'a ClientKey>,
    pub dpop: Option<&'a DpopKey>,
    pub nonces: &'a Nonces,
    /// What the endpoint is called in errors.
    pub label: &'a str,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: Secret,
    token_type: String,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<Secret>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

impl TokenCall<'_> {
    /// POSTs `params` (the grant) and reads the tokens.
    pub async fn request(
        &self,
        params: Vec<(&'static str, String)>,
        requested_scopes: &[String],
    ) -> Result<Tokens, AuthError> {
        let reply = self.send(params).await?;
        self.tokens(&reply, requested_scopes)
    }

    /// POSTs an RFC 8693 token exchange and returns the issued token, checking its
    /// `issued_token_type` when the server names one.
    pub async fn exchange(
        &self,
        params: Vec<(&'static str, String)>,
        expected_type: &str,
    ) -> Result<Secret, AuthError> {
        #[derive(Deserialize)]
        struct Exchanged {
            access_token: Secret,
            #[serde(default)]
            issued_token_type: Option<String>,
        }
        let reply = self.send(params).await?;
        let resp: Exchanged = reply.json(self.label)?;
        if let Some(t) = &resp.issued_token_type
            && t != expected_type
        {
            return Err(AuthError::invalid(
                self.label,
                format!("issued_token_type is {t}, not {expected_type}"),
            ));
        }
        if resp.access_token.expose().is_empty() {
            return Err(AuthError::invalid(self.label, "empty access_token"));
        }
        Ok(resp.access_token)
    }

    /// POSTs `params` with client authentication and, with a DPoP key, a proof;
    /// answers a `use_dpop_nonce` error once by retrying with the nonce. Returns the
    /// successful reply; an error reply becomes [`AuthError::OAuth`].
    async fn send(&self, params: Vec<(&'static str, String)>) -> Result<Reply, AuthError> {
        let mut form = params;
        let mut headers = HeaderMap::new();
        self.authenticate(&mut form, &mut headers)?;
        let mut retried = false;
        loop {
            let mut h = headers.clone();
            if let Some(key) = self.dpop {
                let nonce = self.nonces.get(&self.endpoint);
                let proof = key.proof("POST", &self.endpoint, None, nonce.as_deref())?;
                h.insert("DPoP", header_value(&proof)?);
            }
            let reply = self
                .http
                .post_form(&self.endpoint, &form, h, self.label)
                .await?;
            if let Some(n) = reply.header("dpop-nonce") {
                self.nonces.set(&self.endpoint, n);
            }
            if reply.status.is_success() {
                return Ok(reply);
            }
            let err = self.error(&reply);
            if let AuthError::OAuth { error, .. } = &err
                && error == "use_dpop_nonce"
                && self.dpop.is_some()
                && reply.header("dpop-nonce").is_some()
                && !retried
            {
                retried = true;
                continue;
            }
            return Err(err);
        }
    }

    fn authenticate(
        &self,
        form: &mut Vec<(&'static str, String)>,
        headers: &mut HeaderMap,
    ) -> Result<(), AuthError> {
        let Some(client) = self.client else {
            return Ok(());
        };
        match self.method {
            ClientAuthMethod::None => form.push(("client_id", client.client_id.clone())),
            ClientAuthMethod::SecretBasic => {
                let secret = client.client_secret.as_ref().ok_or_else(|| {
                    AuthError::Config("client_secret_basic needs a client secret".into())
                })?;
                let pair = format!(
                    "{}:{}",
                    form_encode(&client.client_id),
                    form_encode(secret.expose())
                );
                let mut v = header_value(&format!("Basic {}", STANDARD.encode(pair)))?;
                v.set_sensitive(true);
                headers.insert(AUTHORIZATION, v);
            }
            ClientAuthMethod::SecretPost => {
                let secret = client.client_secret.as_ref().ok_or_else(|| {
                    AuthError::Config("client_secret_post needs a client secret".into())
                })?;
                form.push(("client_id", client.client_id.clone()));
                form.push(("client_secret", secret.expose().to_owned()));
            }
            ClientAuthMethod::PrivateKeyJwt => {
                let key = self.key.ok_or_else(|| {
                    AuthError::Config("private_key_jwt needs a private key".into())
                })?;
                let assertion = key.client_assertion(&client.client_id, self.issuer)?;
                form.push(("client_id", client.client_id.clone()));
                form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
                form.push(("client_assertion", assertion.expose().to_owned()));
            }
        }
        Ok(())
    }

    fn tokens(&self, reply: &Reply, requested: &[String]) -> Result<Tokens, AuthError> {
        let resp: TokenResponse = reply.json(self.label)?;
        let token_type = if resp.token_type.eq_ignore_ascii_case("bearer") {
            TokenType::Bearer
        } else if resp.token_type.eq_ignore_ascii_case("dpop") && self.dpop.is_some() {
            TokenType::Dpop
        } else {
            return Err(AuthError::invalid(
                self.label,
                format!("unsupported token_type {:?}", resp.token_type),
            ));
        };
        if resp.access_token.expose().is_empty() {
            return Err(AuthError::invalid(self.label, "empty access_token"));
        }
        let scopes = match resp.scope {
            Some(s) => s.split_ascii_whitespace().map(str::to_owned).collect(),
            None => requested.to_vec(),
        };
        Ok(Tokens {
            access_token: resp.access_token,
            token_type,
            expires_at: resp.expires_in.map(|s| now().saturating_add(s)),
            refresh_token: resp.refresh_token,
            scopes,
            requested_scopes: requested.to_vec(),
            dpop_key: match token_type {
                TokenType::Dpop => self.dpop.map(|k| k.to_pkcs8_base64().clone()),
                TokenType::Bearer => None,
            },
        })
    }

    fn error(&self, reply: &Reply) -> AuthError {
        match reply.json::<ErrorResponse>(self.label) {
            Ok(e) => AuthError::OAuth {
                endpoint: self.label.to_owned(),
                error: e.error,
                description: e.error_description,
                status: reply.status.as_u16(),
            },
            Err(_) => AuthError::Status {
                context: self.label.to_owned(),
                status: reply.status.as_u16(),
            },
        }
    }
}

/// The `application/x-www-form-urlencoded` form of a value (RFC 6749 appendix B).
fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

pub(crate) fn header_value(s: &str) -> Result<HeaderValue, AuthError> {
    HeaderValue::from_str(s).map_err(|_| AuthError::Key("a value is not a valid header".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn auth_method_choice() {
        use ClientAuthMethod::{PrivateKeyJwt, SecretBasic, SecretPost};
        let none = ClientAuthMethod::None;
        assert_eq!(
            ClientAuthMethod::choose(Option::None, true, false, &list(&["client_secret_post"])),
            SecretPost
        );
        assert_eq!(
            ClientAuthMethod::choose(
                Option::None,
                true,
                false,
                &list(&["client_secret_basic", "client_secret_post"])
            ),
            SecretBasic
        );
        assert_eq!(
            ClientAuthMethod::choose(
                Option::None,
                false,
                false,
                &list(&["client_secret_basic", "none"])
            ),
            none
        );
        assert_eq!(
            ClientAuthMethod::choose(Option::None, true, false, &list(&["none"])),
            none
        );
        assert_eq!(
            ClientAuthMethod::choose(
                Option::None,
                true,
                true,
                &list(&["private_key_jwt", "client_secret_basic"])
            ),
            PrivateKeyJwt
        );
        assert_eq!(
            ClientAuthMethod::choose(
                Some("client_secret_post"),
                true,
                false,
                &list(&["client_secret_basic"])
            ),
            SecretPost
        );
        // A registered method the client cannot use is passed over.
        assert_eq!(
            ClientAuthMethod::choose(Some("client_secret_basic"), false, false, &list(&["none"])),
            none
        );
    }

    #[test]
    fn basic_credentials_are_form_encoded() {
        assert_eq!(form_encode("a b:c"), "a+b%3Ac");
        assert_eq!(form_encode("plain-id_1.x~"), "plain-id_1.x%7E");
    }
}
