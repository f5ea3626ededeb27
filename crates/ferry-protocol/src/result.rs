//! What every result shares: `resultType`, cache hints, and the empty result
//! (basic/index.mdx, server/utilities/caching.mdx).

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use crate::common::{Implementation, JsonObject};
use crate::meta::{Meta, SERVER_INFO};

/// How to read a result (schema.ts `ResultType`).
///
/// Extensions may add values, so unknown strings are kept in [`ResultType::Other`] and
/// written back unchanged. A result without `resultType` (from a 2025-11-25 server) is
/// read as [`ResultType::Complete`]; see [`ResultType::or_complete`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum ResultType {
    /// `"complete"`: the request finished and the result holds the final content.
    #[default]
    Complete,
    /// `"input_required"`: an [`InputRequiredResult`](crate::mrtr::InputRequiredResult).
    InputRequired,
    /// `"task"`: a task was created (Tasks extension, `io.modelcontextprotocol/tasks`).
    Task,
    /// Any other value, as sent.
    Other(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => "task",
            ResultType::Other(s) => s,
        }
    }

    /// Reads a wire string. Never fails: unknown values become [`ResultType::Other`].
    pub fn parse(s: &str) -> ResultType {
        match s {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            "task" => ResultType::Task,
            other => ResultType::Other(other.to_owned()),
        }
    }

    /// The effective type of a result: a missing `resultType` means `complete`.
    pub fn or_complete(value: Option<&ResultType>) -> ResultType {
        value.cloned().unwrap_or(ResultType::Complete)
    }

    /// Whether this is `"complete"`.
    pub fn is_complete(&self) -> bool {
        matches!(self, ResultType::Complete)
    }

    /// Whether this is `"input_required"`.
    pub fn is_input_required(&self) -> bool {
        matches!(self, ResultType::InputRequired)
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ResultType {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ResultType::parse(s))
    }
}

impl From<&str> for ResultType {
    fn from(s: &str) -> Self {
        ResultType::parse(s)
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The members of a result object read before the rest (`resultType`, `isError`), from its
/// raw JSON text and without building a value, for code that passes results on or
/// decides how to read them. Reading it checks that the text is an object with neither
/// member twice.
///
/// ```
/// use ferry_protocol::result::{ResultHead, ResultType};
/// use serde_json::value::RawValue;
///
/// let raw = RawValue::from_string(r#"{"content":[],"isError":true}"#.into()).unwrap();
/// let head = ResultHead::read(&raw).unwrap();
/// assert_eq!(head.result_type(), None);
/// assert!(head.is_error());
/// ```
#[derive(Debug, Deserialize)]
pub struct ResultHead<'a> {
    #[serde(rename = "resultType", default, borrow)]
    result_type: Option<&'a serde_json::value::RawValue>,
    #[serde(rename = "isError", default, borrow)]
    is_error: Option<&'a serde_json::value::RawValue>,
}

impl<'a> ResultHead<'a> {
    /// The head of `raw`; an error when `raw` is not an object, or names `resultType` or
    /// `isError` twice.
    pub fn read(raw: &'a serde_json::value::RawValue) -> Result<Self, serde_json::Error> {
        // Raw JSON text starts at its value, with no whitespace before it.
        if !raw.get().starts_with('{') {
            return Err(de::Error::custom("a result must be an object"));
        }
        serde_json::from_str(raw.get())
    }

    /// The `resultType`: `None` when absent, `Some(Err(text))` when it is not a string.
    pub fn result_type(&self) -> Option<Result<ResultType, &'a str>> {
        self.result_type
            .map(|v| serde_json::from_str(v.get()).map_err(|_| v.get()))
    }

    /// `isError: true` (any other value, or none, is not an error).
    pub fn is_error(&self) -> bool {
        self.is_error.is_some_and(|v| v.get() == "true")
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = ResultType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a resultType string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ResultType, E> {
                Ok(ResultType::parse(v))
            }
        }
        d.deserialize_str(Visitor)
    }
}

