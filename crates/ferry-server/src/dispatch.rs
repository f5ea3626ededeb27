//! From one incoming message to what a transport sends back.
//!
//! [`Server::handle`] does everything that needs no waiting at once (parsing, the era of
//! the request, the per-request `_meta` and header rules, list and discover results, which
//! are served from pre-serialized bytes) and returns a [`PendingCall`] only for work that
//! runs a handler. A transport drives that future, and dropping it cancels the handler.

use std::collections::BTreeMap;
use std::sync::Arc;

use ferry_protocol::ErrorObject;
use ferry_protocol::borrowed::option_cow_str;
use ferry_protocol::jsonrpc::{Envelope, Incoming, RequestId};
use ferry_protocol::version::ProtocolVersion;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::completion::CompletionRequest;
use crate::header_check;
use crate::listen;
use crate::mrtr::MrtrInput;
use crate::params::{Checked, Params, check_meta};
use crate::principal::Principal;
use crate::reply::Reply;
use crate::run::{Base, CallKind, PendingCall, Streaming};
use crate::server::Server;
use crate::session::Session;

/// A resource's read handler, template variables and caching hints.
pub(crate) type ReadTarget = (
    Arc<dyn crate::resource::ReadHandler>,
    BTreeMap<String, String>,
    crate::resource::CacheHint,
);

/// A request read in one pass: the envelope and the params together.
#[derive(serde::Deserialize)]
struct FastRequest<'a> {
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    method: Option<std::borrow::Cow<'a, str>>,
    /// Boxed: the struct is large, and would otherwise be copied at every step.
    #[serde(default, borrow)]
    params: Option<Box<Params<'a>>>,
}

/// A request id from its raw JSON: a string or an integer.
fn parse_id(raw: &RawValue) -> Option<RequestId> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(text)
            .ok()
            .map(RequestId::String),
        _ => text.parse::<i64>().ok().map(RequestId::Number),
    }
}

/// What the transport knows about a request besides its body.
#[derive(Debug, Default, Clone)]
pub struct RequestEnv {
    /// The authenticated principal, if an authentication layer set one.
    pub principal: Option<Principal>,
    /// The HTTP request headers, on Streamable HTTP (checked against the body; the
    /// `Mcp-Session-Id` of 2025-11-25 sessions is read from them).
    pub headers: Option<http::HeaderMap>,
    /// The 2025-11-25 session of this connection, on stdio once `initialize` succeeded.
    pub session: Option<Arc<Session>>,
}

/// What to do with one incoming message.
// Moved once per request; boxing the large variant would add an allocation to every call.
#[allow(clippy::large_enum_variant)]
pub enum Handled {
    /// Send this response now.
    Reply(Reply),
    /// A notification was accepted; nothing to send (HTTP: 202).
    Accepted,
    /// The client cancelled its request `id` (stdio `notifications/cancelled`).
    Cancel(RequestId),
    /// A JSON-RPC response from the client, which modern servers never expect.
    UnexpectedResponse,
    /// A handler must run: drive [`PendingCall::run`].
    Pending(PendingCall),
    /// A 2025-11-25 `initialize` succeeded: send `reply`, and keep `session` for the
    /// connection (stdio) or announce its id in `Mcp-Session-Id` (HTTP).
    Initialized {
        /// The `InitializeResult` response.
        reply: Reply,
        /// The new session.
        session: Arc<Session>,
    },
}

/// Methods of 2025-11-25 that 2026-07-28 removed: -32601 on modern requests.
const REMOVED: &[&str] = &[
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tasks/result",
    "tasks/list",
];

impl Server {
    /// Handles one message (a JSON-RPC request or notification, as bytes).
    ///
    /// Everything that needs no handler is answered at once; otherwise a
    /// [`PendingCall`] is returned for the transport to drive.
    pub fn handle(&self, body: &[u8], env: RequestEnv) -> Handled {
        // One pass for well-formed requests; the careful path below finds the id and the
        // precise error for everything else.
        if let Ok(msg) = serde_json::from_slice::<FastRequest<'_>>(body)
            && let (Some("2.0"), Some(method), Some(raw_id)) =
                (msg.jsonrpc.as_deref(), &msg.method, msg.id)
            && let Some(id) = parse_id(raw_id)
        {
            return self.dispatch(&id, method, msg.params.unwrap_or_default(), env);
        }
        let envelope = match Envelope::parse(body) {
            Ok(e) => e,
            Err(e) => return Handled::Reply(Reply::error(None, &e)),
        };
        match envelope.classify() {
            Err(invalid) => Handled::Reply(Reply::error(invalid.id.as_ref(), &invalid.error)),
            Ok(Incoming::Notification { method, params }) => {
                self.notification(&method, params, &env)
            }
            Ok(Incoming::Response { id, result, error }) => {
                self.client_response(id, result, error, &env)
            }
            Ok(Incoming::Request { id, method, params }) => {
                let params = match Params::parse(params) {
                    Ok(p) => p,
                    Err(e) => return Handled::Reply(Reply::error_with_status(Some(&id), &e, 400)),
                };
                self.dispatch(&id, &method, Box::new(params), env)
            }
        }
    }

