//! Protocol eras: telling a 2026-07-28 ("modern") server from a 2025-11-25 ("legacy")
//! one, and remembering the answer.
//!
//! The client probes with `server/discover`. A `DiscoverResult` listing a version the
//! client speaks, or one of the modern errors -32022, -32021 or -32020 (and, on HTTP, a
//! 404 carrying -32601), marks a modern server; a -32022 also says which versions to
//! retry with. Any other error, an empty or non-JSON HTTP error body, or no answer in
//! time marks a legacy server, which the client then opens with `initialize`.
//!
//! The era belongs to the server, so it is cached: per process on stdio, and per origin
//! on HTTP in an [`EraCache`] (by default one shared by the whole program).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use ferry_protocol::ErrorCode;
use parking_lot::Mutex;
use serde_json::Value;

use crate::error::Error;

/// The protocol versions of the modern era this client speaks, preferred first.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];

/// The legacy versions this client accepts from `initialize`, preferred first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Which generation of the protocol a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2026-07-28 and later: stateless, metadata on every request, multi round-trip
    /// requests.
    Modern,
    /// 2025-11-25 and earlier: an `initialize` handshake and server-to-client requests.
    Legacy,
}

/// How the client picks the era when it connects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EraMode {
    /// Probe (or use the cached era): modern if the server speaks it, else legacy.
    #[default]
    Auto,
    /// Modern only: probe, and fail if the server is legacy.
    Modern,
    /// Legacy only: skip the probe and send `initialize`.
    Legacy,
}

/// What is known about a server's era.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KnownEra {
    /// Modern, speaking this version.
    Modern {
        /// The version to send.
        version: String,
    },
    /// Legacy.
    Legacy,
}

/// A cache of server eras keyed by origin (`scheme://host:port`).
///
/// For a modern server it also keeps the last `server/discover` result, so a client that
/// skips the probe still knows the server's identity and capabilities.
///
/// [`EraCache::shared`] is the process-wide cache clients use unless given another one.
#[derive(Debug, Default)]
pub struct EraCache {
    entries: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug)]
struct Entry {
    era: KnownEra,
    discover: Option<Arc<Value>>,
}

impl EraCache {
    /// An empty cache.
    pub fn new() -> Self {
        EraCache::default()
    }

    /// The process-wide cache.
    pub fn shared() -> Arc<EraCache> {
        static SHARED: OnceLock<Arc<EraCache>> = OnceLock::new();
        SHARED.get_or_init(|| Arc::new(EraCache::new())).clone()
    }

    /// The era recorded for `origin`.
    pub fn get(&self, origin: &str) -> Option<KnownEra> {
        self.entries.lock().get(origin).map(|e| e.era.clone())
    }

    /// Records the era of `origin`. A discover result kept for it stays if the era is
    /// unchanged.
    pub fn set(&self, origin: impl Into<String>, era: KnownEra) {
        let mut entries = self.entries.lock();
        let entry = entries.entry(origin.into()).or_insert(Entry {
            era: era.clone(),
            discover: None,
        });
        if entry.era != era {
            entry.era = era;
            entry.discover = None;
        }
    }

    /// The era of `origin` with the last discover result recorded for it.
    pub(crate) fn get_with_discover(&self, origin: &str) -> Option<(KnownEra, Option<Arc<Value>>)> {
        self.entries
            .lock()
            .get(origin)
            .map(|e| (e.era.clone(), e.discover.clone()))
    }

    /// Records a modern `origin` with its discover result.
    pub(crate) fn set_discover(&self, origin: impl Into<String>, era: KnownEra, discover: Value) {
        self.entries.lock().insert(
            origin.into(),
            Entry {
                era,
                discover: Some(Arc::new(discover)),
            },
        );
    }

    /// Forgets `origin`, so the next client probes again.
    pub fn forget(&self, origin: &str) {
        self.entries.lock().remove(origin);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.entries.lock().clear();
    }
}

/// What one `server/discover` probe said about the server.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Modern; here is the discover result, if the probe got one.
    Modern(Option<Value>),
    /// Modern, but retry with this version.
    RetryWith(String),
    /// Legacy: fall back to `initialize`.
    Legacy,
    /// The probe failed in a way that is not about eras.
    Fail(Error),
}

/// Picks the first version in `supported` this client speaks in the modern era.
pub(crate) fn pick_modern(supported: &[String]) -> Option<String> {
    MODERN_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s == *v))
        .map(|v| (*v).to_owned())
}

/// Whether `supported` lists a legacy version this client speaks.
pub(crate) fn has_legacy(supported: &[String]) -> bool {
    supported
        .iter()
        .any(|s| LEGACY_VERSIONS.contains(&s.as_str()))
}

