//! Prompts: templates of messages a client can fetch with arguments.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use ferry_protocol::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use futures::future::BoxFuture;
use serde_json::value::RawValue;

use crate::catalog::Listed;
use crate::completion::{Completer, CompletionFn, CompletionRequest};
use crate::context::Context;
use crate::error::Result;
use crate::mrtr::StatePolicy;
use crate::tool::DefinitionError;

/// The arguments of a `prompts/get` request (all strings).
pub type PromptArguments = BTreeMap<String, String>;

/// Converts a prompt handler's return value into a `GetPromptResult`.
pub trait IntoPromptResult {
    /// The result.
    fn into_prompt_result(self) -> GetPromptResult;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> GetPromptResult {
        self
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new(self)
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new(vec![self])
    }
}

pub(crate) type PromptFuture = BoxFuture<'static, Result<GetPromptResult>>;

pub(crate) trait PromptHandler: Send + Sync + 'static {
    fn get(&self, ctx: Context, args: PromptArguments) -> PromptFuture;
}

struct FnPrompt<F>(F);

impl<F, Fut, R> PromptHandler for FnPrompt<F>
where
    F: Fn(Context, PromptArguments) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: IntoPromptResult,
{
    fn get(&self, ctx: Context, args: PromptArguments) -> PromptFuture {
        let fut = (self.0)(ctx, args);
        Box::pin(async move { fut.await.map(IntoPromptResult::into_prompt_result) })
    }
}

/// Builds a prompt. Start with [`prompt`].
#[must_use = "a prompt builder does nothing until registered"]
pub struct PromptBuilder {
    def: Prompt,
    handler: Option<Arc<dyn PromptHandler>>,
    completers: BTreeMap<String, Arc<dyn Completer>>,
    policy: StatePolicy,
    scopes: Vec<String>,
}

/// Starts a prompt named `name`.
///
/// ```
/// use ferry_server::{prompt, Context, PromptArguments, Result};
/// use ferry_protocol::prompts::PromptMessage;
///
/// let greet = prompt("greet")
///     .description("Greets someone")
///     .argument("name", "Who to greet", true)
///     .handler(|_ctx: Context, args: PromptArguments| async move {
///         Ok(PromptMessage::user_text(format!("Say hello to {}", args["name"])))
///     });
/// ```
pub fn prompt(name: impl Into<String>) -> PromptBuilder {
    PromptBuilder {
        def: Prompt::new(name),
        handler: None,
        completers: BTreeMap::new(),
        policy: StatePolicy::default(),
        scopes: Vec::new(),
    }
}

impl PromptBuilder {
    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.def.title = Some(title.into());
        self
    }

    /// What the prompt is for.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.def.description = Some(description.into());
        self
    }

    /// Declares an argument. Requests missing a required one get -32602.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        let mut arg = PromptArgument::new(name);
        arg.description = Some(description.into());
        arg.required = Some(required);
        self.def.arguments.get_or_insert_with(Vec::new).push(arg);
        self
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

    /// Redeems this prompt's `requestState` at most once.
    pub fn single_use(mut self) -> Self {
        self.policy.single_use = true;
        self
    }

    /// Accepts answers that arrive without a `requestState` (see
    /// [`crate::ToolBuilder::stateless_answers`]).
    pub fn stateless_answers(mut self) -> Self {
        self.policy.stateless_answers = true;
        self
    }

    /// Offers completions for the argument `name` (`completion/complete`).
    pub fn complete<F, Fut>(mut self, name: impl Into<String>, f: F) -> Self
    where
        F: Fn(Context, CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>>> + Send + 'static,
    {
        self.completers
            .insert(name.into(), Arc::new(CompletionFn(f)));
        self
    }

    /// The handler.
    pub fn handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(Context, PromptArguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R>> + Send + 'static,
        R: IntoPromptResult,
    {
        self.handler = Some(Arc::new(FnPrompt(f)));
        self
    }

    pub(crate) fn build(self) -> std::result::Result<PromptEntry, DefinitionError> {
        let name = self.def.name.clone();
        if name.is_empty() {
            return Err(DefinitionError::new(
                "prompt",
                &name,
                "name must not be empty",
            ));
        }
        let handler = self
            .handler
            .ok_or_else(|| DefinitionError::new("prompt", &name, "no handler"))?;
        let json = serde_json::value::to_raw_value(&self.def)
            .map_err(|e| DefinitionError::new("prompt", &name, e.to_string()))?;
        let required = self
            .def
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| a.name.clone())
            .collect();
        Ok(PromptEntry {
            def: self.def,
            json,
            handler,
            required,
            completers: self.completers,
            policy: self.policy,
            scopes: self.scopes.into(),
        })
    }
}

pub(crate) struct PromptEntry {
    pub(crate) def: Prompt,
    json: Box<RawValue>,
    pub(crate) handler: Arc<dyn PromptHandler>,
    pub(crate) required: Vec<String>,
    pub(crate) completers: BTreeMap<String, Arc<dyn Completer>>,
    pub(crate) policy: StatePolicy,
    pub(crate) scopes: Arc<[String]>,
}

impl Listed for PromptEntry {
    fn key(&self) -> &str {
        &self.def.name
    }
    fn definition(&self) -> &RawValue {
        &self.json
    }
}
