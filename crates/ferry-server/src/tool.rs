//! Tools: definitions from Rust types or plain JSON, and their handlers.

use std::future::Future;
use std::sync::Arc;

use ferry_protocol::content::ContentBlock;
use ferry_protocol::headers::{ParamHeader, param_headers};
use ferry_protocol::tools::{CallToolResult, Tool, ToolAnnotations};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::catalog::Listed;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::mrtr::StatePolicy;
use crate::schema::{CompiledSchema, empty_object_schema, input_schema_for, schema_for};

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

pub(crate) type ToolFuture = BoxFuture<'static, Result<CallToolResult>>;

/// A tool handler with its argument parsing erased. The arguments are lent: a typed
/// handler reads its struct straight from them, with no copy of the whole object.
pub(crate) trait ToolHandler: Send + Sync + 'static {
    fn call(&self, ctx: Context, args: &Value) -> ToolFuture;
}

struct TypedHandler<F, A> {
    f: F,
    _args: std::marker::PhantomData<fn(A)>,
}

impl<F, A, Fut, R> ToolHandler for TypedHandler<F, A>
where
    F: Fn(Context, A) -> Fut + Send + Sync + 'static,
    A: DeserializeOwned + Send + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: IntoToolResult,
{
    fn call(&self, ctx: Context, args: &Value) -> ToolFuture {
        match A::deserialize(args) {
            Ok(a) => {
                let fut = (self.f)(ctx, a);
                Box::pin(async move { fut.await.map(IntoToolResult::into_tool_result) })
            }
            Err(e) => Box::pin(std::future::ready(Ok(CallToolResult::error(format!(
                "Invalid arguments: {e}"
            ))))),
        }
    }
}

struct JsonHandler<F>(F);

impl<F, Fut, R> ToolHandler for JsonHandler<F>
where
    F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: IntoToolResult,
{
    fn call(&self, ctx: Context, args: &Value) -> ToolFuture {
        let fut = (self.0)(ctx, args.clone());
        Box::pin(async move { fut.await.map(IntoToolResult::into_tool_result) })
    }
}

/// Builds a tool. Start with [`tool`].
#[must_use = "a tool builder does nothing until registered"]
pub struct ToolBuilder {
    def: Tool,
    input_from_type: Option<Value>,
    handler: Option<Arc<dyn ToolHandler>>,
    policy: StatePolicy,
    scopes: Vec<String>,
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
        policy: StatePolicy::default(),
        scopes: Vec::new(),
    }
}

impl ToolBuilder {
    /// Starts from a complete definition given as data (e.g. loaded from JSON at run time).
    pub fn from_definition(def: Tool) -> Self {
        ToolBuilder {
            def,
            input_from_type: None,
            handler: None,
            policy: StatePolicy::default(),
            scopes: Vec::new(),
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
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.def.input_schema = schema;
        self.input_from_type = None;
        self
    }

    /// Sets the output schema from plain JSON (any JSON Schema 2020-12).
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

    /// The handler, taking arguments parsed into `A`. The input schema comes from `A`
    /// unless [`ToolBuilder::input_schema`] set one.
    pub fn handler<A, F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(Context, A) -> Fut + Send + Sync + 'static,
        A: DeserializeOwned + JsonSchema + Send + 'static,
        Fut: Future<Output = Result<R>> + Send + 'static,
        R: IntoToolResult,
    {
        self.input_from_type = Some(input_schema_for::<A>());
        self.handler = Some(Arc::new(TypedHandler {
            f,
            _args: std::marker::PhantomData,
        }));
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
        self.handler = Some(Arc::new(JsonHandler(f)));
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
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
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) policy: StatePolicy,
    pub(crate) scopes: Arc<[String]>,
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