/// Reads a string array member of `value`.
pub(crate) fn string_list(value: Option<&Value>, key: &str) -> Vec<String> {
    value
        .and_then(|v| v.get(key))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Classifies the outcome of a `server/discover` probe sent with version `tried`.
pub(crate) fn classify(outcome: Result<Value, Error>, tried: &str, http: bool) -> Verdict {
    match outcome {
        Ok(result) => {
            let supported = string_list(Some(&result), "supportedVersions");
            if supported.iter().any(|s| s == tried) {
                Verdict::Modern(Some(result))
            } else if let Some(v) = pick_modern(&supported) {
                Verdict::RetryWith(v)
            } else {
                // `{}` from a server that answers anything, or only legacy versions.
                Verdict::Legacy
            }
        }
        Err(Error::Rpc(e)) => {
            if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
                let supported = string_list(e.data.as_ref(), "supported");
                match pick_modern(&supported) {
                    Some(v) => Verdict::RetryWith(v),
                    None if has_legacy(&supported) => Verdict::Legacy,
                    None => Verdict::Fail(Error::UnsupportedVersion { supported }),
                }
            } else if e.code.is_modern_signal()
                || (http && e.http_status == Some(404) && e.code == ErrorCode::METHOD_NOT_FOUND)
            {
                Verdict::Modern(None)
            } else {
                Verdict::Legacy
            }
        }
        Err(Error::HttpStatus { status, .. }) if (400..500).contains(&status) => Verdict::Legacy,
        Err(Error::Timeout { .. } | Error::Protocol(_) | Error::TooLarge { .. }) => Verdict::Legacy,
        Err(e) => Verdict::Fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RpcError;
    use ferry_protocol::ErrorObject;
    use serde_json::json;
    use std::time::Duration;

    fn rpc(code: i64, data: Option<Value>, status: Option<u16>) -> Result<Value, Error> {
        let mut e = ErrorObject::new(ErrorCode(code), "x");
        e.data = data;
        Err(Error::Rpc(Box::new(RpcError::new(e, status))))
    }

    #[test]
    fn discover_results() {
        let ok = json!({"supportedVersions":["2026-07-28"],"capabilities":{}});
        assert!(matches!(
            classify(Ok(ok), "2026-07-28", true),
            Verdict::Modern(Some(_))
        ));
        assert!(matches!(
            classify(Ok(json!({})), "2026-07-28", true),
            Verdict::Legacy
        ));
        let legacy_only = json!({"supportedVersions":["2025-11-25"],"capabilities":{}});
        assert!(matches!(
            classify(Ok(legacy_only), "2026-07-28", true),
            Verdict::Legacy
        ));
    }

    #[test]
    fn modern_errors_retry_or_mark_modern() {
        let v = classify(
            rpc(
                -32022,
                Some(json!({"supported":["2026-07-28"],"requested":"2026-07-28"})),
                Some(400),
            ),
            "2026-07-28",
            true,
        );
        assert!(matches!(v, Verdict::RetryWith(ref s) if s == "2026-07-28"));
        let v = classify(
            rpc(-32022, Some(json!({"supported":["2025-11-25"]})), None),
            "2026-07-28",
            false,
        );
        assert!(matches!(v, Verdict::Legacy));
        let v = classify(
            rpc(-32022, Some(json!({"supported":["1999-01-01"]})), None),
            "2026-07-28",
            false,
        );
        assert!(matches!(v, Verdict::Fail(Error::UnsupportedVersion { .. })));
        assert!(matches!(
            classify(rpc(-32021, None, Some(400)), "v", true),
            Verdict::Modern(None)
        ));
        assert!(matches!(
            classify(rpc(-32020, None, Some(400)), "v", true),
            Verdict::Modern(None)
        ));
        assert!(matches!(
            classify(rpc(-32601, None, Some(404)), "v", true),
            Verdict::Modern(None)
        ));
    }

    #[test]
    fn everything_else_is_legacy() {
        assert!(matches!(
            classify(rpc(-32601, None, None), "v", false),
            Verdict::Legacy
        ));
        assert!(matches!(
            classify(rpc(-32000, None, Some(400)), "v", true),
            Verdict::Legacy
        ));
        assert!(matches!(
            classify(rpc(-32601, None, Some(404)), "v", false),
            Verdict::Legacy
        ));
        let empty = Err(Error::HttpStatus {
            status: 400,
            body: String::new(),
        });
        assert!(matches!(classify(empty, "v", true), Verdict::Legacy));
        let timeout = Err(Error::Timeout {
            method: "server/discover".into(),
            after: Duration::from_secs(1),
        });
        assert!(matches!(classify(timeout, "v", false), Verdict::Legacy));
        let auth = Err(Error::Unauthorized {
            www_authenticate: None,
        });
        assert!(matches!(classify(auth, "v", true), Verdict::Fail(_)));
    }

    #[test]
    fn cache_by_origin() {
        let c = EraCache::new();
        c.set("http://127.0.0.1:1", KnownEra::Legacy);
        assert_eq!(c.get("http://127.0.0.1:1"), Some(KnownEra::Legacy));
        assert_eq!(c.get("http://127.0.0.1:2"), None);
        c.forget("http://127.0.0.1:1");
        assert_eq!(c.get("http://127.0.0.1:1"), None);
    }

    #[test]
    fn cache_keeps_the_discover_result_while_the_era_holds() {
        let c = EraCache::new();
        let modern = KnownEra::Modern {
            version: "2026-07-28".into(),
        };
        let d = serde_json::json!({"capabilities": {"tools": {}}});
        c.set_discover("o", modern.clone(), d.clone());
        c.set("o", modern.clone());
        let (era, kept) = c.get_with_discover("o").unwrap();
        assert_eq!(era, modern);
        assert_eq!(kept.as_deref(), Some(&d));
        c.set("o", KnownEra::Legacy);
        assert_eq!(c.get_with_discover("o").unwrap().1, None);
    }
}
