//! The 2025-11-25 shapes that differ from 2026-07-28, for dual-era servers and clients
//! (versioning.mdx, backward compatibility, changelog.mdx).
//!
//! Legacy sessions start with `initialize` / `notifications/initialized`, let the server
//! send JSON-RPC requests to the client ([`SERVER_REQUESTS`]), and have results without
//! `resultType`. Types that did not change are shared with the modern modules: build
//! legacy results with those and leave `result_type` as `None`.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::common::{Implementation, JsonObject};
use crate::elicitation::{ElicitRequestFormParams, ElicitRequestUrlParams, FormMode, FormSchema};
use crate::error::{ErrorCode, ErrorObject};
use crate::jsonrpc::RequestId;
use crate::logging::LoggingLevel;
use crate::meta::{Meta, RequestMeta};
use crate::methods;
pub use crate::notifications::NotificationParams as InitializedNotificationParams;
pub use crate::pagination::RequestParams as PingRequestParams;

/// `initialize` (client request): opens a legacy session.
pub const INITIALIZE: &str = "initialize";
/// `notifications/initialized` (client notification), sent after `initialize` succeeds.
pub const INITIALIZED: &str = "notifications/initialized";
/// `ping` (either direction).
pub const PING: &str = "ping";
/// `logging/setLevel` (client request).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `resources/subscribe` (client request).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (client request).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `notifications/roots/list_changed` (client notification).
pub const ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `notifications/elicitation/complete` (server notification, URL mode).
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `tasks/get` (experimental core tasks of 2025-11-25).
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/result` (experimental core tasks of 2025-11-25).
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list` (experimental core tasks of 2025-11-25).
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel` (experimental core tasks of 2025-11-25).
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `notifications/tasks/status` (experimental core tasks of 2025-11-25).
pub const TASKS_STATUS: &str = "notifications/tasks/status";

/// `ping` sent by the server.
pub const SERVER_PING: &str = PING;
/// `sampling/createMessage` sent by the server as a JSON-RPC request.
pub const SERVER_SAMPLING_CREATE_MESSAGE: &str = methods::SAMPLING_CREATE_MESSAGE;
/// `elicitation/create` sent by the server as a JSON-RPC request.
pub const SERVER_ELICITATION_CREATE: &str = methods::ELICITATION_CREATE;
/// `roots/list` sent by the server as a JSON-RPC request.
pub const SERVER_ROOTS_LIST: &str = methods::ROOTS_LIST;

/// The requests a 2025-11-25 server may send to the client (besides the experimental
/// `tasks/*`).
pub const SERVER_REQUESTS: [&str; 4] = [
    SERVER_PING,
    SERVER_SAMPLING_CREATE_MESSAGE,
    SERVER_ELICITATION_CREATE,
    SERVER_ROOTS_LIST,
];

/// Every 2025-11-25 client request method.
pub const CLIENT_REQUESTS: [&str; 17] = [
    PING,
    INITIALIZE,
    methods::COMPLETION_COMPLETE,
    LOGGING_SET_LEVEL,
    methods::PROMPTS_GET,
    methods::PROMPTS_LIST,
    methods::RESOURCES_LIST,
    methods::RESOURCES_TEMPLATES_LIST,
    methods::RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    methods::TOOLS_CALL,
    methods::TOOLS_LIST,
    TASKS_GET,
    TASKS_RESULT,
    TASKS_LIST,
    TASKS_CANCEL,
];

/// Methods of 2025-11-25 that 2026-07-28 removed (a modern-only server answers them with
/// -32601). `tasks/get` and `tasks/cancel` are absent: the Tasks extension redefines them.
pub const REMOVED_IN_2026: [&str; 11] = [
    INITIALIZE,
    INITIALIZED,
    PING,
    LOGGING_SET_LEVEL,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    ROOTS_LIST_CHANGED,
    ELICITATION_COMPLETE,
    TASKS_RESULT,
    TASKS_LIST,
    TASKS_STATUS,
];

/// Whether 2026-07-28 removed `method`.
pub fn is_removed_in_2026(method: &str) -> bool {
    REMOVED_IN_2026.contains(&method)
}

/// Picks the session version the legacy way: the requested one if supported, otherwise
/// the latest supported (`YYYY-MM-DD` strings sort by date). `None` if `supported` is
/// empty.
pub fn negotiate_version<'a>(requested: &'a str, supported: &[&'a str]) -> Option<&'a str> {
    if supported.contains(&requested) {
        Some(requested)
    } else {
        supported.iter().copied().max()
    }
}

/// The legacy answer to an unsupported `initialize` version: -32602 with
/// `data: {supported, requested}`.
pub fn unsupported_version_error(supported: &[&str], requested: &str) -> ErrorObject {
    ErrorObject::invalid_params("Unsupported protocol version").with_data(
        json!({ "supported": supported, "requested": crate::quote::quote(requested).to_string() }),
    )
}

/// The params of `initialize`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// Request metadata (e.g. `progressToken`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The latest version the client supports.
    pub protocol_version: String,
    /// The client's capabilities, for the whole session.
    pub capabilities: ClientCapabilities,
    /// The client's self-description.
    pub client_info: Implementation,
}

impl InitializeRequestParams {
    /// Params.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeRequestParams {
            meta: None,
            protocol_version: protocol_version.into(),
            capabilities,
            client_info,
        }
    }
}

/// The result of `initialize`. Has no `resultType`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The version the session uses.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// The server's self-description.
    pub server_info: Implementation,
    /// Guidance for the model on using the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

impl InitializeResult {
    /// A result.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            meta: None,
            protocol_version: protocol_version.into(),
            capabilities,
            server_info,
            instructions: None,
        }
    }

    /// Sets the instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
}

/// The params of `logging/setLevel`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetLevelRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The lowest level the client wants for the rest of the session.
    pub level: LoggingLevel,
}

/// The params of `resources/subscribe`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscribeRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The resource to watch.
    pub uri: String,
}

/// The params of `resources/unsubscribe`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnsubscribeRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// The resource to stop watching.
    pub uri: String,
}

/// The params of `notifications/cancelled` in 2025-11-25, where `requestId` is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyCancelledNotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The request to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// URL-mode elicitation params of 2025-11-25, with `elicitationId`. Serializes with
/// `"mode": "url"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename = "url", rename_all = "camelCase")]
pub struct LegacyElicitRequestUrlParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Why the user should open the URL.
    pub message: String,
    /// Server-unique id, echoed by `notifications/elicitation/complete`.
    pub elicitation_id: String,
    /// The URL to open.
    pub url: String,
}

impl LegacyElicitRequestUrlParams {
    /// Params.
    pub fn new(
        message: impl Into<String>,
        elicitation_id: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        LegacyElicitRequestUrlParams {
            meta: None,
            message: message.into(),
            elicitation_id: elicitation_id.into(),
            url: url.into(),
        }
    }

    /// The legacy form of modern URL params, with an elicitation id.
    pub fn from_modern(params: ElicitRequestUrlParams, elicitation_id: impl Into<String>) -> Self {
        LegacyElicitRequestUrlParams {
            meta: params.meta,
            message: params.message,
            elicitation_id: elicitation_id.into(),
            url: params.url,
        }
    }

    /// The modern form, dropping the elicitation id.
    pub fn into_modern(self) -> ElicitRequestUrlParams {
        ElicitRequestUrlParams {
            meta: self.meta,
            message: self.message,
            url: self.url,
        }
    }
}

/// The params of a 2025-11-25 `elicitation/create` server request: a form (same shape as
/// 2026-07-28) or a URL with an `elicitationId`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LegacyElicitRequestParams {
    /// Form mode.
    Form(ElicitRequestFormParams),
    /// URL mode.
    Url(LegacyElicitRequestUrlParams),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LegacyElicitRepr {
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
    #[serde(default)]
    mode: Option<String>,
    message: String,
    #[serde(default, deserialize_with = "crate::elicitation::lenient_schema")]
    requested_schema: Option<FormSchema>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    elicitation_id: Option<String>,
}

impl<'de> Deserialize<'de> for LegacyElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = LegacyElicitRepr::deserialize(d)?;
        match r.mode.as_deref() {
            None | Some("form") => Ok(LegacyElicitRequestParams::Form(ElicitRequestFormParams {
                meta: r.meta,
                mode: r.mode.map(|_| FormMode::Form),
                message: r.message,
                requested_schema: r
                    .requested_schema
                    .ok_or_else(|| de::Error::missing_field("requestedSchema"))?,
            })),
            Some("url") => Ok(LegacyElicitRequestParams::Url(
                LegacyElicitRequestUrlParams {
                    meta: r.meta,
                    message: r.message,
                    elicitation_id: r
                        .elicitation_id
                        .ok_or_else(|| de::Error::missing_field("elicitationId"))?,
                    url: r.url.ok_or_else(|| de::Error::missing_field("url"))?,
                },
            )),
            Some(other) => Err(de::Error::unknown_variant(other, &["form", "url"])),
        }
    }
}

/// The params of `notifications/elicitation/complete`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// The completed URL elicitation.
    pub elicitation_id: String,
}

/// The `data` of a -32042 `URLElicitationRequiredError`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UrlElicitationRequiredErrorData {
    /// The URL elicitations the client must complete before retrying.
    pub elicitations: Vec<LegacyElicitRequestUrlParams>,
    /// Other members.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// A -32042 error asking the client to complete URL elicitations first (2025-11-25 only;
/// 2026-07-28 uses an `InputRequiredResult` instead).
pub fn url_elicitation_required(
    message: impl Into<String>,
    elicitations: Vec<LegacyElicitRequestUrlParams>,
) -> ErrorObject {
    let data = UrlElicitationRequiredErrorData {
        elicitations,
        other: JsonObject::new(),
    };
    ErrorObject::new(ErrorCode::LEGACY_URL_ELICITATION_REQUIRED, message)
        .with_data(serde_json::to_value(data).unwrap_or_default())
}
