//! From one incoming message to what a transport sends back.
//!
//! [`Server::handle`] does everything that needs no waiting at once (parsing, the
//! per-request `_meta` and header rules, list and discover results, which are served from
//! pre-serialized bytes) and returns a [`PendingCall`] only for work that runs a handler.
//! A transport drives that future, and dropping it cancels the handler.

use std::collections::BTreeMap;
use std::sync::Arc;

use ferry_protocol::ErrorObject;
use ferry_protocol::jsonrpc::{Envelope, Incoming, RequestId};
use ferry_protocol::tools::CallToolResult;
use ferry_state::digest_args;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::ask::AskBook;
use crate::completion::{CompletionRequest, MAX_COMPLETION_VALUES};
use crate::context::{Context, ContextInner};
use crate::error::ErrorKind;
use crate::header_check;
use crate::listen::{self, Filter};
use crate::mrtr::{self, Bound, MrtrInput};
use crate::outbound::Outbound;
use crate::params::{Checked, Params, check_meta};
use crate::principal::Principal;
use crate::prompt::PromptEntry;
use crate::reply::Reply;
use crate::resource::{ReadHandler, ResourceRequest};
use crate::server::{Server, ServerInner};
use crate::tool::ToolEntry;

/// What the transport knows about a request besides its body.
#[derive(Debug, Default, Clone)]
pub struct RequestEnv {
    /// The authenticated principal, if an authentication layer set one.
    pub principal: Option<Principal>,
    /// The HTTP request headers, on Streamable HTTP (checked against the body).
    pub headers: Option<http::HeaderMap>,
}

/// What to do with one incoming message.
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
}

/// Whether a pending call may send notifications before its response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streaming {
    /// Never: a plain JSON response.
    Never,
    /// Only if the handler reports progress or logs (the request opted in).
    Maybe,
    /// Always: a `subscriptions/listen` stream.
    Always,
}

/// A request whose handler has yet to run.
pub struct PendingCall {
    id: RequestId,
    streaming: Streaming,
    base: Base,
    kind: CallKind,
}

struct Base {
    server: Server,
    id: RequestId,
    checked: Checked,
    principal: Option<Principal>,
}

enum CallKind {
    Tool {
        entry: Arc<ToolEntry>,
        args: Value,
        mrtr: MrtrInput,
    },
    Prompt {
        entry: Arc<PromptEntry>,
        args: BTreeMap<String, String>,
        mrtr: MrtrInput,
    },
    Read {
        uri: String,
        handler: Arc<dyn ReadHandler>,
        params: BTreeMap<String, String>,
        cache: crate::resource::CacheHint,
        mrtr: MrtrInput,
    },
    Complete {
        completer: Option<Arc<dyn crate::completion::Completer>>,
        req: CompletionRequest,
    },
    Listen {
        filter: Filter,
    },
}

impl PendingCall {
    /// The request id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Whether the call may stream notifications.
    pub fn streaming(&self) -> Streaming {
        self.streaming
    }

    /// Runs the handler. Notifications go to `outbound`; the response is returned.
    /// Dropping the future cancels the handler.
    pub async fn run(self, outbound: Outbound) -> Reply {
        let cancel = CancellationToken::new();
        let _guard = cancel.clone().drop_guard();
        let PendingCall { base, kind, .. } = self;
        match kind {
            CallKind::Tool { entry, args, mrtr } => run_tool(base, entry, args, mrtr, outbound, cancel).await,
            CallKind::Prompt { entry, args, mrtr } => {
                run_prompt(base, entry, args, mrtr, outbound, cancel).await
            }
            CallKind::Read {
                uri,
                handler,
                params,
                cache,
                mrtr,
            } => run_read(base, uri, handler, params, cache, mrtr, outbound, cancel).await,
            CallKind::Complete { completer, req } => run_complete(base, completer, req, outbound, cancel).await,
            CallKind::Listen { filter } => {
                let server = base.server.clone();
                listen::run(&server, base.id, filter, outbound).await
            }
        }
    }
}

impl Base {
    fn context(&self, method: &'static str, outbound: Outbound, cancel: CancellationToken, book: AskBook) -> Context {
        Context::new(ContextInner {
            id: self.id.clone(),
            method,
            version: self.checked.version,
            meta: self.checked.meta.clone(),
            capabilities: self.checked.capabilities.clone(),
            log_level: self.checked.log_level,
            principal: self.principal.clone(),
            outbound,
            cancel,
            server: self.server.clone(),
            last_progress: Mutex::new(None),
            asks: Mutex::new(book),
        })
    }

