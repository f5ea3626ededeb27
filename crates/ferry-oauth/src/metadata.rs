//! The metadata documents: Protected Resource Metadata (RFC 9728 section 2) and
//! Authorization Server Metadata (RFC 8414 section 2, OpenID Connect Discovery 1.0).

use serde::{Deserialize, Serialize};

/// OAuth 2.0 Protected Resource Metadata (RFC 9728 section 2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier (the canonical URI of the MCP server).
    pub resource: String,
    /// The issuers of the authorization servers the resource trusts.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource uses: the minimum for basic functionality, in MCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Token presentation methods the resource accepts (`header`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// DPoP proof algorithms the resource accepts (RFC 9449 section 5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// OAuth 2.0 Authorization Server Metadata (RFC 8414 section 2), also read from OpenID
/// Connect Discovery documents.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where authorization requests go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where token requests go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic Client Registration (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `response_type` values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// Grant types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Signing algorithms for `private_key_jwt` assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// PKCE methods; MCP clients refuse to proceed without `S256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether authorization responses carry `iss` (RFC 9207 section 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// Whether URL client ids (Client ID Metadata Documents) are accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// DPoP proof algorithms the server accepts (RFC 9449 section 5.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// Whether `code_challenge_methods_supported` lists `S256`.
    pub fn supports_s256(&self) -> bool {
        lists(&self.code_challenge_methods_supported, "S256")
    }

    /// Whether `scopes_supported` lists `scope`.
    pub fn lists_scope(&self, scope: &str) -> bool {
        lists(&self.scopes_supported, scope)
    }

    /// Whether the server accepts DPoP proofs signed with `alg`.
    pub fn supports_dpop(&self, alg: &str) -> bool {
        lists(&self.dpop_signing_alg_values_supported, alg)
    }

    /// Whether URL client ids are accepted.
    pub fn supports_client_id_metadata_documents(&self) -> bool {
        self.client_id_metadata_document_supported == Some(true)
    }

    /// The token endpoint auth methods; RFC 8414 section 2 makes `client_secret_basic`
    /// the default when the list is absent.
    pub fn token_auth_methods(&self) -> Vec<String> {
        self.token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_else(|| vec!["client_secret_basic".to_owned()])
    }
}

fn lists(list: &Option<Vec<String>>, value: &str) -> bool {
    list.as_ref().is_some_and(|l| l.iter().any(|v| v == value))
}
