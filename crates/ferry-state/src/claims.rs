//! The claims sealed in a `requestState` token, the request binding they are
//! checked against, and canonical argument digests.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::error::RejectReason;

/// What a `requestState` token is sealed to: who presents it, and on which request.
///
/// Build one per incoming request from the authenticated principal (or `None`
/// for anonymous requests), the method, the target (tool or prompt name, or
/// resource URI) and [`digest_args`] of the request's salient parameters. Use
/// it to fill the claims of a new token ([`StateClaims::new`]) and to check a
/// presented one ([`StateGuard::verify`](crate::StateGuard::verify)).
///
/// ```
/// use ferry_state::{Binding, digest_args};
/// use serde_json::json;
///
/// let args = digest_args(&json!({"location": "New York"}));
/// let binding = Binding::new("tools/call", "get_weather", &args).with_principal(Some("user-42"));
/// assert_eq!(binding.principal, Some("user-42"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding<'a> {
    /// The authenticated principal, or `None` for an anonymous request. A token
    /// issued to a principal is refused on an anonymous request and the reverse.
    pub principal: Option<&'a str>,
    /// The request method, such as `"tools/call"`.
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI.
    pub target: &'a str,
    /// Digest of the request's salient parameters, from [`digest_args`].
    pub args: &'a str,
}

impl<'a> Binding<'a> {
    /// An anonymous binding; add a principal with [`Binding::with_principal`].
    pub fn new(method: &'a str, target: &'a str, args: &'a str) -> Self {
        Self {
            principal: None,
            method,
            target,
            args,
        }
    }

    /// Sets the principal.
    pub fn with_principal(mut self, principal: Option<&'a str>) -> Self {
        self.principal = principal;
        self
    }
}

/// The content of a `requestState` token.
///
/// Fields are serialized under one-letter names to keep tokens small. `jti`,
/// `issued_at` and `expires_at` are set by
/// [`StateGuard::issue`](crate::StateGuard::issue); the other fields are the
/// issuer's.
///
/// ```
/// use ferry_state::{Binding, StateClaims, digest_args};
/// use serde_json::json;
///
/// let args = digest_args(&json!({"location": "New York"}));
/// let mut claims = StateClaims::new(&Binding::new("tools/call", "get_weather", &args));
/// claims.asked.insert("github_login".into(), "elicit:form".into());
/// claims.app = Some(json!({"step": 2}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateClaims {
    /// Random token id (128 bits, base64url), used for single-use redemption.
    #[serde(rename = "j")]
    pub jti: String,
    /// The principal the token was issued to; `None` for anonymous requests.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// Issue time, in milliseconds since the Unix epoch.
    #[serde(rename = "i")]
    pub issued_at: u64,
    /// Expiry time, in milliseconds since the Unix epoch. The token is refused
    /// from this instant on.
    #[serde(rename = "e")]
    pub expires_at: u64,
    /// The request method, such as `"tools/call"`.
    #[serde(rename = "m")]
    pub method: String,
    /// The tool or prompt name, or the resource URI.
    #[serde(rename = "t")]
    pub target: String,
    /// Digest of the request's salient parameters, from [`digest_args`].
    #[serde(rename = "a")]
    pub args: String,
    /// Input requests asked in the round that issued this token: input request
    /// key to a short description such as `"elicit:<digest>"` (see [`input_digest`]).
    #[serde(rename = "q", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub asked: BTreeMap<String, String>,
    /// Answers collected in earlier rounds, by input request key.
    #[serde(rename = "r", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answers: BTreeMap<String, Value>,
    /// The handler's own state.
    #[serde(
        rename = "s",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_value"
    )]
    pub app: Option<Value>,
    /// Tracing of the logical call this round belongs to; absent when the issuer
    /// traced nothing.
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<CallTrace>,
}

/// What ties the rounds of one multi round-trip call together in traces: a stable call
/// id, the round that issued the state, and that round's span (W3C `traceparent` form)
/// for the next round to link to. Sealed with the rest of the state, so a client can
/// neither read nor forge it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallTrace {
    /// The logical call's id, the same in every round (random, base64url).
    #[serde(rename = "c")]
    pub call_id: String,
    /// The round that issued this state (the first round is 1).
    #[serde(rename = "n")]
    pub round: u32,
    /// The issuing round's span context as a `traceparent` value.
    #[serde(rename = "l", default, skip_serializing_if = "Option::is_none")]
    pub span: Option<String>,
}