    fn inner(&self) -> &ServerInner {
        &self.server.inner
    }

    fn meta_bytes(&self) -> Option<&[u8]> {
        self.inner().server_meta.as_deref()
    }

    fn error(&self, e: &ErrorObject) -> Reply {
        Reply::error(Some(&self.id), e)
    }

    fn bound<'a>(&'a self, method: &'static str, target: &'a str, args: &Value) -> Bound<'a> {
        Bound {
            principal: self.principal.as_ref().map(Principal::id),
            method,
            target,
            args: digest_args(args),
        }
    }

    /// Turns a handler's interrupt into an `InputRequiredResult` reply.
    fn interrupted(&self, bound: &Bound<'_>, ctx: Context, kind: crate::ask::InterruptKind) -> Reply {
        if let crate::ask::InterruptKind::Failed(e) = &kind {
            return self.error(e);
        }
        let book = std::mem::take(&mut *ctx.asks());
        match mrtr::input_required(self.inner(), bound, book, &kind) {
            Ok(result) => Reply::result(&self.id, &result, self.meta_bytes()),
            Err(e) => self.error(&e),
        }
    }
}

async fn run_tool(
    base: Base,
    entry: Arc<ToolEntry>,
    args: Value,
    mrtr: MrtrInput,
    outbound: Outbound,
    cancel: CancellationToken,
) -> Reply {
    if let Err(problems) = entry.input.validate(&args) {
        let result = finish_tool(CallToolResult::error(format!("Invalid arguments: {problems}")));
        return Reply::result(&base.id, &result, base.meta_bytes());
    }
    let bound = base.bound("tools/call", &entry.def.name, &args);
    let book = match mrtr::open(base.inner(), &bound, mrtr, entry.policy).await {
        Ok(b) => b,
        Err(e) => return base.error(&e),
    };
    let ctx = base.context("tools/call", outbound, cancel, book);
    let outcome = entry.handler.call(ctx.clone(), args.clone()).await;
    let result = match outcome {
        Ok(result) => {
            if let Err(problem) = entry.check_output(&result) {
                tracing::error!(tool = %entry.def.name, %problem, "tool result does not match its outputSchema");
                return base.error(&ErrorObject::internal(
                    "Internal error: the tool's result does not match its outputSchema",
                ));
            }
            result
        }
        Err(e) => match e.kind {
            ErrorKind::Execution(message) => CallToolResult::error(message),
            ErrorKind::Protocol(e) => return base.error(&e),
            ErrorKind::Interrupt(i) => return base.interrupted(&bound, ctx, i.kind),
        },
    };
    Reply::result(&base.id, &finish_tool(result), base.meta_bytes())
}

fn finish_tool(mut result: CallToolResult) -> CallToolResult {
    result.result_type = Some(ferry_protocol::result::ResultType::Complete);
    result
}

