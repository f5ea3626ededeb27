//! Answering the server's questions: the [`InputHandler`] your program provides.
//!
//! A 2026-07-28 server asks inside an `InputRequiredResult` (multi round-trip requests);
//! a 2025-11-25 server sends JSON-RPC requests (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`). Both reach the same handler, so a program
//! works with either era.
//!
//! The client declares only what [`InputHandler::capabilities`] enables, and never calls
//! a method whose capability is off: if a server asks anyway, the client answers
//! elicitations with `decline` and leaves sampling and roots unanswered.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferry_protocol::ClientCapabilities;
use ferry_protocol::common::Implementation;
use ferry_protocol::elicitation::{ElicitResult, ElicitValue, FormError, FormProperty, FormSchema};
use ferry_protocol::roots::Root;
use ferry_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// A boxed, sendable future: what [`InputHandler`] methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Which kinds of input a handler provides. The client derives the
/// `clientCapabilities` it declares from this.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HandlerCapabilities {
    elicitation_form: bool,
    elicitation_url: bool,
    sampling: bool,
    sampling_tools: bool,
    roots: bool,
}

impl HandlerCapabilities {
    /// Nothing: every question is refused.
    pub const fn none() -> Self {
        HandlerCapabilities {
            elicitation_form: false,
            elicitation_url: false,
            sampling: false,
            sampling_tools: false,
            roots: false,
        }
    }

    /// Form-mode elicitation ([`InputHandler::elicit_form`]).
    pub const fn elicitation_form(mut self) -> Self {
        self.elicitation_form = true;
        self
    }

    /// URL-mode elicitation ([`InputHandler::elicit_url`]).
    pub const fn elicitation_url(mut self) -> Self {
        self.elicitation_url = true;
        self
    }

    /// Sampling ([`InputHandler::create_message`]); `tools` also accepts requests that
    /// offer the model tools. Sampling is deprecated as of 2026-07-28.
    #[deprecated(
        since = "0.1.0",
        note = "MCP sampling is deprecated in 2026-07-28 (SEP-2577): servers should call LLM provider APIs directly"
    )]
    pub const fn sampling(mut self, tools: bool) -> Self {
        self.sampling = true;
        self.sampling_tools = tools;
        self
    }

    /// Roots ([`InputHandler::list_roots`]). Roots are deprecated as of 2026-07-28.
    #[deprecated(
        since = "0.1.0",
        note = "MCP roots are deprecated in 2026-07-28 (SEP-2577): pass directories and files as tool parameters, resource URIs or server configuration"
    )]
    pub const fn roots(mut self) -> Self {
        self.roots = true;
        self
    }

    /// Whether form-mode elicitation is on.
    pub const fn has_elicitation_form(&self) -> bool {
        self.elicitation_form
    }

    /// Whether URL-mode elicitation is on.
    pub const fn has_elicitation_url(&self) -> bool {
        self.elicitation_url
    }

    /// Whether sampling is on.
    pub const fn has_sampling(&self) -> bool {
        self.sampling
    }

    /// Whether sampling requests with tools are accepted.
    pub const fn has_sampling_tools(&self) -> bool {
        self.sampling && self.sampling_tools
    }

    /// Whether roots are on.
    pub const fn has_roots(&self) -> bool {
        self.roots
    }

    /// The capabilities to declare to the server.
    pub fn to_client_capabilities(&self) -> ClientCapabilities {
        let mut c = ClientCapabilities::default();
        if self.elicitation_form {
            c = c.with_elicitation_form();
        }
        if self.elicitation_url {
            c = c.with_elicitation_url();
        }
        if self.sampling {
            c = c.with_sampling(self.sampling_tools);
        }
        if self.roots {
            c = c.with_roots();
        }
        c
    }
}

/// The server that asks, for prompts like "*weather-server* asks: …".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskingServer {
    /// Programmatic name (from the server's self-description, or the URL host or command
    /// name when it gave none). Self-reported: show it, do not trust it.
    pub name: String,
    /// Display name, if the server gave one.
    pub title: Option<String>,
    /// Version, if known.
    pub version: Option<String>,
}