    fn dispatch(
        &self,
        id: &RequestId,
        method: &str,
        params: Box<Params<'_>>,
        env: RequestEnv,
    ) -> Handled {
        let handled = if self.is_modern(&params, &env) {
            self.request(id, method, params, env)
        } else {
            self.legacy_request(id, method, *params, env)
        };
        match handled {
            Ok(h) => h,
            Err((e, status)) => Handled::Reply(Reply::error_with_status(Some(id), &e, status)),
        }
    }

    /// A request is modern when its `_meta` names a protocol version, or (HTTP) its
    /// `MCP-Protocol-Version` header is not a legacy revision. Everything else belongs to
    /// a 2025-11-25 session (DIGEST §2.7, §3.4).
    fn is_modern(&self, params: &Params<'_>, env: &RequestEnv) -> bool {
        if !self.inner.legacy {
            return true;
        }
        if params
            .meta
            .as_ref()
            .is_some_and(|m| m.protocol_version.is_some())
        {
            return true;
        }
        match env
            .headers
            .as_ref()
            .and_then(|h| h.get(ferry_protocol::headers::PROTOCOL_VERSION))
        {
            Some(v) => !v
                .to_str()
                .ok()
                .and_then(ProtocolVersion::parse)
                .is_some_and(ProtocolVersion::is_legacy),
            None => false,
        }
    }

    fn notification(&self, method: &str, params: Option<&RawValue>, env: &RequestEnv) -> Handled {
        let session = self.session_of(env);
        match method {
            "notifications/cancelled" => {
                let id = Params::parse(params)
                    .ok()
                    .and_then(|p| p.request_id.as_ref().and_then(RequestId::from_value));
                match (id, session) {
                    (Some(id), Some(s)) if env.headers.is_some() => {
                        s.cancel(&id);
                        Handled::Accepted
                    }
                    (Some(id), _) => Handled::Cancel(id),
                    (None, _) => {
                        tracing::debug!(
                            "ignoring a notifications/cancelled without a valid requestId"
                        );
                        Handled::Accepted
                    }
                }
            }
            "notifications/initialized" => {
                if let Some(s) = session {
                    s.mark_initialized();
                }
                Handled::Accepted
            }
            _ => Handled::Accepted,
        }
    }

    fn client_response(
        &self,
        id: Option<RequestId>,
        result: Option<&RawValue>,
        error: Option<&RawValue>,
        env: &RequestEnv,
    ) -> Handled {
        let (Some(session), Some(id)) = (self.session_of(env), id) else {
            return Handled::UnexpectedResponse;
        };
        let answer = match (result, error) {
            (Some(r), _) => serde_json::from_str::<Value>(r.get())
                .map_err(|_| ErrorObject::internal("malformed result")),
            (None, Some(e)) => Err(serde_json::from_str::<ErrorObject>(e.get())
                .unwrap_or_else(|_| ErrorObject::internal("malformed error from the client"))),
            (None, None) => return Handled::UnexpectedResponse,
        };
        if !session.resolve(&id, answer) {
            tracing::debug!(%id, "response for no pending request ignored");
        }
        Handled::Accepted
    }

