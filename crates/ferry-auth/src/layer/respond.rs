//! Refusals as responses, and the step-up challenge of an inner `403`.

use bytes::Bytes;
use http::header::WWW_AUTHENTICATE;
use http::{HeaderValue, Response, StatusCode};

use super::Shared;
use crate::challenge::{Challenge, Refusal, codes, response};
use crate::credentials::Scheme;
use crate::dpop::{DPOP_NONCE_HEADER, DpopChecker};

impl Shared {
    /// The response for a refusal of a request presented with `scheme`.
    pub(super) fn refuse<B: From<Bytes>>(
        &self,
        refusal: Refusal,
        scheme: Option<Scheme>,
    ) -> Response<B> {
        tracing::debug!(?refusal, "request refused");
        let dpop_only = self.dpop.as_ref().is_some_and(|d| d.required);
        // Which challenges to send: the scheme the client used, or every scheme we take.
        let schemes: Vec<Scheme> = match scheme {
            Some(s) if !dpop_only => vec![s],
            _ => self.offered(),
        };
        let (status, code, message, error, scope, nonce) = match &refusal {
            Refusal::Malformed(why) => (
                StatusCode::BAD_REQUEST,
                codes::MALFORMED,
                format!("Bad Request: {why}"),
                Some("invalid_request"),
                None,
                None,
            ),
            Refusal::NoToken => (
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                "Unauthorized: an access token is required".to_owned(),
                None,
                self.scope_param.clone(),
                self.dpop.as_ref().and_then(DpopChecker::current_nonce),
            ),
            Refusal::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                format!("Unauthorized: the access token is not valid ({why})"),
                Some("invalid_token"),
                self.scope_param.clone(),
                None,
            ),
            Refusal::InvalidProof(why) => (
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                format!("Unauthorized: invalid DPoP proof ({why})"),
                Some("invalid_dpop_proof"),
                None,
                None,
            ),
            Refusal::UseNonce(n) => (
                StatusCode::UNAUTHORIZED,
                codes::UNAUTHORIZED,
                "Unauthorized: a DPoP nonce is required".to_owned(),
                Some("use_dpop_nonce"),
                None,
                Some(n.clone()),
            ),
            Refusal::InsufficientScope(scopes) => (
                StatusCode::FORBIDDEN,
                codes::FORBIDDEN,
                format!("Forbidden: insufficient scope (needs {})", scopes.join(" ")),
                Some("insufficient_scope"),
                Some(scopes.join(" ")),
                None,
            ),
            Refusal::Unavailable(_) => {
                return response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    codes::UNAVAILABLE,
                    "Service Unavailable: access tokens cannot be validated now",
                    None,
                );
            }
        };
        let challenges = schemes.into_iter().map(|s| {
            let mut c = Challenge::new(s.name());
            if let Some(e) = error
                && (s == Scheme::Dpop || !e.contains("dpop"))
            {
                c = c.param("error", e);
            }
            c = c
                .param("resource_metadata", self.metadata_url.clone())
                .param_if("scope", scope.clone());
            if s == Scheme::Dpop
                && let Some(d) = &self.dpop
            {
                c = c.param("algs", d.algs_param());
            }
            c.to_header()
        });
        let mut res = response(status, code, &message, challenges.collect::<Vec<_>>());
        if let Some(n) = nonce {
            res.headers_mut().insert(DPOP_NONCE_HEADER, n);
        }
        res
    }

    /// Turns an inner `403` carrying [`InsufficientScope`] into the step-up challenge,
    /// naming every scope the operation needs with the scopes every request needs. An
    /// anonymous request gets `401` instead: it needs a token first.
    pub(super) fn step_up<B>(
        &self,
        res: &mut Response<B>,
        scheme: Option<Scheme>,
        needed: &[String],
    ) {
        let mut scopes: Vec<String> = self.required.clone();
        for s in needed {
            if !scopes.contains(s) {
                scopes.push(s.clone());
            }
        }
        tracing::debug!(?scopes, anonymous = scheme.is_none(), "insufficient scope");
        let scope = scopes.join(" ");
        let challenges: Vec<HeaderValue> = match scheme {
            Some(s) => vec![
                Challenge::new(s.name())
                    .param("error", "insufficient_scope")
                    .param("scope", scope)
                    .param("resource_metadata", self.metadata_url.clone())
                    .to_header(),
            ],
            None => {
                *res.status_mut() = StatusCode::UNAUTHORIZED;
                self.offered()
                    .into_iter()
                    .map(|s| {
                        Challenge::new(s.name())
                            .param("resource_metadata", self.metadata_url.clone())
                            .param("scope", scope.clone())
                            .to_header()
                    })
                    .collect()
            }
        };
        let h = res.headers_mut();
        h.remove(WWW_AUTHENTICATE);
        for c in challenges {
            h.append(WWW_AUTHENTICATE, c);
        }
    }

    /// The schemes a client without a token is offered.
    pub(super) fn offered(&self) -> Vec<Scheme> {
        match &self.dpop {
            Some(d) if d.required => vec![Scheme::Dpop],
            Some(_) => vec![Scheme::Bearer, Scheme::Dpop],
            None => vec![Scheme::Bearer],
        }
    }
}