impl AskingServer {
    /// The name to show: the title, or else the name.
    pub fn display_name(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    pub(crate) fn from_info(info: Option<&Implementation>, fallback: &str) -> Self {
        match info {
            Some(i) => AskingServer {
                name: i.name.clone(),
                title: i.title.clone(),
                version: Some(i.version.clone()),
            },
            None => AskingServer {
                name: fallback.to_owned(),
                title: None,
                version: None,
            },
        }
    }
}

impl fmt::Display for AskingServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

/// The request during which the server asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskOrigin {
    /// The method: `tools/call`, `prompts/get` or `resources/read`.
    pub method: String,
    /// The tool or prompt name, or the resource URI.
    pub target: String,
}

/// Where a question comes from: the server and, when known, the request it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskContext {
    /// The asking server.
    pub server: AskingServer,
    /// The request that triggered the question (unknown for a 2025-11-25 server request
    /// that arrived outside any request's stream).
    pub origin: Option<AskOrigin>,
    /// The server's key for this question in a multi round-trip request (2026-07-28).
    pub key: Option<String>,
}

/// A form to fill in (form-mode elicitation).
#[derive(Clone, Debug, PartialEq)]
pub struct FormRequest {
    /// Who asks, and why.
    pub context: AskContext,
    /// What is being asked.
    pub message: String,
    /// The fields, in display order. Keywords outside the spec's subset were dropped when
    /// the request was read ([`FormSchema::from_value_lenient`]).
    pub schema: FormSchema,
}

impl FormRequest {
    /// The fields with their schema and whether they are required, in display order.
    pub fn fields(&self) -> impl Iterator<Item = FormProperty<'_>> {
        self.schema.properties()
    }

    /// The values the schema pre-fills (`default`), ready to show or to accept as is.
    pub fn defaults(&self) -> BTreeMap<String, ElicitValue> {
        self.fields()
            .filter_map(|f| f.schema.default_value().map(|v| (f.name.to_owned(), v)))
            .collect()
    }

    /// Checks submitted content against the form ([`FormSchema::check`]): required
    /// fields present, no field the form lacks, and each value of its field's kind within
    /// its constraints (lengths, formats, bounds, options, item counts).
    pub fn check(&self, content: &BTreeMap<String, ElicitValue>) -> Result<(), FormError> {
        self.schema.check(content)
    }
}

/// A URL to open (URL-mode elicitation). Show the full URL and its host, and open it only
/// with the user's consent; never fetch it yourself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlRequest {
    /// Who asks, and why.
    pub context: AskContext,
    /// Why the user should open the URL.
    pub message: String,
    /// The URL.
    pub url: String,
    /// The 2025-11-25 elicitation id, when a legacy server sent one.
    pub elicitation_id: Option<String>,
}

impl UrlRequest {
    /// The URL's host, to show next to the URL (`None` if the URL does not parse).
    pub fn host(&self) -> Option<String> {
        reqwest::Url::parse(&self.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
    }
}

/// A request to sample the user's model (deprecated as of 2026-07-28). A person should be
/// able to review and refuse it.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingRequest {
    /// Who asks, and why.
    pub context: AskContext,
    /// What to sample. Respect `max_tokens`.
    pub params: CreateMessageRequestParams,
}

/// A request for the client's roots (deprecated as of 2026-07-28).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootsRequest {
    /// Who asks, and why.
    pub context: AskContext,
}

