//! The typed requests of 2026-07-28, on [`Client`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ferry_protocol::common::Implementation;
use ferry_protocol::completion::{CompleteRequestParams, CompleteResult};
use ferry_protocol::discover::DiscoverResult;
use ferry_protocol::methods;
use ferry_protocol::mrtr::{InputRequiredResult, MrtrResult};
use ferry_protocol::prompts::{GetPromptResult, ListPromptsResult, Prompt};
use ferry_protocol::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate,
};
use ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_protocol::tools::{CallToolResult, ListToolsResult, Tool};
use ferry_protocol::{ErrorCode, ServerCapabilities};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::request::parse;
use super::{Client, Inner, Req, Session};
use crate::answer;
use crate::builder::ClientBuilder;
use crate::era::Era;
use crate::error::{Error, Result};
use crate::handler::AskOrigin;
use crate::listen::Subscription;
use crate::mrtr::{MrtrCall, Retry};
use crate::options::CallOptions;
use crate::pages;
use crate::tasks::TaskHandle;

impl Inner {
    /// One page of a list, from the cache when fresh.
    async fn page_raw(
        &self,
        method: &str,
        cursor: Option<&str>,
        opts: &CallOptions,
    ) -> Result<Value> {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), Value::from(c));
        }
        self.call_cached(&Req::new(method, params, opts)).await
    }

    /// One page of tools, with invalid `x-mcp-header` tools dropped (HTTP, modern).
    pub(crate) async fn tools_page(
        &self,
        cursor: Option<&str>,
        opts: &CallOptions,
    ) -> Result<ListToolsResult> {
        let v = self.page_raw(methods::TOOLS_LIST, cursor, opts).await?;
        let mut page: ListToolsResult = parse(methods::TOOLS_LIST, v)?;
        if self.uses_param_headers() {
            self.tools.record(&mut page.tools);
        }
        Ok(page)
    }

    /// Fetches every page of tools afresh (after the server refused `Mcp-Param-*`
    /// headers).
    pub(crate) async fn refresh_tools(&self) -> Result<Vec<Tool>> {
        let opts = CallOptions::new().bypass_cache();
        let opts = &opts;
        pages::collect(self.config.max_pages, |cursor| async move {
            let page = self.tools_page(cursor.as_deref(), opts).await?;
            Ok((page.tools, page.next_cursor))
        })
        .await
    }
}

fn arguments_object(arguments: Value) -> Result<Option<Map<String, Value>>> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(m) => Ok(Some(m)),
        other => Err(Error::InvalidInput(format!(
            "tool arguments must be a JSON object, not {other}"
        ))),
    }
}

fn typed<T: DeserializeOwned>(method: &str, r: MrtrResult<Value>) -> Result<MrtrResult<T>> {
    Ok(match r {
        MrtrResult::Complete(v) => MrtrResult::Complete(parse(method, v)?),
        MrtrResult::InputRequired(ir) => MrtrResult::InputRequired(ir),
    })
}

impl Client {
    /// Starts building a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// The server's era.
    pub fn era(&self) -> Era {
        self.inner.era()
    }

    /// The protocol version in use (e.g. `2026-07-28`, or the version `initialize`
    /// agreed on).
    pub fn protocol_version(&self) -> String {
        self.inner.state.read().version.clone()
    }

    /// The server's self-description, once known (from `server/discover` or
    /// `initialize`). Self-reported: for display only.
    pub fn server_info(&self) -> Option<Implementation> {
        self.inner.state.read().server_info.clone()
    }

