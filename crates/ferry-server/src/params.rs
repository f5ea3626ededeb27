//! Reading request params: one borrowed struct that covers every method's members, so a
//! request is parsed once, and the per-request `_meta` rules (DIGEST §2.4, §2.6).

use std::borrow::Cow;

use ferry_protocol::borrowed::option_cow_str;
use ferry_protocol::logging::LoggingLevel;
use ferry_protocol::meta::RequestMeta;
use ferry_protocol::version::ProtocolVersion;
use ferry_protocol::{ClientCapabilities, ErrorObject};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The members of any request's params that Ferry reads.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Params<'a> {
    #[serde(rename = "_meta", default)]
    pub(crate) meta: Option<Box<RequestMeta>>,
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub(crate) name: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub(crate) uri: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(crate) arguments: Option<Value>,
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub(crate) cursor: Option<Cow<'a, str>>,
    #[serde(rename = "inputResponses", default, deserialize_with = "keep_null")]
    pub(crate) input_responses: Option<Value>,
    #[serde(rename = "requestState", default)]
    pub(crate) request_state: Option<String>,
    #[serde(default)]
    pub(crate) notifications: Option<Value>,
    #[serde(rename = "ref", default)]
    pub(crate) reference: Option<Value>,
    #[serde(default)]
    pub(crate) argument: Option<Value>,
    #[serde(default)]
    pub(crate) context: Option<Value>,
    #[serde(rename = "requestId", default)]
    pub(crate) request_id: Option<Value>,
    #[serde(
        rename = "protocolVersion",
        default,
        borrow,
        deserialize_with = "option_cow_str"
    )]
    pub(crate) protocol_version: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(crate) capabilities: Option<Value>,
    #[serde(rename = "clientInfo", default)]
    pub(crate) client_info: Option<Value>,
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub(crate) level: Option<Cow<'a, str>>,
}

/// Keeps an explicit `null` as `Some(Value::Null)`, so it can be refused.
fn keep_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl<'a> Params<'a> {
    /// Parses raw params; absent params read as empty.
    pub(crate) fn parse(raw: Option<&'a RawValue>) -> Result<Params<'a>, ErrorObject> {
        match raw {
            None => Ok(Params::default()),
            Some(raw) => serde_json::from_str(raw.get())
                .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}"))),
        }
    }
}

/// The per-request facts every modern request must state.
#[derive(Debug)]
pub(crate) struct Checked {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) log_level: Option<LoggingLevel>,
    /// Boxed as it was read: moving it costs a pointer, not half a kilobyte.
    pub(crate) meta: Box<RequestMeta>,
}

/// Checks `_meta` of a 2026-07-28 request: version and capabilities present (-32602,
/// HTTP 400), version supported (-32022), log level known (-32602).
pub(crate) fn check_meta(
    meta: Option<Box<RequestMeta>>,
    supported: &[ProtocolVersion],
    supported_strs: &[&str],
) -> Result<Checked, (ErrorObject, u16)> {
    let Some(mut meta) = meta else {
        return Err((
            ErrorObject::invalid_params(
                "Invalid params: _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities is required",
            ),
            400,
        ));
    };
    let Some(requested) = meta.protocol_version.as_deref() else {
        return Err((
            ErrorObject::invalid_params(
                "Invalid params: _meta[\"io.modelcontextprotocol/protocolVersion\"] is required",
            ),
            400,
        ));
    };
    let version = match ProtocolVersion::parse(requested) {
        Some(v) if supported.contains(&v) => v,
        _ => {
            return Err((
                ErrorObject::unsupported_version(supported_strs, requested),
                400,
            ));
        }
    };
    let Some(capabilities) = meta.client_capabilities.take() else {
        return Err((
            ErrorObject::invalid_params(
                "Invalid params: _meta[\"io.modelcontextprotocol/clientCapabilities\"] is required",
            ),
            400,
        ));
    };
    let log_level = match meta.log_level.as_deref() {
        None => None,
        Some(l) => Some(LoggingLevel::parse(l).ok_or_else(|| {
            (
                ErrorObject::invalid_params(format!("Invalid params: unknown log level {l:?}")),
                200,
            )
        })?),
    };
    Ok(Checked {
        version,
        capabilities,
        log_level,
        meta,
    })
}
