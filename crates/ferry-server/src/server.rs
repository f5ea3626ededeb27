//! The server: its definitions, configuration and runtime changes.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use ferry_protocol::capabilities::{
    ListChangedCapability, ResourcesCapability, ServerCapabilities,
};
use ferry_protocol::common::{Implementation, JsonObject};
use ferry_protocol::discover::DiscoverResult;
use ferry_protocol::meta;
use ferry_protocol::result::CacheScope;
use ferry_protocol::version::ProtocolVersion;
use ferry_state::{KeyRing, MemoryLedger, ReplayLedger, StateGuard};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::bus::{ChangeBus, ChangeEvent};
use crate::catalog::{Catalog, ListShape};
use crate::forward::Forward;
use crate::handler::{StateMap, StateType};
use crate::hub::{Event, Hub};
use crate::prompt::{PromptBuilder, PromptEntry};
use crate::resource::{CacheHint, ResourceBuilder, ResourceEntry, TemplateBuilder, TemplateEntry};
use crate::session::Sessions;
use crate::session_store::SessionStore;
use crate::tasks::{
    MemoryTaskBus, MemoryTaskStore, TaskBus, TaskConfig, TaskFeed, TaskStore, Tasks,
};
use crate::tool::{DefinitionError, ToolBuilder, ToolEntry};
use ferry_protocol::tasks::EXTENSION as TASKS_EXTENSION;

/// An MCP server: definitions plus configuration, shared by every transport serving it.
///
/// Cheap to clone (an `Arc`). Build one with [`Server::builder`], then hand it to a
/// transport (`ferry-stdio`, `ferry-http`). Tools, prompts and resources can be added and
/// removed while it serves; listeners are told through `subscriptions/listen`.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) supported: Vec<ProtocolVersion>,
    pub(crate) supported_strs: Vec<&'static str>,
    pub(crate) tools: Catalog<ToolEntry>,
    pub(crate) prompts: Catalog<PromptEntry>,
    pub(crate) resources: Catalog<ResourceEntry>,
    pub(crate) templates: Catalog<TemplateEntry>,
    pub(crate) tools_shape: ListShape,
    pub(crate) prompts_shape: ListShape,
    pub(crate) resources_shape: ListShape,
    pub(crate) templates_shape: ListShape,
    pub(crate) discover: Bytes,
    pub(crate) server_meta: Option<Bytes>,
    pub(crate) read_cache: CacheHint,
    pub(crate) state: StateGuard,
    pub(crate) ledger: Arc<dyn ReplayLedger>,
    pub(crate) single_use_all: bool,
    pub(crate) hub: Hub,
    pub(crate) shutdown: CancellationToken,
    pub(crate) instructions: Option<String>,
    pub(crate) legacy: bool,
    pub(crate) legacy_capabilities: ServerCapabilities,
    pub(crate) sessions: Sessions,
    /// Where sessions are shared with other instances, when they are.
    pub(crate) shared_sessions: Option<crate::session_share::SharedSessions>,
    pub(crate) ask_timeout: Duration,
    pub(crate) states: StateMap,
    #[cfg(feature = "llm")]
    pub(crate) sampling: crate::llm::SamplingPolicy,
    /// The Tasks extension, when the server offers it.
    pub(crate) tasks: Option<Arc<Tasks>>,
    /// The hook answering feature methods with raw results, when set.
    pub(crate) forward: Option<Arc<dyn Forward>>,
    /// Follows tasks kept elsewhere for listen streams, when set.
    pub(crate) task_feed: Option<Arc<dyn TaskFeed>>,
}

/// Configures and builds a [`Server`].
#[must_use = "a builder does nothing until built"]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolBuilder>,
    prompts: Vec<PromptBuilder>,
    resources: Vec<ResourceBuilder>,
    templates: Vec<TemplateBuilder>,
    enable_tools: bool,
    enable_prompts: bool,
    enable_resources: bool,
    enable_completions: bool,
    enable_logging: bool,
    page_size: usize,
    list_cache: CacheHint,
    discover_cache: CacheHint,
    read_cache: CacheHint,
    keys: Option<KeyRing>,
    state_ttl: Duration,
    max_state_bytes: usize,
    ledger: Option<Arc<dyn ReplayLedger>>,
    single_use_all: bool,
    server_info_in_results: bool,
    extensions: JsonObject,
    legacy: bool,
    max_sessions: usize,
    session_idle: Duration,
    session_store: Option<Arc<dyn SessionStore>>,
    session_refresh: Duration,
    ask_timeout: Duration,
    states: StateMap,
    #[cfg(feature = "llm")]
    sampling: crate::llm::SamplingPolicy,
    tasks: Option<TaskConfig>,
    task_store: Option<Arc<dyn TaskStore>>,
    task_bus: Option<Arc<dyn TaskBus>>,
    change_bus: Option<Arc<dyn ChangeBus>>,
    forward: Option<Arc<dyn Forward>>,
    task_feed: Option<Arc<dyn TaskFeed>>,
}

