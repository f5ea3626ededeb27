//! A sorted, versioned set of definitions (tools, prompts, resources, templates) with
//! pagination and pre-serialized list pages.
//!
//! Lists are deterministic (sorted by key) and never vary per connection (server/tools.mdx).
//! Every change swaps in a new immutable snapshot; readers take an `Arc` of the current
//! one and never block writers for long. List pages are serialized once per snapshot and
//! then reused byte for byte.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::{BufMut, Bytes, BytesMut};
use ferry_protocol::ErrorObject;
use parking_lot::{Mutex, RwLock};
use serde_json::value::RawValue;

/// Something a catalog lists: a key for ordering and its definition as JSON.
pub(crate) trait Listed: Send + Sync + 'static {
    /// The unique, ordering key (a tool or prompt name, a resource URI).
    fn key(&self) -> &str;
    /// The definition, serialized once.
    fn definition(&self) -> &RawValue;
}

/// The fixed parts of every list result of one kind.
#[derive(Clone, Debug)]
pub(crate) struct ListShape {
    /// The member holding the items, e.g. `tools`.
    pub(crate) member: &'static str,
    /// Items per page.
    pub(crate) page_size: usize,
    /// Pre-serialized trailing members: `"ttlMs":…,"cacheScope":…` and `_meta`.
    pub(crate) tail: Bytes,
}

pub(crate) struct Snapshot<E> {
    pub(crate) items: BTreeMap<Arc<str>, Arc<E>>,
    pages: Mutex<HashMap<(bool, Option<String>), Bytes>>,
}

impl<E> Snapshot<E> {
    fn new(items: BTreeMap<Arc<str>, Arc<E>>) -> Self {
        Snapshot {
            items,
            pages: Mutex::new(HashMap::new()),
        }
    }
}

pub(crate) struct Catalog<E> {
    current: RwLock<Arc<Snapshot<E>>>,
}

impl<E: Listed> Catalog<E> {
    pub(crate) fn new(items: impl IntoIterator<Item = E>) -> Self {
        let map = items
            .into_iter()
            .map(|e| (Arc::<str>::from(e.key()), Arc::new(e)))
            .collect();
        Catalog {
            current: RwLock::new(Arc::new(Snapshot::new(map))),
        }
    }

    pub(crate) fn snapshot(&self) -> Arc<Snapshot<E>> {
        self.current.read().clone()
    }

    pub(crate) fn get(&self, key: &str) -> Option<Arc<E>> {
        self.current.read().items.get(key).cloned()
    }

    /// Inserts or replaces an entry. Returns whether the list changed.
    pub(crate) fn insert(&self, entry: E) -> bool {
        let mut cur = self.current.write();
        let mut items = cur.items.clone();
        items.insert(Arc::from(entry.key()), Arc::new(entry));
        *cur = Arc::new(Snapshot::new(items));
        true
    }

    /// Removes an entry. Returns whether it existed.
    pub(crate) fn remove(&self, key: &str) -> bool {
        let mut cur = self.current.write();
        if !cur.items.contains_key(key) {
            return false;
        }
        let mut items = cur.items.clone();
        items.remove(key);
        *cur = Arc::new(Snapshot::new(items));
        true
    }

    /// The serialized result object for the page starting at `cursor`; `legacy` gives
    /// the 2025-11-25 shape (no `resultType`, no caching hints, no `_meta`).
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        shape: &ListShape,
        legacy: bool,
    ) -> Result<Bytes, ErrorObject> {
        let snap = self.snapshot();
        let after = match cursor {
            None => None,
            Some(c) => Some(decode_cursor(c)?),
        };
        let cache_key = (legacy, after.clone());
        if let Some(hit) = snap.pages.lock().get(&cache_key) {
            return Ok(hit.clone());
        }
        let mut iter: Box<dyn Iterator<Item = (&Arc<str>, &Arc<E>)>> = match &after {
            None => Box::new(snap.items.iter()),
            Some(a) => Box::new(snap.items.range::<str, _>((
                std::ops::Bound::Excluded(a.as_str()),
                std::ops::Bound::Unbounded,
            ))),
        };
        let mut buf = BytesMut::with_capacity(1024);
        if legacy {
            buf.put_slice(b"{\"");
        } else {
            buf.put_slice(b"{\"resultType\":\"complete\",\"");
        }
        buf.put_slice(shape.member.as_bytes());
        buf.put_slice(b"\":[");
        let mut last: Option<&str> = None;
        for (count, (key, entry)) in iter.by_ref().take(shape.page_size).enumerate() {
            if count > 0 {
                buf.put_u8(b',');
            }
            buf.put_slice(entry.definition().get().as_bytes());
            last = Some(key);
        }
        buf.put_u8(b']');
        let more = match last {
            Some(l) => snap
                .items
                .range::<str, _>((std::ops::Bound::Excluded(l), std::ops::Bound::Unbounded))
                .next()
                .is_some(),
            None => false,
        };
        if let (true, Some(l)) = (more, last) {
            buf.put_slice(b",\"nextCursor\":\"");
            buf.put_slice(encode_cursor(l).as_bytes());
            buf.put_u8(b'"');
        }
        if !legacy {
            buf.put_slice(&shape.tail);
        }
        buf.put_u8(b'}');
        let bytes = buf.freeze();
        let mut pages = snap.pages.lock();
        if pages.len() < 1024 {
            pages.insert(cache_key, bytes.clone());
        }
        Ok(bytes)
    }
}

const CURSOR_PREFIX: &str = "after:";

fn encode_cursor(last_key: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{last_key}"))
}

fn decode_cursor(cursor: &str) -> Result<String, ErrorObject> {
    let invalid = || ErrorObject::invalid_params("Invalid cursor");
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    text.strip_prefix(CURSOR_PREFIX)
        .map(str::to_owned)
        .ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Item(String, Box<RawValue>);
    impl Listed for Item {
        fn key(&self) -> &str {
            &self.0
        }
        fn definition(&self) -> &RawValue {
            &self.1
        }
    }
    fn item(k: &str) -> Item {
        Item(
            k.into(),
            RawValue::from_string(format!("{{\"name\":\"{k}\"}}")).unwrap(),
        )
    }

    #[test]
    fn pages_in_order_and_resume_after_changes() {
        let cat = Catalog::new(["c", "a", "b", "d", "e"].map(item));
        let shape = ListShape {
            member: "tools",
            page_size: 2,
            tail: Bytes::from_static(b",\"ttlMs\":0,\"cacheScope\":\"public\""),
        };
        let mut names = vec![];
        let mut cursor: Option<String> = None;
        loop {
            let page = cat.page(cursor.as_deref(), &shape, false).unwrap();
            let v: serde_json::Value = serde_json::from_slice(&page).unwrap();
            for t in v["tools"].as_array().unwrap() {
                names.push(t["name"].as_str().unwrap().to_owned());
            }
            cursor = v["nextCursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                break;
            }
            // A change between pages does not repeat or skip the remaining items.
            cat.insert(item("a0"));
        }
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        assert!(cat.page(Some("bogus!"), &shape, false).is_err());
        let legacy: serde_json::Value =
            serde_json::from_slice(&cat.page(None, &shape, true).unwrap()).unwrap();
        assert!(legacy.get("resultType").is_none() && legacy.get("ttlMs").is_none());
    }
}
