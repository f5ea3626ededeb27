//! Sealing keys, key identifiers and key rings.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use zeroize::{Zeroize as _, Zeroizing};

use crate::random::{RandomError, fill_random};

/// Length in bytes of a sealing key.
pub const KEY_LEN: usize = 32;

/// Maximum length in bytes of a [`KeyId`].
pub const MAX_KEY_ID_LEN: usize = 8;

/// Errors raised while building keys and key rings.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A key id was empty, too long, or contained a character outside `[A-Za-z0-9._-]`.
    #[error(
        "invalid key id {0:?}: expected 1 to 8 characters from A-Z, a-z, 0-9, '.', '_' and '-'"
    )]
    InvalidKeyId(String),
    /// A textual key did not have the `<kid>:<base64 key>` shape.
    #[error("invalid key: expected `<kid>:<base64 of 32 bytes>`")]
    MissingSeparator,
    /// The key material was not valid base64.
    #[error("invalid key {kid}: key material is not valid base64")]
    InvalidBase64 {
        /// Id of the offending key.
        kid: KeyId,
    },
    /// The key material did not decode to exactly 32 bytes.
    #[error("invalid key {kid}: key material must be 32 bytes, got {len}")]
    WrongLength {
        /// Id of the offending key.
        kid: KeyId,
        /// Number of bytes the material decoded to.
        len: usize,
    },
    /// The key material was all zero bytes, which is never a real secret.
    #[error("invalid key {kid}: key material is all zero bytes")]
    ZeroKey {
        /// Id of the offending key.
        kid: KeyId,
    },
    /// Two keys in one ring share an id.
    #[error("duplicate key id {0} in key ring")]
    DuplicateKeyId(KeyId),
    /// A key ring description contained no key.
    #[error("key ring is empty: expected `kid1:b64,kid2:b64,...`")]
    EmptyRing,
    /// The operating system's random number generator failed.
    #[error(transparent)]
    Random(#[from] RandomError),
}

/// Short public identifier of a [`Key`], carried in clear in every token so that
/// the right key of a [`KeyRing`] can be found.
///
/// A key id is 1 to [`MAX_KEY_ID_LEN`] characters from `A-Z`, `a-z`, `0-9`, `.`,
/// `_` and `-`. It is not secret: it appears in tokens, logs and errors.
///
/// ```
/// use ferry_state::KeyId;
///
/// let kid: KeyId = "2026-07".parse()?;
/// assert_eq!(kid.as_str(), "2026-07");
/// assert_eq!(KeyId::from_u32(0xbeef).as_str(), "beef");
/// # Ok::<(), ferry_state::KeyError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId {
    len: u8,
    bytes: [u8; MAX_KEY_ID_LEN],
}

impl KeyId {
    /// Builds a key id from text, checking its length and alphabet.
    pub fn new(id: &str) -> Result<Self, KeyError> {
        Self::from_bytes(id.as_bytes()).ok_or_else(|| KeyError::InvalidKeyId(id.to_owned()))
    }

    /// Builds a key id from a number, written in lowercase hexadecimal
    /// without leading zeros (`0x1f` becomes `"1f"`).
    pub fn from_u32(n: u32) -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut digits = [0u8; MAX_KEY_ID_LEN];
        let mut len = 0;
        let mut rest = n;
        loop {
            // `rest % 16` is always below 16.
            digits[len] = HEX[(rest % 16) as usize];
            len += 1;
            rest /= 16;
            if rest == 0 {
                break;
            }
        }
        digits[..len].reverse();
        Self {
            // At most 8 hex digits for a u32.
            len: len as u8,
            bytes: digits,
        }
    }

    /// Parses key id bytes as found in a token. Returns `None` if invalid.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.is_empty()
            || bytes.len() > MAX_KEY_ID_LEN
            || !bytes.iter().all(|b| is_key_id_byte(*b))
        {
            return None;
        }
        let mut out = [0u8; MAX_KEY_ID_LEN];
        out[..bytes.len()].copy_from_slice(bytes);
        Some(Self {
            // Checked above: at most MAX_KEY_ID_LEN (8).
            len: bytes.len() as u8,
            bytes: out,
        })
    }

    /// The key id as text.
    pub fn as_str(&self) -> &str {
        // Only ASCII bytes are ever stored, so this cannot fail.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The key id as bytes, exactly as written into tokens.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

fn is_key_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("KeyId").field(&self.as_str()).finish()
    }
}

