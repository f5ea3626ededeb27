//! Streamable HTTP: the request metadata headers must match the body (transports/streamable-http.mdx). Any mismatch is HTTP 400 with -32020.

use ferry_protocol::ErrorObject;
use ferry_protocol::headers::{self, ParamHeader, decode_value};
use ferry_protocol::quote::quote;
use http::HeaderMap;
use http::header::{AsHeaderName, HeaderName};
use serde_json::Value;

/// The checked fields' names, parsed once: a lookup by name then costs one hash.
static PROTOCOL_VERSION: HeaderName = HeaderName::from_static(headers::PROTOCOL_VERSION);
static METHOD: HeaderName = HeaderName::from_static(headers::METHOD);
static NAME: HeaderName = HeaderName::from_static(headers::NAME);

/// The value of a field that may appear at most once.
fn one<N>(map: &HeaderMap, name: N) -> Result<Option<&[u8]>, ErrorObject>
where
    N: AsHeaderName + std::fmt::Display + Copy,
{
    let mut values = map.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(ErrorObject::header_mismatch(format!(
            "Header mismatch: {name} appears more than once"
        )));
    }
    Ok(first.map(|v| v.as_bytes()))
}

fn display(name: &str) -> &'static str {
    match name {
        headers::PROTOCOL_VERSION => "MCP-Protocol-Version",
        headers::METHOD => "Mcp-Method",
        headers::NAME => "Mcp-Name",
        _ => "header",
    }
}

/// Checks `MCP-Protocol-Version` against the body's version.
pub(crate) fn check_version(map: &HeaderMap, body_version: &str) -> Result<(), ErrorObject> {
    match one(map, &PROTOCOL_VERSION)? {
        None => Err(ErrorObject::header_mismatch(
            "Header mismatch: MCP-Protocol-Version header is required",
        )),
        Some(v) if v == body_version.as_bytes() => Ok(()),
        Some(v) => Err(ErrorObject::header_mismatch(format!(
            "Header mismatch: {} header value '{}' does not match body value '{}'",
            display(headers::PROTOCOL_VERSION),
            quote(&String::from_utf8_lossy(v)),
            quote(body_version)
        ))),
    }
}

/// Checks `Mcp-Method`, and `Mcp-Name` when `name` (the body's `params.name` or
/// `params.uri`) is given.
pub(crate) fn check_method_and_name(
    map: &HeaderMap,
    method: &str,
    name: Option<&str>,
) -> Result<(), ErrorObject> {
    match one(map, &METHOD)? {
        None => {
            return Err(ErrorObject::header_mismatch(
                "Header mismatch: Mcp-Method header is required",
            ));
        }
        Some(v) if v == method.as_bytes() => {}
        Some(v) => {
            return Err(ErrorObject::header_mismatch(format!(
                "Header mismatch: Mcp-Method header value '{}' does not match body value '{}'",
                quote(&String::from_utf8_lossy(v)),
                quote(method)
            )));
        }
    }
    if let Some(body) = name {
        let raw = one(map, &NAME)?.ok_or_else(|| {
            ErrorObject::header_mismatch("Header mismatch: Mcp-Name header is required")
        })?;
        let decoded = decode_value(raw)
            .map_err(|e| ErrorObject::header_mismatch(format!("Header mismatch: Mcp-Name: {e}")))?;
        if decoded != body {
            return Err(ErrorObject::header_mismatch(format!(
                "Header mismatch: Mcp-Name header value '{}' does not match body value '{}'",
                quote(&String::from_utf8_lossy(raw)),
                quote(body)
            )));
        }
    }
    Ok(())
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` against the tool's `x-mcp-header`
/// annotations and the arguments.
pub(crate) fn check_params(
    map: &HeaderMap,
    params: &[ParamHeader],
    arguments: &Value,
) -> Result<(), ErrorObject> {
    for p in params {
        let header = one(map, p.header.as_str())?;
        match (p.extract(arguments), header) {
            (None, _) => {}
            (Some(_), None) => {
                return Err(ErrorObject::header_mismatch(format!(
                    "Header mismatch: Mcp-Param-{} header is required because the argument is present",
                    p.name
                )));
            }
            (Some(body), Some(raw)) => {
                let decoded = decode_value(raw).map_err(|e| {
                    ErrorObject::header_mismatch(format!(
                        "Header mismatch: Mcp-Param-{}: {e}",
                        p.name
                    ))
                })?;
                if !p.matches(&decoded, body) {
                    return Err(ErrorObject::header_mismatch(format!(
                        "Header mismatch: Mcp-Param-{} header value '{}' does not match body value {}",
                        p.name,
                        quote(&String::from_utf8_lossy(raw)),
                        quote(&body.to_string())
                    )));
                }
            }
        }
    }
    Ok(())
}
