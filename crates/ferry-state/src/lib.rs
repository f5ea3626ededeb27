//! Sealed, tamper-proof `requestState` tokens for MCP multi round-trip requests.
//!
//! In a multi round-trip request (MRTR) a server answers `tools/call`,
//! `prompts/get` or `resources/read` with an `InputRequiredResult` that may
//! carry an opaque `requestState`; the client echoes it on its retry. The
//! specification requires servers to treat that state as attacker-controlled,
//! to protect its integrity, and recommends binding it to the authenticated
//! principal, a short expiry and the originating request. It also notes that
//! those measures do not make a state single-use.
//!
//! This crate provides those pieces, independent of any MCP message types:
//!
//! - [`Key`] and [`KeyRing`]: XChaCha20-Poly1305 keys with short public ids,
//!   one primary key for sealing and older keys kept for opening, so keys can
//!   be rotated without breaking tokens in flight.
//! - [`Sealer`]: authenticated encryption of bytes into compact base64url
//!   tokens, with a size limit checked before any decoding.
//! - [`StateClaims`], [`Binding`], [`digest_args`] and [`StateGuard`]: claims
//!   stamped with a random id and an expiry, bound to the principal, method,
//!   target and a canonical digest of the arguments, and verified against the
//!   request they come back on. Every failure is the same opaque [`Rejected`]
//!   error, whose precise [`RejectReason`] is kept for server logs.
//! - [`ReplayLedger`], [`MemoryLedger`] and (feature `redb`) `RedbLedger`: single-use
//!   redemption of token ids, in memory or in a durable file.
//!
//! # Example
//!
//! ```
//! use ferry_state::{
//!     Binding, KeyRing, MemoryLedger, RejectReason, StateClaims, StateGuard, digest_args,
//! };
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Keys normally come from configuration, e.g. FERRY_STATE_KEYS="k2:<b64>,k1:<b64>".
//! let ring = KeyRing::parse("k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")?;
//! let guard = StateGuard::new(ring);
//!
//! // First round: the tool needs input. Bind the state to this request.
//! let params = json!({"location": "New York"});
//! let args = digest_args(&params);
//! let binding = Binding::new("tools/call", "get_weather", &args).with_principal(Some("alice"));
//! let mut claims = StateClaims::new(&binding);
//! claims.asked.insert("units".into(), "elicit:form".into());
//! claims.app = Some(json!({"step": 1}));
//! let request_state = guard.issue(claims)?;
//!
//! // Retry: same params (keys in any order), same principal.
//! let retry_args = digest_args(&json!({"location": "New York"}));
//! let retry = Binding::new("tools/call", "get_weather", &retry_args).with_principal(Some("alice"));
//! let ledger = MemoryLedger::default();
//! let claims = futures::executor::block_on(guard.verify_and_redeem(&request_state, &retry, &ledger))?;
//! assert_eq!(claims.app, Some(json!({"step": 1})));
//!
//! // The same state cannot be used twice...
//! let again = futures::executor::block_on(guard.verify_and_redeem(&request_state, &retry, &ledger));
//! assert!(again.is_err());
//!
//! // ...nor by someone else, nor on another tool; the client only sees a generic message.
//! let other = Binding::new("tools/call", "delete_repo", &retry_args).with_principal(Some("alice"));
//! let err = guard.verify(&request_state, &other).unwrap_err();
//! assert_eq!(err.to_string(), "invalid or expired requestState");
//! assert_eq!(err.reason(), RejectReason::TargetMismatch);
//! # Ok(())
//! # }
//! ```
//!
//! # Token format
//!
//! A token is unpadded base64url of `version | key id length | key id | nonce
//! | ciphertext | tag`, sealed with XChaCha20-Poly1305 under a 24-byte random
//! nonce, with the version and key id authenticated as associated data. See
//! [`Sealer`]. The payload is the JSON form of [`StateClaims`].
//!
//! # Keys
//!
//! Generate a key with [`Key::generate`] and store its [`Key::to_text`] form in
//! the server's secret configuration. A server started without keys can use
//! [`KeyRing::random`]; [`KeyRing::is_ephemeral`] then tells it to warn that
//! states will not survive a restart or be accepted by another instance.

#![forbid(unsafe_code)]

mod aead;
mod claims;
mod clock;
mod error;
mod guard;
mod key;
mod ledger;
mod random;
mod seal;

pub use claims::{Binding, CallTrace, StateClaims, canonical_json, digest_args, input_digest};
pub use clock::{Clock, ManualClock, SystemClock, unix_millis_now};
pub use error::{REJECTED_MESSAGE, RejectReason, Rejected};
pub use guard::{DEFAULT_CLOCK_SKEW, DEFAULT_TTL, IssueError, RedeemError, StateGuard};
pub use key::{KEY_LEN, Key, KeyError, KeyId, KeyRing, MAX_KEY_ID_LEN};
pub use ledger::{
    DEFAULT_MEMORY_CAPACITY, DEFAULT_RETENTION_MARGIN, FailureLog, LedgerError, MAX_JTI_LEN,
    MemoryLedger, Redemption, ReplayLedger,
};
#[cfg(feature = "redb")]
pub use ledger::{DEFAULT_REDB_CAPACITY, RedbLedger, RedbLedgerBuilder};
pub use random::RandomError;
pub use seal::{DEFAULT_MAX_TOKEN_LEN, SealError, Sealer, TOKEN_VERSION};

/// The version of [redb](https://docs.rs/redb) that `RedbLedger` uses, for opening a
/// database with custom options (`RedbLedger::from_database`).
#[cfg(feature = "redb")]
pub use redb;