    /// What the server offers, once known.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.inner.state.read().capabilities.clone()
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.inner.state.read().instructions.clone()
    }

    /// `server/discover`: versions, capabilities, instructions and server info (cached for
    /// the result's `ttlMs`). On a legacy server, the same information from `initialize`.
    pub async fn discover(&self) -> Result<DiscoverResult> {
        if self.era() == Era::Legacy {
            let s = Session::clone(&self.inner.state.read());
            let mut d = DiscoverResult::new([s.version], s.capabilities.unwrap_or_default());
            d.result_type = None;
            d.instructions = s.instructions;
            if let Some(info) = &s.server_info {
                d = d.with_server_info(info);
            }
            return Ok(d);
        }
        let opts = CallOptions::new();
        let v = self
            .inner
            .call_cached(&Req::new(methods::DISCOVER, Map::new(), &opts))
            .await?;
        {
            let mut s = self.inner.state.write();
            self.inner.absorb_discover(Arc::make_mut(&mut s), &v);
        }
        parse(methods::DISCOVER, v)
    }

    /// Every tool, following pagination. On Streamable HTTP, tools with invalid
    /// `x-mcp-header` annotations are left out (with a warning).
    pub async fn list_tools(&self) -> Result<Vec<Tool>> {
        let opts = CallOptions::new();
        let (inner, opts) = (&self.inner, &opts);
        pages::collect(inner.config.max_pages, |cursor| async move {
            let page = inner.tools_page(cursor.as_deref(), opts).await?;
            Ok((page.tools, page.next_cursor))
        })
        .await
    }

    /// One page of tools (`None` for the first page).
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<ListToolsResult> {
        self.inner.tools_page(cursor, &CallOptions::new()).await
    }

    /// Calls a tool with `arguments` (a JSON object, or `null` for none), answering the
    /// server's questions through the input handler.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call_tool_with(name, arguments, &CallOptions::new())
            .await
    }

    /// [`call_tool`](Client::call_tool) with options (timeout, progress, `_meta`).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        opts: &CallOptions,
    ) -> Result<CallToolResult> {
        let call = tool_call(name, arguments)?;
        let v = self.inner.run_mrtr(&call, opts).await?;
        if crate::tasks::is_task(&v) {
            let id = v
                .get("taskId")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::protocol("a task result without a taskId"))?;
            let handle = TaskHandle {
                inner: self.inner.clone(),
                id: id.to_owned(),
                origin: call.origin.clone(),
            };
            return handle.wait(opts).await;
        }
        parse(methods::TOOLS_CALL, v)
    }

    /// A task on this server by id ([`TaskHandle`]): to read, answer, cancel or follow
    /// it, for instance one left running by a [detached](CallOptions::detach) call.
    pub fn task(&self, id: impl Into<String>) -> TaskHandle {
        TaskHandle {
            inner: self.inner.clone(),
            id: id.into(),
            origin: AskOrigin {
                method: methods::TOOLS_CALL.into(),
                target: String::new(),
            },
        }
    }

    /// One round of a tool call, for programs that drive the rounds themselves: pass
    /// [`Retry::first`] first, then the [`Retry`] built from the server's
    /// [`InputRequiredResult`] (see [`Client::answer`]).
    pub async fn call_tool_round(
        &self,
        name: &str,
        arguments: Value,
        retry: &Retry,
        opts: &CallOptions,
    ) -> Result<MrtrResult<CallToolResult>> {
        let call = tool_call(name, arguments)?;
        typed(
            methods::TOOLS_CALL,
            self.inner.round(&call, retry, opts).await?,
        )
    }

    /// Every prompt, following pagination.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>> {
        self.collect(methods::PROMPTS_LIST, |p: ListPromptsResult| {
            (p.prompts, p.next_cursor)
        })
        .await
    }

    /// One page of prompts.
    pub async fn list_prompts_page(&self, cursor: Option<&str>) -> Result<ListPromptsResult> {
        self.page(methods::PROMPTS_LIST, cursor).await
    }

    /// Gets a prompt with its arguments, answering the server's questions.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult> {
        self.get_prompt_with(name, arguments, &CallOptions::new())
            .await
    }

    /// [`get_prompt`](Client::get_prompt) with options.
    pub async fn get_prompt_with(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        opts: &CallOptions,
    ) -> Result<GetPromptResult> {
        let v = self
            .inner
            .run_mrtr(&prompt_call(name, arguments), opts)
            .await?;
        parse(methods::PROMPTS_GET, v)
    }

    /// One round of `prompts/get`.
    pub async fn get_prompt_round(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        retry: &Retry,
        opts: &CallOptions,
    ) -> Result<MrtrResult<GetPromptResult>> {
        let call = prompt_call(name, arguments);
        typed(
            methods::PROMPTS_GET,
            self.inner.round(&call, retry, opts).await?,
        )
    }

    /// Every resource, following pagination.
    pub async fn list_resources(&self) -> Result<Vec<Resource>> {
        self.collect(methods::RESOURCES_LIST, |p: ListResourcesResult| {
            (p.resources, p.next_cursor)
        })
        .await
    }

    /// One page of resources.
    pub async fn list_resources_page(&self, cursor: Option<&str>) -> Result<ListResourcesResult> {
        self.page(methods::RESOURCES_LIST, cursor).await
    }

    /// Every resource template, following pagination.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        self.collect(
            methods::RESOURCES_TEMPLATES_LIST,
            |p: ListResourceTemplatesResult| (p.resource_templates, p.next_cursor),
        )
        .await
    }

    /// One page of resource templates.
    pub async fn list_resource_templates_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult> {
        self.page(methods::RESOURCES_TEMPLATES_LIST, cursor).await
    }

    /// Reads a resource (cached for its `ttlMs`), answering the server's questions. A
    /// missing resource is [`Error::ResourceNotFound`] (-32602 with the URI, or the legacy
    /// -32002).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        self.read_resource_with(uri, &CallOptions::new()).await
    }

    /// [`read_resource`](Client::read_resource) with options.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        opts: &CallOptions,
    ) -> Result<ReadResourceResult> {
        let v = self
            .inner
            .run_mrtr(&read_call(uri), opts)
            .await
            .map_err(|e| not_found(e, uri))?;
        parse(methods::RESOURCES_READ, v)
    }

    /// One round of `resources/read`.
    pub async fn read_resource_round(
        &self,
        uri: &str,
        retry: &Retry,
        opts: &CallOptions,
    ) -> Result<MrtrResult<ReadResourceResult>> {
        let r = self
            .inner
            .round(&read_call(uri), retry, opts)
            .await
            .map_err(|e| not_found(e, uri))?;
        typed(methods::RESOURCES_READ, r)
    }

    /// `completion/complete`: suggestions for a prompt or resource template argument.
    pub async fn complete(&self, params: CompleteRequestParams) -> Result<CompleteResult> {
        let Ok(Value::Object(mut p)) = serde_json::to_value(&params) else {
            return Err(Error::InvalidInput("unencodable completion params".into()));
        };
        p.remove("_meta");
        let opts = CallOptions::new();
        let v = self
            .inner
            .call(&Req::new(methods::COMPLETION_COMPLETE, p, &opts))
            .await?;
        parse(methods::COMPLETION_COMPLETE, v)
    }

    /// Subscribes to change notifications. Returns once the server acknowledged; see
    /// [`Subscription::granted`] for what it agreed to send.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        self.inner.listen(filter).await
    }

    /// Asks the input handler to answer one round's requests, and returns the retry to
    /// send (with the server's `requestState` echoed). For programs driving rounds
    /// themselves with the `*_round` methods.
    pub async fn answer(&self, result: &InputRequiredResult, origin: Option<AskOrigin>) -> Retry {
        let responses = match result.input_requests.as_ref() {
            Some(requests) => {
                answer::input_requests(&answer::Asker::client(&self.inner), requests, origin)
                    .await
                    .responses
            }
            None => Default::default(),
        };
        Retry::after(result, responses)
    }

    /// Sends any request and returns its raw result (checked for a valid `resultType`).
    /// For methods this crate does not model; `params` must be an object (or `null`).
    pub async fn request(&self, method: &str, params: Value, opts: &CallOptions) -> Result<Value> {
        let params = arguments_object(params)?.unwrap_or_default();
        self.inner
            .call_cached(&Req::new(method, params, opts))
            .await
    }

    /// [`request`](Client::request), with the result as the server wrote it: for code
    /// that passes results on (a gateway) or reads them into its own types, so no
    /// [`Value`] is built. The result is checked as `request` checks it: an object with
    /// a valid `resultType`.
    ///
    /// ```no_run
    /// # async fn run(client: &ferry_client::Client) -> ferry_client::Result<()> {
    /// use ferry_client::CallOptions;
    /// use serde_json::json;
    ///
    /// let params = json!({ "name": "echo", "arguments": { "text": "hi" } });
    /// let raw = client.request_raw("tools/call", params, &CallOptions::new()).await?;
    /// println!("{}", raw.get());
    /// # Ok(()) }
    /// ```
    pub async fn request_raw(
        &self,
        method: &str,
        params: Value,
        opts: &CallOptions,
    ) -> Result<Box<serde_json::value::RawValue>> {
        let params = arguments_object(params)?.unwrap_or_default();
        self.inner
            .call_cached_raw(&Req::new(method, params, opts))
            .await
    }

    /// Drops every cached result.
    pub fn clear_cache(&self) {
        self.inner.cache.clear();
    }

    /// Closes the connection: a legacy HTTP session is deleted; a stdio server has its
    /// stdin closed, then gets SIGTERM, then SIGKILL if it does not exit. Later requests
    /// fail with [`Error::Closed`].
    pub async fn close(&self) -> Result<()> {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.transport.close().await
    }

    async fn page<T: DeserializeOwned>(&self, method: &str, cursor: Option<&str>) -> Result<T> {
        let v = self
            .inner
            .page_raw(method, cursor, &CallOptions::new())
            .await?;
        parse(method, v)
    }

    async fn collect<T, I>(
        &self,
        method: &'static str,
        split: impl Fn(T) -> (Vec<I>, Option<String>),
    ) -> Result<Vec<I>>
    where
        T: DeserializeOwned,
    {
        let split = &split;
        pages::collect(self.inner.config.max_pages, |cursor| async move {
            let page: T = self.page(method, cursor.as_deref()).await?;
            Ok(split(page))
        })
        .await
    }
}

