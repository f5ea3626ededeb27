//! `subscriptions/listen`: a long-lived request on which the server sends the
//! notifications the client opted in to (subscriptions.mdx).

use serde::{Deserialize, Serialize};

use crate::jsonrpc::RequestId;
use crate::meta::{Meta, RequestMeta, SUBSCRIPTION_ID};
use crate::result::{ResultType, impl_mcp_result};

/// The notification types a listen request opts in to, or that the server agreed to
/// (schema.ts `SubscriptionFilter`, plus `taskIds` from the Tasks extension). An absent
/// member means not subscribed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (Tasks extension; needs its capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

impl SubscriptionFilter {
    /// Nothing subscribed.
    pub fn new() -> Self {
        SubscriptionFilter::default()
    }

    /// Opts in to tool list changes.
    pub fn with_tools_list_changed(mut self) -> Self {
        self.tools_list_changed = Some(true);
        self
    }

    /// Opts in to prompt list changes.
    pub fn with_prompts_list_changed(mut self) -> Self {
        self.prompts_list_changed = Some(true);
        self
    }

    /// Opts in to resource list changes.
    pub fn with_resources_list_changed(mut self) -> Self {
        self.resources_list_changed = Some(true);
        self
    }

    /// Subscribes to updates of `uri`.
    pub fn with_resource(mut self, uri: impl Into<String>) -> Self {
        self.resource_subscriptions
            .get_or_insert_with(Vec::new)
            .push(uri.into());
        self
    }

    /// Subscribes to status notifications of task `id` (Tasks extension).
    pub fn with_task(mut self, id: impl Into<String>) -> Self {
        self.task_ids.get_or_insert_with(Vec::new).push(id.into());
        self
    }

    /// Whether tool list changes are wanted.
    pub fn wants_tools_list_changed(&self) -> bool {
        self.tools_list_changed == Some(true)
    }

    /// Whether prompt list changes are wanted.
    pub fn wants_prompts_list_changed(&self) -> bool {
        self.prompts_list_changed == Some(true)
    }

    /// Whether resource list changes are wanted.
    pub fn wants_resources_list_changed(&self) -> bool {
        self.resources_list_changed == Some(true)
    }

    /// Whether updates of exactly `uri` are wanted.
    pub fn wants_resource(&self, uri: &str) -> bool {
        self.resource_subscriptions
            .iter()
            .flatten()
            .any(|u| u == uri)
    }

    /// Whether status notifications of task `id` are wanted.
    pub fn wants_task(&self, id: &str) -> bool {
        self.task_ids.iter().flatten().any(|t| t == id)
    }

    /// Whether nothing at all is subscribed.
    pub fn is_empty(&self) -> bool {
        !self.wants_tools_list_changed()
            && !self.wants_prompts_list_changed()
            && !self.wants_resources_list_changed()
            && self
                .resource_subscriptions
                .as_ref()
                .is_none_or(Vec::is_empty)
            && self.task_ids.as_ref().is_none_or(Vec::is_empty)
    }

    /// The part of this (requested) filter that `supported` allows: booleans kept only
    /// where both are true, lists only when `supported` has them (`Some`, even empty,
    /// means the kind is supported). This is what the acknowledgement should carry.
    pub fn restrict_to(&self, supported: &SubscriptionFilter) -> SubscriptionFilter {
        let both =
            |a: Option<bool>, b: Option<bool>| (a == Some(true) && b == Some(true)).then_some(true);
        SubscriptionFilter {
            tools_list_changed: both(self.tools_list_changed, supported.tools_list_changed),
            prompts_list_changed: both(self.prompts_list_changed, supported.prompts_list_changed),
            resources_list_changed: both(
                self.resources_list_changed,
                supported.resources_list_changed,
            ),
            resource_subscriptions: supported
                .resource_subscriptions
                .as_ref()
                .and(self.resource_subscriptions.clone()),
            task_ids: supported.task_ids.as_ref().and(self.task_ids.clone()),
        }
    }
}

/// The params of `subscriptions/listen` (schema.ts `SubscriptionsListenRequestParams`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenRequestParams {
    /// Request metadata (version, capabilities, client info).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// What to receive.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsListenRequestParams {
    /// Params opting in to `notifications`.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        SubscriptionsListenRequestParams {
            meta: None,
            notifications,
        }
    }

    /// Sets the request metadata.
    pub fn with_meta(mut self, meta: RequestMeta) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// The params of `notifications/subscriptions/acknowledged` (schema.ts
/// `SubscriptionsAcknowledgedNotificationParams`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// Metadata; carries the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The subset of the requested filter the server will honour.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsAcknowledgedNotificationParams {
    /// The acknowledgement of listen request `id`, honouring `notifications`.
    pub fn new(id: &RequestId, notifications: SubscriptionFilter) -> Self {
        let mut meta = Meta::new();
        meta.insert(SUBSCRIPTION_ID.to_owned(), id.to_value());
        SubscriptionsAcknowledgedNotificationParams {
            meta: Some(meta),
            notifications,
        }
    }

    /// The subscription id, if tagged.
    pub fn subscription_id(&self) -> Option<RequestId> {
        crate::notifications::subscription_id(self.meta.as_ref())
    }
}

/// The response that ends a listen stream gracefully (schema.ts
/// `SubscriptionsListenResult`): `_meta` carries the subscription id.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Result metadata; must carry `io.modelcontextprotocol/subscriptionId`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

impl SubscriptionsListenResult {
    /// The graceful close of listen request `id`.
    pub fn closed(id: &RequestId) -> Self {
        let mut meta = Meta::new();
        meta.insert(SUBSCRIPTION_ID.to_owned(), id.to_value());
        SubscriptionsListenResult {
            meta: Some(meta),
            result_type: Some(ResultType::Complete),
        }
    }

    /// The subscription id, if present.
    pub fn subscription_id(&self) -> Option<RequestId> {
        crate::notifications::subscription_id(self.meta.as_ref())
    }
}

impl_mcp_result!(SubscriptionsListenResult);