impl FromStr for KeyId {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl From<u32> for KeyId {
    fn from(n: u32) -> Self {
        Self::from_u32(n)
    }
}

/// A 32-byte XChaCha20-Poly1305 key and its [`KeyId`].
///
/// The key material is wiped from memory when the key is dropped, and the
/// `Debug` output shows only the key id.
///
/// ```
/// use ferry_state::{Key, KeyId};
///
/// let key = Key::generate(KeyId::new("k1")?);
/// assert_eq!(key.id().as_str(), "k1");
/// assert!(!format!("{key:?}").contains(&key.to_text()[3..]));
///
/// let parsed: Key = "k2:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8".parse()?;
/// assert_eq!(parsed.id().as_str(), "k2");
/// # Ok::<(), ferry_state::KeyError>(())
/// ```
#[derive(Clone)]
pub struct Key {
    id: KeyId,
    secret: Box<Secret>,
}

#[derive(Clone)]
struct Secret {
    bytes: [u8; KEY_LEN],
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

impl Key {
    /// Builds a key from raw key material. The key's own copy is wiped on
    /// drop; the caller's `bytes` are not.
    pub fn from_bytes(id: KeyId, bytes: [u8; KEY_LEN]) -> Self {
        let mut bytes = Zeroizing::new(bytes);
        let secret = Box::new(Secret { bytes: *bytes });
        bytes.zeroize();
        Self { id, secret }
    }

    /// Generates a fresh random key from the operating system's random number generator.
    ///
    /// # Panics
    ///
    /// Panics if the operating system's random number generator fails; use
    /// [`Key::try_generate`] to handle that case.
    pub fn generate(id: KeyId) -> Self {
        match Self::try_generate(id) {
            Ok(key) => key,
            Err(err) => panic!("cannot generate a key: {err}"),
        }
    }

    /// Generates a fresh random key, reporting a failure of the operating
    /// system's random number generator as an error.
    pub fn try_generate(id: KeyId) -> Result<Self, KeyError> {
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        fill_random(&mut bytes[..])?;
        Ok(Self::from_bytes(id, *bytes))
    }

    /// Parses a key from `"<kid>:<base64 of 32 bytes>"`.
    ///
    /// The base64 may use the standard or the URL-safe alphabet, with or
    /// without padding. Surrounding whitespace is ignored. All-zero key
    /// material is refused.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        let (kid, material) = text.split_once(':').ok_or(KeyError::MissingSeparator)?;
        let kid = KeyId::new(kid.trim())?;
        let material = material.trim();
        let decoded = [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD]
            .iter()
            .find_map(|engine| engine.decode(material).ok().map(Zeroizing::new))
            .ok_or(KeyError::InvalidBase64 { kid })?;
        if decoded.len() != KEY_LEN {
            return Err(KeyError::WrongLength {
                kid,
                len: decoded.len(),
            });
        }
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        bytes.copy_from_slice(&decoded);
        if bytes.iter().all(|b| *b == 0) {
            return Err(KeyError::ZeroKey { kid });
        }
        Ok(Self::from_bytes(kid, *bytes))
    }

    /// The key's id.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// Writes the key as `"<kid>:<base64url of 32 bytes>"`, the form accepted by
    /// [`Key::parse`] and [`KeyRing::parse`].
    ///
    /// The returned text contains the secret key material; it is wiped when dropped.
    pub fn to_text(&self) -> Zeroizing<String> {
        let mut out = Zeroizing::new(String::with_capacity(MAX_KEY_ID_LEN + 1 + 43));
        out.push_str(self.id.as_str());
        out.push(':');
        URL_SAFE_NO_PAD.encode_string(self.secret.bytes, &mut out);
        out
    }

    /// The key material, for sealing and opening.
    pub(crate) fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.secret.bytes
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("id", &self.id)
            .field("material", &"<redacted>")
            .finish()
    }
}

