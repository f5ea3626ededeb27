//! Where 2025-11-25 HTTP sessions are shared between the instances of a server, so that a
//! session opened on one instance is served by any other (see [`SessionStore`]).

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};

/// The most bytes a stored session may take. A record over it is not stored (the session
/// then stays on its instance), and a store refuses to read one back.
pub const MAX_SESSION_RECORD_BYTES: usize = 64 * 1024;

/// How often, at most, an instance checks a session it holds against the store (default
/// of [`ServerBuilder::session_refresh_interval`](crate::ServerBuilder::session_refresh_interval)).
pub const DEFAULT_SESSION_REFRESH: Duration = Duration::from_secs(1);

/// The key a session is stored under: the hex SHA-256 of its id (with a domain prefix).
///
/// A store never sees a session id, only this key: a dump of the store reveals no id a
/// client could present.
///
/// ```
/// use ferry_server::SessionKey;
///
/// let key = SessionKey::of("0123456789abcdef0123456789abcdef");
/// assert_eq!(key.as_str().len(), 64);
/// assert!(!key.as_str().contains("0123456789abcdef0123456789abcdef"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SessionKey(String);

impl SessionKey {
    /// The key of the session with this id.
    pub fn of(session_id: &str) -> SessionKey {
        use std::fmt::Write as _;
        let digest = Sha256::new()
            .chain_update(b"ferry-session-v1:")
            .chain_update(session_id.as_bytes())
            .finalize();
        let mut hex = String::with_capacity(64);
        for b in digest {
            let _ = write!(hex, "{b:02x}");
        }
        SessionKey(hex)
    }

    /// The key as 64 lowercase hex characters.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionKey({}…)", &self.0[..12])
    }
}

/// A session store failed: the session could not be read or written.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStoreError {
    /// The record is larger than [`MAX_SESSION_RECORD_BYTES`].
    #[error("the session record is too large ({0} bytes)")]
    TooLarge(usize),
    /// The underlying storage or connection failed (or did not answer in time).
    #[error("the session store failed: {0}")]
    Storage(#[source] Arc<dyn StdError + Send + Sync>),
}

impl SessionStoreError {
    /// Wraps an error of the underlying storage (for store implementations).
    pub fn storage(err: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        SessionStoreError::Storage(Arc::from(err.into()))
    }
}

/// Where the 2025-11-25 HTTP sessions of a server are shared with its other instances.
///
/// Without a store (the default) a session lives only in the memory of the instance that
/// answered its `initialize`, and any other instance answers 404 for it. With one
/// ([`ServerBuilder::session_store`](crate::ServerBuilder::session_store)):
///
/// - `initialize` writes the new session ([`SessionStore::save`]) before its response goes
///   out, so the client's next request can land anywhere;
/// - an instance that does not hold a session it is asked about reads it
///   ([`SessionStore::load`]) and adopts it: request/response calls (lists, `tools/call`,
///   resources, prompts, completion, `logging/setLevel`, subscriptions) work on any instance;
/// - an instance holding a session checks it against the store at most once per refresh
///   interval ([`SessionStore::touch`], which also extends its expiry and brings back the
///   log level and subscriptions set elsewhere): a request in between costs no store
///   round trip, and a session ended elsewhere is refused here within one interval;
/// - `DELETE` removes it ([`SessionStore::remove`]) on whichever instance it arrives.
///
/// The store holds what a request needs (the negotiated version, the client's
/// capabilities and info, the principal, the log level and subscriptions), serialized by
/// the server into at most [`MAX_SESSION_RECORD_BYTES`], under a [`SessionKey`] (a hash of
/// the id). Entries expire after the session idle timeout without use. A restarted
/// instance loses nothing its sessions need.
///
/// What stays on one instance: the `GET` stream, and requests from the server to the
/// client (elicitation, sampling, roots during a call), whose answers must reach the
/// instance that asked; so do `notifications/cancelled` for a running call and
/// `Last-Event-ID` resumption. Clients that use those need routing by session
/// (`hash $http_mcp_session_id consistent` in nginx).
///
/// Every method must answer within a time limit of its own; an error is taken as "the
/// store cannot say", never as "no such session".
pub trait SessionStore: Send + Sync + 'static {
    /// Stores a session's record, replacing any under `key`, to expire after `ttl`.
    fn save<'a>(
        &'a self,
        key: &'a SessionKey,
        record: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>>;

    /// Replaces the record under `key` if one is there (never bringing back a removed
    /// session), extending its expiry to `ttl`. Returns whether one was there.
    fn update<'a>(
        &'a self,
        key: &'a SessionKey,
        record: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, SessionStoreError>>;

    /// The record under `key`, if there is one.
    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, SessionStoreError>>;

    /// Extends the expiry of the record under `key` to `ttl` and returns it; `None` when
    /// there is none (removed or expired).
    fn touch<'a>(
        &'a self,
        key: &'a SessionKey,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, SessionStoreError>>;

    /// Removes the record under `key`. Returns whether there was one.
    fn remove<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<bool, SessionStoreError>>;
}

