//! [`ApiKey`]: a provider credential that never shows in logs or `Debug` output.

use std::fmt;

use zeroize::Zeroizing;

/// The environment variable [`ApiKey::from_env`] reads unless told another.
pub const DEFAULT_API_KEY_VAR: &str = "FERRY_LLM_API_KEY";

/// A provider API key. Its `Debug` output is `ApiKey(<redacted>)`, it has no `Display`, and
/// its memory is wiped when dropped. The HTTP header that carries it is marked sensitive.
#[derive(Clone)]
pub struct ApiKey(Zeroizing<String>);

impl ApiKey {
    /// A key from its text. Surrounding whitespace (a trailing newline from a file) is
    /// dropped.
    pub fn new(key: impl Into<String>) -> Self {
        let key = Zeroizing::new(key.into());
        let trimmed = key.trim();
        if trimmed.len() == key.len() {
            ApiKey(key)
        } else {
            ApiKey(Zeroizing::new(trimmed.to_owned()))
        }
    }

    /// The key in the environment variable `var`, or `None` when it is unset or blank.
    pub fn from_env(var: &str) -> Option<Self> {
        ApiKey::from_lookup(var, |name| std::env::var(name).ok())
    }

    /// The key that `lookup` finds under `var` (an environment of the caller's own: a
    /// configuration map, a secret store), or `None` when absent or blank.
    pub fn from_lookup(var: &str, lookup: impl FnOnce(&str) -> Option<String>) -> Option<Self> {
        let value = Zeroizing::new(lookup(var)?);
        if value.trim().is_empty() {
            None
        } else {
            Some(ApiKey::new(value.as_str()))
        }
    }

    /// The key itself, to put in a request. Never log it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_is_redacted() {
        let key = ApiKey::new("sk-very-secret\n");
        assert_eq!(key.expose_secret(), "sk-very-secret");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert!(!format!("{:?}", Some(key)).contains("secret"));
    }

    #[test]
    fn lookup() {
        let found = ApiKey::from_lookup("K", |n| (n == "K").then(|| "abc".to_owned()));
        assert_eq!(found.unwrap().expose_secret(), "abc");
        assert!(ApiKey::from_lookup("K", |_| Some("  ".into())).is_none());
        assert!(ApiKey::from_lookup("K", |_| None).is_none());
    }
}
