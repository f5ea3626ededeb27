//! Answering feature methods with raw JSON computed at run time, for servers whose tools,
//! prompts and resources live elsewhere (a gateway in front of other servers).
//!
//! A [`Forward`] hook set with [`ServerBuilder::forward`](crate::ServerBuilder::forward)
//! receives every 2026-07-28 request for the feature methods the server advertises
//! (`tools/list`, `tools/call`, `prompts/list`, `prompts/get`, `resources/list`,
//! `resources/templates/list`, `resources/read`, `completion/complete`) after the
//! per-request rules were checked (`_meta`, headers, version), and its value is sent as
//! the result. The registry, argument validation and the MRTR engine are bypassed: the
//! hook owns the result, `InputRequiredResult` and `requestState` included.

use std::future::Future;
use std::pin::Pin;

use ferry_protocol::ErrorObject;
use ferry_protocol::capabilities::ClientCapabilities;
use ferry_protocol::methods::Method;
use ferry_protocol::request::Params;
use serde_json::{Map, Value};

use crate::principal::Principal;

/// A request handed to a [`Forward`] hook.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ForwardRequest {
    /// The method, e.g. `tools/call`.
    pub method: &'static str,
    /// The params the method defines, without `_meta` (`name`, `arguments`, `uri`,
    /// `cursor`, `inputResponses`, `requestState`, `ref`, `argument`, `context`).
    pub params: Map<String, Value>,
    /// The authenticated principal, if an authentication layer set one.
    pub principal: Option<Principal>,
    /// The capabilities the client declared in the request's `_meta`.
    pub client_capabilities: ClientCapabilities,
}

/// The future a [`Forward`] hook returns: the result object, or the JSON-RPC error to send.
pub type ForwardFuture = Pin<Box<dyn Future<Output = Result<Value, ErrorObject>> + Send>>;

/// Answers feature methods with a raw JSON result (see the [module](self) docs).
///
/// ```
/// use ferry_server::{Forward, ForwardFuture, ForwardRequest, Server};
/// use serde_json::json;
///
/// struct Static;
/// impl Forward for Static {
///     fn forward(&self, request: ForwardRequest) -> ForwardFuture {
///         Box::pin(async move {
///             Ok(match request.method {
///                 "tools/list" => json!({ "tools": [] }),
///                 _ => json!({ "content": [{ "type": "text", "text": "hi" }] }),
///             })
///         })
///     }
/// }
/// let server = Server::builder("front", "1").enable_tools().forward(Static).build().unwrap();
/// # let _ = server;
/// ```
pub trait Forward: Send + Sync + 'static {
    /// Computes the result of `request`. Dropping the future cancels it.
    fn forward(&self, request: ForwardRequest) -> ForwardFuture;
}

/// A result object without `resultType` is a complete one (2026-07-28 results name
/// their type, basic/index.mdx): the member is added.
pub(crate) fn complete_by_default(result: &mut Value) {
    if let Value::Object(m) = result
        && !m.contains_key("resultType")
    {
        m.insert("resultType".into(), Value::String("complete".into()));
    }
}

/// Whether `method` is one a [`Forward`] hook answers.
pub(crate) fn is_forwarded(method: Method) -> bool {
    matches!(
        method,
        Method::ToolsList
            | Method::ToolsCall
            | Method::PromptsList
            | Method::PromptsGet
            | Method::ResourcesList
            | Method::ResourcesTemplatesList
            | Method::ResourcesRead
            | Method::CompletionComplete
    )
}

/// The method's params as a JSON object again (without `_meta`).
pub(crate) fn raw_params(params: Params<'_>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            out.insert(key.to_owned(), v);
        }
    };
    match params {
        Params::List(p) => put("cursor", p.cursor.map(|c| Value::String(c.into_owned()))),
        Params::Call(p) => {
            let p = *p;
            let arguments = p.arguments().ok().flatten().map(|a| a.value);
            put("name", p.name.map(|n| Value::String(n.into_owned())));
            // Numbers beyond f64 reach the upstream as their nearest f64 (the Value
            // this map holds cannot carry them exactly).
            put("arguments", arguments);
            put("inputResponses", p.input_responses);
            put("requestState", p.request_state.map(Value::String));
        }
        Params::Read(p) => {
            let p = *p;
            put("uri", p.uri.map(|u| Value::String(u.into_owned())));
            put("inputResponses", p.input_responses);
            put("requestState", p.request_state.map(Value::String));
        }
        Params::Complete(p) => {
            let p = *p;
            put("ref", p.reference);
            put("argument", p.argument);
            put("context", p.context);
        }
        _ => {}
    }
    out
}