/// A [`SessionStore`] in this process's memory: several [`Server`](crate::Server)s in one
/// process (tests, one process serving on several listeners) share sessions through it.
/// Bounded in entries; expired ones are dropped as new ones come.
///
/// ```
/// use std::sync::Arc;
/// use ferry_server::{MemorySessionStore, Server};
///
/// let store = Arc::new(MemorySessionStore::new(10_000));
/// let a = Server::builder("s", "1").session_store(store.clone()).build().unwrap();
/// let b = Server::builder("s", "1").session_store(store).build().unwrap();
/// # let _ = (a, b);
/// ```
pub struct MemorySessionStore {
    entries: Mutex<HashMap<SessionKey, Entry>>,
    max: usize,
}

/// A record and when it expires.
type Entry = (Arc<[u8]>, Instant);

impl MemorySessionStore {
    /// A store of at most `max` sessions (at least 1).
    pub fn new(max: usize) -> Self {
        MemorySessionStore {
            entries: Mutex::new(HashMap::new()),
            max: max.max(1),
        }
    }

    fn live(&self, key: &SessionKey) -> Option<Arc<[u8]>> {
        let mut entries = self.entries.lock();
        match entries.get(key) {
            Some((record, until)) if *until > Instant::now() => Some(record.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }
}

impl fmt::Debug for MemorySessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySessionStore")
            .field("sessions", &self.entries.lock().len())
            .field("max", &self.max)
            .finish()
    }
}

/// Refuses a record over [`MAX_SESSION_RECORD_BYTES`] with
/// [`SessionStoreError::TooLarge`]: every store checks what it is asked to keep with it.
pub fn check_record_size(record: &[u8]) -> Result<(), SessionStoreError> {
    if record.len() > MAX_SESSION_RECORD_BYTES {
        return Err(SessionStoreError::TooLarge(record.len()));
    }
    Ok(())
}

impl SessionStore for MemorySessionStore {
    fn save<'a>(
        &'a self,
        key: &'a SessionKey,
        record: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), SessionStoreError>> {
        Box::pin(async move {
            check_record_size(record)?;
            let now = Instant::now();
            let mut entries = self.entries.lock();
            if entries.len() >= self.max && !entries.contains_key(key) {
                entries.retain(|_, (_, until)| *until > now);
                if entries.len() >= self.max {
                    return Err(SessionStoreError::storage(
                        "the memory session store is full",
                    ));
                }
            }
            entries.insert(key.clone(), (Arc::from(record), now + ttl));
            Ok(())
        })
    }

    fn update<'a>(
        &'a self,
        key: &'a SessionKey,
        record: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, SessionStoreError>> {
        Box::pin(async move {
            check_record_size(record)?;
            if self.live(key).is_none() {
                return Ok(false);
            }
            let mut entries = self.entries.lock();
            match entries.get_mut(key) {
                Some(entry) => {
                    *entry = (Arc::from(record), Instant::now() + ttl);
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a SessionKey,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, SessionStoreError>> {
        Box::pin(async move { Ok(self.live(key).map(|r| r.to_vec())) })
    }

    fn touch<'a>(
        &'a self,
        key: &'a SessionKey,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, SessionStoreError>> {
        Box::pin(async move {
            let record = self.live(key);
            if record.is_some()
                && let Some(entry) = self.entries.lock().get_mut(key)
            {
                entry.1 = Instant::now() + ttl;
            }
            Ok(record.map(|r| r.to_vec()))
        })
    }

    fn remove<'a>(&'a self, key: &'a SessionKey) -> BoxFuture<'a, Result<bool, SessionStoreError>> {
        Box::pin(async move {
            let was_live = self.live(key).is_some();
            self.entries.lock().remove(key);
            Ok(was_live)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_store_keeps_updates_touches_and_removes() {
        let store = MemorySessionStore::new(2);
        let a = SessionKey::of("a");
        let ttl = Duration::from_secs(60);
        assert!(
            !store.update(&a, b"x", ttl).await.unwrap(),
            "no resurrection"
        );
        assert_eq!(store.load(&a).await.unwrap(), None);
        store.save(&a, b"one", ttl).await.unwrap();
        assert!(store.update(&a, b"two", ttl).await.unwrap());
        assert_eq!(
            store.touch(&a, ttl).await.unwrap().as_deref(),
            Some(&b"two"[..])
        );
        store.save(&SessionKey::of("b"), b"b", ttl).await.unwrap();
        assert!(
            store.save(&SessionKey::of("c"), b"c", ttl).await.is_err(),
            "bounded"
        );
        assert!(store.remove(&a).await.unwrap());
        assert!(!store.remove(&a).await.unwrap());
        assert_eq!(store.touch(&a, ttl).await.unwrap(), None);
        let big = vec![0u8; MAX_SESSION_RECORD_BYTES + 1];
        assert!(matches!(
            store.save(&a, &big, ttl).await,
            Err(SessionStoreError::TooLarge(_))
        ));
    }

    #[tokio::test]
    async fn memory_store_entries_expire() {
        let store = MemorySessionStore::new(10);
        let a = SessionKey::of("a");
        store
            .save(&a, b"one", Duration::from_millis(20))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(store.load(&a).await.unwrap(), None);
    }

    #[test]
    fn keys_hide_the_id() {
        let k = SessionKey::of("secret-id");
        assert_ne!(k, SessionKey::of("secret-id2"));
        assert!(!format!("{k:?}").contains(k.as_str()));
        assert!(k.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
