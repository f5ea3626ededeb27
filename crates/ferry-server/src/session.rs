//! Legacy (2025-11-25) sessions: what an `initialize` handshake establishes for one stdio
//! process or one HTTP session, so 2025-11-25 clients are served by the same handlers as
//! modern ones (versioning.mdx, backward compatibility).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_protocol::common::Implementation;
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::logging::LoggingLevel;
use ferry_protocol::version::ProtocolVersion;
use ferry_protocol::{ClientCapabilities, ErrorObject};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::principal::Principal;

/// The legacy protocol versions a dual-era server accepts in `initialize`.
pub const LEGACY_VERSIONS: [ProtocolVersion; 4] = [
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2024_11_05,
];

type Answer = Result<Value, ErrorObject>;

/// One 2025-11-25 session.
pub struct Session {
    id: String,
    version: ProtocolVersion,
    capabilities: ClientCapabilities,
    client_info: Option<Implementation>,
    principal: Option<Principal>,
    initialized: AtomicBool,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<BTreeSet<String>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    next_id: AtomicI64,
    standalone: Mutex<Option<mpsc::Sender<Bytes>>>,
    backlog: Mutex<VecDeque<Bytes>>,
    last_seen: Mutex<Instant>,
    closed: CancellationToken,
    shared: Shared,
}

/// How a session stands with the server's [`SessionStore`](crate::SessionStore), if any.
struct Shared {
    /// An HTTP session, which a store may share (a stdio one never is).
    shareable: AtomicBool,
    /// The store holds this session (its absence there then means it ended).
    stored: AtomicBool,
    /// When it was last checked against the store.
    refreshed: Mutex<Instant>,
    /// A write of its changed state is under way.
    writing: AtomicBool,
    /// Its state changed since the last write began.
    dirty: AtomicBool,
}

/// The principal a stored session belongs to: its identity, not its scopes (every
/// request brings its own).
#[derive(Serialize, Deserialize)]
struct StoredPrincipal {
    #[serde(skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
    subject: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
}

/// A session as a [`SessionStore`](crate::SessionStore) keeps it (JSON).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    protocol_version: String,
    capabilities: ClientCapabilities,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_info: Option<Implementation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    principal: Option<StoredPrincipal>,
    initialized: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_level: Option<LoggingLevel>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    subscriptions: Vec<String>,
}

/// Messages kept for a standalone stream that is not open yet (bounded).
const BACKLOG: usize = 64;

impl Session {
    pub(crate) fn new(
        id: String,
        version: ProtocolVersion,
        capabilities: ClientCapabilities,
        client_info: Option<Implementation>,
        principal: Option<Principal>,
    ) -> Self {
        Session {
            id,
            version,
            capabilities,
            client_info,
            principal,
            initialized: AtomicBool::new(false),
            log_level: Mutex::new(None),
            subscriptions: Mutex::new(BTreeSet::new()),
            pending: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            standalone: Mutex::new(None),
            backlog: Mutex::new(VecDeque::new()),
            last_seen: Mutex::new(Instant::now()),
            closed: CancellationToken::new(),
            shared: Shared {
                shareable: AtomicBool::new(false),
                stored: AtomicBool::new(false),
                refreshed: Mutex::new(Instant::now()),
                writing: AtomicBool::new(false),
                dirty: AtomicBool::new(false),
            },
        }
    }

    /// What a store keeps of this session.
    pub(crate) fn record(&self) -> Vec<u8> {
        let record = Record {
            protocol_version: self.version.as_str().to_owned(),
            capabilities: self.capabilities.clone(),
            client_info: self.client_info.clone(),
            principal: self.principal.as_ref().map(|p| StoredPrincipal {
                issuer: p.issuer().map(str::to_owned),
                subject: p.subject().to_owned(),
                client_id: p.client_id().map(str::to_owned),
            }),
            initialized: self.is_initialized(),
            log_level: self.log_level(),
            subscriptions: self.subscriptions.lock().iter().cloned().collect(),
        };
        serde_json::to_vec(&record).unwrap_or_default()
    }

