//! Reading strings without copying them.
//!
//! serde reads a `Cow<str>` as an owned `String` unless the field is a bare `Cow` marked
//! `#[serde(borrow)]`; an `Option<Cow<str>>` or a map key always copies. These helpers
//! borrow from the input whenever the string has no escapes, which is nearly always, and
//! copy only when it must be unescaped.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, Error, Visitor};

/// A string read from JSON, borrowed from the input when it holds no escapes.
///
/// ```
/// use ferry_protocol::borrowed::CowStr;
///
/// let s: CowStr<'_> = serde_json::from_str(r#""tools/call""#).unwrap();
/// assert!(matches!(s.0, std::borrow::Cow::Borrowed("tools/call")));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CowStr<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for CowStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(CowStrVisitor).map(CowStr)
    }
}

struct CowStrVisitor;

impl<'de> Visitor<'de> for CowStrVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// `deserialize_with` for an `Option<Cow<'a, str>>` field that borrows from the input.
/// Pair it with `#[serde(default, borrow)]`.
pub fn option_cow_str<'de: 'a, 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Cow<'a, str>>, D::Error> {
    Option::<CowStr<'a>>::deserialize(d).map(|s| s.map(|s| s.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(default, borrow, deserialize_with = "option_cow_str")]
        name: Option<Cow<'a, str>>,
    }

    #[test]
    fn plain_strings_are_borrowed_and_escaped_ones_copied() {
        let p: Probe<'_> = serde_json::from_str(r#"{"name":"echo"}"#).unwrap();
        assert!(matches!(p.name, Some(Cow::Borrowed("echo"))));
        let p: Probe<'_> = serde_json::from_str(r#"{"name":"e\u0063ho"}"#).unwrap();
        assert!(matches!(p.name.as_deref(), Some("echo")));
        assert!(matches!(p.name, Some(Cow::Owned(_))));
        let p: Probe<'_> = serde_json::from_str(r#"{}"#).unwrap();
        assert!(p.name.is_none());
        let p: Probe<'_> = serde_json::from_str(r#"{"name":null}"#).unwrap();
        assert!(p.name.is_none());
        assert!(serde_json::from_str::<Probe<'_>>(r#"{"name":5}"#).is_err());
    }
}