/// Keeps `Some(Value::Null)` distinct from an absent field.
fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl StateClaims {
    /// Claims bound to `binding`, with no inputs, answers or handler state yet.
    pub fn new(binding: &Binding<'_>) -> Self {
        Self {
            jti: String::new(),
            principal: binding.principal.map(str::to_owned),
            issued_at: 0,
            expires_at: 0,
            method: binding.method.to_owned(),
            target: binding.target.to_owned(),
            args: binding.args.to_owned(),
            asked: BTreeMap::new(),
            answers: BTreeMap::new(),
            app: None,
            trace: None,
        }
    }

    /// The binding these claims were issued for.
    pub fn binding(&self) -> Binding<'_> {
        Binding {
            principal: self.principal.as_deref(),
            method: &self.method,
            target: &self.target,
            args: &self.args,
        }
    }

    /// Compares the claims' binding with `expected`, in constant time for
    /// each field's content.
    pub(crate) fn check_binding(&self, expected: &Binding<'_>) -> Result<(), RejectReason> {
        let principal_ok = match (self.principal.as_deref(), expected.principal) {
            (Some(a), Some(b)) => ct_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !principal_ok {
            return Err(RejectReason::PrincipalMismatch);
        }
        if !ct_eq(&self.method, expected.method) {
            return Err(RejectReason::MethodMismatch);
        }
        if !ct_eq(&self.target, expected.target) {
            return Err(RejectReason::TargetMismatch);
        }
        if !ct_eq(&self.args, expected.args) {
            return Err(RejectReason::ArgsMismatch);
        }
        Ok(())
    }
}

/// Constant-time string equality (the length is not hidden).
fn ct_eq(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// Digest of a request's salient parameters, for [`Binding::args`].
///
/// SHA-256 of [`canonical_json`]`(value)`, in unpadded base64url (43
/// characters). Equal JSON values give equal digests whatever the order of
/// their object keys.
///
/// ```
/// use ferry_state::digest_args;
/// use serde_json::json;
///
/// let a = digest_args(&json!({"b": 1, "a": {"y": [1, 2], "x": null}}));
/// let b = digest_args(&json!({"a": {"x": null, "y": [1, 2]}, "b": 1}));
/// assert_eq!(a, b);
/// assert_ne!(a, digest_args(&json!({"a": {"x": null, "y": [2, 1]}, "b": 1})));
/// ```
pub fn digest_args(value: &Value) -> String {
    let mut hasher = Sha256::new();
    write_canonical(value, &mut hasher);
    URL_SAFE_NO_PAD.encode(hasher.finalize())
}

/// A short description of an input request for [`StateClaims::asked`]:
/// `"<kind>:<digest_args(request)>"`, for example `"elicit:3q2-…"`.
pub fn input_digest(kind: &str, request: &Value) -> String {
    let mut out = String::with_capacity(kind.len() + 44);
    out.push_str(kind);
    out.push(':');
    out.push_str(&digest_args(request));
    out
}

/// Canonical JSON text of `value`: object keys sorted (by their UTF-8 bytes)
/// at every depth, no whitespace, strings escaped as `serde_json` does and
/// numbers written as `serde_json` writes them.
///
/// ```
/// use ferry_state::canonical_json;
/// use serde_json::json;
///
/// assert_eq!(canonical_json(&json!({"b": [1, {"d": 2, "c": "x"}], "a": true})),
///            r#"{"a":true,"b":[1,{"c":"x","d":2}]}"#);
/// ```
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

trait Sink {
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

impl Sink for Sha256 {
    fn put(&mut self, s: &str) {
        self.update(s.as_bytes());
    }
}

fn write_canonical(value: &Value, out: &mut impl Sink) {
    match value {
        Value::Null => out.put("null"),
        Value::Bool(true) => out.put("true"),
        Value::Bool(false) => out.put("false"),
        Value::Number(n) => out.put(&n.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_canonical(item, out);
            }
            out.put("]");
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.put("{");
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_string(key, out);
                out.put(":");
                write_canonical(item, out);
            }
            out.put("}");
        }
    }
}