    /// The session `id` as a store kept it; `None` if the record is unreadable.
    pub(crate) fn from_record(id: &str, bytes: &[u8]) -> Option<Session> {
        let record: Record = serde_json::from_slice(bytes).ok()?;
        let version = ProtocolVersion::parse(&record.protocol_version)
            .filter(|v| LEGACY_VERSIONS.contains(v))?;
        let principal = record.principal.map(|p| {
            let base = match p.issuer {
                Some(issuer) => Principal::oauth(issuer, p.subject),
                None => Principal::new(p.subject),
            };
            match p.client_id {
                Some(c) => base.with_client_id(c),
                None => base,
            }
        });
        let session = Session::new(
            id.to_owned(),
            version,
            record.capabilities,
            record.client_info,
            principal,
        );
        session.apply(record.initialized, record.log_level, record.subscriptions);
        session.shared.stored.store(true, Ordering::Relaxed);
        session.shared.shareable.store(true, Ordering::Relaxed);
        Some(session)
    }

    /// Takes the changeable state of a stored record, unless this instance changed it
    /// since and has not written it yet. `None` when the record is unreadable, else
    /// whether its resource subscriptions changed.
    pub(crate) fn refresh_from(&self, bytes: &[u8]) -> Option<bool> {
        let record = serde_json::from_slice::<Record>(bytes).ok()?;
        if !self.shared.dirty.load(Ordering::Acquire)
            && !self.shared.writing.load(Ordering::Acquire)
        {
            return Some(self.apply(record.initialized, record.log_level, record.subscriptions));
        }
        Some(false)
    }

    /// Takes a record's state; returns whether the resource subscriptions changed.
    fn apply(
        &self,
        initialized: bool,
        level: Option<LoggingLevel>,
        subscriptions: Vec<String>,
    ) -> bool {
        if initialized {
            self.mark_initialized();
        }
        *self.log_level.lock() = level;
        let new: BTreeSet<String> = subscriptions.into_iter().take(10_000).collect();
        let mut s = self.subscriptions.lock();
        let changed = *s != new;
        *s = new;
        changed
    }

