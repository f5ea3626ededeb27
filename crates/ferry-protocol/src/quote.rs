//! Quoting what a peer sent, bounded: tool names, URIs, header values, argument paths and
//! method names come from the peer and may be of any length, so every error message and
//! log line that repeats one shows at most [`MAX_QUOTED_CHARS`] characters of it, marked
//! as cut with `…` and the original length.

use std::fmt;

/// The most characters of a peer's value an error message or log line repeats.
pub const MAX_QUOTED_CHARS: usize = 128;

/// `value`, to be formatted bounded: `{}` writes it as is, `{:?}` quoted and escaped as
/// `str`'s `Debug` does; either way cut after [`MAX_QUOTED_CHARS`] characters, with `…`
/// and the original length in bytes.
///
/// ```
/// use ferry_protocol::quote::quote;
///
/// assert_eq!(format!("unknown tool {:?}", quote("echo")), r#"unknown tool "echo""#);
/// let long = "x".repeat(1 << 20);
/// let message = format!("unknown tool {:?}", quote(&long));
/// assert!(message.len() < 200);
/// assert!(message.ends_with("…(1048576 bytes)"));
/// ```
pub fn quote(value: &str) -> Quoted<'_> {
    Quoted(value)
}

/// A peer's value formatted bounded: see [`quote`].
#[derive(Clone, Copy)]
pub struct Quoted<'a>(&'a str);

impl<'a> Quoted<'a> {
    /// The part that is shown, and whether anything was cut.
    fn shown(&self) -> (&'a str, bool) {
        match self.0.char_indices().nth(MAX_QUOTED_CHARS) {
            Some((end, _)) => (&self.0[..end], true),
            None => (self.0, false),
        }
    }

    /// The quoted value as an owned string (for a `String` field such as an error's
    /// message).
    pub fn to_owned_string(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (shown, cut) = self.shown();
        f.write_str(shown)?;
        if cut {
            write!(f, "…({} bytes)", self.0.len())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (shown, cut) = self.shown();
        write!(f, "{shown:?}")?;
        if cut {
            write!(f, "…({} bytes)", self.0.len())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_unchanged_and_long_ones_cut_at_a_character() {
        assert_eq!(quote("echo").to_string(), "echo");
        assert_eq!(format!("{:?}", quote("a\"b")), r#""a\"b""#);
        let exact = "é".repeat(MAX_QUOTED_CHARS);
        assert_eq!(quote(&exact).to_string(), exact, "128 characters fit");

        let long = "é".repeat(MAX_QUOTED_CHARS + 1);
        let shown = quote(&long).to_string();
        assert_eq!(
            shown,
            format!("{}…(258 bytes)", "é".repeat(MAX_QUOTED_CHARS))
        );
        let debug = format!("{:?}", quote(&long));
        assert!(debug.starts_with('"') && debug.ends_with("\"…(258 bytes)"));

        let huge = "x".repeat(1 << 20);
        assert!(quote(&huge).to_string().len() < MAX_QUOTED_CHARS + 32);
    }
}
