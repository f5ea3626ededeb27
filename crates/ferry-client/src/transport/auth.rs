//! Authorization on the HTTP transport: each request asks the [`Authorizer`] for its
//! headers; a 401 or 403 is reported to it and the request is sent again when it
//! obtained new credentials.

use ferry_oauth::{AuthChallenge, Authorizer, Decision, Outgoing, Refusal};
use reqwest::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use reqwest::{RequestBuilder, StatusCode, Url};

use super::reply::{DirectClient, Reply, execute};
use crate::error::{Error, Result};

/// How many times one request is sent in all (the authorizer bounds its own retries;
/// this is the transport's backstop).
const MAX_SENDS: u32 = 8;

/// Sends the request that `build` makes, with credentials from `auth`, through `direct`
/// when given (see [`super::reply`]).
pub(crate) async fn send(
    auth: Option<&dyn Authorizer>,
    direct: Option<&DirectClient>,
    method: &str,
    url: &Url,
    build: impl Fn() -> Result<RequestBuilder>,
    failure: &str,
) -> Result<Reply> {
    let Some(auth) = auth else {
        return execute(direct, build()?, failure).await;
    };
    let mut sends = 0;
    loop {
        sends += 1;
        let creds = auth
            .credentials(Outgoing { method, url })
            .await
            .map_err(Error::Authorization)?;
        let mut req = build()?;
        let had_token = creds.authorization.is_some();
        if let Some(v) = &creds.authorization {
            req = req.header(AUTHORIZATION, v.clone());
        }
        if let Some(v) = &creds.dpop {
            req = req.header("dpop", v.clone());
        }
        let resp = execute(direct, req, failure).await?;
        let status = resp.status();
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            auth.answered(url, resp.headers());
            return Ok(resp);
        }
        if sends >= MAX_SENDS {
            return Ok(resp);
        }
        let challenge = AuthChallenge::parse(
            resp.headers()
                .get_all(WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        );
        let nonce = resp
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let refusal = Refusal {
            method,
            url,
            status: status.as_u16(),
            challenge,
            dpop_nonce: nonce.as_deref(),
            generation: creds.generation,
            had_token,
        };
        match auth.refused(refusal).await.map_err(Error::Authorization)? {
            Decision::Retry => continue,
            Decision::Pass => return Ok(resp),
        }
    }
}
