//! The state machine: credentials for each request, and what to do on 401 and 403.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;

use url::Url;

use super::OAuthAuthorizer;
use crate::authorizer::{Credentials, Decision, Outgoing, Refusal};
use crate::discovery::{self, Discovered};
use crate::error::AuthError;
use crate::jwt::DpopKey;
use crate::store::IssuerRecord;
use crate::token::{TokenType, Tokens, header_value};

/// Refresh this many seconds before the access token expires.
const EXPIRY_MARGIN: u64 = 30;

/// What the authorizer knows about the server it works for.
#[derive(Default)]
pub(crate) struct State {
    /// The last discovery.
    pub discovered: Option<Discovered>,
    /// The resource identifier, exactly as the protected resource metadata publishes it.
    pub resource: Option<String>,
    /// The tokens in use.
    pub tokens: Option<Tokens>,
    /// The DPoP key of `tokens`.
    pub dpop_key: Option<DpopKey>,
    /// Bumped whenever `tokens` changes.
    pub generation: u64,
    /// Step-up authorizations made, by scope set.
    pub step_ups: HashMap<Vec<String>, u32>,
}

impl OAuthAuthorizer {
    pub(super) async fn credentials_for(
        &self,
        req: Outgoing<'_>,
    ) -> Result<Credentials, AuthError> {
        let mut st = self.state.lock().await;
        let expired = st.tokens.as_ref().is_some_and(|t| t.expired(EXPIRY_MARGIN));
        if expired {
            let refreshable = st
                .tokens
                .as_ref()
                .is_some_and(|t| t.refresh_token.is_some());
            let refreshed = if refreshable {
                match self.refresh(&mut st).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::info!(error = %e, "refreshing the access token failed");
                        false
                    }
                }
            } else {
                false
            };
            if !refreshed {
                // Unauthenticated: the server's 401 starts a new authorization.
                st.tokens = None;
                st.dpop_key = None;
                st.generation += 1;
            }
        }
        let Some(tokens) = &st.tokens else {
            return Ok(Credentials {
                generation: st.generation,
                ..Default::default()
            });
        };
        let token = tokens.access_token.expose();
        let (authorization, dpop) = match (tokens.token_type, &st.dpop_key) {
            (TokenType::Dpop, Some(key)) => {
                let nonce = self.nonces.get(req.url);
                let proof = key.proof(req.method, req.url, Some(token), nonce.as_deref())?;
                (format!("DPoP {token}"), Some(header_value(&proof)?))
            }
            (TokenType::Dpop, None) => {
                return Err(AuthError::Key("a DPoP token without its key".into()));
            }
            (TokenType::Bearer, _) => (format!("Bearer {token}"), None),
        };
        let mut authorization = header_value(&authorization)?;
        authorization.set_sensitive(true);
        Ok(Credentials {
            authorization: Some(authorization),
            dpop,
            generation: st.generation,
        })
    }

    pub(super) async fn handle_refusal(&self, r: Refusal<'_>) -> Result<Decision, AuthError> {
        let mut st = self.state.lock().await;
        if let Some(n) = r.dpop_nonce {
            self.nonces.set(r.url, n);
        }
        let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        let is_401 = r.status == 401;
        if is_401 && r.challenge.error() == Some("use_dpop_nonce") {
            // RFC 9449 section 9: send again with the nonce (once in a row).
            return if r.dpop_nonce.is_some() && failures <= 1 + self.config.max_reauthorizations {
                Ok(Decision::Retry)
            } else {
                Err(AuthError::RetryLimit { attempts: failures })
            };
        }
        if r.generation != st.generation {
            // Someone else already obtained new credentials.
            return Ok(Decision::Retry);
        }
        if is_401 {
            if failures > 1 + self.config.max_reauthorizations {
                return Err(AuthError::RetryLimit {
                    attempts: failures - 1,
                });
            }
            self.reauthorize(&mut st, &r).await?;
            return Ok(Decision::Retry);
        }
        if r.status == 403 && r.challenge.error() == Some("insufficient_scope") {
            self.step_up(&mut st, &r).await?;
            return Ok(Decision::Retry);
        }
        Ok(Decision::Pass)
    }

    /// After a 401: discover again (the resource may have moved to another
    /// authorization server), then use stored tokens, a refresh, or a new grant.
    async fn reauthorize(&self, st: &mut State, r: &Refusal<'_>) -> Result<(), AuthError> {
        let refused = if r.had_token {
            st.tokens.as_ref().map(|t| t.access_token.clone())
        } else {
            None
        };
        let d = discovery::discover(&self.http, r.url, r.challenge.resource_metadata()).await?;
        self.adopt(st, d);
        let scopes = initial_scopes(st, r);
        let (issuer, resource) = ids(st)?;
        if let Some(stored) = self.stored_tokens(&issuer, &resource)? {
            let usable =
                Some(&stored.access_token) != refused.as_ref() && !stored.expired(EXPIRY_MARGIN);
            if usable {
                self.install(st, stored, false)?;
                return Ok(());
            }
            if stored.refresh_token.is_some() {
                self.install(st, stored, false)?;
                match self.refresh(st).await {
                    Ok(()) => return Ok(()),
                    Err(e) => tracing::info!(error = %e, "refresh failed; authorizing again"),
                }
            }
        }
        self.run_grant(st, scopes).await
    }

    /// Takes a discovery in; tokens of another issuer are dropped, never reused.
    fn adopt(&self, st: &mut State, d: Discovered) {
        let moved = st
            .discovered
            .as_ref()
            .is_some_and(|old| old.issuer != d.issuer);
        if moved {
            tracing::info!(issuer = %d.issuer, "the resource moved to another authorization server");
            st.tokens = None;
            st.dpop_key = None;
            st.step_ups.clear();
            st.generation += 1;
        }
        st.resource = Some(d.resource.resource.clone());
        st.discovered = Some(d);
    }

    /// After a 403 `insufficient_scope`: authorize again with the union of the scopes
    /// requested so far and those of the challenge (index.mdx, Step-Up Authorization
    /// Flow), at most `max_step_ups` times for the same set.
    async fn step_up(&self, st: &mut State, r: &Refusal<'_>) -> Result<(), AuthError> {
        let challenged = r.challenge.scopes().unwrap_or_default();
        let mut needed: BTreeSet<String> = st
            .tokens
            .as_ref()
            .map(|t| t.requested_scopes.iter().cloned().collect())
            .unwrap_or_default();
        needed.extend(challenged.iter().cloned());
        let key: Vec<String> = needed.iter().cloned().collect();
        let count = st.step_ups.entry(key.clone()).or_insert(0);
        if *count >= self.config.max_step_ups {
            return Err(AuthError::InsufficientScope {
                scopes: challenged,
                attempts: *count,
            });
        }
        *count += 1;
        if st.discovered.is_none() {
            let d = discovery::discover(&self.http, r.url, r.challenge.resource_metadata()).await?;
            self.adopt(st, d);
        }
        self.run_grant(st, key).await
    }

    /// Discovers from the well-known locations and runs the grant.
    pub(super) async fn full_authorization(
        &self,
        st: &mut State,
        server: &Url,
        from_challenge: Option<&str>,
        scopes: Option<Vec<String>>,
    ) -> Result<(), AuthError> {
        let d = discovery::discover(&self.http, server, from_challenge).await?;
        let default_scopes = d.resource.scopes_supported.clone().unwrap_or_default();
        self.adopt(st, d);
        self.run_grant(st, scopes.unwrap_or(default_scopes)).await
    }

    /// Refreshes the current tokens (RFC 6749 section 6), keeping the refresh token
    /// when the server issues no new one.
    async fn refresh(&self, st: &mut State) -> Result<(), AuthError> {
        let d = st
            .discovered
            .clone()
            .ok_or_else(|| AuthError::Config("refresh before discovery".into()))?;
        let (_, resource) = ids(st)?;
        let old = st
            .tokens
            .clone()
            .ok_or_else(|| AuthError::Config("nothing to refresh".into()))?;
        let Some(refresh_token) = old.refresh_token.clone() else {
            return Err(AuthError::Config("no refresh token".into()));
        };
        let dpop = match &old.dpop_key {
            Some(k) => Some(DpopKey::from_pkcs8_base64(k.expose())?),
            None => None,
        };
        let client = self.client_for(&d, None).await?;
        let call = self.token_call(&d, Some(&client), dpop.as_ref(), "token endpoint (refresh)")?;
        let mut fresh = call
            .request(
                vec![
                    ("grant_type", "refresh_token".into()),
                    ("refresh_token", refresh_token.expose().to_owned()),
                    ("resource", resource),
                ],
                &old.requested_scopes,
            )
            .await?;
        if fresh.refresh_token.is_none() {
            fresh.refresh_token = Some(refresh_token);
        }
        self.install(st, fresh, true)
    }

    /// Runs the configured grant for `scopes` and installs the tokens.
    async fn run_grant(&self, st: &mut State, scopes: Vec<String>) -> Result<(), AuthError> {
        let d = st
            .discovered
            .clone()
            .ok_or_else(|| AuthError::Config("authorization before discovery".into()))?;
        let (_, resource) = ids(st)?;
        let dpop = self.dpop_key_for(st, &d)?;
        let tokens = self.grant(&d, &resource, scopes, dpop.as_ref()).await?;
        self.install(st, tokens, true)
    }

    /// The DPoP key for a new grant at this server, if DPoP is used there.
    fn dpop_key_for(&self, st: &State, d: &Discovered) -> Result<Option<DpopKey>, AuthError> {
        use super::DpopMode;
        let supported = d.server.supports_dpop("ES256");
        match self.config.dpop {
            DpopMode::Off => Ok(None),
            DpopMode::IfSupported if !supported => Ok(None),
            DpopMode::Required if !supported => Err(AuthError::Config(format!(
                "{} does not support DPoP with ES256",
                d.issuer
            ))),
            _ => match &st.dpop_key {
                Some(k) => Ok(Some(k.clone())),
                None => DpopKey::generate().map(Some),
            },
        }
    }

    /// Makes `tokens` current, and stores them when `save`.
    fn install(&self, st: &mut State, tokens: Tokens, save: bool) -> Result<(), AuthError> {
        let (issuer, resource) = ids(st)?;
        st.dpop_key = match &tokens.dpop_key {
            Some(k) => Some(DpopKey::from_pkcs8_base64(k.expose())?),
            None => None,
        };
        if save {
            let mut rec = self
                .config
                .store
                .load(&issuer)?
                .unwrap_or_else(|| IssuerRecord::new(issuer.clone()));
            rec.tokens.insert(resource, tokens.clone());
            self.config.store.save(&rec)?;
        }
        st.tokens = Some(tokens);
        st.generation += 1;
        Ok(())
    }

    fn stored_tokens(&self, issuer: &str, resource: &str) -> Result<Option<Tokens>, AuthError> {
        Ok(self
            .config
            .store
            .load(issuer)?
            .and_then(|mut r| r.tokens.remove(resource)))
    }
}

