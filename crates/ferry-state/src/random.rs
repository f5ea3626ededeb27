//! Access to the operating system's random number generator.

/// The operating system's random number generator failed.
///
/// This is not expected on any supported platform once it has booted; it is
/// reported rather than hidden so that no key, nonce or id is ever made from
/// anything but fresh system randomness.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("operating system random number generator failed: {0}")]
pub struct RandomError(getrandom::Error);

/// Fills `buf` from the operating system's random number generator.
pub(crate) fn fill_random(buf: &mut [u8]) -> Result<(), RandomError> {
    getrandom::fill(buf).map_err(RandomError)
}