    fn request(
        &self,
        id: &RequestId,
        method: &str,
        params: Box<Params<'_>>,
        env: RequestEnv,
    ) -> Result<Handled, (ErrorObject, u16)> {
        let inner = &*self.inner;
        if method == "initialize"
            && params
                .meta
                .as_ref()
                .and_then(|m| m.protocol_version.as_ref())
                .is_none()
        {
            // A 2025-11-25 client, and this server speaks only the modern revision: name
            // the versions it does speak (DIGEST §2.7).
            let requested = params.protocol_version.as_deref().unwrap_or("");
            let mut e = ErrorObject::unsupported_version(&inner.supported_strs, requested);
            e.message = format!(
                "Unsupported protocol version: this server supports {} (no initialize handshake)",
                inner.supported_strs.join(", ")
            );
            return Err((e, 400));
        }
        let Params {
            meta,
            name,
            uri,
            arguments,
            cursor,
            input_responses,
            request_state,
            notifications,
            reference,
            argument,
            context,
            ..
        } = *params;
        // Order (forced by the spec's probes): _meta present, header matches body, version
        // supported, method known.
        if let (Some(h), Some(v)) = (
            &env.headers,
            meta.as_ref().and_then(|m| m.protocol_version.as_deref()),
        ) {
            header_check::check_version(h, v).map_err(|e| (e, 400))?;
        }
        let checked = check_meta(meta, &inner.supported, &inner.supported_strs)?;
        if let Some(h) = &env.headers {
            let mcp_name = match method {
                "tools/call" | "prompts/get" => Some(name.as_deref().unwrap_or("")),
                "resources/read" => Some(uri.as_deref().unwrap_or("")),
                _ => None,
            };
            header_check::check_method_and_name(h, method, mcp_name).map_err(|e| (e, 400))?;
        }
        let caps = &inner.capabilities;
        let not_found = || (ErrorObject::method_not_found(method), 404);
        let base = |checked| Base {
            server: self.clone(),
            id: id.clone(),
            checked: Arc::new(checked),
            principal: env.principal.clone(),
            session: None,
        };
        let reply = |bytes: &[u8]| Ok(Handled::Reply(Reply::result_raw(id, bytes)));
        let streaming = |c: &Checked| {
            if c.meta.progress_token.is_some() || c.log_level.is_some() {
                Streaming::Maybe
            } else {
                Streaming::Never
            }
        };
        let mrtr_input = MrtrInput {
            state: request_state,
            responses: input_responses,
        };
        match method {
            "server/discover" => reply(&inner.discover),
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                match self.list_page(method, cursor.as_deref(), false) {
                    Some(page) => reply(&page.map_err(|e| (e, 200))?),
                    None => Err(not_found()),
                }
            }
            "tools/call" if caps.tools.is_some() => {
                let (entry, args) = self.tool_call_target(name.as_deref(), arguments)?;
                if let Some(h) = &env.headers {
                    header_check::check_params(h, &entry.headers, &args).map_err(|e| (e, 400))?;
                }
                let s = streaming(&checked);
                Ok(Handled::Pending(PendingCall {
                    streaming: s,
                    base: base(checked),
                    kind: CallKind::Tool {
                        entry,
                        args,
                        mrtr: mrtr_input,
                    },
                }))
            }
            "prompts/get" if caps.prompts.is_some() => {
                let (entry, args) = self.prompt_target(name.as_deref(), arguments)?;
                let s = streaming(&checked);
                Ok(Handled::Pending(PendingCall {
                    streaming: s,
                    base: base(checked),
                    kind: CallKind::Prompt {
                        entry,
                        args,
                        mrtr: mrtr_input,
                    },
                }))
            }
            "resources/read" if caps.resources.is_some() => {
                let uri = uri
                    .ok_or_else(|| {
                        (
                            ErrorObject::invalid_params("Invalid params: uri is required"),
                            200,
                        )
                    })?
                    .into_owned();
                let (handler, params, cache) = self
                    .find_resource(&uri)
                    .ok_or_else(|| (ErrorObject::resource_not_found(&uri), 200))?;
                let s = streaming(&checked);
                Ok(Handled::Pending(PendingCall {
                    streaming: s,
                    base: base(checked),
                    kind: CallKind::Read {
                        uri,
                        handler,
                        params,
                        cache,
                        mrtr: mrtr_input,
                    },
                }))
            }
            "completion/complete" if caps.completions.is_some() => {
                let (completer, req) = self.completion_target(reference, argument, context)?;
                Ok(Handled::Pending(PendingCall {
                    streaming: Streaming::Never,
                    base: base(checked),
                    kind: CallKind::Complete { completer, req },
                }))
            }
            "subscriptions/listen" => {
                let filter = listen::parse_filter(notifications, &checked.capabilities, caps)?;
                Ok(Handled::Pending(PendingCall {
                    streaming: Streaming::Always,
                    base: base(checked),
                    kind: CallKind::Listen { filter },
                }))
            }
            m if REMOVED.contains(&m) => Err(not_found()),
            _ => Err(not_found()),
        }
    }

    /// The tool a `tools/call` names, and its arguments as an object.
    pub(crate) fn tool_call_target(
        &self,
        name: Option<&str>,
        arguments: Option<Value>,
    ) -> Result<(Arc<crate::tool::ToolEntry>, Value), (ErrorObject, u16)> {
        let name = name.ok_or_else(|| {
            (
                ErrorObject::invalid_params("Invalid params: name is required"),
                200,
            )
        })?;
        let entry = self.inner.tools.get(name).ok_or_else(|| {
            (
                ErrorObject::invalid_params(format!("Unknown tool: {name}")),
                200,
            )
        })?;
        let args = match arguments {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v,
            Some(_) => {
                return Err((
                    ErrorObject::invalid_params("Invalid params: arguments must be an object"),
                    200,
                ));
            }
        };
        Ok((entry, args))
    }

    /// The prompt a `prompts/get` names, and its arguments, checking required ones.
    #[allow(clippy::type_complexity)]
    pub(crate) fn prompt_target(
        &self,
        name: Option<&str>,
        arguments: Option<Value>,
    ) -> Result<(Arc<crate::prompt::PromptEntry>, BTreeMap<String, String>), (ErrorObject, u16)>
    {
        let name = name.ok_or_else(|| {
            (
                ErrorObject::invalid_params("Invalid params: name is required"),
                200,
            )
        })?;
        let entry = self.inner.prompts.get(name).ok_or_else(|| {
            (
                ErrorObject::invalid_params(format!("Unknown prompt: {name}")),
                200,
            )
        })?;
        let args: BTreeMap<String, String> = match arguments {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(v) => serde_json::from_value(v).map_err(|_| {
                (
                    ErrorObject::invalid_params("Invalid params: prompt arguments must be strings"),
                    200,
                )
            })?,
        };
        let missing: Vec<&str> = entry
            .required
            .iter()
            .filter(|r| !args.contains_key(r.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err((
                ErrorObject::invalid_params(format!(
                    "Missing required arguments: {}",
                    missing.join(", ")
                )),
                200,
            ));
        }
        Ok((entry, args))
    }

    /// One page of a list, modern or legacy shaped. `None` when the server does not offer
    /// that kind of list.
    pub(crate) fn list_page(
        &self,
        method: &str,
        cursor: Option<&str>,
        legacy: bool,
    ) -> Option<Result<bytes::Bytes, ErrorObject>> {
        let inner = &*self.inner;
        let caps = &inner.capabilities;
        Some(match method {
            "tools/list" if caps.tools.is_some() => {
                inner.tools.page(cursor, &inner.tools_shape, legacy)
            }
            "prompts/list" if caps.prompts.is_some() => {
                inner.prompts.page(cursor, &inner.prompts_shape, legacy)
            }
            "resources/list" if caps.resources.is_some() => {
                inner.resources.page(cursor, &inner.resources_shape, legacy)
            }
            "resources/templates/list" if caps.resources.is_some() => {
                inner.templates.page(cursor, &inner.templates_shape, legacy)
            }
            _ => return None,
        })
    }

    /// The handler of a fixed resource or the first template matching `uri`.
    pub(crate) fn find_resource(&self, uri: &str) -> Option<ReadTarget> {
        let inner = &*self.inner;
        if let Some(entry) = inner.resources.get(uri) {
            return Some((
                entry.handler.clone(),
                BTreeMap::new(),
                entry.cache.unwrap_or(inner.read_cache),
            ));
        }
        let snap = inner.templates.snapshot();
        snap.items.values().find_map(|t| {
            t.template
                .matches(uri)
                .map(|p| (t.handler.clone(), p, t.cache.unwrap_or(inner.read_cache)))
        })
    }

    #[allow(clippy::type_complexity)]
    pub(crate) fn completion_target(
        &self,
        reference: Option<Value>,
        argument: Option<Value>,
        context: Option<Value>,
    ) -> Result<
        (
            Option<Arc<dyn crate::completion::Completer>>,
            CompletionRequest,
        ),
        (ErrorObject, u16),
    > {
        let bad = |m: &str| {
            (
                ErrorObject::invalid_params(format!("Invalid params: {m}")),
                200,
            )
        };
        let reference = reference.ok_or_else(|| bad("ref is required"))?;
        let argument = argument.ok_or_else(|| bad("argument is required"))?;
        let arg_name = argument
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("argument.name is required"))?
            .to_owned();
        let value = argument
            .get("value")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("argument.value is required"))?
            .to_owned();
        let ctx_args: BTreeMap<String, String> = context
            .and_then(|c| c.get("arguments").cloned())
            .and_then(|a| serde_json::from_value(a).ok())
            .unwrap_or_default();
        let completer = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("ref.name is required"))?;
                let p = self.inner.prompts.get(name).ok_or_else(|| {
                    (
                        ErrorObject::invalid_params(format!("Unknown prompt: {name}")),
                        200,
                    )
                })?;
                p.completers.get(&arg_name).cloned()
            }
            Some("ref/resource") => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("ref.uri is required"))?;
                let t = self.inner.templates.get(uri).ok_or_else(|| {
                    (
                        ErrorObject::invalid_params(format!("Unknown resource template: {uri}")),
                        200,
                    )
                })?;
                t.completers.get(&arg_name).cloned()
            }
            _ => return Err(bad("ref.type must be ref/prompt or ref/resource")),
        };
        Ok((
            completer,
            CompletionRequest {
                argument: arg_name,
                value,
                context: ctx_args,
            },
        ))
    }
}
