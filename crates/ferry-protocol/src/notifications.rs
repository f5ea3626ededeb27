//! Notifications: method names and params (schema.ts, progress.mdx, cancellation.mdx).
//!
//! Notifications sent on a `subscriptions/listen` stream carry
//! `_meta["io.modelcontextprotocol/subscriptionId"]`; the params types here have
//! `with_subscription_id` to set it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::ProgressToken;
use crate::jsonrpc::RequestId;
use crate::meta::{Meta, SUBSCRIPTION_ID};

/// `notifications/cancelled`: the client cancels a request (stdio); the server ends a
/// `subscriptions/listen` stream (stdio only).
pub const CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress`: progress of a request that sent a `progressToken`.
pub const PROGRESS: &str = "notifications/progress";
/// `notifications/message`: a log message (deprecated).
pub const MESSAGE: &str = "notifications/message";
/// `notifications/resources/updated`: a subscribed resource changed.
pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/resources/list_changed`.
pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/tools/list_changed`.
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/prompts/list_changed`.
pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/subscriptions/acknowledged`: the first message of a listen stream.
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// `notifications/tasks`: a task's status (Tasks extension).
pub const TASKS: &str = "notifications/tasks";

/// Every 2026-07-28 core notification method.
pub const ALL: [&str; 8] = [
    CANCELLED,
    PROGRESS,
    MESSAGE,
    RESOURCES_UPDATED,
    RESOURCES_LIST_CHANGED,
    TOOLS_LIST_CHANGED,
    PROMPTS_LIST_CHANGED,
    SUBSCRIPTIONS_ACKNOWLEDGED,
];

/// The three `list_changed` notification methods.
pub const LIST_CHANGED: [&str; 3] = [
    TOOLS_LIST_CHANGED,
    PROMPTS_LIST_CHANGED,
    RESOURCES_LIST_CHANGED,
];

/// The subscription id in a notification's `_meta`, if present and valid.
pub fn subscription_id(meta: Option<&Meta>) -> Option<RequestId> {
    RequestId::from_value(meta?.get(SUBSCRIPTION_ID)?)
}

fn set_subscription_id(meta: &mut Option<Meta>, id: &RequestId) {
    meta.get_or_insert_with(Meta::new)
        .insert(SUBSCRIPTION_ID.to_owned(), id.to_value());
}

/// Params with nothing but `_meta` (schema.ts `NotificationParams`), e.g. for the
/// `list_changed` notifications.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl NotificationParams {
    /// Empty params.
    pub fn new() -> Self {
        NotificationParams::default()
    }

    /// Params tagged with the listen request's id.
    pub fn for_subscription(id: &RequestId) -> Self {
        NotificationParams::new().with_subscription_id(id)
    }

    /// Sets `_meta["io.modelcontextprotocol/subscriptionId"]`.
    pub fn with_subscription_id(mut self, id: &RequestId) -> Self {
        set_subscription_id(&mut self.meta, id);
        self
    }

    /// The subscription id, if tagged.
    pub fn subscription_id(&self) -> Option<RequestId> {
        subscription_id(self.meta.as_ref())
    }
}

/// The params of `notifications/cancelled` (schema.ts `CancelledNotificationParams`).
/// `requestId` is required in 2026-07-28; see
/// [`LegacyCancelledNotificationParams`](crate::legacy::LegacyCancelledNotificationParams)
/// for 2025-11-25.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The request to cancel (or the listen request whose stream ends).
    pub request_id: RequestId,
    /// Why, for logs or display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl CancelledNotificationParams {
    /// Cancels `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        CancelledNotificationParams {
            meta: None,
            request_id: request_id.into(),
            reason: None,
        }
    }

    /// Sets the reason.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// The params of `notifications/progress` (schema.ts `ProgressNotificationParams`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; must grow with every notification.
    #[serde(serialize_with = "crate::serde_util::compact_f64")]
    pub progress: f64,
    /// The total, if known.
    #[serde(
        default,
        serialize_with = "crate::serde_util::compact_f64_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub total: Option<f64>,
    /// What is happening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Progress for `token`.
    pub fn new(token: impl Into<ProgressToken>, progress: f64) -> Self {
        ProgressNotificationParams {
            meta: None,
            progress_token: token.into(),
            progress,
            total: None,
            message: None,
        }
    }

    /// Sets the total.
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// The params of `notifications/resources/updated` (schema.ts
/// `ResourceUpdatedNotificationParams`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The resource that changed; may be a sub-resource of the one subscribed.
    pub uri: String,
}

impl ResourceUpdatedNotificationParams {
    /// `uri` changed.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceUpdatedNotificationParams {
            meta: None,
            uri: uri.into(),
        }
    }

    /// Sets `_meta["io.modelcontextprotocol/subscriptionId"]`.
    pub fn with_subscription_id(mut self, id: &RequestId) -> Self {
        set_subscription_id(&mut self.meta, id);
        self
    }
}

/// A notification's params as a JSON object with only the subscription id, for code that
/// builds raw notifications.
pub fn subscription_params(id: &RequestId) -> Value {
    serde_json::json!({ "_meta": { SUBSCRIPTION_ID: id.to_value() } })
}
