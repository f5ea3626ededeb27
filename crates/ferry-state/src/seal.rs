//! The token format: authenticated encryption of opaque bytes.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::aead::{self, TAG_LEN};
use crate::error::{RejectReason, Rejected};
use crate::key::{KeyId, KeyRing, MAX_KEY_ID_LEN};
use crate::random::{RandomError, fill_random};

/// Format version written as the first byte of every token.
pub const TOKEN_VERSION: u8 = 1;

/// Default maximum length of a token, in bytes of base64url text (16 KiB).
pub const DEFAULT_MAX_TOKEN_LEN: usize = 16 * 1024;

pub(crate) use crate::aead::NONCE_LEN;
/// Version byte and key id length byte.
const FIXED_HEADER_LEN: usize = 2;
/// Smallest raw token: a one-byte key id and an empty plaintext.
const MIN_RAW_LEN: usize = FIXED_HEADER_LEN + 1 + NONCE_LEN + TAG_LEN;

/// Length of the unpadded base64 encoding of `n` bytes.
const fn encoded_len(n: usize) -> usize {
    n.saturating_mul(4).div_ceil(3)
}

/// Errors raised while sealing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The token would be longer than the configured maximum, so it would be
    /// refused when presented.
    #[error("sealed token would be {len} bytes, more than the maximum of {max}")]
    TooLarge {
        /// Length the token would have, in bytes.
        len: usize,
        /// Configured maximum, in bytes.
        max: usize,
    },
    /// The operating system's random number generator failed.
    #[error(transparent)]
    Random(#[from] RandomError),
}

/// Seals and opens opaque byte strings as URL-safe text tokens.
///
/// A token is the unpadded base64url encoding of
///
/// ```text
/// version (1 byte) | key id length (1 byte) | key id (1..=8 bytes)
///   | nonce (24 random bytes) | XChaCha20-Poly1305 ciphertext | tag (16 bytes)
/// ```
///
/// The version, key id length and key id are authenticated as associated data,
/// so none of the token's bytes can be changed without detection. New tokens
/// are sealed with the ring's primary key; tokens are opened with whichever
/// key of the ring their key id names.
///
/// Presented tokens longer than [`Sealer::max_token_len`] are refused before
/// any decoding, which bounds the work an attacker can cause.
///
/// ```
/// use ferry_state::{KeyRing, Sealer};
///
/// let sealer = Sealer::new(KeyRing::random());
/// let token = sealer.seal(b"hello");
/// assert_eq!(sealer.open(&token)?, b"hello");
/// # Ok::<(), ferry_state::Rejected>(())
/// ```
#[derive(Debug, Clone)]
pub struct Sealer {
    ring: Arc<KeyRing>,
    max_token_len: usize,
}

impl Sealer {
    /// A sealer using `ring` and the [default maximum token length](DEFAULT_MAX_TOKEN_LEN).
    pub fn new(ring: KeyRing) -> Self {
        Self {
            ring: Arc::new(ring),
            max_token_len: DEFAULT_MAX_TOKEN_LEN,
        }
    }

    /// Sets the maximum length, in bytes, of tokens accepted by [`Sealer::open`]
    /// and produced by [`Sealer::try_seal`].
    pub fn with_max_token_len(mut self, max_token_len: usize) -> Self {
        self.max_token_len = max_token_len;
        self
    }

    /// The maximum token length, in bytes.
    pub fn max_token_len(&self) -> usize {
        self.max_token_len
    }

    /// The key ring.
    pub fn ring(&self) -> &KeyRing {
        &self.ring
    }

    /// Length, in bytes, of the token that sealing `plaintext_len` bytes with
    /// the current primary key produces.
    pub fn sealed_len(&self, plaintext_len: usize) -> usize {
        let kid_len = self.ring.primary().id().as_bytes().len();
        encoded_len(
            (FIXED_HEADER_LEN + kid_len + NONCE_LEN + TAG_LEN).saturating_add(plaintext_len),
        )
    }

