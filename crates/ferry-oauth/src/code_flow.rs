//! The authorization code grant with PKCE, step by step: build the authorization URL,
//! then validate what comes back on the redirect URI (index.mdx, Authorization Flow
//! Steps and Authorization Response Validation).
//!
//! A program that drives the browser itself (a CLI with a loopback listener) can use
//! these steps directly; [`OAuthAuthorizer`](crate::OAuthAuthorizer) runs them with a
//! [`RedirectHandler`](crate::RedirectHandler).

use url::Url;

use crate::error::AuthError;
use crate::metadata::AuthorizationServerMetadata;
use crate::pkce::{Pkce, random_b64};
use crate::secret::Secret;

/// An authorization request on its way: the URL to open, and what is needed to check
/// the response and redeem the code.
#[derive(Debug)]
pub struct PendingAuthorization {
    url: Url,
    state: Secret,
    pkce: Pkce,
    issuer: String,
    iss_advertised: bool,
    redirect_uri: String,
    scopes: Vec<String>,
}

/// A validated authorization code, ready for the token request.
#[derive(Debug)]
pub struct AuthorizationCode {
    /// The code.
    pub code: Secret,
    /// The PKCE verifier of the request.
    pub code_verifier: Secret,
    /// The redirect URI of the request (sent again with the token request).
    pub redirect_uri: String,
    /// The scopes that were requested.
    pub scopes: Vec<String>,
}