/// The scopes of a first authorization (index.mdx, Scope Selection Strategy): the
/// challenge's `scope`, else the resource's `scopes_supported`, else none.
fn initial_scopes(st: &State, r: &Refusal<'_>) -> Vec<String> {
    if let Some(s) = r.challenge.scopes().filter(|s| !s.is_empty()) {
        return s;
    }
    st.discovered
        .as_ref()
        .and_then(|d| d.resource.scopes_supported.clone())
        .unwrap_or_default()
}

fn ids(st: &State) -> Result<(String, String), AuthError> {
    match (&st.discovered, &st.resource) {
        (Some(d), Some(r)) => Ok((d.issuer.clone(), r.clone())),
        _ => Err(AuthError::Config(
            "no authorization server discovered yet".into(),
        )),
    }
}

/// Adds `offline_access` to a scope list when refresh tokens are wanted and the
/// authorization server lists it (index.mdx, Refresh Tokens).
pub(super) fn with_offline_access(
    scopes: Vec<String>,
    wanted: bool,
    server: &crate::metadata::AuthorizationServerMetadata,
) -> Vec<String> {
    let mut out = scopes;
    if wanted && server.lists_scope("offline_access") && !out.iter().any(|s| s == "offline_access")
    {
        out.push("offline_access".into());
    }
    out
}
