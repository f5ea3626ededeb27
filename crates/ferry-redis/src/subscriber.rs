//! One pub/sub connection per instance, shared by every subscription: it reconnects
//! after Redis goes away and subscribes again to every channel still wanted.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use parking_lot::Mutex;
use tokio::sync::{Notify, broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::{RedisError, within};

/// Messages one channel holds for a slow reader before it skips ahead.
const CHANNEL_CAPACITY: usize = 256;

/// The largest message passed on; larger ones are dropped.
const MAX_MESSAGE: usize = 8 * 1024 * 1024;

/// Longest wait between two connection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// A message payload.
pub(crate) type Payload = Arc<[u8]>;

#[derive(Clone)]
pub(crate) struct Subscriber {
    shared: Arc<Shared>,
}

struct Shared {
    channels: Mutex<HashMap<String, Entry>>,
    /// Wakes the connection task when the channels wanted change.
    wake: Notify,
    /// Bumped each time the connection task has caught up (or lost the connection).
    caught_up: watch::Sender<u64>,
    connected: AtomicBool,
}

struct Entry {
    tx: broadcast::Sender<Payload>,
    /// Whether Redis confirmed the subscription on the current connection.
    confirmed: bool,
}

impl Subscriber {
    /// Starts the connection task; it stops with `stop`.
    pub(crate) fn start(client: redis::Client, limit: Duration, stop: CancellationToken) -> Self {
        let shared = Arc::new(Shared {
            channels: Mutex::new(HashMap::new()),
            wake: Notify::new(),
            caught_up: watch::channel(0).0,
            connected: AtomicBool::new(false),
        });
        tokio::spawn(run(client, limit, shared.clone(), stop));
        Subscriber { shared }
    }

    /// Whether the pub/sub connection is up.
    pub(crate) fn is_connected(&self) -> bool {
        self.shared.connected.load(Ordering::Acquire)
    }

    /// Wants `channel` from now on (until the subscription is dropped); the connection
    /// task subscribes to it, now or once Redis is back.
    pub(crate) fn register(&self, channel: &str) -> Subscription {
        let rx = {
            let mut channels = self.shared.channels.lock();
            channels
                .entry(channel.to_owned())
                .or_insert_with(|| Entry {
                    tx: broadcast::channel(CHANNEL_CAPACITY).0,
                    confirmed: false,
                })
                .tx
                .subscribe()
        };
        self.shared.wake.notify_one();
        Subscription {
            rx,
            channel: channel.to_owned(),
            shared: self.shared.clone(),
        }
    }
}

/// The messages of one channel. Dropping it unsubscribes once no one else wants them.
pub(crate) struct Subscription {
    rx: broadcast::Receiver<Payload>,
    channel: String,
    shared: Arc<Shared>,
}

impl Subscription {
    /// Waits until Redis has confirmed the subscription, within `limit`.
    pub(crate) async fn confirmed(&self, limit: Duration) -> Result<(), RedisError> {
        let mut caught_up = self.shared.caught_up.subscribe();
        within(limit, async {
            loop {
                if self
                    .shared
                    .channels
                    .lock()
                    .get(&self.channel)
                    .is_some_and(|e| e.confirmed)
                {
                    return;
                }
                if caught_up.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        })
        .await
    }

    /// The next message; `None` once the subscriber has stopped.
    pub(crate) async fn recv(&mut self) -> Option<Payload> {
        loop {
            match self.rx.recv().await {
                Ok(p) => return Some(p),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(channel = %self.channel, skipped = n, "a slow reader skipped Redis messages");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut channels = self.shared.channels.lock();
        // Our receiver is still counted until this returns.
        if channels
            .get(&self.channel)
            .is_some_and(|e| e.tx.receiver_count() <= 1)
        {
            channels.remove(&self.channel);
            drop(channels);
            self.shared.wake.notify_one();
        }
    }
}

async fn run(client: redis::Client, limit: Duration, shared: Arc<Shared>, stop: CancellationToken) {
    let mut backoff = Duration::from_millis(50);
    let mut was_down = false;
    loop {
        if stop.is_cancelled() {
            return;
        }
        match within(limit, client.get_async_pubsub()).await {
            Ok(Ok(pubsub)) => {
                if was_down {
                    tracing::info!("Redis pub/sub connection restored");
                }
                backoff = Duration::from_millis(50);
                let why = serve(pubsub, limit, &shared, &stop).await;
                if stop.is_cancelled() {
                    return;
                }
                tracing::warn!(reason = %why, "Redis pub/sub connection lost; reconnecting");
            }
            Ok(Err(e)) if !was_down => {
                tracing::warn!(error = %e, "Redis pub/sub connection failed; retrying")
            }
            Err(e) if !was_down => {
                tracing::warn!(error = %e, "Redis pub/sub connection failed; retrying")
            }
            _ => {}
        }
        was_down = true;
        shared.connected.store(false, Ordering::Release);
        for entry in shared.channels.lock().values_mut() {
            entry.confirmed = false;
        }
        shared.caught_up.send_modify(|n| *n += 1);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Serves one connection until it fails; returns why.
async fn serve(
    pubsub: redis::aio::PubSub,
    limit: Duration,
    shared: &Shared,
    stop: &CancellationToken,
) -> String {
    let (mut sink, mut stream) = pubsub.split();
    let mut subscribed: HashSet<String> = HashSet::new();
    shared.connected.store(true, Ordering::Release);
    // A dead peer that never closes the socket shows up as an unanswered ping.
    let mut heartbeat = tokio::time::interval(limit.max(Duration::from_secs(1)) * 2);
    heartbeat.tick().await;
    let mut dirty = true;
    loop {
        if dirty {
            dirty = false;
            if let Err(why) = reconcile(&mut sink, &mut subscribed, shared, limit).await {
                return why;
            }
            shared.caught_up.send_modify(|n| *n += 1);
        }
        tokio::select! {
            _ = stop.cancelled() => return "stopped".into(),
            _ = shared.wake.notified() => dirty = true,
            msg = stream.next() => {
                let Some(msg) = msg else { return "the connection closed".into() };
                let payload = msg.get_payload_bytes();
                if payload.len() > MAX_MESSAGE {
                    tracing::warn!(bytes = payload.len(), "oversized Redis message dropped");
                    continue;
                }
                let channels = shared.channels.lock();
                if let Some(entry) = channels.get(msg.get_channel_name()) {
                    let _ = entry.tx.send(Arc::from(payload));
                }
            }
            _ = heartbeat.tick() => {
                match within(limit, sink.ping::<redis::Value>()).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => return format!("PING failed: {e}"),
                    Err(e) => return format!("PING: {e}"),
                }
            }
        }
    }
}

/// Subscribes to the channels newly wanted and unsubscribes from those no longer wanted.
async fn reconcile(
    sink: &mut redis::aio::PubSubSink,
    subscribed: &mut HashSet<String>,
    shared: &Shared,
    limit: Duration,
) -> Result<(), String> {
    let (wanted, unwanted): (Vec<String>, Vec<String>) = {
        let channels = shared.channels.lock();
        (
            channels
                .keys()
                .filter(|c| !subscribed.contains(*c))
                .cloned()
                .collect(),
            subscribed
                .iter()
                .filter(|c| !channels.contains_key(*c))
                .cloned()
                .collect(),
        )
    };
    if !wanted.is_empty() {
        match within(limit, sink.subscribe(&wanted)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(format!("SUBSCRIBE failed: {e}")),
            Err(e) => return Err(format!("SUBSCRIBE: {e}")),
        }
        let mut channels = shared.channels.lock();
        for c in wanted {
            if let Some(entry) = channels.get_mut(&c) {
                entry.confirmed = true;
            }
            subscribed.insert(c);
        }
    }
    if !unwanted.is_empty() {
        match within(limit, sink.unsubscribe(&unwanted)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(format!("UNSUBSCRIBE failed: {e}")),
            Err(e) => return Err(format!("UNSUBSCRIBE: {e}")),
        }
        for c in &unwanted {
            subscribed.remove(c);
        }
    }
    Ok(())
}
