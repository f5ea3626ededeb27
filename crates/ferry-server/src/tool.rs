//! Tools: definitions from Rust types or plain JSON, and their handlers.

use std::future::Future;
use std::sync::Arc;

use ferry_protocol::content::ContentBlock;
use ferry_protocol::headers::{ParamHeader, param_headers};
use ferry_protocol::tools::{CallToolResult, Tool, ToolAnnotations};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::catalog::Listed;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::handler::{ErasedHandler, Handler, StateType, erase};
use crate::mrtr::StatePolicy;
use crate::schema::{CompiledSchema, empty_object_schema, schema_for};
use crate::tasks::{TaskMode, TaskSupport};

/// Why a definition (tool, prompt, resource) was refused at registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} {name:?}: {reason}")]
pub struct DefinitionError {
    kind: &'static str,
    name: String,
    reason: String,
}

impl DefinitionError {
    pub(crate) fn new(kind: &'static str, name: &str, reason: impl Into<String>) -> Self {
        DefinitionError {
            kind,
            name: name.to_owned(),
            reason: reason.into(),
        }
    }
}

/// Converts a handler's return value into a `CallToolResult`.
pub trait IntoToolResult {
    /// The result.
    fn into_tool_result(self) -> CallToolResult;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![self])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(self)
    }
}

/// Structured output: serialized into `structuredContent`, with the same JSON as a text
/// block for clients that only read content (tools.mdx recommends both).
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(v) => CallToolResult::structured(v),
            Err(e) => CallToolResult::error(format!("result could not be serialized: {e}")),
        }
    }
}

/// A registered tool's handler: arguments in, result out.
pub(crate) type ToolHandler = dyn ErasedHandler<Value, CallToolResult>;

/// A handler taking the arguments as JSON, for tools defined at run time.
struct JsonHandler<F>(F);

impl<F, Fut, R> ErasedHandler<Value, CallToolResult> for JsonHandler<F>
where
    F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: IntoToolResult,
{
    fn call(&self, ctx: Context, args: &Value) -> BoxFuture<'static, Result<CallToolResult>> {
        // Mapped rather than awaited in an async block, which would hold the future twice.
        Box::pin(futures::FutureExt::map(
            (self.0)(ctx, args.clone()),
            |result| result.map(IntoToolResult::into_tool_result),
        ))
    }
}

/// Builds a tool. Start with [`tool`].
#[must_use = "a tool builder does nothing until registered"]
pub struct ToolBuilder {
    def: Tool,
    input_from_type: Option<Value>,
    handler: Option<Arc<ToolHandler>>,
    states: Vec<StateType>,
    policy: StatePolicy,
    scopes: Vec<String>,
    task: Option<TaskSupport>,
}

/// Starts a tool definition named `name`.
///
/// ```
/// use ferry_server::{tool, Context, Result};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct EchoArgs {
///     /// The text to send back.
///     text: String,
/// }
///
/// let echo = tool("echo")
///     .description("Returns its text")
///     .handler(|_ctx: Context, args: EchoArgs| async move { Ok(args.text) });
/// ```
pub fn tool(name: impl Into<String>) -> ToolBuilder {
    ToolBuilder {
        def: Tool::new(name, empty_object_schema()),
        input_from_type: None,
        handler: None,
        states: Vec::new(),
        policy: StatePolicy::default(),
        scopes: Vec::new(),
        task: None,
    }
}