/// Who may share a cached result (schema.ts `CacheableResult.cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any client or intermediary may cache and share it.
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// A result that carries nothing but `resultType` (schema.ts `EmptyResult`).
///
/// [`EmptyResult::complete`] is the 2026-07-28 shape `{"resultType":"complete"}`;
/// [`EmptyResult::default`] is the 2025-11-25 shape `{}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type; `complete` for modern servers, absent on legacy ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Any other members, kept as sent.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl EmptyResult {
    /// `{"resultType":"complete"}`.
    pub fn complete() -> Self {
        EmptyResult {
            result_type: Some(ResultType::Complete),
            ..Default::default()
        }
    }
}

/// The members every result shares, so code can stamp `resultType` and `_meta` onto any
/// result without knowing its type. Implemented by every result struct in this crate.
pub trait McpResult {
    /// The `resultType` member.
    fn result_type(&self) -> Option<&ResultType>;

    /// Mutable access to `resultType`.
    fn result_type_mut(&mut self) -> &mut Option<ResultType>;

    /// Mutable access to `_meta`.
    fn meta_mut(&mut self) -> &mut Option<Meta>;

    /// The effective result type: a missing `resultType` reads as `complete`.
    fn effective_result_type(&self) -> ResultType {
        ResultType::or_complete(self.result_type())
    }

    /// Sets `_meta["io.modelcontextprotocol/serverInfo"]`.
    fn set_server_info(&mut self, info: &Implementation) {
        let value = serde_json::to_value(info).unwrap_or_default();
        self.meta_mut()
            .get_or_insert_with(Meta::new)
            .insert(SERVER_INFO.to_owned(), value);
    }
}

/// The cache hints of a cacheable result (schema.ts `CacheableResult`): discover, list and
/// read results.
pub trait Cacheable {
    /// Mutable access to `ttlMs`.
    fn ttl_ms_mut(&mut self) -> &mut Option<u64>;

    /// Mutable access to `cacheScope`.
    fn cache_scope_mut(&mut self) -> &mut Option<CacheScope>;

    /// Sets both cache hints.
    fn set_cache(&mut self, ttl_ms: u64, scope: CacheScope) {
        *self.ttl_ms_mut() = Some(ttl_ms);
        *self.cache_scope_mut() = Some(scope);
    }
}

/// Implements [`McpResult`] for structs with `meta` and `result_type` fields.
macro_rules! impl_mcp_result {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::result::McpResult for $ty {
            fn result_type(&self) -> Option<&$crate::result::ResultType> {
                self.result_type.as_ref()
            }
            fn result_type_mut(&mut self) -> &mut Option<$crate::result::ResultType> {
                &mut self.result_type
            }
            fn meta_mut(&mut self) -> &mut Option<$crate::meta::Meta> {
                &mut self.meta
            }
        }

        impl $ty {
            /// Sets `_meta`.
            pub fn with_meta(mut self, meta: $crate::meta::Meta) -> Self {
                self.meta = Some(meta);
                self
            }

            /// Sets `_meta["io.modelcontextprotocol/serverInfo"]`.
            pub fn with_server_info(mut self, info: &$crate::common::Implementation) -> Self {
                $crate::result::McpResult::set_server_info(&mut self, info);
                self
            }
        }
    )*};
}

/// Implements [`Cacheable`] (and the `with_cache` builder) for structs with `ttl_ms` and
/// `cache_scope` fields.
macro_rules! impl_cacheable {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::result::Cacheable for $ty {
            fn ttl_ms_mut(&mut self) -> &mut Option<u64> {
                &mut self.ttl_ms
            }
            fn cache_scope_mut(&mut self) -> &mut Option<$crate::result::CacheScope> {
                &mut self.cache_scope
            }
        }

        impl $ty {
            /// Sets `ttlMs` and `cacheScope`.
            pub fn with_cache(mut self, ttl_ms: u64, scope: $crate::result::CacheScope) -> Self {
                self.ttl_ms = Some(ttl_ms);
                self.cache_scope = Some(scope);
                self
            }
        }
    )*};
}

pub(crate) use {impl_cacheable, impl_mcp_result};

impl_mcp_result!(EmptyResult);
