//! Issuing and verifying `requestState` tokens.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use zeroize::Zeroizing;

use crate::claims::{Binding, StateClaims};
use crate::clock::{Clock, SystemClock, duration_millis};
use crate::error::{RejectReason, Rejected};
use crate::key::KeyRing;
use crate::ledger::{LedgerError, Redemption, ReplayLedger};
use crate::random::{RandomError, fill_random};
use crate::seal::{NONCE_LEN, SealError, Sealer};

/// Bytes of randomness in a token id (128 bits).
const JTI_LEN: usize = 16;

/// Default lifetime of an issued token: 5 minutes.
pub const DEFAULT_TTL: Duration = Duration::from_secs(5 * 60);

/// Default tolerance for tokens whose issue time is ahead of the verifier's
/// clock (clock differences between server instances): 30 seconds.
pub const DEFAULT_CLOCK_SKEW: Duration = Duration::from_secs(30);

/// Errors raised while issuing a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IssueError {
    /// The claims do not fit in a token of the configured maximum length.
    #[error(
        "requestState claims too large: token would be {len} bytes, more than the maximum of {max}"
    )]
    TooLarge {
        /// Length the token would have, in bytes.
        len: usize,
        /// Configured maximum, in bytes.
        max: usize,
    },
    /// The claims could not be serialized.
    #[error("cannot encode requestState claims")]
    Encode(#[source] serde_json::Error),
    /// The operating system's random number generator failed.
    #[error(transparent)]
    Random(#[from] RandomError),
}

/// Errors raised by [`StateGuard::verify_and_redeem`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedeemError {
    /// The token was refused, including because it was already redeemed
    /// ([`RejectReason::Replayed`]). Safe to report to the client.
    #[error(transparent)]
    Rejected(#[from] Rejected),
    /// The replay ledger could not record the redemption. The request must be
    /// refused (the ledger fails closed); report it as an internal error.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// Issues and verifies sealed, expiring, request-bound `requestState` tokens.
///
/// [`issue`](StateGuard::issue) stamps claims with a fresh random id, the
/// issue time and an expiry, and seals them with the key ring's primary key.
/// [`verify`](StateGuard::verify) opens a presented token under any key of the
/// ring and checks, in this order: authenticity, expiry (and an issue time not
/// ahead of the clock by more than the allowed skew), then that the principal,
/// method, target and argument digest equal the [`Binding`] of the request it
/// was presented on. Every failure is the same opaque [`Rejected`] error.
///
/// Verification alone does not make a token single-use: a token can be
/// presented again until it expires. Where that matters, use
/// [`verify_and_redeem`](StateGuard::verify_and_redeem) with a
/// [`ReplayLedger`].
///
/// ```
/// use ferry_state::{Binding, KeyRing, StateClaims, StateGuard, digest_args};
/// use serde_json::json;
///
/// let guard = StateGuard::new(KeyRing::random());
/// let args = digest_args(&json!({"location": "New York"}));
/// let binding = Binding::new("tools/call", "get_weather", &args).with_principal(Some("alice"));
///
/// let token = guard.issue(StateClaims::new(&binding))?;
/// let claims = guard.verify(&token, &binding)?;
/// assert_eq!(claims.target, "get_weather");
///
/// let mallory = binding.with_principal(Some("mallory"));
/// assert!(guard.verify(&token, &mallory).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct StateGuard {
    sealer: Sealer,
    ttl_ms: u64,
    skew_ms: u64,
    clock: Arc<dyn Clock>,
}

impl StateGuard {
    /// A guard sealing with `ring`, with the [default TTL](DEFAULT_TTL),
    /// [maximum token length](crate::DEFAULT_MAX_TOKEN_LEN) and
    /// [clock skew](DEFAULT_CLOCK_SKEW), reading the system clock.
    pub fn new(ring: KeyRing) -> Self {
        Self::from_sealer(Sealer::new(ring))
    }

    /// A guard using an existing sealer (and its maximum token length).
    pub fn from_sealer(sealer: Sealer) -> Self {
        Self {
            sealer,
            ttl_ms: duration_millis(DEFAULT_TTL),
            skew_ms: duration_millis(DEFAULT_CLOCK_SKEW),
            clock: Arc::new(SystemClock),
        }
    }

    /// Sets the lifetime of issued tokens.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl_ms = duration_millis(ttl);
        self
    }

    /// Sets the maximum token length, in bytes, for both issuing and verifying.
    pub fn with_max_token_len(mut self, max_token_len: usize) -> Self {
        self.sealer = self.sealer.with_max_token_len(max_token_len);
        self
    }

    /// Sets how far ahead of this guard's clock a token's issue time may be.
    pub fn with_clock_skew(mut self, skew: Duration) -> Self {
        self.skew_ms = duration_millis(skew);
        self
    }

    /// Replaces the clock, for tests. An `Arc<ManualClock>` may be passed
    /// while the test keeps a clone to move time.
    pub fn with_clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The lifetime of issued tokens.
    pub fn ttl(&self) -> Duration {
        Duration::from_millis(self.ttl_ms)
    }

    /// The allowed clock skew.
    pub fn clock_skew(&self) -> Duration {
        Duration::from_millis(self.skew_ms)
    }

    /// The maximum token length, in bytes.
    pub fn max_token_len(&self) -> usize {
        self.sealer.max_token_len()
    }

    /// The underlying sealer.
    pub fn sealer(&self) -> &Sealer {
        &self.sealer
    }

    /// The key ring.
    pub fn ring(&self) -> &KeyRing {
        self.sealer.ring()
    }

    /// Current time of the guard's clock, in milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Seals `claims` into a token, after setting `jti` to a fresh random
    /// 128-bit id, `issued_at` to now and `expires_at` to now plus the TTL
    /// (any values already there are replaced).
    ///
    /// Fails with [`IssueError::TooLarge`] if the token would be longer than
    /// the maximum token length.
    pub fn issue(&self, claims: StateClaims) -> Result<String, IssueError> {
        self.issue_at(claims, self.clock.now_ms())
    }

    /// [`issue`](StateGuard::issue) with an explicit current time, in
    /// milliseconds since the Unix epoch.
    pub fn issue_at(&self, mut claims: StateClaims, now_ms: u64) -> Result<String, IssueError> {
        // One read of the system generator for the token id and the seal's nonce.
        let mut random = [0u8; JTI_LEN + NONCE_LEN];
        fill_random(&mut random)?;
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&random[JTI_LEN..]);
        let id = &random[..JTI_LEN];
        claims.jti = URL_SAFE_NO_PAD.encode(id);
        claims.issued_at = now_ms;
        claims.expires_at = now_ms.saturating_add(self.ttl_ms);
        let plaintext = Zeroizing::new(serde_json::to_vec(&claims).map_err(IssueError::Encode)?);
        self.sealer
            .try_seal_with_nonce(&plaintext, &nonce)
            .map_err(|err| match err {
                SealError::TooLarge { len, max } => IssueError::TooLarge { len, max },
                SealError::Random(err) => IssueError::Random(err),
            })
    }

    /// Opens and checks a presented token against the request it arrived on.
    ///
    /// Returns the claims if the token is authentic, unexpired, and was issued
    /// for exactly this principal, method, target and argument digest.
    /// Otherwise returns [`Rejected`]; its reason is also logged at debug level.
    pub fn verify(&self, token: &str, expected: &Binding<'_>) -> Result<StateClaims, Rejected> {
        self.verify_at(token, expected, self.clock.now_ms())
    }

    /// [`verify`](StateGuard::verify) with an explicit current time, in
    /// milliseconds since the Unix epoch.
    pub fn verify_at(
        &self,
        token: &str,
        expected: &Binding<'_>,
        now_ms: u64,
    ) -> Result<StateClaims, Rejected> {
        self.check(token, expected, now_ms).map_err(|reason| {
            tracing::debug!(%reason, "requestState rejected");
            Rejected::from(reason)
        })
    }

    fn check(
        &self,
        token: &str,
        expected: &Binding<'_>,
        now_ms: u64,
    ) -> Result<StateClaims, RejectReason> {
        let plaintext = Zeroizing::new(self.sealer.open_raw(token)?);
        let claims: StateClaims =
            serde_json::from_slice(&plaintext).map_err(|_| RejectReason::MalformedClaims)?;
        if now_ms >= claims.expires_at {
            return Err(RejectReason::Expired);
        }
        if claims.issued_at > now_ms.saturating_add(self.skew_ms) {
            return Err(RejectReason::IssuedInFuture);
        }
        claims.check_binding(expected)?;
        Ok(claims)
    }

    /// [`verify`](StateGuard::verify), then records the token's id in `ledger`
    /// so that it is accepted at most once.
    ///
    /// A second presentation of the same token fails with
    /// [`RedeemError::Rejected`] whose reason is [`RejectReason::Replayed`]. If
    /// the ledger fails, the request must be refused:
    /// [`RedeemError::Ledger`].
    pub async fn verify_and_redeem<L>(
        &self,
        token: &str,
        expected: &Binding<'_>,
        ledger: &L,
    ) -> Result<StateClaims, RedeemError>
    where
        L: ReplayLedger + ?Sized,
    {
        let claims = self.verify(token, expected)?;
        match ledger.redeem(&claims.jti, claims.expires_at).await? {
            Redemption::First => Ok(claims),
            Redemption::Replayed => {
                tracing::debug!(reason = %RejectReason::Replayed, "requestState rejected");
                Err(Rejected::from(RejectReason::Replayed).into())
            }
        }
    }
}

impl fmt::Debug for StateGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateGuard")
            .field("sealer", &self.sealer)
            .field("ttl_ms", &self.ttl_ms)
            .field("skew_ms", &self.skew_ms)
            .finish_non_exhaustive()
    }
}