    /// The resources this session subscribed to (`resources/subscribe`).
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        self.subscriptions.lock().iter().cloned().collect()
    }

    /// Whether a store may share this session (an HTTP one).
    pub(crate) fn is_shareable(&self) -> bool {
        self.shared.shareable.load(Ordering::Relaxed)
    }

    pub(crate) fn set_shareable(&self) {
        self.shared.shareable.store(true, Ordering::Relaxed);
    }

    /// Whether the store holds this session.
    pub(crate) fn is_stored(&self) -> bool {
        self.shared.stored.load(Ordering::Relaxed)
    }

    pub(crate) fn set_stored(&self) {
        self.shared.stored.store(true, Ordering::Relaxed);
    }

    /// Whether it is time to check this session against the store (at most once per
    /// `every`); claims the check when it is.
    pub(crate) fn claim_refresh(&self, every: Duration) -> bool {
        let mut last = self.shared.refreshed.lock();
        if last.elapsed() < every {
            return false;
        }
        *last = Instant::now();
        true
    }

    /// Marks the session's changeable state as changed; `true` when the caller must start
    /// writing it (no write is under way).
    pub(crate) fn mark_dirty(&self) -> bool {
        self.shared.dirty.store(true, Ordering::Release);
        !self.shared.writing.swap(true, Ordering::AcqRel)
    }

    /// Starts one write of the changed state: clears the change mark.
    pub(crate) fn begin_write(&self) {
        self.shared.dirty.store(false, Ordering::Release);
    }

    /// Ends a write; `true` when the state changed meanwhile and the writer goes on.
    pub(crate) fn end_write(&self) -> bool {
        self.shared.writing.store(false, Ordering::Release);
        self.shared.dirty.load(Ordering::Acquire)
            && !self.shared.writing.swap(true, Ordering::AcqRel)
    }

    /// The session id (`Mcp-Session-Id` on HTTP).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The negotiated protocol version.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// The capabilities the client declared in `initialize`.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// The client's self-description from `initialize`.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.client_info.as_ref()
    }

    /// The principal that opened the session.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// Whether `notifications/initialized` arrived.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Relaxed)
    }

    pub(crate) fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Relaxed);
    }

    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        *self.log_level.lock()
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        *self.log_level.lock() = Some(level);
    }

    /// Subscribes to `uri`; returns whether it was not subscribed before.
    pub(crate) fn subscribe(&self, uri: String) -> bool {
        let mut s = self.subscriptions.lock();
        s.len() < 10_000 && s.insert(uri)
    }

    /// Unsubscribes from `uri`; returns whether it was subscribed.
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        self.subscriptions.lock().remove(uri)
    }

    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .iter()
            .any(|s| crate::hub::uri_covers(s, uri))
    }

    /// Completes when the session ends (DELETE, expiry, end of the stdio connection).
    pub async fn closed(&self) {
        self.closed.cancelled().await
    }

    /// Whether the session ended.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Ends the session: running requests are cancelled, pending asks fail.
    pub fn close(&self) {
        self.closed.cancel();
        for (_, t) in self.in_flight.lock().drain() {
            t.cancel();
        }
        self.pending.lock().clear();
        *self.standalone.lock() = None;
    }

    pub(crate) fn touch(&self) {
        *self.last_seen.lock() = Instant::now();
    }

    pub(crate) fn idle_for(&self) -> Duration {
        self.last_seen.lock().elapsed()
    }

    /// A new id for a server-to-client request, and where its answer will arrive.
    pub(crate) fn register_request(&self) -> (RequestId, oneshot::Receiver<Answer>) {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        let mut pending = self.pending.lock();
        // Bounded: a client that never answers cannot pile up requests forever.
        if pending.len() >= 1024 {
            pending.retain(|_, tx| !tx.is_closed());
        }
        pending.insert(id.clone(), tx);
        (id, rx)
    }

    pub(crate) fn forget_request(&self, id: &RequestId) {
        self.pending.lock().remove(id);
    }

    /// Delivers the client's response to a server-to-client request. Returns whether a
    /// request was waiting for it.
    pub fn resolve(&self, id: &RequestId, answer: Answer) -> bool {
        match self.pending.lock().remove(id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    pub(crate) fn track(&self, id: RequestId, token: CancellationToken) {
        let mut f = self.in_flight.lock();
        if f.len() < 4096 {
            f.insert(id, token);
        }
    }

    pub(crate) fn untrack(&self, id: &RequestId) {
        self.in_flight.lock().remove(id);
    }

    /// Cancels a running request of this session (`notifications/cancelled`).
    pub fn cancel(&self, id: &RequestId) -> bool {
        match self.in_flight.lock().remove(id) {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    /// Attaches the standalone stream (HTTP GET, or the stdio writer); messages queued
    /// while none was attached are sent first.
    pub fn attach_stream(&self, tx: mpsc::Sender<Bytes>) {
        let backlog: Vec<Bytes> = self.backlog.lock().drain(..).collect();
        for msg in backlog {
            let _ = tx.try_send(msg);
        }
        *self.standalone.lock() = Some(tx);
    }

    /// Whether a standalone stream is attached and open.
    pub fn has_stream(&self) -> bool {
        self.standalone
            .lock()
            .as_ref()
            .is_some_and(|t| !t.is_closed())
    }

    /// Sends a message on the standalone stream, or keeps it (bounded) until one opens.
    pub(crate) fn send_standalone(&self, msg: Bytes) {
        let tx = self.standalone.lock().clone();
        if let Some(tx) = tx
            && tx.try_send(msg.clone()).is_ok()
        {
            return;
        }
        let mut b = self.backlog.lock();
        if b.len() >= BACKLOG {
            b.pop_front();
        }
        b.push_back(msg);
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("version", &self.version)
            .field("client_info", &self.client_info)
            .finish_non_exhaustive()
    }
}

/// The live HTTP sessions of a server: capped, and expired when idle.
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    pub(crate) max: usize,
    pub(crate) idle: Duration,
    /// Told when a session that followed resources ends.
    interest: Arc<crate::interest::Interest>,
}

impl Sessions {
    pub(crate) fn new(
        max: usize,
        idle: Duration,
        interest: Arc<crate::interest::Interest>,
    ) -> Self {
        Sessions {
            map: Mutex::new(HashMap::new()),
            max,
            idle,
            interest,
        }
    }

    /// Closes a session taken out of the table.
    fn end(&self, session: &Session) {
        session.close();
        if !session.subscriptions.lock().is_empty() {
            self.interest.touch();
        }
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut map = self.map.lock();
        let s = map.get(id)?.clone();
        if s.is_closed() || s.idle_for() > self.idle {
            map.remove(id);
            self.end(&s);
            return None;
        }
        s.touch();
        Some(s)
    }

    /// Adds a session, first dropping expired ones. `false` when the cap is reached.
    pub(crate) fn insert(&self, session: Arc<Session>) -> bool {
        let mut map = self.map.lock();
        if !self.make_room(&mut map) {
            return false;
        }
        map.insert(session.id.clone(), session);
        true
    }

    /// Adds a session read from the store, or returns the one another request added
    /// first. `None` when the cap is reached.
    pub(crate) fn adopt(&self, session: Arc<Session>) -> Option<Arc<Session>> {
        let mut map = self.map.lock();
        if let Some(existing) = map.get(&session.id)
            && !existing.is_closed()
            && existing.idle_for() <= self.idle
        {
            return Some(existing.clone());
        }
        if !self.make_room(&mut map) {
            return None;
        }
        if let Some(old) = map.insert(session.id.clone(), session.clone()) {
            self.end(&old);
        }
        // A session shared from another instance may follow resources here now.
        if !session.subscriptions.lock().is_empty() {
            self.interest.touch();
        }
        Some(session)
    }

    /// Whether there is room for one more session, after dropping expired ones.
    fn make_room(&self, map: &mut HashMap<String, Arc<Session>>) -> bool {
        if map.len() < self.max {
            return true;
        }
        let idle = self.idle;
        map.retain(|_, s| {
            let keep = !s.is_closed() && s.idle_for() <= idle;
            if !keep {
                self.end(s);
            }
            keep
        });
        map.len() < self.max
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let s = self.map.lock().remove(id)?;
        self.end(&s);
        Some(s)
    }

    /// The resources the live sessions subscribed to (with repeats).
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        let map = self.map.lock();
        map.values()
            .filter(|s| !s.is_closed() && s.idle_for() <= self.idle)
            .flat_map(|s| s.subscriptions())
            .collect()
    }

    pub(crate) fn all(&self) -> Vec<Arc<Session>> {
        self.map.lock().values().cloned().collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.map.lock().len()
    }
}

/// A new session id: 128 random bits from the OS generator as 32 hex characters
/// (visible ASCII). `None` if the OS generator fails.
pub(crate) fn new_session_id() -> Option<String> {
    use std::fmt::Write as _;
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    let mut s = String::with_capacity(32);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str) -> Arc<Session> {
        Arc::new(Session::new(
            id.to_owned(),
            ProtocolVersion::V2025_11_25,
            ClientCapabilities::default(),
            None,
            None,
        ))
    }

    #[test]
    fn an_ending_session_that_followed_resources_is_signalled() {
        let interest = crate::interest::Interest::new();
        let changes = interest.watch();
        let sessions = Sessions::new(10, Duration::from_millis(20), interest);
        let quiet = session("quiet");
        let following = session("following");
        following.subscribe("test://a".into());
        assert!(sessions.insert(quiet) && sessions.insert(following));
        assert_eq!(sessions.subscriptions(), ["test://a"]);

        sessions.remove("quiet");
        assert!(!changes.has_changed().unwrap(), "it followed nothing");
        std::thread::sleep(Duration::from_millis(40));
        assert!(
            sessions.subscriptions().is_empty(),
            "an idle session follows nothing"
        );
        assert!(sessions.get("following").is_none(), "expired");
        assert!(changes.has_changed().unwrap(), "its end is signalled");
    }
}