/// Answers the server's questions. Implement the methods for the capabilities you
/// enable in [`capabilities`](InputHandler::capabilities); the others are never called.
///
/// Methods return boxed futures so the trait stays object-safe:
///
/// ```
/// use ferry_client::handler::{BoxFuture, FormRequest, HandlerCapabilities, InputHandler};
/// use ferry_protocol::elicitation::ElicitResult;
///
/// struct AcceptDefaults;
///
/// impl InputHandler for AcceptDefaults {
///     fn capabilities(&self) -> HandlerCapabilities {
///         HandlerCapabilities::none().elicitation_form()
///     }
///
///     fn elicit_form<'a>(&'a self, request: &'a FormRequest) -> BoxFuture<'a, ElicitResult> {
///         Box::pin(async move { ElicitResult::accept(request.defaults()) })
///     }
/// }
/// ```
pub trait InputHandler: Send + Sync + 'static {
    /// What this handler answers; the client declares exactly this to the server.
    fn capabilities(&self) -> HandlerCapabilities;

    /// Shows a form. Return `accept` with the content, `decline` or `cancel`.
    fn elicit_form<'a>(&'a self, request: &'a FormRequest) -> BoxFuture<'a, ElicitResult> {
        let _ = request;
        Box::pin(async { ElicitResult::decline() })
    }

    /// Offers to open a URL. Return `accept` if the user agreed to open it (and it was
    /// opened), `decline` or `cancel`.
    fn elicit_url<'a>(&'a self, request: &'a UrlRequest) -> BoxFuture<'a, ElicitResult> {
        let _ = request;
        Box::pin(async { ElicitResult::decline() })
    }

    /// Samples the model. `None` refuses.
    fn create_message<'a>(
        &'a self,
        request: &'a SamplingRequest,
    ) -> BoxFuture<'a, Option<CreateMessageResult>> {
        let _ = request;
        Box::pin(async { None })
    }

    /// Lists the roots (`file://` URIs). `None` refuses.
    fn list_roots<'a>(&'a self, request: &'a RootsRequest) -> BoxFuture<'a, Option<Vec<Root>>> {
        let _ = request;
        Box::pin(async { None })
    }
}

/// The default handler: declares nothing, so servers cannot ask anything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoInput;

impl InputHandler for NoInput {
    fn capabilities(&self) -> HandlerCapabilities {
        HandlerCapabilities::none()
    }
}

type FormFn = dyn Fn(&FormRequest) -> BoxFuture<'static, ElicitResult> + Send + Sync;
type UrlFn = dyn Fn(&UrlRequest) -> BoxFuture<'static, ElicitResult> + Send + Sync;
type SamplingFn =
    dyn Fn(&SamplingRequest) -> BoxFuture<'static, Option<CreateMessageResult>> + Send + Sync;
type RootsFn = dyn Fn(&RootsRequest) -> BoxFuture<'static, Option<Vec<Root>>> + Send + Sync;

/// An [`InputHandler`] made of closures; each closure you set enables its capability.
///
/// ```
/// use ferry_client::handler::FnHandler;
/// use ferry_protocol::elicitation::ElicitResult;
///
/// let handler = FnHandler::new().on_form(|request| {
///     let answer = request.defaults();
///     async move { ElicitResult::accept(answer) }
/// });
/// # let _ = handler;
/// ```
#[derive(Clone, Default)]
pub struct FnHandler {
    form: Option<Arc<FormFn>>,
    url: Option<Arc<UrlFn>>,
    sampling: Option<(Arc<SamplingFn>, bool)>,
    roots: Option<Arc<RootsFn>>,
}

impl FnHandler {
    /// A handler that answers nothing until closures are added.
    pub fn new() -> Self {
        FnHandler::default()
    }