impl ToolBuilder {
    /// Starts from a complete definition given as data (e.g. loaded from JSON at run time).
    pub fn from_definition(def: Tool) -> Self {
        ToolBuilder {
            def,
            input_from_type: None,
            handler: None,
            states: Vec::new(),
            policy: StatePolicy::default(),
            scopes: Vec::new(),
            task: None,
        }
    }

    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.def.title = Some(title.into());
        self
    }

    /// What the tool does, for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.def.description = Some(description.into());
        self
    }

    /// Behaviour hints (untrusted by clients unless they trust the server).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.def.annotations = Some(annotations);
        self
    }

    /// Sets the input schema from plain JSON. It must have `"type": "object"` at the root.
    ///
    /// A schema beyond what the built-in validator checks (what `schemars` derives) is
    /// validated by the general JSON Schema engine, the `json-schema` feature (on by
    /// default); without that feature, [`ServerBuilder::build`](crate::ServerBuilder::build)
    /// refuses the tool and names the feature.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.def.input_schema = schema;
        self.input_from_type = None;
        self
    }

    /// Sets the output schema from plain JSON (any JSON Schema 2020-12; beyond the
    /// built-in validator's subset it needs the `json-schema` feature, as
    /// [`input_schema`](Self::input_schema) says).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.def.output_schema = Some(schema);
        self
    }

    /// Sets the output schema from a Rust type; return [`Json<O>`] from the handler.
    pub fn output<O: JsonSchema>(self) -> Self {
        self.output_schema(schema_for::<O>())
    }

    /// Scopes a principal needs to use it: a request without them is refused (HTTP
    /// 403 with a `WWW-Authenticate` challenge naming them, behind an authorization
    /// layer). A granted scope covers the scopes below it (`files` covers
    /// `files:delete`).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Redeems this tool's `requestState` at most once: a retry replayed after the first
    /// one is refused. Use it for deletes, payments and anything not idempotent.
    pub fn single_use(mut self) -> Self {
        self.policy.single_use = true;
        self
    }

    /// Accepts answers that arrive without a `requestState` (a client answering in its
    /// first request). Only for asks whose answers grant nothing the client could not
    /// claim anyway; the default refuses them and asks again.
    pub fn stateless_answers(mut self) -> Self {
        self.policy.stateless_answers = true;
        self
    }

    /// Runs each call as a task (Tasks extension) from its start, when the request
    /// declares the extension: the client gets a `CreateTaskResult` at once and follows
    /// the work with `tasks/get`. With [`TaskMode::Optional`] a request without the
    /// extension runs as a plain call; with [`TaskMode::Required`] it is refused with
    /// -32021. Inside the task, asks wait for `tasks/update` and `ctx.progress` sets the
    /// task's `statusMessage`.
    ///
    /// ```
    /// use ferry_server::{tool, Context, TaskMode};
    ///
    /// let export = tool("export").task(TaskMode::Optional).handler(|ctx: Context| async move {
    ///     ctx.progress(1.0, Some(2.0), Some("half way")).await;
    ///     Ok("exported")
    /// });
    /// # let _ = export;
    /// ```
    pub fn task(mut self, mode: TaskMode) -> Self {
        self.task = Some(TaskSupport {
            mode,
            when_ready: false,
        });
        self
    }

    /// Declares that calls may (or must) become tasks, when the handler says so with
    /// [`Context::into_task`] once it has gathered its input through MRTR rounds
    /// (ext-tasks/tasks.md: MRTR exchanges are resolved before the task is created).
    /// [`TaskMode::Required`] refuses requests without the extension with -32021.
    pub fn task_when_ready(mut self, mode: TaskMode) -> Self {
        self.task = Some(TaskSupport {
            mode,
            when_ready: true,
        });
        self
    }

    /// Whether the tool declares task support.
    pub(crate) fn has_task_support(&self) -> bool {
        self.task.is_some()
    }

    /// The handler: an async function of what it uses (see [`crate::Handler`]). Its
    /// last argument may be the tool's arguments, any `Deserialize + JsonSchema` type,
    /// whose schema becomes the input schema unless [`ToolBuilder::input_schema`] set
    /// one; a handler that takes no arguments makes a tool with no input.
    ///
    /// ```
    /// use ferry_server::{tool, Context, Result};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct EchoArgs { text: String }
    ///
    /// let ping = tool("ping").handler(|| async { Ok("pong") });
    /// let echo = tool("echo").handler(|args: EchoArgs| async move { Ok(args.text) });
    /// let whoami = tool("whoami").handler(|ctx: Context| async move {
    ///     Ok(ctx.principal().map_or("anonymous".to_owned(), |p| p.to_string()))
    /// });
    /// ```
    pub fn handler<T, H>(mut self, handler: H) -> Self
    where
        H: Handler<T, Value>,
        H::Output: IntoToolResult,
        T: 'static,
    {
        self.input_from_type = H::input_schema();
        self.states = H::state_types();
        self.handler = Some(erase(handler, IntoToolResult::into_tool_result));
        self
    }

    /// The handler, taking the arguments as JSON (already validated against the input
    /// schema). For tools defined at run time.
    pub fn json_handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R>> + Send + 'static,
        R: IntoToolResult,
    {
        self.input_from_type = None;
        self.states = Vec::new();
        self.handler = Some(Arc::new(JsonHandler(f)));
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The application state its handler needs.
    pub(crate) fn state_types(&self) -> &[StateType] {
        &self.states
    }

    pub(crate) fn build(mut self) -> std::result::Result<ToolEntry, DefinitionError> {
        let name = self.def.name.clone();
        let err = |reason: String| DefinitionError::new("tool", &name, reason);
        if name.is_empty() || name.len() > 128 {
            return Err(err("name must be 1 to 128 characters".into()));
        }
        if !name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        {
            return Err(err(
                "name may contain only ASCII letters, digits, '_', '-' and '.'".into(),
            ));
        }
        if let Some(schema) = self.input_from_type.take() {
            // A schema set explicitly wins over the type's.
            if self.def.input_schema == empty_object_schema() {
                self.def.input_schema = schema;
            }
        }
        if self.def.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(err(
                "inputSchema must have \"type\": \"object\" at its root".into(),
            ));
        }
        let input = CompiledSchema::compile(&self.def.input_schema)
            .map_err(|e| err(format!("inputSchema: {e}")))?;
        let output = match &self.def.output_schema {
            Some(s) => {
                Some(CompiledSchema::compile(s).map_err(|e| err(format!("outputSchema: {e}")))?)
            }
            None => None,
        };
        let headers = param_headers(&self.def.input_schema).map_err(|e| err(e.to_string()))?;
        let handler = self.handler.ok_or_else(|| err("no handler".into()))?;
        let json = serde_json::value::to_raw_value(&self.def).map_err(|e| err(e.to_string()))?;
        Ok(ToolEntry {
            def: self.def,
            json,
            input,
            output,
            headers,
            handler,
            policy: self.policy,
            scopes: self.scopes.into(),
            task: self.task,
        })
    }
}

/// A registered tool.
pub(crate) struct ToolEntry {
    pub(crate) def: Tool,
    json: Box<RawValue>,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) headers: Vec<ParamHeader>,
    pub(crate) handler: Arc<ToolHandler>,
    pub(crate) policy: StatePolicy,
    pub(crate) scopes: Arc<[String]>,
    pub(crate) task: Option<TaskSupport>,
}

impl Listed for ToolEntry {
    fn key(&self) -> &str {
        &self.def.name
    }
    fn definition(&self) -> &RawValue {
        &self.json
    }
}

impl ToolEntry {
    /// Checks a handler's result against the output schema.
    pub(crate) fn check_output(&self, result: &CallToolResult) -> std::result::Result<(), String> {
        let Some(schema) = &self.output else {
            return Ok(());
        };
        if result.is_error == Some(true) {
            return Ok(());
        }
        match &result.structured_content {
            Some(v) => schema.validate(v),
            None => {
                Err("the tool declares an outputSchema but returned no structuredContent".into())
            }
        }
    }
}

/// Shorthand for an execution error inside a tool: `return Err(fail("disk full"))`.
pub fn fail(message: impl Into<String>) -> Error {
    Error::execution(message)
}