impl Server {
    /// Starts a server named `name` at `version` (sent as `serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            enable_tools: false,
            enable_prompts: false,
            enable_resources: false,
            enable_completions: false,
            enable_logging: false,
            page_size: 100,
            list_cache: CacheHint::new(60_000, CacheScope::Public),
            discover_cache: CacheHint::new(3_600_000, CacheScope::Public),
            read_cache: CacheHint::new(0, CacheScope::Private),
            keys: None,
            state_ttl: Duration::from_secs(300),
            max_state_bytes: 64 * 1024,
            ledger: None,
            single_use_all: false,
            server_info_in_results: true,
            extensions: JsonObject::new(),
            legacy: true,
            max_sessions: 10_000,
            session_idle: Duration::from_secs(30 * 60),
            session_store: None,
            session_refresh: crate::session_store::DEFAULT_SESSION_REFRESH,
            ask_timeout: Duration::from_secs(10 * 60),
            states: StateMap::default(),
            #[cfg(feature = "llm")]
            sampling: crate::llm::SamplingPolicy::default(),
            tasks: None,
            task_store: None,
            task_bus: None,
            change_bus: None,
            forward: None,
            task_feed: None,
        }
    }

    /// The application state of type `S` given to [`ServerBuilder::state`].
    pub fn state<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.inner.states.get::<S>()
    }

    /// The server's self-description.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// Whether the server also serves 2025-11-25 clients (the default; see
    /// [`ServerBuilder::modern_only`]).
    pub fn serves_legacy(&self) -> bool {
        self.inner.legacy
    }

    /// The capabilities `server/discover` advertises.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.inner.capabilities
    }

    /// Whether `requestState` is sealed with a random per-process key (states do not
    /// survive a restart and cannot be opened by other instances).
    pub fn has_ephemeral_state_key(&self) -> bool {
        self.inner.state.ring().is_ephemeral()
    }

    /// Refuses a definition added while serving that clients could never reach, or
    /// whose handler needs state the server lacks.
    fn check_added(
        &self,
        kind: &'static str,
        name: &str,
        offered: bool,
        enable: &str,
        states: &[StateType],
    ) -> Result<(), DefinitionError> {
        if !offered {
            return Err(DefinitionError::new(
                kind,
                name,
                format!(
                    "the server was built without {kind}s, so clients would never see it: build it with ServerBuilder::{enable}()"
                ),
            ));
        }
        match self.inner.states.missing(states) {
            Some(t) => Err(missing_state(kind, name, t)),
            None => Ok(()),
        }
    }

    /// Adds or replaces a tool while serving, and tells listeners. Refused when the
    /// server was built without tools (see [`ServerBuilder::enable_tools`]).
    pub fn add_tool(&self, tool: ToolBuilder) -> Result<(), DefinitionError> {
        let caps = &self.inner.capabilities;
        if tool.has_task_support() && self.inner.tasks.is_none() {
            return Err(DefinitionError::new(
                "tool",
                tool.name(),
                "it runs as a task, but the server was built without tasks: build it with ServerBuilder::tasks()",
            ));
        }
        self.check_added(
            "tool",
            tool.name(),
            caps.tools.is_some(),
            "enable_tools",
            tool.state_types(),
        )?;
        let entry = tool.build()?;
        self.inner.tools.insert(entry);
        self.inner.hub.publish(Event::ToolsChanged);
        Ok(())
    }

    /// Removes a tool while serving, and tells listeners. Returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.inner.tools.remove(name);
        if removed {
            self.inner.hub.publish(Event::ToolsChanged);
        }
        removed
    }

    /// Adds or replaces a prompt while serving, and tells listeners. Refused when the
    /// server was built without prompts (see [`ServerBuilder::enable_prompts`]).
    pub fn add_prompt(&self, prompt: PromptBuilder) -> Result<(), DefinitionError> {
        let caps = &self.inner.capabilities;
        self.check_added(
            "prompt",
            prompt.name(),
            caps.prompts.is_some(),
            "enable_prompts",
            prompt.state_types(),
        )?;
        let entry = prompt.build()?;
        self.inner.prompts.insert(entry);
        self.inner.hub.publish(Event::PromptsChanged);
        Ok(())
    }

    /// Removes a prompt while serving. Returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.inner.prompts.remove(name);
        if removed {
            self.inner.hub.publish(Event::PromptsChanged);
        }
        removed
    }

    /// Adds or replaces a resource while serving, and tells listeners. Refused when the
    /// server was built without resources (see [`ServerBuilder::enable_resources`]).
    pub fn add_resource(&self, resource: ResourceBuilder) -> Result<(), DefinitionError> {
        let caps = &self.inner.capabilities;
        self.check_added(
            "resource",
            resource.uri(),
            caps.resources.is_some(),
            "enable_resources",
            resource.state_types(),
        )?;
        let entry = resource.build()?;
        self.inner.resources.insert(entry);
        self.inner.hub.publish(Event::ResourcesChanged);
        Ok(())
    }

    /// Removes a resource while serving. Returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.inner.resources.remove(uri);
        if removed {
            self.inner.hub.publish(Event::ResourcesChanged);
        }
        removed
    }

    /// Adds or replaces a resource template while serving, and tells listeners. Refused
    /// when the server was built without resources.
    pub fn add_resource_template(&self, template: TemplateBuilder) -> Result<(), DefinitionError> {
        let caps = &self.inner.capabilities;
        self.check_added(
            "resource template",
            template.uri_template(),
            caps.resources.is_some(),
            "enable_resources",
            template.state_types(),
        )?;
        let entry = template.build()?;
        self.inner.templates.insert(entry);
        self.inner.hub.publish(Event::ResourcesChanged);
        Ok(())
    }

    /// Tells listeners of a change the server's own tables do not show: a list a
    /// [`Forward`](crate::Forward) hook answers changed (an upstream's, a database's).
    /// Each open `subscriptions/listen` stream that asked for it, and each 2025-11-25
    /// session, gets its notification; a [`ChangeBus`] carries it to other instances.
    ///
    /// ```
    /// use ferry_server::{ChangeEvent, Server};
    ///
    /// let server = Server::builder("lists", "1.0.0").enable_tools().build().unwrap();
    /// // ...the tools a Forward hook lists changed:
    /// server.notify_changed(ChangeEvent::ToolsChanged);
    /// ```
    pub fn notify_changed(&self, event: ChangeEvent) {
        self.inner.hub.publish(event);
    }

    /// Tells listeners subscribed to `uri` (or a parent of it) that it changed.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner
            .hub
            .publish(Event::ResourceUpdated(Arc::from(uri)));
    }

    /// The resource URIs this instance's clients follow, sorted and each once: the
    /// `resourceSubscriptions` of every open `subscriptions/listen` stream and the
    /// `resources/subscribe` of every live 2025-11-25 session. A server answering
    /// resources from elsewhere (a [`Forward`](crate::Forward) hook, such as a gateway)
    /// subscribes to these there, and raises what it hears with
    /// [`notify_resource_updated`](Server::notify_resource_updated).
    pub fn subscribed_resources(&self) -> Vec<String> {
        let mut uris = self.inner.hub.interest.streams();
        uris.extend(self.inner.sessions.subscriptions());
        uris.sort_unstable();
        uris.dedup();
        uris
    }

    /// A receiver marked changed whenever [`subscribed_resources`] may have changed:
    /// a listen stream that follows a new URI opened, the last one following a URI
    /// closed, a session subscribed, unsubscribed or ended. (A session that expires
    /// unused is seen to end when the server next looks it up or makes room.)
    ///
    /// ```
    /// # async fn follow(server: ferry_server::Server) {
    /// let mut changes = server.subscriptions_changed();
    /// while changes.changed().await.is_ok() {
    ///     let uris = server.subscribed_resources();
    ///     // ... subscribe to `uris` upstream
    /// #   let _ = uris;
    /// }
    /// # }
    /// ```
    ///
    /// [`subscribed_resources`]: Server::subscribed_resources
    pub fn subscriptions_changed(&self) -> tokio::sync::watch::Receiver<()> {
        self.inner.hub.interest.watch()
    }

    /// How many `subscriptions/listen` streams are open.
    pub fn listener_count(&self) -> usize {
        self.inner.hub.listeners()
    }

    /// Ends every `subscriptions/listen` stream gracefully (with its completion result)
    /// and marks the server as shutting down. Transports stop accepting work after this.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
        for session in self.inner.sessions.all() {
            session.close();
        }
    }

    /// Completes when [`Server::shutdown`] is called.
    pub async fn shutting_down(&self) {
        self.inner.shutdown.cancelled().await
    }

    /// Whether [`Server::shutdown`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.shutdown.is_cancelled()
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