async fn run_prompt(
    base: Base,
    entry: Arc<PromptEntry>,
    args: BTreeMap<String, String>,
    mrtr: MrtrInput,
    outbound: Outbound,
    cancel: CancellationToken,
) -> Reply {
    let args_json = json!(args);
    let bound = base.bound("prompts/get", &entry.def.name, &args_json);
    let book = match mrtr::open(base.inner(), &bound, mrtr, entry.policy).await {
        Ok(b) => b,
        Err(e) => return base.error(&e),
    };
    let ctx = base.context("prompts/get", outbound, cancel, book);
    match entry.handler.get(ctx.clone(), args).await {
        Ok(mut result) => {
            result.result_type = Some(ferry_protocol::result::ResultType::Complete);
            Reply::result(&base.id, &result, base.meta_bytes())
        }
        Err(e) => match e.kind {
            ErrorKind::Execution(message) => {
                tracing::warn!(prompt = %entry.def.name, %message, "prompt handler failed");
                base.error(&ErrorObject::internal(format!("Internal error: {message}")))
            }
            ErrorKind::Protocol(e) => base.error(&e),
            ErrorKind::Interrupt(i) => base.interrupted(&bound, ctx, i.kind),
        },
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_read(
    base: Base,
    uri: String,
    handler: Arc<dyn ReadHandler>,
    params: BTreeMap<String, String>,
    cache: crate::resource::CacheHint,
    mrtr: MrtrInput,
    outbound: Outbound,
    cancel: CancellationToken,
) -> Reply {
    let retry = mrtr.is_retry();
    let bound = base.bound("resources/read", &uri, &Value::Null);
    let book = match mrtr::open(base.inner(), &bound, mrtr, mrtr::StatePolicy::default()).await {
        Ok(b) => b,
        Err(e) => return base.error(&e),
    };
    let ctx = base.context("resources/read", outbound, cancel, book);
    let req = ResourceRequest {
        uri: uri.clone(),
        params,
    };
    match handler.read(ctx.clone(), req).await {
        Ok(contents) if contents.is_empty() => base.error(&ErrorObject::resource_not_found(&uri)),
        Ok(contents) => {
            let mut result = json!({ "resultType": "complete", "contents": contents });
            // Results of MRTR retries are never cacheable (mrtr.mdx §caching).
            if !retry {
                result["ttlMs"] = json!(cache.ttl_ms);
                result["cacheScope"] = json!(cache.scope);
            }
            Reply::result(&base.id, &result, base.meta_bytes())
        }
        Err(e) => match e.kind {
            ErrorKind::Execution(message) => {
                tracing::warn!(%uri, %message, "resource read failed");
                base.error(&ErrorObject::internal(format!("Internal error: {message}")))
            }
            ErrorKind::Protocol(e) => base.error(&e),
            ErrorKind::Interrupt(i) => base.interrupted(&bound, ctx, i.kind),
        },
    }
}

async fn run_complete(
    base: Base,
    completer: Option<Arc<dyn crate::completion::Completer>>,
    req: CompletionRequest,
    outbound: Outbound,
    cancel: CancellationToken,
) -> Reply {
    let values = match completer {
        None => Vec::new(),
        Some(c) => {
            let ctx = base.context("completion/complete", outbound, cancel, AskBook::default());
            match c.complete(ctx, req).await {
                Ok(v) => v,
                Err(e) => {
                    return match e.kind {
                        ErrorKind::Protocol(e) => base.error(&e),
                        ErrorKind::Execution(m) => base.error(&ErrorObject::internal(format!("Internal error: {m}"))),
                        ErrorKind::Interrupt(_) => base.error(&ErrorObject::internal(
                            "Internal error: completion/complete cannot ask for input",
                        )),
                    };
                }
            }
        }
    };
    let total = values.len();
    let has_more = total > MAX_COMPLETION_VALUES;
    let values: Vec<String> = values.into_iter().take(MAX_COMPLETION_VALUES).collect();
    let result = json!({
        "resultType": "complete",
        "completion": { "values": values, "total": total, "hasMore": has_more }
    });
    Reply::result(&base.id, &result, base.meta_bytes())
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
        let envelope = match Envelope::parse(body) {
            Ok(e) => e,
            Err(e) => return Handled::Reply(Reply::error(None, &e)),
        };
        match envelope.classify() {
            Err(invalid) => Handled::Reply(Reply::error(invalid.id.as_ref(), &invalid.error)),
            Ok(Incoming::Notification { method, params }) => self.notification(&method, params),
            Ok(Incoming::Response { .. }) => Handled::UnexpectedResponse,
            Ok(Incoming::Request { id, method, params }) => match self.request(&id, &method, params, env) {
                Ok(h) => h,
                Err((e, status)) => Handled::Reply(Reply::error_with_status(Some(&id), &e, status)),
            },
        }
    }

    fn notification(&self, method: &str, params: Option<&serde_json::value::RawValue>) -> Handled {
        if method == "notifications/cancelled" {
            if let Ok(p) = Params::parse(params) {
                if let Some(id) = p.request_id.as_ref().and_then(RequestId::from_value) {
                    return Handled::Cancel(id);
                }
            }
            tracing::debug!("ignoring a notifications/cancelled without a valid requestId");
        }
        Handled::Accepted
    }

    fn request(
        &self,
        id: &RequestId,
        method: &str,
        raw: Option<&serde_json::value::RawValue>,
        env: RequestEnv,
    ) -> Result<Handled, (ErrorObject, u16)> {
        let inner = &*self.inner;
        let params = Params::parse(raw).map_err(|e| (e, 400))?;
        if method == "initialize" && params.meta.as_ref().and_then(|m| m.protocol_version.as_ref()).is_none() {
            // A 2025-11-25 client: this server speaks only the modern revision.
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
        } = params;
        // Order (forced by the spec's probes): _meta present, header matches body, version
        // supported, method known.
        if let (Some(h), Some(v)) = (&env.headers, meta.as_ref().and_then(|m| m.protocol_version.as_deref())) {
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
            checked,
            principal: env.principal.clone(),
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
            "tools/list" if caps.tools.is_some() => {
                reply(&inner.tools.page(cursor.as_deref(), &inner.tools_shape).map_err(|e| (e, 200))?)
            }
            "prompts/list" if caps.prompts.is_some() => {
                reply(&inner.prompts.page(cursor.as_deref(), &inner.prompts_shape).map_err(|e| (e, 200))?)
            }
            "resources/list" if caps.resources.is_some() => reply(
                &inner
                    .resources
                    .page(cursor.as_deref(), &inner.resources_shape)
                    .map_err(|e| (e, 200))?,
            ),
            "resources/templates/list" if caps.resources.is_some() => reply(
                &inner
                    .templates
                    .page(cursor.as_deref(), &inner.templates_shape)
                    .map_err(|e| (e, 200))?,
            ),
            "tools/call" if caps.tools.is_some() => {
                let name = name.ok_or_else(|| (ErrorObject::invalid_params("Invalid params: name is required"), 200))?;
                let entry = inner
                    .tools
                    .get(&name)
                    .ok_or_else(|| (ErrorObject::invalid_params(format!("Unknown tool: {name}")), 200))?;
                let args = match arguments {
                    None | Some(Value::Null) => json!({}),
                    Some(v @ Value::Object(_)) => v,
                    Some(_) => {
                        return Err((ErrorObject::invalid_params("Invalid params: arguments must be an object"), 200));
                    }
                };
                if let Some(h) = &env.headers {
                    header_check::check_params(h, &entry.headers, &args).map_err(|e| (e, 400))?;
                }
                let s = streaming(&checked);
                Ok(Handled::Pending(PendingCall {
                    id: id.clone(),
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
                let name = name.ok_or_else(|| (ErrorObject::invalid_params("Invalid params: name is required"), 200))?;
                let entry = inner
                    .prompts
                    .get(&name)
                    .ok_or_else(|| (ErrorObject::invalid_params(format!("Unknown prompt: {name}")), 200))?;
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
                let s = streaming(&checked);
                Ok(Handled::Pending(PendingCall {
                    id: id.clone(),
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
                    .ok_or_else(|| (ErrorObject::invalid_params("Invalid params: uri is required"), 200))?
                    .into_owned();
                let (handler, params, cache) = if let Some(entry) = inner.resources.get(&uri) {
                    (entry.handler.clone(), BTreeMap::new(), entry.cache.unwrap_or(inner.read_cache))
                } else {
                    let snap = inner.templates.snapshot();
                    let found = snap
                        .items
                        .values()
                        .find_map(|t| t.template.matches(&uri).map(|p| (t.clone(), p)));
                    match found {
                        Some((t, p)) => (t.handler.clone(), p, t.cache.unwrap_or(inner.read_cache)),
                        None => return Err((ErrorObject::resource_not_found(&uri), 200)),
                    }
                };
                let s = streaming(&checked);
                Ok(Handled::Pending(PendingCall {
                    id: id.clone(),
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
                    id: id.clone(),
                    streaming: Streaming::Never,
                    base: base(checked),
                    kind: CallKind::Complete { completer, req },
                }))
            }
            "subscriptions/listen" => {
                let filter = listen::parse_filter(notifications, &checked.capabilities, caps)?;
                Ok(Handled::Pending(PendingCall {
                    id: id.clone(),
                    streaming: Streaming::Always,
                    base: base(checked),
                    kind: CallKind::Listen { filter },
                }))
            }
            m if REMOVED.contains(&m) => Err(not_found()),
            _ => Err(not_found()),
        }
    }

    #[allow(clippy::type_complexity)]
    fn completion_target(
        &self,
        reference: Option<Value>,
        argument: Option<Value>,
        context: Option<Value>,
    ) -> Result<(Option<Arc<dyn crate::completion::Completer>>, CompletionRequest), (ErrorObject, u16)> {
        let bad = |m: &str| (ErrorObject::invalid_params(format!("Invalid params: {m}")), 200);
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
                let p = self
                    .inner
                    .prompts
                    .get(name)
                    .ok_or_else(|| (ErrorObject::invalid_params(format!("Unknown prompt: {name}")), 200))?;
                p.completers.get(&arg_name).cloned()
            }
            Some("ref/resource") => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("ref.uri is required"))?;
                let t = self
                    .inner
                    .templates
                    .get(uri)
                    .ok_or_else(|| (ErrorObject::invalid_params(format!("Unknown resource template: {uri}")), 200))?;
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