fn tool_call(name: &str, arguments: Value) -> Result<MrtrCall> {
    let mut params = Map::new();
    params.insert("name".into(), Value::from(name));
    if let Some(args) = arguments_object(arguments)? {
        params.insert("arguments".into(), Value::Object(args));
    }
    Ok(MrtrCall {
        method: methods::TOOLS_CALL,
        params,
        origin: AskOrigin {
            method: methods::TOOLS_CALL.into(),
            target: name.into(),
        },
    })
}

fn prompt_call(name: &str, arguments: BTreeMap<String, String>) -> MrtrCall {
    let mut params = Map::new();
    params.insert("name".into(), Value::from(name));
    if !arguments.is_empty() {
        params.insert(
            "arguments".into(),
            Value::Object(
                arguments
                    .into_iter()
                    .map(|(k, v)| (k, Value::from(v)))
                    .collect(),
            ),
        );
    }
    MrtrCall {
        method: methods::PROMPTS_GET,
        params,
        origin: AskOrigin {
            method: methods::PROMPTS_GET.into(),
            target: name.into(),
        },
    }
}

fn read_call(uri: &str) -> MrtrCall {
    let mut params = Map::new();
    params.insert("uri".into(), Value::from(uri));
    MrtrCall {
        method: methods::RESOURCES_READ,
        params,
        origin: AskOrigin {
            method: methods::RESOURCES_READ.into(),
            target: uri.into(),
        },
    }
}

/// Maps the server's "resource not found" errors (-32602 naming the URI, or the legacy
/// -32002) to [`Error::ResourceNotFound`].
fn not_found(e: Error, uri: &str) -> Error {
    match e {
        Error::Rpc(r)
            if r.code == ErrorCode::LEGACY_RESOURCE_NOT_FOUND
                || (r.code == ErrorCode::INVALID_PARAMS
                    && (r.data.as_ref().and_then(|d| d.get("uri")).is_some()
                        || r.mentions("not found"))) =>
        {
            Error::ResourceNotFound {
                uri: uri.to_owned(),
                error: r,
            }
        }
        other => other,
    }
}
