//! The change bus over Redis pub/sub: every instance publishes the changes it raises on
//! one channel and hears those of the others.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ferry_server::{ChangeBus, ChangeEvent};
use futures::stream::BoxStream;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::subscriber::Subscription;
use crate::{Redis, random_id};

/// Events from other instances held for a slow local reader before it skips ahead.
const INCOMING_CAPACITY: usize = 1024;

/// Publishers remembered for duplicate suppression; the memory is reset beyond it.
const MAX_ORIGINS: usize = 4096;

/// A [`ChangeBus`] over Redis pub/sub, channel `<prefix>changes`.
///
/// - Each event raised here is queued (bounded by [`RedisConfig::buffer`](crate::RedisConfig::buffer);
///   the oldest are dropped beyond it) and published in order by one task, which retries
///   while Redis is unreachable; so events raised during an outage reach the other
///   instances once Redis is back, in order.
/// - Every message carries this instance's random id and a sequence number: an instance
///   ignores its own messages (its local streams already had them) and any message it
///   has seen before (a publish retried after a lost reply), so no stream gets an event
///   twice.
/// - The subscription is on the shared pub/sub connection, which reconnects and
///   subscribes again after Redis returns. Messages published while this instance was
///   disconnected are not replayed (Redis pub/sub keeps nothing).
///
/// Make one with [`Redis::change_bus`] and give it to
/// [`ServerBuilder::change_bus`](ferry_server::ServerBuilder::change_bus).
pub struct RedisChangeBus {
    origin: String,
    outbox: Arc<Outbox>,
    incoming: broadcast::Sender<ChangeEvent>,
    dropped: AtomicU64,
    _stop: DropGuard,
}

/// Events waiting to be published, with their sequence numbers.
struct Outbox {
    queue: Mutex<VecDeque<(u64, ChangeEvent)>>,
    next_seq: AtomicU64,
    ready: Notify,
    capacity: usize,
}

/// One message on the channel.
#[derive(Serialize, Deserialize)]
struct Wire {
    /// The publishing instance.
    o: String,
    /// Its sequence number there.
    s: u64,
    /// `tools`, `prompts`, `resources` (list changes) or `updated`.
    e: String,
    /// The updated resource's URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    u: Option<String>,
}

fn encode(origin: &str, seq: u64, event: &ChangeEvent) -> Option<String> {
    let (e, u) = match event {
        ChangeEvent::ToolsChanged => ("tools", None),
        ChangeEvent::PromptsChanged => ("prompts", None),
        ChangeEvent::ResourcesChanged => ("resources", None),
        ChangeEvent::ResourceUpdated(uri) => ("updated", Some(uri.to_string())),
        _ => return None,
    };
    serde_json::to_string(&Wire {
        o: origin.to_owned(),
        s: seq,
        e: e.to_owned(),
        u,
    })
    .ok()
}

fn decode(payload: &[u8]) -> Option<(String, u64, ChangeEvent)> {
    let w: Wire = serde_json::from_slice(payload).ok()?;
    let event = match (w.e.as_str(), w.u) {
        ("tools", _) => ChangeEvent::ToolsChanged,
        ("prompts", _) => ChangeEvent::PromptsChanged,
        ("resources", _) => ChangeEvent::ResourcesChanged,
        ("updated", Some(uri)) => ChangeEvent::ResourceUpdated(Arc::from(uri)),
        _ => return None,
    };
    Some((w.o, w.s, event))
}

impl RedisChangeBus {
    pub(crate) async fn start(redis: Redis) -> Self {
        let origin = random_id();
        let channel = redis.key("changes");
        let limit = redis.config().op_timeout;
        let stop = CancellationToken::new();
        let outbox = Arc::new(Outbox {
            queue: Mutex::new(VecDeque::new()),
            next_seq: AtomicU64::new(1),
            ready: Notify::new(),
            capacity: redis.config().buffer,
        });
        let (incoming, _) = broadcast::channel(INCOMING_CAPACITY);

        let subscription = redis.subscriber().register(&channel);
        if let Err(e) = subscription.confirmed(limit).await {
            tracing::warn!(error = %e, "change bus not subscribed yet; it will be once Redis answers");
        }
        tokio::spawn(receive(
            subscription,
            origin.clone(),
            incoming.clone(),
            stop.clone(),
        ));
        tokio::spawn(send(
            redis,
            channel,
            origin.clone(),
            outbox.clone(),
            stop.clone(),
        ));
        RedisChangeBus {
            origin,
            outbox,
            incoming,
            dropped: AtomicU64::new(0),
            _stop: stop.drop_guard(),
        }
    }

