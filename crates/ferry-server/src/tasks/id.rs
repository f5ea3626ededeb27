//! Task ids: 144 random bits, so that nobody can guess or enumerate another caller's
//! tasks (ext-tasks/tasks.md, "Security Considerations").

use base64::Engine as _;

/// Random bytes in a task id.
const ID_BYTES: usize = 18;

/// A fresh task id: 18 bytes from the operating system's generator, base64url (24
/// characters, no padding).
pub(crate) fn new_task_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; ID_BYTES];
    getrandom::fill(&mut bytes)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether `id` could be a task id at all: bounded, and made of URL-safe characters.
/// Anything else is unknown without asking the store.
pub(crate) fn plausible(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_long_and_distinct() {
        let a = new_task_id().unwrap();
        let b = new_task_id().unwrap();
        assert_eq!(a.len(), 24);
        assert_ne!(a, b);
        assert!(plausible(&a));
        assert!(!plausible(""));
        assert!(!plausible("a b"));
        assert!(!plausible(&"x".repeat(129)));
    }
}