    /// Answers forms (enables form-mode elicitation).
    pub fn on_form<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(&FormRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ElicitResult> + Send + 'static,
    {
        self.form = Some(Arc::new(move |r: &FormRequest| {
            Box::pin(f(r)) as BoxFuture<'static, _>
        }));
        self
    }

    /// Answers URL requests (enables URL-mode elicitation).
    pub fn on_url<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(&UrlRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ElicitResult> + Send + 'static,
    {
        self.url = Some(Arc::new(move |r: &UrlRequest| {
            Box::pin(f(r)) as BoxFuture<'static, _>
        }));
        self
    }

    /// Answers sampling requests (enables sampling, deprecated as of 2026-07-28); `tools`
    /// also accepts requests that offer the model tools.
    #[deprecated(
        since = "0.1.0",
        note = "MCP sampling is deprecated in 2026-07-28 (SEP-2577): servers should call LLM provider APIs directly"
    )]
    pub fn on_sampling<F, Fut>(mut self, tools: bool, f: F) -> Self
    where
        F: Fn(&SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<CreateMessageResult>> + Send + 'static,
    {
        let f = Arc::new(move |r: &SamplingRequest| Box::pin(f(r)) as BoxFuture<'static, _>);
        self.sampling = Some((f, tools));
        self
    }

    /// Answers roots requests (enables roots, deprecated as of 2026-07-28).
    #[deprecated(
        since = "0.1.0",
        note = "MCP roots are deprecated in 2026-07-28 (SEP-2577): pass directories and files as tool parameters, resource URIs or server configuration"
    )]
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(&RootsRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Vec<Root>>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move |r: &RootsRequest| {
            Box::pin(f(r)) as BoxFuture<'static, _>
        }));
        self
    }
}

impl fmt::Debug for FnHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnHandler")
            .field("capabilities", &self.capabilities())
            .finish()
    }
}

impl InputHandler for FnHandler {
    #[allow(deprecated)] // Declares what the closures answer, deprecated or not.
    fn capabilities(&self) -> HandlerCapabilities {
        let mut c = HandlerCapabilities::none();
        if self.form.is_some() {
            c = c.elicitation_form();
        }
        if self.url.is_some() {
            c = c.elicitation_url();
        }
        if let Some((_, tools)) = &self.sampling {
            c = c.sampling(*tools);
        }
        if self.roots.is_some() {
            c = c.roots();
        }
        c
    }

    fn elicit_form<'a>(&'a self, request: &'a FormRequest) -> BoxFuture<'a, ElicitResult> {
        match &self.form {
            Some(f) => f(request),
            None => Box::pin(async { ElicitResult::decline() }),
        }
    }

    fn elicit_url<'a>(&'a self, request: &'a UrlRequest) -> BoxFuture<'a, ElicitResult> {
        match &self.url {
            Some(f) => f(request),
            None => Box::pin(async { ElicitResult::decline() }),
        }
    }

    fn create_message<'a>(
        &'a self,
        request: &'a SamplingRequest,
    ) -> BoxFuture<'a, Option<CreateMessageResult>> {
        match &self.sampling {
            Some((f, _)) => f(request),
            None => Box::pin(async { None }),
        }
    }

    fn list_roots<'a>(&'a self, request: &'a RootsRequest) -> BoxFuture<'a, Option<Vec<Root>>> {
        match &self.roots {
            Some(f) => f(request),
            None => Box::pin(async { None }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: serde_json::Value) -> FormRequest {
        FormRequest {
            context: AskContext {
                server: AskingServer::from_info(None, "test"),
                origin: None,
                key: None,
            },
            message: "m".into(),
            schema: serde_json::from_value(schema).unwrap(),
        }
    }

    #[test]
    fn defaults_keep_json_types() {
        let f = form(json!({"type":"object","properties":{
            "name":{"type":"string","default":"John Doe"},
            "age":{"type":"integer","default":30},
            "score":{"type":"number","default":95.5},
            "status":{"type":"string","enum":["a","b"],"default":"a"},
            "ok":{"type":"boolean","default":true},
            "none":{"type":"string"}
        }}));
        let d = f.defaults();
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(
            v,
            json!({"name":"John Doe","age":30,"score":95.5,"status":"a","ok":true})
        );
        assert!(f.check(&d).is_ok());
        assert_eq!(f.fields().count(), 6);
    }

    #[test]
    fn fn_handler_capabilities_follow_closures() {
        let h = FnHandler::new().on_form(|_| async { ElicitResult::cancel() });
        let c = h.capabilities();
        assert!(c.has_elicitation_form() && !c.has_elicitation_url() && !c.has_sampling());
        let caps = c.to_client_capabilities();
        assert_eq!(
            serde_json::to_value(caps).unwrap(),
            json!({"elicitation":{"form":{}}})
        );
        assert_eq!(NoInput.capabilities(), HandlerCapabilities::none());
    }
}
