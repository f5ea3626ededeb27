//! The gateway's own `requestState`: the upstream's state sealed inside an envelope bound
//! to the principal and the originating request, redeemed at most once.
//!
//! mrtr.mdx ("requestState") asks servers to protect the state's integrity and to bind
//! it to the principal, the request and an expiry, and notes that single use needs a
//! server-side record. Upstreams differ in how much of that they do; the gateway does all
//! of it in front of every one of them: the envelope is sealed with XChaCha20-Poly1305
//! (`ferry-state`), carries a random id (the nonce the ledger redeems), an expiry, the
//! principal, a digest of method + name + arguments, the upstream it came from, and the
//! logical call's id and round number.

use std::sync::Arc;

use ferry_protocol::ErrorObject;
use ferry_state::{Binding, Redemption, RejectReason, ReplayLedger, StateClaims, StateGuard};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the gateway keeps inside its sealed state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// The upstream the call goes to.
    #[serde(rename = "u")]
    pub upstream: String,
    /// The upstream's own `requestState`, echoed to it on the retry.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub upstream_state: Option<String>,
    /// The logical call's id, the same on every round.
    #[serde(rename = "c")]
    pub call_id: String,
    /// How many rounds the call has taken so far.
    #[serde(rename = "r")]
    pub round: u32,
    /// The id of the call this instance holds open on a 2025-11-25 upstream, waiting for
    /// the answer the retry brings (era bridging).
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// The address of the instance holding that call (its `advertise_url`), when it has
    /// one: another instance passes the answer on to it.
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// What a state is bound to: who asks, and for which request.
#[derive(Debug, Clone, Copy)]
pub struct Bound<'a> {
    /// The principal's id, if authenticated.
    pub principal: Option<&'a str>,
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI, as the client sees it.
    pub target: &'a str,
    /// The arguments (for `resources/read`, an empty object).
    pub arguments: &'a Value,
}

/// Why a state was refused. Clients see one generic error; the reason is for metrics
/// and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not a state of this gateway, or altered.
    Tampered,
    /// Past its expiry.
    Expired,
    /// Issued to another principal.
    Principal,
    /// Issued for another method, target or arguments.
    Request,
    /// Already redeemed once.
    Replayed,
    /// The ledger could not be reached: refused, fail closed.
    LedgerDown,
}

impl Refused {
    /// A short label (Prometheus `reason`).
    pub fn label(self) -> &'static str {
        match self {
            Refused::Tampered => "tampered",
            Refused::Expired => "expired",
            Refused::Principal => "principal",
            Refused::Request => "request",
            Refused::Replayed => "replayed",
            Refused::LedgerDown => "ledger_unavailable",
        }
    }

    /// The error the client gets: ferry-server's own for a bad state (-32602 with a
    /// message that reveals nothing), an internal error when the ledger is down.
    pub fn to_error(self) -> ErrorObject {
        match self {
            Refused::LedgerDown => {
                ErrorObject::internal("Internal error: the request could not be checked for replay")
            }
            _ => ErrorObject::invalid_params("Invalid or expired requestState"),
        }
    }

    fn from_reason(reason: RejectReason) -> Refused {
        match reason {
            RejectReason::Expired | RejectReason::IssuedInFuture => Refused::Expired,
            RejectReason::PrincipalMismatch => Refused::Principal,
            RejectReason::MethodMismatch
            | RejectReason::TargetMismatch
            | RejectReason::ArgsMismatch => Refused::Request,
            RejectReason::Replayed => Refused::Replayed,
            _ => Refused::Tampered,
        }
    }
}

/// Paces the warnings of a failing replay ledger (down, or full), which fails every
/// retry that needs it.
static LEDGER_FAILURES: ferry_state::FailureLog =
    ferry_state::FailureLog::new(std::time::Duration::from_secs(10));

/// The method a peer token is bound to.
const PEER: &str = "ferry-gateway/peer";

/// How long a peer token is good for.
const PEER_TTL: std::time::Duration = std::time::Duration::from_secs(30);

/// Seals and opens envelopes, redeeming each at most once.
#[derive(Clone)]
pub struct Envelopes {
    guard: Arc<StateGuard>,
    /// The state keys with a short expiry, for peer tokens.
    peer: Arc<StateGuard>,
    ledger: Arc<dyn ReplayLedger>,
}

impl std::fmt::Debug for Envelopes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Envelopes")
            .field("ttl", &self.guard.ttl())
            .finish_non_exhaustive()
    }
}

impl Envelopes {
    /// Envelopes sealed by `guard` (its keys and expiry), redeemed in `ledger`.
    pub fn new(guard: StateGuard, ledger: Arc<dyn ReplayLedger>) -> Self {
        let peer = StateGuard::new(guard.ring().clone()).with_ttl(PEER_TTL);
        Envelopes {
            guard: Arc::new(guard),
            peer: Arc::new(peer),
            ledger,
        }
    }

