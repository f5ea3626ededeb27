//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03): HChaCha20 turns the key and the first
//! 16 bytes of the 24-byte nonce into a subkey for this one token, and ChaCha20-Poly1305
//! (RFC 8439) seals under that subkey with the nonce's last 8 bytes.
//!
//! The subkey comes from RustCrypto's `chacha20`; ChaCha20-Poly1305 itself from `ring`,
//! whose assembly seals and opens the few hundred bytes of a `requestState` several times
//! faster than a portable Poly1305 (the fixed cost of setting up a MAC dominates at
//! that size). The output is byte for byte what any XChaCha20-Poly1305 implementation
//! produces, so tokens sealed by earlier builds still open.
//!
//! Only the per-token subkey reaches `ring`, which does not wipe its copy when dropped;
//! ours is wiped. A subkey opens the one token whose nonce it was derived from (HChaCha20
//! is a pseudorandom function of the key), never another, and reveals nothing of the key.

use chacha20::cipher::consts::U10;
use chacha20::cipher::generic_array::GenericArray;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, Tag, UnboundKey};
use zeroize::Zeroize as _;

use crate::key::KEY_LEN;

/// Length of an XChaCha20-Poly1305 nonce.
pub(crate) const NONCE_LEN: usize = 24;
/// Length of a Poly1305 tag.
pub(crate) const TAG_LEN: usize = 16;

/// The subkey for one nonce, and the 12-byte RFC 8439 nonce to use with it (`None` only
/// if `ring` refused a 32-byte ChaCha20-Poly1305 key, which it does not).
fn subkey(key: &[u8; KEY_LEN], nonce: &[u8; NONCE_LEN]) -> Option<(LessSafeKey, Nonce)> {
    let (head, tail) = nonce.split_at(16);
    let mut sub = chacha20::hchacha::<U10>(key.into(), GenericArray::from_slice(head));
    let key = UnboundKey::new(&CHACHA20_POLY1305, &sub).map(LessSafeKey::new);
    sub.as_mut_slice().zeroize();
    let mut ietf = [0u8; 12];
    ietf[4..].copy_from_slice(tail);
    Some((key.ok()?, Nonce::assume_unique_for_key(ietf)))
}

/// Encrypts `in_out` in place and returns the tag, or `None` for inputs too long to seal
/// (256 GiB and more).
pub(crate) fn seal(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    in_out: &mut [u8],
) -> Option<[u8; TAG_LEN]> {
    let (key, nonce) = subkey(key, nonce)?;
    let tag = key
        .seal_in_place_separate_tag(nonce, Aad::from(aad), in_out)
        .ok()?;
    let mut out = [0u8; TAG_LEN];
    out.copy_from_slice(tag.as_ref());
    Some(out)
}

/// Checks `tag` and decrypts `in_out` in place; `false` (with `in_out` unspecified) when
/// the ciphertext, the associated data or the tag was altered.
pub(crate) fn open(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    in_out: &mut [u8],
    tag: &[u8; TAG_LEN],
) -> bool {
    let Some((key, nonce)) = subkey(key, nonce) else {
        return false;
    };
    key.open_in_place_separate_tag(nonce, Aad::from(aad), Tag::from(*tag), in_out, 0..)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chacha20poly1305::aead::AeadInPlace as _;
    use chacha20poly1305::{KeyInit as _, XChaCha20Poly1305, XNonce};

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// draft-irtf-cfrg-xchacha-03, appendix A.3.1.
    #[test]
    fn known_answer() {
        let key: [u8; 32] = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
            .try_into()
            .unwrap();
        let nonce: [u8; 24] = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
            .try_into()
            .unwrap();
        let aad = hex("50515253c0c1c2c3c4c5c6c7");
        let plaintext = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let mut data = plaintext.to_vec();
        let tag = seal(&key, &nonce, &aad, &mut data).unwrap();
        assert_eq!(
            data,
            hex(concat!(
                "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb",
                "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452",
                "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9",
                "21f9664c97637da9768812f615c68b13b52e"
            ))
        );
        assert_eq!(tag.to_vec(), hex("c0875924c1c7987947deafd8780acf49"));
        assert!(open(&key, &nonce, &aad, &mut data, &tag));
        assert_eq!(data, plaintext);
    }

    /// The same bytes as RustCrypto's XChaCha20-Poly1305, both ways, at every length a
    /// token crosses a block or a SIMD lane boundary.
    #[test]
    fn agrees_with_rustcrypto() {
        let key = [0x5a; 32];
        let other = XChaCha20Poly1305::new((&key).into());
        for len in (0..300).chain([511, 512, 513, 1024, 4097]) {
            let mut nonce = [0u8; NONCE_LEN];
            for (i, b) in nonce.iter_mut().enumerate() {
                *b = (i * 7 + len) as u8;
            }
            let aad = [len as u8; 11];
            let plaintext: Vec<u8> = (0..len).map(|i| (i * 31) as u8).collect();

            let mut ours = plaintext.clone();
            let tag = seal(&key, &nonce, &aad, &mut ours).unwrap();
            let mut theirs = plaintext.clone();
            let their_tag = other
                .encrypt_in_place_detached(XNonce::from_slice(&nonce), &aad, &mut theirs)
                .unwrap();
            assert_eq!(ours, theirs, "ciphertext, {len} bytes");
            assert_eq!(tag.as_slice(), their_tag.as_slice(), "tag, {len} bytes");

            assert!(open(&key, &nonce, &aad, &mut theirs, &tag));
            assert_eq!(theirs, plaintext);
        }
    }

    #[test]
    fn any_altered_byte_is_refused() {
        let key = [1; 32];
        let nonce = [2; NONCE_LEN];
        let mut data = b"state".to_vec();
        let tag = seal(&key, &nonce, b"aad", &mut data).unwrap();
        for i in 0..data.len() {
            let mut bad = data.clone();
            bad[i] ^= 1;
            assert!(!open(&key, &nonce, b"aad", &mut bad, &tag));
        }
        let mut bad_tag = tag;
        bad_tag[0] ^= 1;
        assert!(!open(&key, &nonce, b"aad", &mut data.clone(), &bad_tag));
        assert!(!open(&key, &nonce, b"aaD", &mut data.clone(), &tag));
        let mut other_nonce = nonce;
        other_nonce[23] ^= 1;
        assert!(!open(&key, &other_nonce, b"aad", &mut data.clone(), &tag));
        assert!(open(&key, &nonce, b"aad", &mut data, &tag));
    }
}