/// Why a server could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A definition was refused.
    #[error(transparent)]
    Definition(#[from] DefinitionError),
    /// Two definitions share a name or URI.
    #[error("duplicate {kind} {name:?}")]
    Duplicate {
        /// tool, prompt, resource or resource template.
        kind: &'static str,
        /// The repeated name or URI.
        name: String,
    },
    /// An extension id does not follow the `_meta` key rules.
    #[error("invalid extension id {0:?}: it needs a prefix such as com.example/")]
    Extension(String),
}

impl ServerBuilder {
    /// Shares `value` with every handler that takes a [`State<S>`](crate::State) of its
    /// type (one value per type; a later call for the same type replaces it). A handler
    /// that needs a type not given here is refused when the server is built.
    pub fn state<S: Send + Sync + 'static>(mut self, value: S) -> Self {
        self.states.insert(Arc::new(value));
        self
    }

    /// Like [`ServerBuilder::state`], with a value already in an `Arc` (shared with code
    /// outside the server).
    pub fn state_arc<S: Send + Sync + 'static>(mut self, value: Arc<S>) -> Self {
        self.states.insert(value);
        self
    }

    /// Instructions for the client's model, returned by `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// A title for display.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// A description for display.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Registers a tool.
    pub fn tool(mut self, tool: ToolBuilder) -> Self {
        self.tools.push(tool);
        self
    }

    /// Registers a prompt.
    pub fn prompt(mut self, prompt: PromptBuilder) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Registers a fixed resource.
    pub fn resource(mut self, resource: ResourceBuilder) -> Self {
        self.resources.push(resource);
        self
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: TemplateBuilder) -> Self {
        self.templates.push(template);
        self
    }

    /// Advertises tools even with none registered yet (for servers that add them later).
    pub fn enable_tools(mut self) -> Self {
        self.enable_tools = true;
        self
    }

    /// Advertises prompts even with none registered yet.
    pub fn enable_prompts(mut self) -> Self {
        self.enable_prompts = true;
        self
    }

    /// Advertises resources even with none registered yet.
    pub fn enable_resources(mut self) -> Self {
        self.enable_resources = true;
        self
    }

    /// Advertises `completions` even without completers.
    pub fn enable_completions(mut self) -> Self {
        self.enable_completions = true;
        self
    }

    /// Advertises the deprecated `logging` capability, so handlers may use `ctx.log`.
    #[deprecated(
        since = "0.1.0",
        note = "MCP logging is deprecated in 2026-07-28 (SEP-2577): log to stderr (stdio) or OpenTelemetry instead"
    )]
    pub fn enable_logging(mut self) -> Self {
        self.enable_logging = true;
        self
    }

    /// Declares an extension in `capabilities.extensions` (the id needs a prefix).
    pub fn extension(mut self, id: impl Into<String>, settings: Value) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Items per page of `tools/list`, `prompts/list`, `resources/list` and
    /// `resources/templates/list` (default 100).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// Caching hints for list results (default 60 s, public).
    pub fn list_cache(mut self, hint: CacheHint) -> Self {
        self.list_cache = hint;
        self
    }

    /// Caching hints for `server/discover` (default 1 h, public).
    pub fn discover_cache(mut self, hint: CacheHint) -> Self {
        self.discover_cache = hint;
        self
    }

    /// Default caching hints for `resources/read` (default 0, private).
    pub fn read_cache(mut self, hint: CacheHint) -> Self {
        self.read_cache = hint;
        self
    }

    /// The keys that seal `requestState`. Without one, a random per-process key is used:
    /// fine for one process, wrong behind a load balancer.
    pub fn state_keys(mut self, keys: KeyRing) -> Self {
        self.keys = Some(keys);
        self
    }

    /// How long a `requestState` stays valid (default 5 minutes).
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// The largest `requestState` accepted or issued, in bytes (default 64 KiB).
    pub fn max_state_bytes(mut self, bytes: usize) -> Self {
        self.max_state_bytes = bytes;
        self
    }

    /// Where single-use states are redeemed (default: in memory). Use a durable ledger
    /// to survive restarts, a shared one across instances.
    pub fn replay_ledger(mut self, ledger: Arc<dyn ReplayLedger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Redeems every `requestState` at most once, not only those of single-use tools.
    pub fn single_use_state(mut self) -> Self {
        self.single_use_all = true;
        self
    }

    /// Answers the feature methods the server advertises (`tools/*`, `prompts/*`,
    /// `resources/list`, `resources/templates/list`, `resources/read`,
    /// `completion/complete`, and `tasks/*` when it advertises the Tasks extension) with
    /// `hook`'s raw results instead of the registry (see [`Forward`]). Advertise the
    /// features with [`enable_tools`](Self::enable_tools) and its siblings, the Tasks
    /// extension with [`extension`](Self::extension).
    pub fn forward(mut self, hook: impl Forward) -> Self {
        self.forward = Some(Arc::new(hook));
        self
    }

    /// Follows, through `feed`, the tasks that `subscriptions/listen` streams name in
    /// `notifications.taskIds` when this server does not keep them itself: a server whose
    /// [`forward`](Self::forward) hook answers `tasks/*` for tasks run elsewhere (see
    /// [`TaskFeed`]). A server with tasks of its own follows those instead.
    pub fn task_feed(mut self, feed: impl TaskFeed) -> Self {
        self.task_feed = Some(Arc::new(feed));
        self
    }

    /// Serves only 2026-07-28 (stateless) requests: `initialize` is refused with an error
    /// naming the supported versions. By default the server is dual-era and also serves
    /// 2025-11-25 clients (initialize, sessions, requests to the client).
    pub fn modern_only(mut self) -> Self {
        self.legacy = false;
        self
    }

    /// The most 2025-11-25 HTTP sessions alive at once (default 10,000); `initialize`
    /// beyond it gets HTTP 503.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// How long a 2025-11-25 HTTP session may stay idle before it expires (default 30
    /// minutes); requests on an expired session get HTTP 404.
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }

    /// Shares the 2025-11-25 HTTP sessions with the other instances of this server
    /// through `store` (default: none; a session lives on the instance that answered its
    /// `initialize`, and a local lookup is all a request costs). With a store, any
    /// instance serves a session's request/response calls; its `GET` stream and the
    /// server's requests to the client stay on one instance (see [`SessionStore`]).
    /// Entries expire after [`ServerBuilder::session_idle_timeout`] without use.
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    /// How often, at most, an instance checks a session it holds against the
    /// [`SessionStore`] (default 1 second): once per interval per session, a request
    /// waits for one store round trip, which extends the session's expiry there and
    /// tells whether it was ended on another instance. Shorter refuses an ended session
    /// sooner; longer costs the store less.
    pub fn session_refresh_interval(mut self, every: Duration) -> Self {
        self.session_refresh = every;
        self
    }

    /// How long a handler waits for a 2025-11-25 client to answer a request (elicitation,
    /// sampling, roots) before the ask fails (default 10 minutes).
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// Who answers the handlers' sampling (`ctx.sample`, `ctx.generate`): the client
    /// only (the default), an LLM provider only, or the client when it declared
    /// `sampling` and the provider otherwise. The one-line migration off the deprecated
    /// `sampling/createMessage`:
    ///
    /// ```
    /// use ferry_llm::{ModelTable, OpenAiConfig};
    /// use ferry_server::{SamplingPolicy, Server};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // A local OpenAI-compatible server; hosted APIs take their key from FERRY_LLM_API_KEY.
    /// let provider = OpenAiConfig::new("http://127.0.0.1:8080/v1", ModelTable::new("qwen2.5"))
    ///     .without_api_key()
    ///     .build()?;
    /// let server = Server::builder("summarizer", "1.0.0")
    ///     .sampling(SamplingPolicy::prefer_client(provider))
    ///     .build()?;
    /// # drop(server);
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "llm")]
    pub fn sampling(mut self, policy: crate::llm::SamplingPolicy) -> Self {
        self.sampling = policy;
        self
    }

    /// Offers the Tasks extension (`io.modelcontextprotocol/tasks`) with this
    /// configuration. A server offers it anyway, with the defaults, when a tool is
    /// registered with [`ToolBuilder::task`] or [`ToolBuilder::task_when_ready`], or a
    /// store or bus is given.
    pub fn tasks(mut self, config: TaskConfig) -> Self {
        self.tasks = Some(config);
        self
    }

    /// Where tasks are kept (default: [`MemoryTaskStore`](crate::MemoryTaskStore), in
    /// this process). Give a durable store for tasks that survive restarts, a shared one
    /// across instances.
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// How task changes, answers and cancellations travel (default:
    /// [`MemoryTaskBus`](crate::MemoryTaskBus), in this process). Give a shared bus when
    /// several instances share one store.
    pub fn task_bus(mut self, bus: Arc<dyn TaskBus>) -> Self {
        self.task_bus = Some(bus);
        self
    }

    /// Carries change events to and from the other instances of this server (default:
    /// none, events stay in this process). See [`ChangeBus`].
    pub fn change_bus(mut self, bus: Arc<dyn ChangeBus>) -> Self {
        self.change_bus = Some(bus);
        self
    }

    /// Leaves `serverInfo` out of result `_meta` (it is included by default).
    pub fn without_server_info_in_results(mut self) -> Self {
        self.server_info_in_results = false;
        self
    }

    /// Builds the server, checking every definition.
    pub fn build(self) -> Result<Server, BuildError> {
        for id in self.extensions.keys() {
            if !meta::is_valid_extension_id(id) {
                return Err(BuildError::Extension(id.clone()));
            }
        }
        let needs = self
            .tools
            .iter()
            .map(|t| ("tool", t.name(), t.state_types()))
            .chain(
                self.prompts
                    .iter()
                    .map(|p| ("prompt", p.name(), p.state_types())),
            )
            .chain(
                self.resources
                    .iter()
                    .map(|r| ("resource", r.uri(), r.state_types())),
            )
            .chain(
                self.templates
                    .iter()
                    .map(|t| ("resource template", t.uri_template(), t.state_types())),
            );
        for (kind, name, states) in needs {
            if let Some(t) = self.states.missing(states) {
                return Err(BuildError::Definition(missing_state(kind, name, t)));
            }
        }
        let has_tools = !self.tools.is_empty() || self.enable_tools;
        let has_prompts = !self.prompts.is_empty() || self.enable_prompts;
        let has_resources =
            !self.resources.is_empty() || !self.templates.is_empty() || self.enable_resources;

        let tools = build_all(
            self.tools,
            ToolBuilder::build,
            |e| e.def.name.clone(),
            "tool",
        )?;
        let prompts = build_all(
            self.prompts,
            PromptBuilder::build,
            |e| e.def.name.clone(),
            "prompt",
        )?;
        let resources = build_all(
            self.resources,
            ResourceBuilder::build,
            |e| e.def.uri.clone(),
            "resource",
        )?;
        let templates = build_all(
            self.templates,
            TemplateBuilder::build,
            |e| e.def.uri_template.clone(),
            "resource template",
        )?;
        let offers_tasks = self.tasks.is_some()
            || self.task_store.is_some()
            || self.task_bus.is_some()
            || tools.iter().any(|t| t.task.is_some());
        let mut extensions = self.extensions.clone();
        if offers_tasks {
            extensions.insert(TASKS_EXTENSION.to_owned(), json!({}));
        }
        let has_completions = self.enable_completions
            || prompts.iter().any(|p| !p.completers.is_empty())
            || templates.iter().any(|t| !t.completers.is_empty());

        let capabilities = ServerCapabilities {
            tools: has_tools.then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            prompts: has_prompts.then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            resources: has_resources.then_some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
            }),
            completions: has_completions.then(JsonObject::new),
            logging: self.enable_logging.then(JsonObject::new),
            extensions: (!extensions.is_empty()).then_some(extensions),
            ..Default::default()
        };

        // 2025-11-25 sessions also get logging (logging/setLevel) and subscriptions.
        // The Tasks extension is a 2026-07-28 one: sessions do not see it.
        let legacy_capabilities = ServerCapabilities {
            logging: Some(JsonObject::new()),
            resources: capabilities.resources.clone(),
            extensions: (!self.extensions.is_empty()).then(|| self.extensions.clone()),
            ..capabilities.clone()
        };
        let server_meta = self.server_info_in_results.then(|| {
            let mut s = serde_json::to_string(&json!({ meta::SERVER_INFO: self.info }))
                .unwrap_or_else(|_| "{}".into());
            // Keep the members only: `"key":{...}`.
            s.pop();
            s.remove(0);
            Bytes::from(s)
        });

        let supported = vec![ProtocolVersion::V2026_07_28];
        let supported_strs: Vec<&'static str> = supported.iter().map(|v| v.as_str()).collect();
        let mut discover =
            DiscoverResult::new(supported_strs.iter().copied(), capabilities.clone());
        discover.ttl_ms = Some(self.discover_cache.ttl_ms);
        discover.cache_scope = Some(self.discover_cache.scope);
        discover.instructions = self.instructions.clone();
        if self.server_info_in_results {
            let mut m = ferry_protocol::meta::Meta::new();
            m.insert(
                meta::SERVER_INFO.to_owned(),
                serde_json::to_value(&self.info).unwrap_or_default(),
            );
            discover.meta = Some(m);
        }
        let discover = Bytes::from(serde_json::to_vec(&discover).unwrap_or_default());

        let tail = |hint: CacheHint| {
            let mut t = format!(
                ",\"ttlMs\":{},\"cacheScope\":{}",
                hint.ttl_ms,
                serde_json::to_string(&hint.scope).unwrap_or_else(|_| "\"private\"".into())
            );
            if let Some(m) = &server_meta {
                t.push_str(",\"_meta\":{");
                t.push_str(std::str::from_utf8(m).unwrap_or_default());
                t.push('}');
            }
            Bytes::from(t)
        };
        let shape = |member| ListShape {
            member,
            page_size: self.page_size,
            tail: tail(self.list_cache),
        };

        let keys = match self.keys {
            Some(k) => k,
            None => KeyRing::random(),
        };
        let state = StateGuard::new(keys)
            .with_ttl(self.state_ttl)
            .with_max_token_len(self.max_state_bytes);
        let ledger = self
            .ledger
            .unwrap_or_else(|| Arc::new(MemoryLedger::default()) as Arc<dyn ReplayLedger>);

        let hub = Hub::new(1024, self.change_bus);
        // Sessions that end stop following their resources.
        let sessions = Sessions::new(self.max_sessions, self.session_idle, hub.interest.clone());
        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                capabilities,
                supported,
                supported_strs,
                tools: Catalog::new(tools),
                prompts: Catalog::new(prompts),
                resources: Catalog::new(resources),
                templates: Catalog::new(templates),
                tools_shape: shape("tools"),
                prompts_shape: shape("prompts"),
                resources_shape: shape("resources"),
                templates_shape: shape("resourceTemplates"),
                discover,
                server_meta,
                read_cache: self.read_cache,
                state,
                ledger,
                single_use_all: self.single_use_all,
                hub,
                shutdown: CancellationToken::new(),
                instructions: self.instructions,
                legacy: self.legacy,
                legacy_capabilities,
                sessions,
                shared_sessions: self.session_store.map(|store| {
                    crate::session_share::SharedSessions {
                        store,
                        refresh: self.session_refresh,
                    }
                }),
                ask_timeout: self.ask_timeout,
                states: self.states,
                #[cfg(feature = "llm")]
                sampling: self.sampling,
                tasks: offers_tasks.then(|| {
                    Arc::new(Tasks::new(
                        self.tasks.unwrap_or_default(),
                        self.task_store
                            .unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
                        self.task_bus
                            .unwrap_or_else(|| Arc::new(MemoryTaskBus::new())),
                    ))
                }),
                forward: self.forward,
                task_feed: self.task_feed,
            }),
        })
    }
}

fn missing_state(kind: &'static str, name: &str, state: StateType) -> DefinitionError {
    DefinitionError::new(
        kind,
        name,
        format!(
            "its handler takes State<{0}>, but the server has no state of that type: add it with ServerBuilder::state",
            state.name()
        ),
    )
}

fn build_all<B, E>(
    builders: Vec<B>,
    build: impl Fn(B) -> Result<E, DefinitionError>,
    key: impl Fn(&E) -> String,
    kind: &'static str,
) -> Result<Vec<E>, BuildError> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(builders.len());
    for b in builders {
        let e = build(b)?;
        let k = key(&e);
        if !seen.insert(k.clone()) {
            return Err(BuildError::Duplicate { kind, name: k });
        }
        out.push(e);
    }
    Ok(out)
}