    /// This instance's id on the bus.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// How many events waited to be published.
    pub fn pending(&self) -> usize {
        self.outbox.queue.lock().len()
    }

    /// How many events were dropped unpublished because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for RedisChangeBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisChangeBus")
            .field("origin", &self.origin)
            .field("pending", &self.pending())
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl ChangeBus for RedisChangeBus {
    fn publish(&self, event: &ChangeEvent) {
        let seq = self.outbox.next_seq.fetch_add(1, Ordering::Relaxed);
        let mut queue = self.outbox.queue.lock();
        queue.push_back((seq, event.clone()));
        if queue.len() > self.outbox.capacity {
            queue.pop_front();
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(
                dropped = n,
                "change bus buffer full (Redis unreachable?); dropped the oldest event"
            );
        }
        drop(queue);
        self.outbox.ready.notify_one();
    }

    fn subscribe(&self) -> BoxStream<'static, ChangeEvent> {
        let rx = self.incoming.subscribe();
        Box::pin(futures::stream::unfold(rx, |mut rx| async move {
            loop {
                match rx.recv().await {
                    Ok(e) => return Some((e, rx)),
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(skipped = n, "change events from other instances skipped");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }))
    }
}

/// Publishes the outbox in order, retrying each event until Redis takes it.
async fn send(
    redis: Redis,
    channel: String,
    origin: String,
    outbox: Arc<Outbox>,
    stop: CancellationToken,
) {
    let mut backoff = Duration::from_millis(50);
    loop {
        let front = outbox.queue.lock().front().cloned();
        let Some((seq, event)) = front else {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = outbox.ready.notified() => continue,
            }
        };
        let published = match encode(&origin, seq, &event) {
            Some(body) => {
                let mut cmd = redis::cmd("PUBLISH");
                cmd.arg(&channel).arg(body);
                redis.query::<i64>(&cmd).await.map(|_| ())
            }
            None => Ok(()),
        };
        match published {
            Ok(()) => {
                backoff = Duration::from_millis(50);
                let mut queue = outbox.queue.lock();
                if queue.front().is_some_and(|(s, _)| *s == seq) {
                    queue.pop_front();
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "change event not published yet; retrying");
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}

/// Passes on the events of other instances, once each.
async fn receive(
    mut subscription: Subscription,
    origin: String,
    incoming: broadcast::Sender<ChangeEvent>,
    stop: CancellationToken,
) {
    let mut last_seen: HashMap<String, u64> = HashMap::new();
    loop {
        let payload = tokio::select! {
            _ = stop.cancelled() => return,
            p = subscription.recv() => p,
        };
        let Some(payload) = payload else { return };
        let Some((from, seq, event)) = decode(&payload) else {
            tracing::debug!("unreadable change bus message ignored");
            continue;
        };
        if from == origin {
            continue;
        }
        if last_seen.len() >= MAX_ORIGINS && !last_seen.contains_key(&from) {
            last_seen.clear();
        }
        let last = last_seen.entry(from).or_insert(0);
        if seq <= *last {
            continue;
        }
        *last = seq;
        let _ = incoming.send(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip() {
        for event in [
            ChangeEvent::ToolsChanged,
            ChangeEvent::PromptsChanged,
            ChangeEvent::ResourcesChanged,
            ChangeEvent::ResourceUpdated(Arc::from("note://a")),
        ] {
            let wire = encode("me", 7, &event).expect("encodes");
            let (o, s, back) = decode(wire.as_bytes()).expect("decodes");
            assert_eq!((o.as_str(), s, back), ("me", 7, event));
        }
        assert!(decode(b"{\"o\":\"x\",\"s\":1,\"e\":\"updated\"}").is_none());
        assert!(decode(b"not json").is_none());
    }
}