/// Writes a JSON string literal with the same escapes as `serde_json`.
fn write_string(s: &str, out: &mut impl Sink) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.put("\"");
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        // `i` is at an ASCII byte, so both slices fall on char boundaries.
        out.put(&s[start..i]);
        if escape.is_empty() {
            let hex = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ];
            // Only ASCII bytes: always valid UTF-8.
            out.put(std::str::from_utf8(&hex).unwrap_or_default());
        } else {
            out.put(escape);
        }
        start = i + 1;
    }
    out.put(&s[start..]);
    out.put("\"");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_strings_match_serde_json() {
        let samples = [
            "",
            "plain",
            "quote\" back\\slash",
            "\n\r\t\u{8}\u{c}",
            "\u{0}\u{1}\u{1f}\u{7f}",
            "unicode é ✓ \u{2028} 🎉",
        ];
        for s in samples {
            assert_eq!(
                canonical_json(&json!(s)),
                serde_json::to_string(s).unwrap(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn canonical_numbers_match_serde_json() {
        for v in [
            json!(0),
            json!(-1),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1.5),
            json!(1e300),
            json!(-0.0),
        ] {
            assert_eq!(canonical_json(&v), serde_json::to_string(&v).unwrap());
        }
    }

    #[test]
    fn canonical_is_parseable_and_equal() {
        let v = json!({"z": {"b": [1, {"y": null, "x": "s"}], "a": false}, "é": 1, "e": 2});
        let text = canonical_json(&v);
        assert_eq!(
            text,
            r#"{"e":2,"z":{"a":false,"b":[1,{"x":"s","y":null}]},"é":1}"#
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn digest_is_order_independent_and_sensitive() {
        let a: Value = serde_json::from_str(r#"{"b":{"d":1,"c":[2,3]},"a":"x"}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{ "a" : "x", "b" : { "c" : [2,3], "d" : 1 } }"#).unwrap();
        assert_eq!(digest_args(&a), digest_args(&b));
        assert_eq!(digest_args(&a).len(), 43);
        let c: Value = serde_json::from_str(r#"{"a":"x","b":{"c":[3,2],"d":1}}"#).unwrap();
        assert_ne!(digest_args(&a), digest_args(&c));
        assert_ne!(digest_args(&json!("1")), digest_args(&json!(1)));
        assert_ne!(digest_args(&json!({})), digest_args(&json!([])));
        assert_ne!(digest_args(&json!(null)), digest_args(&json!({})));
        // Known answer: SHA-256("{}") in base64url.
        assert_eq!(
            digest_args(&json!({})),
            "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"
        );
    }

    #[test]
    fn input_digest_shape() {
        let d = input_digest("elicit", &json!({"mode": "form"}));
        assert!(d.starts_with("elicit:"));
        assert_eq!(d.len(), "elicit:".len() + 43);
    }

    #[test]
    fn claims_serialize_compactly_and_round_trip() {
        let mut c = StateClaims::new(&Binding::new("tools/call", "t", "d"));
        c.jti = "J".into();
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(
            text,
            r#"{"j":"J","i":0,"e":0,"m":"tools/call","t":"t","a":"d"}"#
        );
        assert_eq!(serde_json::from_str::<StateClaims>(&text).unwrap(), c);

        c.principal = Some("p".into());
        c.asked.insert("k".into(), "elicit:x".into());
        c.answers.insert("k".into(), json!({"action": "accept"}));
        c.app = Some(Value::Null);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<StateClaims>(&text).unwrap(), c);
        assert_eq!(c.binding().principal, Some("p"));
    }

    #[test]
    fn binding_checks() {
        let c = StateClaims::new(&Binding::new("m", "t", "a").with_principal(Some("p")));
        assert!(c.check_binding(&c.binding()).is_ok());
        let b = Binding::new("m", "t", "a");
        assert_eq!(c.check_binding(&b), Err(RejectReason::PrincipalMismatch));
        assert_eq!(
            c.check_binding(&b.with_principal(Some("q"))),
            Err(RejectReason::PrincipalMismatch)
        );
        assert_eq!(
            c.check_binding(&b.with_principal(Some("p2"))),
            Err(RejectReason::PrincipalMismatch)
        );
        let b = b.with_principal(Some("p"));
        assert_eq!(
            c.check_binding(&Binding { method: "x", ..b }),
            Err(RejectReason::MethodMismatch)
        );
        assert_eq!(
            c.check_binding(&Binding { target: "x", ..b }),
            Err(RejectReason::TargetMismatch)
        );
        assert_eq!(
            c.check_binding(&Binding { args: "x", ..b }),
            Err(RejectReason::ArgsMismatch)
        );
    }
}
