//! The authenticated identity behind a request.

use std::fmt;
use std::sync::Arc;

/// Who sent a request, as established by an authentication layer in front of the server
/// (a tower layer on HTTP; stdio servers usually have none).
///
/// Ferry binds every sealed `requestState` to the principal, so a state issued to one user
/// is refused when another presents it. The identifier is compared exactly; use a stable
/// subject such as an OAuth `sub`, never a display name.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    id: Arc<str>,
}

impl Principal {
    /// A principal with this stable identifier.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Principal { id: id.into() }
    }

    /// The stable identifier.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Principal").field(&self.id).finish()
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}