    /// Seals `plaintext` with the primary key.
    ///
    /// The result is not checked against [`Sealer::max_token_len`]; use
    /// [`Sealer::try_seal`] to refuse tokens that would be too long to open.
    ///
    /// # Panics
    ///
    /// Panics if the operating system's random number generator fails; use
    /// [`Sealer::try_seal`] to handle that case.
    pub fn seal(&self, plaintext: &[u8]) -> String {
        match self.seal_inner(plaintext, usize::MAX) {
            Ok(token) => token,
            Err(err) => panic!("cannot seal: {err}"),
        }
    }

    /// Seals `plaintext` with the primary key, refusing to produce a token
    /// longer than [`Sealer::max_token_len`].
    pub fn try_seal(&self, plaintext: &[u8]) -> Result<String, SealError> {
        self.seal_inner(plaintext, self.max_token_len)
    }

    /// [`try_seal`](Sealer::try_seal) under a nonce the caller drew from the operating
    /// system's generator (so that one read serves a token id and its nonce).
    pub(crate) fn try_seal_with_nonce(
        &self,
        plaintext: &[u8],
        nonce: &[u8; NONCE_LEN],
    ) -> Result<String, SealError> {
        self.seal_under(plaintext, self.max_token_len, nonce)
    }

    fn seal_inner(&self, plaintext: &[u8], max: usize) -> Result<String, SealError> {
        let mut nonce = [0u8; NONCE_LEN];
        fill_random(&mut nonce)?;
        self.seal_under(plaintext, max, &nonce)
    }

    fn seal_under(
        &self,
        plaintext: &[u8],
        max: usize,
        nonce: &[u8; NONCE_LEN],
    ) -> Result<String, SealError> {
        let len = self.sealed_len(plaintext.len());
        if len > max {
            return Err(SealError::TooLarge { len, max });
        }
        let key = self.ring.primary();
        let kid = key.id();
        let kid = kid.as_bytes();
        let header_len = FIXED_HEADER_LEN + kid.len();
        let mut raw = Vec::with_capacity(header_len + NONCE_LEN + plaintext.len() + TAG_LEN);
        raw.push(TOKEN_VERSION);
        // A key id is at most MAX_KEY_ID_LEN (8) bytes.
        raw.push(kid.len() as u8);
        raw.extend_from_slice(kid);
        raw.extend_from_slice(nonce);
        raw.extend_from_slice(plaintext);

        let (aad, body) = raw.split_at_mut(header_len + NONCE_LEN);
        let aad = &aad[..header_len];
        // Only fails for plaintexts of 256 GiB or more.
        let tag = aead::seal(key.bytes(), nonce, aad, body).ok_or(SealError::TooLarge {
            len,
            max: usize::MAX,
        })?;
        raw.extend_from_slice(&tag);
        Ok(URL_SAFE_NO_PAD.encode(&raw))
    }

    /// Opens a token, returning the sealed bytes.
    ///
    /// Refuses, with a [`Rejected`] error, tokens that are empty, longer than
    /// [`Sealer::max_token_len`] (checked before decoding), not canonical
    /// unpadded base64url, of another format version, sealed with a key id
    /// not in the ring, or altered in any byte.
    pub fn open(&self, token: &str) -> Result<Vec<u8>, Rejected> {
        self.open_raw(token).map_err(Rejected::from)
    }

    pub(crate) fn open_raw(&self, token: &str) -> Result<Vec<u8>, RejectReason> {
        if token.is_empty() {
            return Err(RejectReason::Empty);
        }
        if token.len() > self.max_token_len {
            return Err(RejectReason::TooLong {
                len: token.len(),
                max: self.max_token_len,
            });
        }
        if token.len() < encoded_len(MIN_RAW_LEN) {
            return Err(RejectReason::TooShort);
        }
        let mut raw = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| RejectReason::NotBase64)?;
        if raw[0] != TOKEN_VERSION {
            return Err(RejectReason::UnsupportedVersion(raw[0]));
        }
        let kid_len = usize::from(raw[1]);
        if kid_len == 0 || kid_len > MAX_KEY_ID_LEN {
            return Err(RejectReason::MalformedHeader);
        }
        let header_len = FIXED_HEADER_LEN + kid_len;
        if raw.len() < header_len + NONCE_LEN + TAG_LEN {
            return Err(RejectReason::TooShort);
        }
        let kid = KeyId::from_bytes(&raw[FIXED_HEADER_LEN..header_len])
            .ok_or(RejectReason::MalformedHeader)?;
        let key = self.ring.get(kid).ok_or(RejectReason::UnknownKeyId)?;

