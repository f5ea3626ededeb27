//! The uniform rejection error and its private reasons.

use std::fmt;

/// Message shown for every rejected token, whatever the cause.
pub const REJECTED_MESSAGE: &str = "invalid or expired requestState";

/// A `requestState` token was refused.
///
/// Every failure — malformed, tampered, sealed with an unknown key, expired,
/// presented by another principal or on another request, replayed — produces
/// this one error, and its `Display` is always the same
/// ([`REJECTED_MESSAGE`]), so it is safe to send back to a client. The precise
/// cause is kept for server-side logging and is available through
/// [`Rejected::reason`]; the `Debug` output includes it, so do not send `Debug`
/// output to clients.
///
/// ```
/// use ferry_state::{KeyRing, Sealer};
///
/// let sealer = Sealer::new(KeyRing::random());
/// let err = sealer.open(&"not base64! ".repeat(10)).unwrap_err();
/// assert_eq!(err.to_string(), "invalid or expired requestState");
/// assert_eq!(err.reason().to_string(), "token is not valid base64url");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", REJECTED_MESSAGE)]
pub struct Rejected {
    reason: RejectReason,
}

impl Rejected {
    /// The precise cause, for server-side logs only.
    pub fn reason(&self) -> RejectReason {
        self.reason
    }
}

impl fmt::Debug for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rejected")
            .field("reason", &self.reason)
            .finish()
    }
}

impl From<RejectReason> for Rejected {
    fn from(reason: RejectReason) -> Self {
        Self { reason }
    }
}

/// Why a token was [`Rejected`]. For server-side logs only: never send it to a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RejectReason {
    /// The token was the empty string.
    Empty,
    /// The token was longer than the configured maximum; it was not decoded.
    TooLong {
        /// Length of the presented token, in bytes.
        len: usize,
        /// Configured maximum, in bytes.
        max: usize,
    },
    /// The token is too short to hold a header, a nonce and a tag.
    TooShort,
    /// The token is not canonical unpadded base64url.
    NotBase64,
    /// The token's header is malformed (bad key id length or characters).
    MalformedHeader,
    /// The token's format version is not one this crate reads.
    UnsupportedVersion(u8),
    /// The token names a key id that is not in the key ring.
    UnknownKeyId,
    /// Authenticated decryption failed: the token was altered, or sealed with a
    /// different key under the same id.
    BadSeal,
    /// The sealed payload is not a valid set of claims.
    MalformedClaims,
    /// The token's expiry has passed.
    Expired,
    /// The token claims to have been issued further in the future than the
    /// allowed clock skew.
    IssuedInFuture,
    /// The token was issued to a different principal (or to an authenticated
    /// principal and presented anonymously, or the reverse).
    PrincipalMismatch,
    /// The token was issued for a different method.
    MethodMismatch,
    /// The token was issued for a different tool, prompt or resource.
    TargetMismatch,
    /// The token was issued for a request with different arguments.
    ArgsMismatch,
    /// The token was already redeemed once.
    Replayed,
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("token is empty"),
            Self::TooLong { len, max } => {
                write!(f, "token is {len} bytes, more than the maximum of {max}")
            }
            Self::TooShort => f.write_str("token is too short"),
            Self::NotBase64 => f.write_str("token is not valid base64url"),
            Self::MalformedHeader => f.write_str("token header is malformed"),
            Self::UnsupportedVersion(v) => write!(f, "token format version {v} is not supported"),
            Self::UnknownKeyId => f.write_str("token was sealed with a key not in the key ring"),
            Self::BadSeal => f.write_str("token failed authenticated decryption"),
            Self::MalformedClaims => f.write_str("token payload is not valid claims"),
            Self::Expired => f.write_str("token has expired"),
            Self::IssuedInFuture => f.write_str("token was issued in the future"),
            Self::PrincipalMismatch => f.write_str("token was issued to another principal"),
            Self::MethodMismatch => f.write_str("token was issued for another method"),
            Self::TargetMismatch => f.write_str("token was issued for another target"),
            Self::ArgsMismatch => f.write_str("token was issued for other arguments"),
            Self::Replayed => f.write_str("token was already redeemed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_uniform() {
        for reason in [
            RejectReason::Empty,
            RejectReason::TooLong { len: 9, max: 1 },
            RejectReason::BadSeal,
            RejectReason::Expired,
            RejectReason::PrincipalMismatch,
            RejectReason::Replayed,
        ] {
            let err = Rejected::from(reason);
            assert_eq!(err.to_string(), REJECTED_MESSAGE);
            assert_eq!(err.reason(), reason);
            assert!(format!("{err:?}").contains(&format!("{reason:?}")));
        }
    }
}