    /// Seals `envelope` for the request `bound` describes.
    pub fn seal(&self, bound: &Bound<'_>, envelope: &Envelope) -> Result<String, ErrorObject> {
        let digest = ferry_state::digest_args(bound.arguments);
        let binding =
            Binding::new(bound.method, bound.target, &digest).with_principal(bound.principal);
        let mut claims = StateClaims::new(&binding);
        claims.app = Some(serde_json::to_value(envelope).unwrap_or_default());
        self.guard.issue(claims).map_err(|e| {
            tracing::warn!(error = %e, "gateway requestState could not be issued");
            ErrorObject::internal("Internal error: the request's state is too large to continue")
        })
    }

    /// A token for passing the answer `responses` to the call held as `held` on another
    /// instance: only holders of the state keys can make one, and it is good for that
    /// call and those answers only, for a short while.
    pub(crate) fn peer_token(&self, held: &str, responses: &Value) -> Result<String, ErrorObject> {
        let digest = ferry_state::digest_args(responses);
        let claims = StateClaims::new(&Binding::new(PEER, held, &digest));
        self.peer.issue(claims).map_err(|e| {
            tracing::warn!(error = %e, "a peer token could not be issued");
            ErrorObject::internal("Internal error: the answer could not be passed on")
        })
    }

    /// Whether `token` is a [`peer_token`](Envelopes::peer_token) for `held` and
    /// `responses`.
    pub(crate) fn check_peer_token(&self, token: &str, held: &str, responses: &Value) -> bool {
        let digest = ferry_state::digest_args(responses);
        self.peer
            .verify(token, &Binding::new(PEER, held, &digest))
            .is_ok()
    }

    /// Opens `token` for the request `bound` describes and redeems it: a second
    /// redemption is refused, whatever the upstream would do.
    pub async fn open(&self, token: &str, bound: &Bound<'_>) -> Result<Envelope, Refused> {
        let digest = ferry_state::digest_args(bound.arguments);
        let binding =
            Binding::new(bound.method, bound.target, &digest).with_principal(bound.principal);
        let claims = self
            .guard
            .verify(token, &binding)
            .map_err(|r| Refused::from_reason(r.reason()))?;
        let envelope: Envelope = claims
            .app
            .clone()
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or(Refused::Tampered)?;
        match self.ledger.redeem(&claims.jti, claims.expires_at).await {
            Ok(Redemption::First) => Ok(envelope),
            Ok(Redemption::Replayed) => Err(Refused::Replayed),
            Err(e) => {
                if let Some(unlogged) = LEDGER_FAILURES.due() {
                    tracing::warn!(
                        error = %e,
                        unlogged,
                        "replay ledger unavailable; refusing the state (logged at most every 10 s)"
                    );
                }
                Err(Refused::LedgerDown)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_state::{KeyRing, MemoryLedger};
    use serde_json::json;

    fn envelopes() -> Envelopes {
        Envelopes::new(
            StateGuard::new(KeyRing::random()),
            Arc::new(MemoryLedger::default()),
        )
    }

    fn bound<'a>(principal: Option<&'a str>, args: &'a Value) -> Bound<'a> {
        Bound {
            principal,
            method: "tools/call",
            target: "py.confirm_delete",
            arguments: args,
        }
    }

    fn envelope() -> Envelope {
        Envelope {
            upstream: "py".into(),
            upstream_state: Some("upstream-state".into()),
            call_id: "c1".into(),
            round: 1,
            held: None,
            owner: None,
        }
    }

    #[tokio::test]
    async fn opens_once_for_the_same_request() {
        let e = envelopes();
        let args = json!({"path": "/tmp/a"});
        let token = e.seal(&bound(Some("alice"), &args), &envelope()).unwrap();
        assert!(!token.contains("upstream-state"));
        let opened = e.open(&token, &bound(Some("alice"), &args)).await.unwrap();
        assert_eq!(opened, envelope());
        assert_eq!(
            e.open(&token, &bound(Some("alice"), &args)).await,
            Err(Refused::Replayed)
        );
    }

    #[tokio::test]
    async fn refuses_other_principals_requests_and_tampering() {
        let e = envelopes();
        let args = json!({"path": "/tmp/a"});
        let token = e.seal(&bound(Some("alice"), &args), &envelope()).unwrap();
        assert_eq!(
            e.open(&token, &bound(Some("bob"), &args)).await,
            Err(Refused::Principal)
        );
        let other = json!({"path": "/etc/passwd"});
        assert_eq!(
            e.open(&token, &bound(Some("alice"), &other)).await,
            Err(Refused::Request)
        );
        let mut bytes = token.into_bytes();
        let mid = bytes.len() / 2;
        bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        assert_eq!(
            e.open(&tampered, &bound(Some("alice"), &args)).await,
            Err(Refused::Tampered)
        );
    }
}