        let plaintext_end = raw.len() - TAG_LEN;
        let (head, rest) = raw.split_at_mut(header_len + NONCE_LEN);
        let (aad, nonce) = head.split_at(header_len);
        let (body, tag) = rest.split_at_mut(rest.len() - TAG_LEN);
        let (Ok(nonce), Ok(tag)) = (
            <&[u8; NONCE_LEN]>::try_from(nonce),
            <&[u8; TAG_LEN]>::try_from(&*tag),
        ) else {
            return Err(RejectReason::TooShort);
        };
        if !aead::open(key.bytes(), nonce, aad, body, tag) {
            return Err(RejectReason::BadSeal);
        }
        raw.truncate(plaintext_end);
        raw.drain(..header_len + NONCE_LEN);
        Ok(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Key;

    fn sealer() -> Sealer {
        Sealer::new(KeyRing::new(Key::generate(KeyId::new("k1").unwrap())))
    }

    #[test]
    fn layout_and_lengths() {
        let s = sealer();
        for n in [0usize, 1, 2, 3, 100, 1000] {
            let pt = vec![7u8; n];
            let token = s.seal(&pt);
            assert_eq!(token.len(), s.sealed_len(n));
            let raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
            assert_eq!(raw[0], TOKEN_VERSION);
            assert_eq!(raw[1], 2);
            assert_eq!(&raw[2..4], b"k1");
            assert_eq!(raw.len(), 4 + NONCE_LEN + n + TAG_LEN);
            assert_eq!(s.open(&token).unwrap(), pt);
        }
    }

    #[test]
    fn nonces_are_fresh() {
        let s = sealer();
        let a = s.seal(b"same");
        let b = s.seal(b"same");
        assert_ne!(a, b);
    }

    #[test]
    fn try_seal_respects_max() {
        let s = sealer().with_max_token_len(100);
        let fits = (0..1000).rev().find(|n| s.sealed_len(*n) <= 100).unwrap();
        assert!(s.try_seal(&vec![0; fits]).is_ok());
        assert!(matches!(
            s.try_seal(&vec![0; fits + 1]),
            Err(SealError::TooLarge { max: 100, .. })
        ));
    }

    #[test]
    fn header_checks() {
        let s = sealer();
        let token = s.seal(b"x");
        let raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
        let reason = |raw: &[u8]| s.open_raw(&URL_SAFE_NO_PAD.encode(raw)).unwrap_err();

        let mut v = raw.clone();
        v[0] = 2;
        assert_eq!(reason(&v), RejectReason::UnsupportedVersion(2));
        let mut v = raw.clone();
        v[1] = 0;
        assert_eq!(reason(&v), RejectReason::MalformedHeader);
        let mut v = raw.clone();
        v[1] = 9;
        assert_eq!(reason(&v), RejectReason::MalformedHeader);
        let mut v = raw.clone();
        v[2] = b':';
        assert_eq!(reason(&v), RejectReason::MalformedHeader);
        let mut v = raw.clone();
        v[3] = b'2';
        assert_eq!(reason(&v), RejectReason::UnknownKeyId);
        // Key id length grown by one: "k1" + first nonce byte becomes the key id
        // or the header is malformed; either way it is refused.
        let mut v = raw.clone();
        v[1] = 3;
        assert!(s.open_raw(&URL_SAFE_NO_PAD.encode(&v)).is_err());
        let mut v = raw;
        let last = v.len() - 1;
        v[last] ^= 1;
        assert_eq!(reason(&v), RejectReason::BadSeal);
    }
}