impl PendingAuthorization {
    /// Builds the authorization request: `response_type=code`, the client id, the
    /// redirect URI, the scopes (omitted when empty), a random `state`, a PKCE `S256`
    /// challenge and the `resource` (RFC 8707). Refuses a server that does not list
    /// `S256` (security-considerations.mdx, Authorization Code Protection). Records the
    /// server's issuer for the `iss` check.
    pub fn begin(
        server: &AuthorizationServerMetadata,
        client_id: &str,
        redirect_uri: &str,
        scopes: &[String],
        resource: &str,
    ) -> Result<Self, AuthError> {
        if !server.supports_s256() {
            return Err(AuthError::PkceUnsupported {
                issuer: server.issuer.clone(),
            });
        }
        let endpoint = server.authorization_endpoint.as_deref().ok_or_else(|| {
            AuthError::invalid("authorization server metadata", "no authorization_endpoint")
        })?;
        let mut url = Url::parse(endpoint)
            .map_err(|e| AuthError::invalid("authorization_endpoint", e.to_string()))?;
        let pkce = Pkce::generate()?;
        let state = Secret::new(random_b64(32)?);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", client_id)
                .append_pair("redirect_uri", redirect_uri);
            if !scopes.is_empty() {
                q.append_pair("scope", &scopes.join(" "));
            }
            q.append_pair("state", state.expose())
                .append_pair("code_challenge", pkce.challenge())
                .append_pair("code_challenge_method", "S256")
                .append_pair("resource", resource);
        }
        Ok(PendingAuthorization {
            url,
            state,
            pkce,
            issuer: server.issuer.clone(),
            iss_advertised: server.authorization_response_iss_parameter_supported == Some(true),
            redirect_uri: redirect_uri.to_owned(),
            scopes: scopes.to_vec(),
        })
    }

    /// The URL to send the user agent to.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The redirect URI the response will come back to.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// The issuer recorded for the `iss` check.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Validates the URL the authorization server redirected to, and returns the code.
    ///
    /// The `iss` parameter (RFC 9207 section 2.4) is compared with the recorded issuer
    /// by simple string comparison, whether or not the server advertised it, and is
    /// required when it did; a mismatch rejects the response before anything else in it
    /// is read, errors included. Then `state` must match, an `error` is reported, and
    /// the `code` is taken.
    pub fn finish(self, callback: &Url) -> Result<AuthorizationCode, AuthError> {
        let mut iss = None;
        let mut state = None;
        let mut code = None;
        let mut error = None;
        let mut description = None;
        for (k, v) in callback.query_pairs() {
            let slot = match k.as_ref() {
                "iss" => &mut iss,
                "state" => &mut state,
                "code" => &mut code,
                "error" => &mut error,
                "error_description" => &mut description,
                _ => continue,
            };
            if slot.is_some() {
                return Err(AuthError::AuthorizationResponse(format!(
                    "the parameter {k} appears twice"
                )));
            }
            *slot = Some(v.into_owned());
        }
        match iss {
            Some(i) if i != self.issuer => {
                return Err(AuthError::AuthorizationResponse(format!(
                    "iss {i:?} is not the issuer {:?} the request was sent to",
                    self.issuer
                )));
            }
            None if self.iss_advertised => {
                return Err(AuthError::AuthorizationResponse(
                    "the server advertises iss but the response has none".into(),
                ));
            }
            _ => {}
        }
        if state.as_deref() != Some(self.state.expose()) {
            return Err(AuthError::AuthorizationResponse(
                "state is missing or does not match".into(),
            ));
        }
        if let Some(error) = error {
            return Err(AuthError::AuthorizationDenied { error, description });
        }
        let code = code
            .filter(|c| !c.is_empty())
            .ok_or_else(|| AuthError::AuthorizationResponse("the response has no code".into()))?;
        Ok(AuthorizationCode {
            code: Secret::new(code),
            code_verifier: self.pkce.verifier().clone(),
            redirect_uri: self.redirect_uri,
            scopes: self.scopes,
        })
    }

    /// The `state` value (to match a callback to its request).
    pub fn state(&self) -> &str {
        self.state.expose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pkce::s256;

    fn server(iss: Option<bool>) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: "https://as.example.com".into(),
            authorization_endpoint: Some("https://as.example.com/authorize?x=1".into()),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            authorization_response_iss_parameter_supported: iss,
            ..Default::default()
        }
    }

    fn begin(iss: Option<bool>) -> PendingAuthorization {
        PendingAuthorization::begin(
            &server(iss),
            "client",
            "http://127.0.0.1:7/cb",
            &["a".into(), "b".into()],
            "https://mcp.example.com/mcp",
        )
        .unwrap()
    }

    fn callback(p: &PendingAuthorization, extra: &[(&str, &str)]) -> Url {
        let mut u = Url::parse(p.redirect_uri()).unwrap();
        u.query_pairs_mut().append_pair("state", p.state());
        for (k, v) in extra {
            u.query_pairs_mut().append_pair(k, v);
        }
        u
    }

    #[test]
    fn request_carries_pkce_state_scope_and_resource() {
        let p = begin(Some(true));
        let q: std::collections::HashMap<_, _> = p.url().query_pairs().into_owned().collect();
        assert_eq!(q["x"], "1");
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["client_id"], "client");
        assert_eq!(q["scope"], "a b");
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["resource"], "https://mcp.example.com/mcp");
        assert_eq!(q["state"], p.state());
        assert_eq!(q["code_challenge"], s256(p.pkce.verifier().expose()));
    }

    #[test]
    fn refuses_without_s256() {
        let mut s = server(None);
        s.code_challenge_methods_supported = Some(vec!["plain".into()]);
        let e = PendingAuthorization::begin(&s, "c", "http://127.0.0.1/cb", &[], "https://r")
            .unwrap_err();
        assert!(matches!(e, AuthError::PkceUnsupported { .. }));
        s.code_challenge_methods_supported = None;
        assert!(
            PendingAuthorization::begin(&s, "c", "http://127.0.0.1/cb", &[], "https://r").is_err()
        );
    }

    #[test]
    fn iss_rules() {
        let iss = "https://as.example.com";
        // Advertised: required and exactly equal.
        let p = begin(Some(true));
        let cb = callback(&p, &[("code", "c1"), ("iss", iss)]);
        assert_eq!(p.finish(&cb).unwrap().code.expose(), "c1");
        let p = begin(Some(true));
        let cb = callback(&p, &[("code", "c1")]);
        assert!(p.finish(&cb).is_err());
        for wrong in [
            "https://evil.example.com",
            "https://as.example.com/",
            "HTTPS://as.example.com",
            "https://as.example.com:443",
        ] {
            let p = begin(Some(true));
            let cb = callback(&p, &[("code", "c1"), ("iss", wrong)]);
            assert!(p.finish(&cb).is_err(), "{wrong}");
        }
        // Not advertised: absent is fine, present must still match.
        let p = begin(None);
        let cb = callback(&p, &[("code", "c1")]);
        assert!(p.finish(&cb).is_ok());
        let p = begin(Some(false));
        let cb = callback(&p, &[("code", "c1"), ("iss", "https://evil.example.com")]);
        assert!(p.finish(&cb).is_err());
    }

    #[test]
    fn state_error_and_code() {
        let p = begin(None);
        let mut cb = Url::parse("http://127.0.0.1:7/cb?code=c&state=nope").unwrap();
        assert!(p.finish(&cb).is_err());
        let p = begin(None);
        cb = callback(
            &p,
            &[("error", "access_denied"), ("error_description", "no")],
        );
        assert!(
            matches!(p.finish(&cb), Err(AuthError::AuthorizationDenied { ref error, .. }) if error == "access_denied")
        );
        // A mismatched iss hides the error.
        let p = begin(None);
        cb = callback(&p, &[("error", "access_denied"), ("iss", "https://evil")]);
        assert!(matches!(
            p.finish(&cb),
            Err(AuthError::AuthorizationResponse(_))
        ));
        let p = begin(None);
        cb = callback(&p, &[]);
        assert!(p.finish(&cb).is_err());
        let p = begin(None);
        cb = callback(&p, &[("code", "a"), ("code", "b")]);
        assert!(p.finish(&cb).is_err());
    }
}
