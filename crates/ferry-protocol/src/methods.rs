//! Method names of 2026-07-28, and typed request/notification descriptors
//! (schema.ts).
//!
//! Client requests are the ten constants from [`DISCOVER`] to [`TOOLS_CALL`]; the three
//! input-request methods ([`ELICITATION_CREATE`], [`SAMPLING_CREATE_MESSAGE`],
//! [`ROOTS_LIST`]) only travel inside an `InputRequiredResult`. Notification names live in
//! [`crate::notifications`], and 2025-11-25-only names in [`crate::legacy`].
//!
//! The marker types ([`CallTool`], [`Progress`], ...) tie a method to its params and
//! result types:
//!
//! ```
//! use ferry_protocol::methods::{CallTool, RequestType};
//! use ferry_protocol::tools::CallToolRequestParams;
//!
//! let req = CallTool::request(1, CallToolRequestParams::new("get_weather"));
//! assert_eq!(req.method, "tools/call");
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::completion::{CompleteRequestParams, CompleteResult};
use crate::discover::DiscoverResult;
use crate::jsonrpc::{JsonRpcNotification, JsonRpcRequest, RequestId};
use crate::logging::LoggingMessageNotificationParams;
use crate::mrtr::MrtrResult;
use crate::notifications::{
    self, CancelledNotificationParams, NotificationParams, ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
};
use crate::pagination::{PaginatedRequestParams, RequestParams};
use crate::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use crate::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams, ReadResourceResult,
};
use crate::result::EmptyResult;
use crate::subscriptions::{
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
};
use crate::tasks::{
    GetTaskResult, TaskIdParams, TaskStatusNotificationParams, UpdateTaskRequestParams,
};
use crate::tools::{CallToolRequestParams, CallToolResult, ListToolsResult};

/// `server/discover`.
pub const DISCOVER: &str = "server/discover";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `subscriptions/listen`.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";

/// Input request `elicitation/create` (inside `InputRequiredResult` only).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// Input request `sampling/createMessage` (inside `InputRequiredResult` only; deprecated).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// Input request `roots/list` (inside `InputRequiredResult` only; deprecated).
pub const ROOTS_LIST: &str = "roots/list";

/// Every 2026-07-28 client request method.
pub const ALL: [&str; 10] = [
    DISCOVER,
    COMPLETION_COMPLETE,
    PROMPTS_LIST,
    PROMPTS_GET,
    RESOURCES_LIST,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_READ,
    SUBSCRIPTIONS_LISTEN,
    TOOLS_LIST,
    TOOLS_CALL,
];

/// The input request methods.
pub const INPUT_REQUESTS: [&str; 3] = [ELICITATION_CREATE, SAMPLING_CREATE_MESSAGE, ROOTS_LIST];

/// The requests that may answer with an `InputRequiredResult` and take `inputResponses`.
pub const MRTR_CAPABLE: [&str; 3] = [TOOLS_CALL, PROMPTS_GET, RESOURCES_READ];

/// The paginated list requests.
pub const PAGINATED: [&str; 4] = [
    TOOLS_LIST,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_TEMPLATES_LIST,
];

/// The requests whose complete results carry `ttlMs` and `cacheScope`.
pub const CACHEABLE: [&str; 6] = [
    DISCOVER,
    TOOLS_LIST,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_READ,
];

/// Whether `method` is a 2026-07-28 client request.
pub fn is_request(method: &str) -> bool {
    ALL.contains(&method)
}

/// Whether `method` may return an `InputRequiredResult`.
pub fn is_mrtr_capable(method: &str) -> bool {
    MRTR_CAPABLE.contains(&method)
}

/// Whether `method` is a paginated list.
pub fn is_paginated(method: &str) -> bool {
    PAGINATED.contains(&method)
}

/// Whether `method`'s complete results are cacheable.
pub fn is_cacheable(method: &str) -> bool {
    CACHEABLE.contains(&method)
}

/// The params member mirrored in the HTTP `Mcp-Name` header: `name` for `tools/call` and
/// `prompts/get`, `uri` for `resources/read`, `taskId` for the Tasks extension's
/// `tasks/get`, `tasks/update` and `tasks/cancel`.
pub fn name_member(method: &str) -> Option<&'static str> {
    match method {
        TOOLS_CALL | PROMPTS_GET => Some("name"),
        RESOURCES_READ => Some("uri"),
        TASKS_GET | TASKS_UPDATE | TASKS_CANCEL => Some("taskId"),
        _ => None,
    }
}

/// A request method with its params and result types.
pub trait RequestType {
    /// The method name.
    const METHOD: &'static str;
    /// The params type.
    type Params: Serialize + DeserializeOwned;
    /// The result type.
    type Result: Serialize + DeserializeOwned;

    /// Builds the JSON-RPC request.
    fn request(id: impl Into<RequestId>, params: Self::Params) -> JsonRpcRequest<Self::Params> {
        JsonRpcRequest::new(id, Self::METHOD, params)
    }
}