impl FromStr for Key {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The set of keys a server seals and opens tokens with.
///
/// The first key is the *primary*: every new token is sealed with it. The other
/// keys are only used to open tokens sealed before a rotation, found by the key
/// id written in the token.
///
/// To rotate, make the new key primary with [`KeyRing::rotate`] (the previous
/// primary stays in the ring for opening) and, once every token sealed with the
/// old key has expired, drop it with [`KeyRing::retire`].
///
/// ```
/// use ferry_state::{Key, KeyId, KeyRing};
///
/// // From configuration: the first key is the primary.
/// let mut ring = KeyRing::parse(
///     "k2:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8,\
///      k1:HxwdHh8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRo",
/// )?;
/// assert_eq!(ring.primary().id().as_str(), "k2");
///
/// ring.rotate(Key::generate(KeyId::new("k3")?))?;
/// let ids: Vec<_> = ring.key_ids().map(|id| id.to_string()).collect();
/// assert_eq!(ids, ["k3", "k2", "k1"]);
/// # Ok::<(), ferry_state::KeyError>(())
/// ```
#[derive(Clone)]
pub struct KeyRing {
    /// `keys[0]` is the primary.
    keys: Vec<Key>,
    ephemeral: bool,
}

impl KeyRing {
    /// A ring with a single key, which is the primary.
    pub fn new(primary: Key) -> Self {
        Self {
            keys: vec![primary],
            ephemeral: false,
        }
    }

    /// A ring holding one freshly generated key that lives only as long as this
    /// process. [`KeyRing::is_ephemeral`] returns `true` for it: tokens sealed
    /// with it cannot be opened after a restart or by another server instance.
    ///
    /// # Panics
    ///
    /// Panics if the operating system's random number generator fails; use
    /// [`KeyRing::try_random`] to handle that case.
    pub fn random() -> Self {
        match Self::try_random() {
            Ok(ring) => ring,
            Err(err) => panic!("cannot generate an ephemeral key: {err}"),
        }
    }

    /// Like [`KeyRing::random`], reporting a failure of the operating system's
    /// random number generator as an error.
    pub fn try_random() -> Result<Self, KeyError> {
        let mut tag = [0u8; 4];
        fill_random(&mut tag)?;
        // "e" + 7 hex digits: tells ephemeral keys apart across processes.
        let id = KeyId::new(&format!("e{:07x}", u32::from_le_bytes(tag) >> 4))?;
        Ok(Self {
            keys: vec![Key::try_generate(id)?],
            ephemeral: true,
        })
    }

    /// Parses `"kid1:b64,kid2:b64,..."`, the first key being the primary.
    ///
    /// Whitespace around entries and empty entries (such as a trailing comma)
    /// are ignored. Key ids must be unique.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let mut entries = text.split(',').map(str::trim).filter(|e| !e.is_empty());
        let primary = Key::parse(entries.next().ok_or(KeyError::EmptyRing)?)?;
        let mut ring = Self::new(primary);
        for entry in entries {
            ring.add_old_key(Key::parse(entry)?)?;
        }
        Ok(ring)
    }

    /// Adds a key that is accepted for opening tokens but never used for sealing.
    pub fn add_old_key(&mut self, key: Key) -> Result<(), KeyError> {
        self.check_unique(key.id)?;
        self.keys.push(key);
        Ok(())
    }

    /// Builder form of [`KeyRing::add_old_key`].
    pub fn with_old_key(mut self, key: Key) -> Result<Self, KeyError> {
        self.add_old_key(key)?;
        Ok(self)
    }

    /// Makes `new_primary` the sealing key. The previous primary stays in the
    /// ring so that tokens it sealed can still be opened until they expire.
    ///
    /// After a rotation the ring is no longer [ephemeral](KeyRing::is_ephemeral).
    pub fn rotate(&mut self, new_primary: Key) -> Result<(), KeyError> {
        self.check_unique(new_primary.id)?;
        self.keys.insert(0, new_primary);
        self.ephemeral = false;
        Ok(())
    }

    /// Removes a non-primary key. Returns `true` if a key was removed, `false`
    /// if there was no such key or if `id` is the primary (which cannot be removed).
    pub fn retire(&mut self, id: KeyId) -> bool {
        match self.keys.iter().skip(1).position(|k| k.id == id) {
            Some(index) => {
                self.keys.remove(index + 1);
                true
            }
            None => false,
        }
    }

    /// The key new tokens are sealed with.
    pub fn primary(&self) -> &Key {
        // A ring always holds at least its primary.
        &self.keys[0]
    }

    /// The key with the given id, if the ring holds one.
    pub fn get(&self, id: KeyId) -> Option<&Key> {
        self.keys.iter().find(|k| k.id == id)
    }

