//! The per-request `_meta` rules of 2026-07-28 (basic/index.mdx, "Request metadata").

use ferry_protocol::logging::LoggingLevel;
use ferry_protocol::meta::RequestMeta;
use ferry_protocol::quote::quote;
use ferry_protocol::version::ProtocolVersion;
use ferry_protocol::{ClientCapabilities, ErrorObject};

use crate::refusal::{Attempt, Failure, Refusal};

/// The per-request facts every modern request must state.
#[derive(Debug)]
pub(crate) struct Checked {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) log_level: Option<LoggingLevel>,
    /// Boxed as it was read: moving it costs a pointer, not half a kilobyte.
    pub(crate) meta: Box<RequestMeta>,
    /// A `tools/call`'s arguments as sent, when a number in them does not fit a `Value`
    /// exactly (`ferry_protocol::numbers`); `None` almost always.
    pub(crate) exact_arguments: Option<Box<serde_json::value::RawValue>>,
}

/// Checks `_meta` of a 2026-07-28 request: version and capabilities present (-32602),
/// version supported (-32022), log level known (-32602).
pub(crate) fn check_meta(
    meta: Option<Box<RequestMeta>>,
    supported: &[ProtocolVersion],
    supported_strs: &[&str],
) -> Attempt<Checked> {
    let missing = |m: &str| Failure::refused(Refusal::MissingMeta, ErrorObject::invalid_params(m));
    let Some(mut meta) = meta else {
        return Err(missing(
            "Invalid params: _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities is required",
        ));
    };
    let Some(requested) = meta.protocol_version.as_deref() else {
        return Err(missing(
            "Invalid params: _meta[\"io.modelcontextprotocol/protocolVersion\"] is required",
        ));
    };
    let version = match ProtocolVersion::parse(requested) {
        Some(v) if supported.contains(&v) => v,
        _ => {
            return Err(Failure::refused(
                Refusal::UnsupportedVersion,
                ErrorObject::unsupported_version(supported_strs, requested),
            ));
        }
    };
    let Some(capabilities) = meta.client_capabilities.take() else {
        return Err(missing(
            "Invalid params: _meta[\"io.modelcontextprotocol/clientCapabilities\"] is required",
        ));
    };
    let log_level = match meta.log_level.as_deref() {
        None => None,
        Some(l) => Some(LoggingLevel::parse(l).ok_or_else(|| {
            Failure::invalid_params(format!("Invalid params: unknown log level {:?}", quote(l)))
        })?),
    };
    Ok(Checked {
        version,
        capabilities,
        log_level,
        meta,
        exact_arguments: None,
    })
}