/// A notification method with its params type.
pub trait NotificationType {
    /// The method name.
    const METHOD: &'static str;
    /// The params type.
    type Params: Serialize + DeserializeOwned;

    /// Builds the JSON-RPC notification.
    fn notification(params: Self::Params) -> JsonRpcNotification<Self::Params> {
        JsonRpcNotification::new(Self::METHOD, params)
    }
}

macro_rules! request_types {
    ($($(#[$doc:meta])* $name:ident => $method:expr, $params:ty, $result:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl RequestType for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    )*};
}

macro_rules! notification_types {
    ($($(#[$doc:meta])* $name:ident => $method:expr, $params:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl NotificationType for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    )*};
}

request_types! {
    /// `server/discover`.
    Discover => DISCOVER, RequestParams, DiscoverResult;
    /// `completion/complete`.
    Complete => COMPLETION_COMPLETE, CompleteRequestParams, CompleteResult;
    /// `prompts/list`.
    ListPrompts => PROMPTS_LIST, PaginatedRequestParams, ListPromptsResult;
    /// `prompts/get`; may ask for input first.
    GetPrompt => PROMPTS_GET, GetPromptRequestParams, MrtrResult<GetPromptResult>;
    /// `resources/list`.
    ListResources => RESOURCES_LIST, PaginatedRequestParams, ListResourcesResult;
    /// `resources/templates/list`.
    ListResourceTemplates => RESOURCES_TEMPLATES_LIST, PaginatedRequestParams, ListResourceTemplatesResult;
    /// `resources/read`; may ask for input first.
    ReadResource => RESOURCES_READ, ReadResourceRequestParams, MrtrResult<ReadResourceResult>;
    /// `subscriptions/listen`; its result only ends the stream.
    SubscriptionsListen => SUBSCRIPTIONS_LISTEN, SubscriptionsListenRequestParams, SubscriptionsListenResult;
    /// `tools/list`.
    ListTools => TOOLS_LIST, PaginatedRequestParams, ListToolsResult;
    /// `tools/call`; may ask for input first.
    CallTool => TOOLS_CALL, CallToolRequestParams, MrtrResult<CallToolResult>;
    /// `tasks/get` (Tasks extension).
    GetTask => TASKS_GET, TaskIdParams, GetTaskResult;
    /// `tasks/update` (Tasks extension): an empty acknowledgement.
    UpdateTask => TASKS_UPDATE, UpdateTaskRequestParams, EmptyResult;
    /// `tasks/cancel` (Tasks extension): an empty acknowledgement.
    CancelTask => TASKS_CANCEL, TaskIdParams, EmptyResult;
}

notification_types! {
    /// `notifications/cancelled`.
    Cancelled => notifications::CANCELLED, CancelledNotificationParams;
    /// `notifications/progress`.
    Progress => notifications::PROGRESS, ProgressNotificationParams;
    /// `notifications/message` (deprecated).
    LoggingMessage => notifications::MESSAGE, LoggingMessageNotificationParams;
    /// `notifications/resources/updated`.
    ResourceUpdated => notifications::RESOURCES_UPDATED, ResourceUpdatedNotificationParams;
    /// `notifications/resources/list_changed`.
    ResourceListChanged => notifications::RESOURCES_LIST_CHANGED, NotificationParams;
    /// `notifications/tools/list_changed`.
    ToolListChanged => notifications::TOOLS_LIST_CHANGED, NotificationParams;
    /// `notifications/prompts/list_changed`.
    PromptListChanged => notifications::PROMPTS_LIST_CHANGED, NotificationParams;
    /// `notifications/subscriptions/acknowledged`.
    SubscriptionsAcknowledged => notifications::SUBSCRIPTIONS_ACKNOWLEDGED, SubscriptionsAcknowledgedNotificationParams;
    /// `notifications/tasks` (Tasks extension): a task's detailed status.
    TaskStatusChanged => notifications::TASKS, TaskStatusNotificationParams;
}

/// Every request method a client may send a server, in either era: the ten of
/// 2026-07-28, the five that only 2025-11-25 sessions use, and the three of the Tasks
/// extension. Parsed once per request, so the rest of a server matches on a value
/// instead of comparing strings.
///
/// ```
/// use ferry_protocol::methods::Method;
///
/// assert_eq!(Method::parse("tools/call"), Some(Method::ToolsCall));
/// assert_eq!(Method::ToolsCall.as_str(), "tools/call");
/// assert!(Method::Ping.is_legacy_only());
/// assert_eq!(Method::parse("tools/delete"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// `prompts/list`.
    PromptsList,
    /// `prompts/get`.
    PromptsGet,
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourcesTemplatesList,
    /// `resources/read`.
    ResourcesRead,
    /// `completion/complete`.
    CompletionComplete,
    /// `subscriptions/listen`.
    SubscriptionsListen,
    /// `initialize` (2025-11-25 only).
    Initialize,
    /// `ping` (2025-11-25 only).
    Ping,
    /// `logging/setLevel` (2025-11-25 only).
    LoggingSetLevel,
    /// `resources/subscribe` (2025-11-25 only).
    ResourcesSubscribe,
    /// `resources/unsubscribe` (2025-11-25 only).
    ResourcesUnsubscribe,
    /// `tasks/get` (Tasks extension).
    TasksGet,
    /// `tasks/update` (Tasks extension).
    TasksUpdate,
    /// `tasks/cancel` (Tasks extension).
    TasksCancel,
}

impl Method {
    /// Every method, in declaration order.
    pub const ALL: [Method; 18] = [
        Method::Discover,
        Method::ToolsList,
        Method::ToolsCall,
        Method::PromptsList,
        Method::PromptsGet,
        Method::ResourcesList,
        Method::ResourcesTemplatesList,
        Method::ResourcesRead,
        Method::CompletionComplete,
        Method::SubscriptionsListen,
        Method::Initialize,
        Method::Ping,
        Method::LoggingSetLevel,
        Method::ResourcesSubscribe,
        Method::ResourcesUnsubscribe,
        Method::TasksGet,
        Method::TasksUpdate,
        Method::TasksCancel,
    ];

    /// The method named `name`, if it is one of these.
    pub fn parse(name: &str) -> Option<Method> {
        Some(match name {
            TOOLS_CALL => Method::ToolsCall,
            TOOLS_LIST => Method::ToolsList,
            DISCOVER => Method::Discover,
            PROMPTS_LIST => Method::PromptsList,
            PROMPTS_GET => Method::PromptsGet,
            RESOURCES_LIST => Method::ResourcesList,
            RESOURCES_TEMPLATES_LIST => Method::ResourcesTemplatesList,
            RESOURCES_READ => Method::ResourcesRead,
            COMPLETION_COMPLETE => Method::CompletionComplete,
            SUBSCRIPTIONS_LISTEN => Method::SubscriptionsListen,
            crate::legacy::INITIALIZE => Method::Initialize,
            crate::legacy::PING => Method::Ping,
            crate::legacy::LOGGING_SET_LEVEL => Method::LoggingSetLevel,
            crate::legacy::RESOURCES_SUBSCRIBE => Method::ResourcesSubscribe,
            crate::legacy::RESOURCES_UNSUBSCRIBE => Method::ResourcesUnsubscribe,
            TASKS_GET => Method::TasksGet,
            TASKS_UPDATE => Method::TasksUpdate,
            TASKS_CANCEL => Method::TasksCancel,
            _ => return None,
        })
    }

    /// The method's name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Discover => DISCOVER,
            Method::ToolsList => TOOLS_LIST,
            Method::ToolsCall => TOOLS_CALL,
            Method::PromptsList => PROMPTS_LIST,
            Method::PromptsGet => PROMPTS_GET,
            Method::ResourcesList => RESOURCES_LIST,
            Method::ResourcesTemplatesList => RESOURCES_TEMPLATES_LIST,
            Method::ResourcesRead => RESOURCES_READ,
            Method::CompletionComplete => COMPLETION_COMPLETE,
            Method::SubscriptionsListen => SUBSCRIPTIONS_LISTEN,
            Method::Initialize => crate::legacy::INITIALIZE,
            Method::Ping => crate::legacy::PING,
            Method::LoggingSetLevel => crate::legacy::LOGGING_SET_LEVEL,
            Method::ResourcesSubscribe => crate::legacy::RESOURCES_SUBSCRIBE,
            Method::ResourcesUnsubscribe => crate::legacy::RESOURCES_UNSUBSCRIBE,
            Method::TasksGet => TASKS_GET,
            Method::TasksUpdate => TASKS_UPDATE,
            Method::TasksCancel => TASKS_CANCEL,
        }
    }

    /// Whether only 2025-11-25 sessions use it (2026-07-28 removed it).
    pub const fn is_legacy_only(self) -> bool {
        matches!(
            self,
            Method::Initialize
                | Method::Ping
                | Method::LoggingSetLevel
                | Method::ResourcesSubscribe
                | Method::ResourcesUnsubscribe
        )
    }

    /// Whether only 2026-07-28 requests use it.
    pub const fn is_modern_only(self) -> bool {
        matches!(
            self,
            Method::Discover
                | Method::SubscriptionsListen
                | Method::TasksGet
                | Method::TasksUpdate
                | Method::TasksCancel
        )
    }

    /// Whether it may answer with an `InputRequiredResult` (mrtr.mdx).
    pub const fn is_mrtr_capable(self) -> bool {
        matches!(
            self,
            Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead
        )
    }

    /// The params member mirrored in the `Mcp-Name` header (see [`name_member`]).
    pub const fn name_member(self) -> Option<&'static str> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some("name"),
            Method::ResourcesRead => Some("uri"),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some("taskId"),
            _ => None,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `tasks/get` (Tasks extension).
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/update` (Tasks extension).
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/cancel` (Tasks extension).
pub const TASKS_CANCEL: &str = "tasks/cancel";
