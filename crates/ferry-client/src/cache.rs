//! The result cache: `server/discover`, list and `resources/read` results are kept for
//! their `ttlMs` (a missing or negative `ttlMs` means not at all) and dropped early when a
//! matching `list_changed` or `resources/updated` notification arrives.
//!
//! The cache belongs to one client, so it never mixes authorization contexts: results
//! with `cacheScope: "private"` are reused only by the client (and so the credentials)
//! that fetched them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ferry_protocol::methods;
use ferry_protocol::notifications;
use parking_lot::Mutex;
use serde_json::{Map, Value};

/// The most entries kept; the oldest go first beyond it.
const MAX_ENTRIES: usize = 1024;

#[derive(Debug)]
struct Entry {
    method: String,
    uri: Option<String>,
    value: Value,
    stored: Instant,
    expires: Instant,
}

/// Cached results by method and params.
#[derive(Debug, Default)]
pub(crate) struct ResultCache {
    entries: Mutex<HashMap<String, Entry>>,
}

/// The cache key: the method plus every param except `_meta`.
pub(crate) fn key(method: &str, params: &Map<String, Value>) -> String {
    let mut p = params.clone();
    p.remove("_meta");
    format!("{method}\u{0}{}", Value::Object(p))
}

/// How long a result may be kept: its `ttlMs`, or zero when missing, negative or not a
/// number.
pub(crate) fn ttl(result: &Value) -> Duration {
    match result.get("ttlMs") {
        Some(Value::Number(n)) => {
            if let Some(ms) = n.as_u64() {
                Duration::from_millis(ms)
            } else {
                n.as_f64()
                    .filter(|f| f.is_finite() && *f > 0.0)
                    .map(|f| Duration::from_millis(f.min(u64::MAX as f64) as u64))
                    .unwrap_or(Duration::ZERO)
            }
        }
        _ => Duration::ZERO,
    }
}

impl ResultCache {
    /// A fresh cached result for `key`.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        let mut entries = self.entries.lock();
        let now = Instant::now();
        match entries.get(key) {
            Some(e) if e.expires > now => Some(e.value.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Stores a complete result under `key` for its `ttlMs`, if positive.
    pub(crate) fn put(
        &self,
        key: String,
        method: &str,
        params: &Map<String, Value>,
        value: &Value,
    ) {
        let ttl = ttl(value);
        if ttl.is_zero() || !methods::is_cacheable(method) {
            return;
        }
        let now = Instant::now();
        let Some(expires) = now.checked_add(ttl) else {
            return;
        };
        let mut entries = self.entries.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, e| e.expires > now);
            if entries.len() >= MAX_ENTRIES
                && let Some(oldest) = entries
                    .iter()
                    .min_by_key(|(_, e)| e.stored)
                    .map(|(k, _)| k.clone())
            {
                entries.remove(&oldest);
            }
        }
        entries.insert(
            key,
            Entry {
                method: method.to_owned(),
                uri: params.get("uri").and_then(Value::as_str).map(str::to_owned),
                value: value.clone(),
                stored: now,
                expires,
            },
        );
    }

    /// Drops what a server notification makes stale.
    pub(crate) fn invalidate_for(&self, method: &str, params: Option<&Value>) {
        let mut entries = self.entries.lock();
        match method {
            notifications::TOOLS_LIST_CHANGED => {
                entries.retain(|_, e| e.method != methods::TOOLS_LIST);
            }
            notifications::PROMPTS_LIST_CHANGED => {
                entries.retain(|_, e| e.method != methods::PROMPTS_LIST);
            }
            notifications::RESOURCES_LIST_CHANGED => entries.retain(|_, e| {
                e.method != methods::RESOURCES_LIST && e.method != methods::RESOURCES_TEMPLATES_LIST
            }),
            notifications::RESOURCES_UPDATED => {
                let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) else {
                    return;
                };
                entries.retain(|_, e| {
                    e.method != methods::RESOURCES_READ
                        || !e.uri.as_deref().is_some_and(|u| related(u, uri))
                });
            }
            _ => {}
        }
    }

    /// Drops everything.
    pub(crate) fn clear(&self) {
        self.entries.lock().clear();
    }
}

/// Whether two URIs are the same or one lies under the other.
fn related(a: &str, b: &str) -> bool {
    let under = |child: &str, parent: &str| {
        child
            .strip_prefix(parent)
            .is_some_and(|rest| parent.ends_with('/') || rest.starts_with('/'))
    };
    a == b || under(a, b) || under(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn ttl_rules() {
        assert_eq!(ttl(&json!({"ttlMs": 1500})), Duration::from_millis(1500));
        assert_eq!(ttl(&json!({"ttlMs": -5})), Duration::ZERO);
        assert_eq!(ttl(&json!({})), Duration::ZERO);
        assert_eq!(ttl(&json!({"ttlMs": "9"})), Duration::ZERO);
    }

    #[test]
    fn key_ignores_meta() {
        let a = key(
            "tools/list",
            &params(json!({"cursor":"", "_meta": {"x": 1}})),
        );
        let b = key("tools/list", &params(json!({"cursor":""})));
        assert_eq!(a, b);
        assert_ne!(a, key("tools/list", &params(json!({}))));
        assert_ne!(a, key("prompts/list", &params(json!({"cursor":""}))));
    }

    #[test]
    fn stores_only_positive_ttl_and_invalidates() {
        let c = ResultCache::default();
        let p = params(json!({}));
        c.put(
            key("tools/list", &p),
            "tools/list",
            &p,
            &json!({"tools":[],"ttlMs":0}),
        );
        assert!(c.get(&key("tools/list", &p)).is_none());
        c.put(
            key("tools/list", &p),
            "tools/list",
            &p,
            &json!({"tools":[],"ttlMs":60000}),
        );
        assert!(c.get(&key("tools/list", &p)).is_some());
        c.invalidate_for("notifications/prompts/list_changed", None);
        assert!(c.get(&key("tools/list", &p)).is_some());
        c.invalidate_for("notifications/tools/list_changed", None);
        assert!(c.get(&key("tools/list", &p)).is_none());

        let r = params(json!({"uri":"file:///a/b.txt"}));
        c.put(
            key("resources/read", &r),
            "resources/read",
            &r,
            &json!({"contents":[],"ttlMs":60000}),
        );
        c.invalidate_for(
            "notifications/resources/updated",
            Some(&json!({"uri":"file:///a/c.txt"})),
        );
        assert!(c.get(&key("resources/read", &r)).is_some());
        c.invalidate_for(
            "notifications/resources/updated",
            Some(&json!({"uri":"file:///a"})),
        );
        assert!(c.get(&key("resources/read", &r)).is_none());
    }

    #[test]
    fn never_caches_uncacheable_methods() {
        let c = ResultCache::default();
        let p = params(json!({"name":"x"}));
        c.put(
            key("tools/call", &p),
            "tools/call",
            &p,
            &json!({"content":[],"ttlMs":60000}),
        );
        assert!(c.get(&key("tools/call", &p)).is_none());
    }
}
