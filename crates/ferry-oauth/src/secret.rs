//! [`Secret`]: a string that never shows itself in `Debug` output or logs.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zeroize::Zeroize;

/// A secret string: an access or refresh token, a client secret, a private key, an
/// assertion. Its `Debug` output is `Secret(<redacted>)`, it has no `Display`, and its
/// memory is wiped when it is dropped. Read it with [`Secret::expose`].
///
/// It serializes as the plain string, for token stores.
///
/// ```
/// use ferry_oauth::Secret;
///
/// let token = Secret::new("eyJhbGciOi...");
/// assert_eq!(format!("{token:?}"), "Secret(<redacted>)");
/// assert_eq!(token.expose(), "eyJhbGciOi...");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret value. Keep it out of logs.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}
