//! The authenticated identity behind a request, and the scopes it was granted.

use std::fmt;
use std::sync::Arc;

/// Who sent a request, as established by an authentication layer in front of the server
/// (a tower layer on HTTP, credentials from the environment on stdio).
///
/// A principal is the triple (issuer, subject, client id) of an OAuth access token, or a
/// bare subject for local identities such as development tokens. Ferry binds every
/// sealed `requestState` to [`Principal::id`], so a state issued to one user is refused
/// when another presents it. Two principals are equal when their identities are equal;
/// the granted [`Scopes`] are not part of the identity.
///
/// ```
/// use ferry_server::{Principal, Scopes};
///
/// let alice = Principal::oauth("https://auth.example.com", "alice")
///     .with_client_id("ferry-cli")
///     .with_scopes(Scopes::from_space_separated("files:read files:delete"));
/// assert_eq!(alice.subject(), "alice");
/// assert!(alice.scopes().covers("files:delete"));
/// assert_ne!(alice, Principal::new("alice"));
/// ```
#[derive(Clone)]
pub struct Principal {
    inner: Arc<Inner>,
}

struct Inner {
    issuer: Option<Box<str>>,
    subject: Box<str>,
    client_id: Option<Box<str>>,
    scopes: Scopes,
    /// The stable identity used for binding: the subject alone for local principals, an
    /// unambiguous encoding of the triple otherwise.
    id: Box<str>,
}

impl Principal {
    /// A local principal identified by `subject` alone (development tokens, tests, a
    /// stdio server's single user).
    pub fn new(subject: impl Into<String>) -> Self {
        Principal::build(None, subject.into(), None, Scopes::default())
    }

    /// A principal authenticated by an OAuth access token from `issuer`, for `subject`
    /// (the token's `sub`).
    pub fn oauth(issuer: impl Into<String>, subject: impl Into<String>) -> Self {
        Principal::build(Some(issuer.into()), subject.into(), None, Scopes::default())
    }

    /// The same principal, acting through the OAuth client `client_id`.
    pub fn with_client_id(self, client_id: impl Into<String>) -> Self {
        let scopes = self.inner.scopes.clone();
        Principal::build(
            self.inner.issuer.as_deref().map(str::to_owned),
            self.inner.subject.to_string(),
            Some(client_id.into()),
            scopes,
        )
    }

    /// The same principal, holding `scopes`.
    pub fn with_scopes(self, scopes: Scopes) -> Self {
        Principal::build(
            self.inner.issuer.as_deref().map(str::to_owned),
            self.inner.subject.to_string(),
            self.inner.client_id.as_deref().map(str::to_owned),
            scopes,
        )
    }

    fn build(
        issuer: Option<String>,
        subject: String,
        client_id: Option<String>,
        scopes: Scopes,
    ) -> Self {
        let id = match (&issuer, &client_id) {
            (None, None) => subject.clone(),
            // A JSON array: no choice of issuer, subject and client id can collide with
            // another, nor with a local subject (which never starts with `[` here).
            _ => serde_json::to_string(&(&issuer, &subject, &client_id))
                .unwrap_or_else(|_| subject.clone()),
        };
        Principal {
            inner: Arc::new(Inner {
                issuer: issuer.map(String::into_boxed_str),
                subject: subject.into_boxed_str(),
                client_id: client_id.map(String::into_boxed_str),
                scopes,
                id: id.into_boxed_str(),
            }),
        }
    }

    /// The stable identity that `requestState` and tasks are bound to. Compared exactly.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The token issuer, for OAuth principals.
    pub fn issuer(&self) -> Option<&str> {
        self.inner.issuer.as_deref()
    }

    /// The subject: the token's `sub`, or a local principal's name.
    pub fn subject(&self) -> &str {
        &self.inner.subject
    }

    /// The OAuth client the user acts through, when known.
    pub fn client_id(&self) -> Option<&str> {
        self.inner.client_id.as_deref()
    }

    /// The scopes the principal was granted.
    pub fn scopes(&self) -> &Scopes {
        &self.inner.scopes
    }
}

impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        self.inner.id == other.inner.id
    }
}

impl Eq for Principal {}

impl std::hash::Hash for Principal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.id.hash(state);
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Principal");
        if let Some(issuer) = &self.inner.issuer {
            d.field("issuer", issuer);
        }
        d.field("subject", &self.inner.subject);
        if let Some(client) = &self.inner.client_id {
            d.field("client_id", client);
        }
        if !self.inner.scopes.is_empty() {
            d.field("scopes", &self.inner.scopes);
        }
        d.finish()
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.subject)?;
        if let Some(issuer) = &self.inner.issuer {
            write!(f, " ({issuer})")?;
        }
        Ok(())
    }
}

/// The OAuth scopes granted to a [`Principal`].
///
/// A granted scope covers itself and every scope below it in the colon-separated
/// hierarchy: `files` covers `files:read` and `files:delete:all`, but not `filesystem`.
/// Other implications (an `admin` scope that covers everything, say) are expanded by
/// the authentication layer before the principal is built.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Scopes {
    granted: Arc<[Box<str>]>,
}

impl Scopes {
    /// Scopes from a space-separated list, as in a token's `scope` claim.
    pub fn from_space_separated(list: &str) -> Self {
        list.split(' ').filter(|s| !s.is_empty()).collect()
    }

    /// Whether no scope was granted.
    pub fn is_empty(&self) -> bool {
        self.granted.is_empty()
    }

    /// The granted scopes, in the order they were given.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.granted.iter().map(|s| &**s)
    }

    /// Whether `required` is granted, directly or through a scope above it.
    pub fn covers(&self, required: &str) -> bool {
        self.granted.iter().any(|g| {
            required == &**g
                || required
                    .strip_prefix(&**g)
                    .is_some_and(|rest| rest.starts_with(':'))
        })
    }

    /// The scopes of `required` that are not covered.
    pub fn missing<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required
            .iter()
            .map(String::as_str)
            .filter(|r| !self.covers(r))
            .collect()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Scopes {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut granted: Vec<Box<str>> = Vec::new();
        for s in iter {
            let s = s.as_ref();
            if !s.is_empty() && !granted.iter().any(|g| &**g == s) {
                granted.push(s.into());
            }
        }
        Scopes {
            granted: granted.into(),
        }
    }
}

impl fmt::Debug for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(s)?;
        }
        Ok(())
    }
}

/// A request was refused because its principal lacks scopes the operation needs.
///
/// An HTTP transport answers it with `403 Forbidden`, and places this value in the
/// response's extensions so that an authorization layer can write the
/// `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` challenge with every
/// scope the operation needs (authorization spec, scope challenge handling).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsufficientScope {
    /// Every scope the operation needs, the granted ones included, so a client can ask
    /// for all of them in one step-up.
    pub required: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities() {
        let a = Principal::oauth("https://as", "alice");
        assert_eq!(a.id(), r#"["https://as","alice",null]"#);
        assert_eq!(Principal::new("alice").id(), "alice");
        let c = a.clone().with_client_id("cli");
        assert_ne!(a, c);
        assert_eq!(c.client_id(), Some("cli"));
        let s = c.clone().with_scopes(Scopes::from_space_separated("x"));
        assert_eq!(s, c, "scopes are not part of the identity");
        assert_eq!(s.client_id(), Some("cli"));
        assert_eq!(s.issuer(), Some("https://as"));
    }

    #[test]
    fn scope_hierarchy() {
        let s = Scopes::from_space_separated(" files  mcp:tools:read ");
        assert!(s.covers("files"));
        assert!(s.covers("files:delete"));
        assert!(s.covers("files:delete:all"));
        assert!(!s.covers("filesystem"));
        assert!(!s.covers("mcp:tools"));
        assert!(s.covers("mcp:tools:read"));
        assert_eq!(
            s.missing(&["files:x".into(), "mcp".into(), "other".into()]),
            ["mcp", "other"]
        );
        assert_eq!(s.to_string(), "files mcp:tools:read");
        assert_eq!(format!("{s:?}"), r#"["files", "mcp:tools:read"]"#);
    }
}