    /// Ids of all keys, the primary first.
    pub fn key_ids(&self) -> impl Iterator<Item = KeyId> + '_ {
        self.keys.iter().map(|k| k.id)
    }

    /// `true` if the ring was made by [`KeyRing::random`] and its primary key
    /// exists only in this process: tokens will not survive a restart and will
    /// not be accepted by other server instances.
    pub fn is_ephemeral(&self) -> bool {
        self.ephemeral
    }

    fn check_unique(&self, id: KeyId) -> Result<(), KeyError> {
        if self.get(id).is_some() {
            return Err(KeyError::DuplicateKeyId(id));
        }
        Ok(())
    }
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("primary", &self.primary().id)
            .field(
                "old",
                &self.keys[1..].iter().map(|k| k.id).collect::<Vec<_>>(),
            )
            .field("ephemeral", &self.ephemeral)
            .finish()
    }
}

impl FromStr for KeyRing {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_id_rules() {
        assert!(KeyId::new("").is_err());
        assert!(KeyId::new("123456789").is_err());
        assert!(KeyId::new("a:b").is_err());
        assert!(KeyId::new("a,b").is_err());
        assert!(KeyId::new("a b").is_err());
        assert!(KeyId::new("é").is_err());
        assert_eq!(KeyId::new("12345678").unwrap().as_str(), "12345678");
        assert_eq!(KeyId::from_u32(0).as_str(), "0");
        assert_eq!(KeyId::from_u32(u32::MAX).as_str(), "ffffffff");
        assert_eq!(KeyId::from(0x10u32).as_str(), "10");
        assert_eq!(format!("{:?}", KeyId::new("k1").unwrap()), "KeyId(\"k1\")");
    }

    #[test]
    fn key_text_round_trip_and_debug_redacts() {
        let key = Key::generate(KeyId::new("k1").unwrap());
        let text = key.to_text();
        let again = Key::parse(&text).unwrap();
        assert_eq!(again.secret.bytes, key.secret.bytes);
        let material = text.split_once(':').unwrap().1;
        let debug = format!("{key:?}");
        assert!(!debug.contains(material), "{debug}");
        assert!(debug.contains("k1"));
    }

    #[test]
    fn key_parse_accepts_all_base64_forms() {
        let bytes: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(1));
        for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
            let text = format!("k:{}", engine.encode(bytes));
            assert_eq!(Key::parse(&text).unwrap().secret.bytes, bytes);
        }
    }

    #[test]
    fn key_parse_errors() {
        assert!(matches!(
            Key::parse("nocolon"),
            Err(KeyError::MissingSeparator)
        ));
        assert!(matches!(
            Key::parse("toolongkid:AAAA"),
            Err(KeyError::InvalidKeyId(_))
        ));
        assert!(matches!(
            Key::parse("k:***"),
            Err(KeyError::InvalidBase64 { .. })
        ));
        assert!(matches!(
            Key::parse("k:AAAA"),
            Err(KeyError::WrongLength { len: 3, .. })
        ));
        let zero = format!("k:{}", STANDARD.encode([0u8; 32]));
        assert!(matches!(Key::parse(&zero), Err(KeyError::ZeroKey { .. })));
        // Errors never echo key material.
        let err = Key::parse("k:c2VjcmV0").unwrap_err().to_string();
        assert!(!err.contains("c2VjcmV0"), "{err}");
    }

    #[test]
    fn ring_parse_rotate_retire() {
        let a = Key::generate(KeyId::new("a").unwrap()).to_text();
        let b = Key::generate(KeyId::new("b").unwrap()).to_text();
        let ring = KeyRing::parse(&format!(" {}, {} ,", &*a, &*b)).unwrap();
        assert_eq!(ring.primary().id().as_str(), "a");
        assert!(ring.get(KeyId::new("b").unwrap()).is_some());
        assert!(!ring.is_ephemeral());

        assert!(matches!(KeyRing::parse(" , "), Err(KeyError::EmptyRing)));
        assert!(matches!(
            KeyRing::parse(&format!("{},{}", &*a, &*a)),
            Err(KeyError::DuplicateKeyId(_))
        ));

        let mut ring = KeyRing::random();
        assert!(ring.is_ephemeral());
        let old = ring.primary().id();
        ring.rotate(Key::generate(KeyId::new("new").unwrap()))
            .unwrap();
        assert!(!ring.is_ephemeral());
        assert_eq!(ring.primary().id().as_str(), "new");
        assert!(!ring.retire(KeyId::new("new").unwrap()), "primary stays");
        assert!(ring.retire(old));
        assert!(!ring.retire(old));
        assert_eq!(ring.key_ids().count(), 1);
        let debug = format!("{ring:?}");
        assert!(debug.contains("new"), "{debug}");
    }
}
