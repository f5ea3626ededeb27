//! Multi Round-Trip Requests (mrtr.mdx): how a 2026-07-28 server asks the client for
//! elicitation, sampling or roots while answering `tools/call`, `prompts/get` or
//! `resources/read`.
//!
//! The server answers with an [`InputRequiredResult`] holding [`InputRequests`] and/or an
//! opaque `requestState`; the client gathers the inputs and retries the same request (new
//! id) with `inputResponses` under the same keys and the `requestState` echoed exactly.
//! [`InputResponses`] stay raw JSON because the server knows each key's kind only from its
//! own earlier requests; [`InputResponsesExt`] parses them per key.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::elicitation::{ElicitRequestParams, ElicitResult};
use crate::meta::Meta;
use crate::result::{ResultType, impl_mcp_result};
use crate::roots::{ListRootsRequestParams, ListRootsResult};
use crate::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// An `elicitation/create` input request (schema.ts `ElicitRequest`). Serializes with
/// `"method": "elicitation/create"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename = "elicitation/create")]
pub struct ElicitRequest {
    /// The params.
    pub params: ElicitRequestParams,
}

/// A `sampling/createMessage` input request (schema.ts `CreateMessageRequest`). Serializes
/// with `"method": "sampling/createMessage"`. Deprecated with sampling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename = "sampling/createMessage")]
pub struct CreateMessageRequest {
    /// The params.
    pub params: CreateMessageRequestParams,
}

/// A `roots/list` input request (schema.ts `ListRootsRequest`). Serializes with
/// `"method": "roots/list"`. Deprecated with roots.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename = "roots/list")]
pub struct ListRootsRequest {
    /// The optional params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<ListRootsRequestParams>,
}

/// One request the server needs the client to fulfil (schema.ts `InputRequest`), told
/// apart by `"method"`.
///
/// Not a JSON-RPC request: it has no `jsonrpc` or `id`. Unknown members (such as a stray
/// `id`) are ignored when reading.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InputRequest {
    /// `elicitation/create`.
    Elicit(ElicitRequest),
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageRequest),
    /// `roots/list`.
    ListRoots(ListRootsRequest),
}

#[derive(Deserialize)]
#[serde(tag = "method")]
enum InputRequestRepr {
    #[serde(rename = "elicitation/create")]
    Elicit(ElicitRequest),
    #[serde(rename = "sampling/createMessage")]
    CreateMessage(CreateMessageRequest),
    #[serde(rename = "roots/list")]
    ListRoots(ListRootsRequest),
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match InputRequestRepr::deserialize(d)? {
            InputRequestRepr::Elicit(r) => InputRequest::Elicit(r),
            InputRequestRepr::CreateMessage(r) => InputRequest::CreateMessage(r),
            InputRequestRepr::ListRoots(r) => InputRequest::ListRoots(r),
        })
    }
}

impl InputRequest {
    /// An `elicitation/create` request.
    pub fn elicit(params: impl Into<ElicitRequestParams>) -> Self {
        InputRequest::Elicit(ElicitRequest {
            params: params.into(),
        })
    }

    /// A `sampling/createMessage` request.
    pub fn create_message(params: CreateMessageRequestParams) -> Self {
        InputRequest::CreateMessage(CreateMessageRequest { params })
    }

    /// A `roots/list` request.
    pub fn list_roots() -> Self {
        InputRequest::ListRoots(ListRootsRequest { params: None })
    }

    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => crate::methods::ELICITATION_CREATE,
            InputRequest::CreateMessage(_) => crate::methods::SAMPLING_CREATE_MESSAGE,
            InputRequest::ListRoots(_) => crate::methods::ROOTS_LIST,
        }
    }

    /// The kind of request.
    pub fn kind(&self) -> InputKind {
        match self {
            InputRequest::Elicit(_) => InputKind::Elicit,
            InputRequest::CreateMessage(_) => InputKind::CreateMessage,
            InputRequest::ListRoots(_) => InputKind::ListRoots,
        }
    }
}

impl From<ElicitRequest> for InputRequest {
    fn from(r: ElicitRequest) -> Self {
        InputRequest::Elicit(r)
    }
}

impl From<CreateMessageRequest> for InputRequest {
    fn from(r: CreateMessageRequest) -> Self {
        InputRequest::CreateMessage(r)
    }
}

impl From<ListRootsRequest> for InputRequest {
    fn from(r: ListRootsRequest) -> Self {
        InputRequest::ListRoots(r)
    }
}

/// The three kinds of input request, for servers that record what they asked for (e.g. in
/// `requestState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InputKind {
    /// `elicitation/create`, answered by an [`ElicitResult`].
    Elicit,
    /// `sampling/createMessage`, answered by a [`CreateMessageResult`].
    CreateMessage,
    /// `roots/list`, answered by a [`ListRootsResult`].
    ListRoots,
}

impl InputKind {
    /// Parses a response of this kind.
    pub fn parse(self, value: &Value) -> Result<InputResponse, serde_json::Error> {
        Ok(match self {
            InputKind::Elicit => InputResponse::Elicit(ElicitResult::deserialize(value)?),
            InputKind::CreateMessage => {
                InputResponse::CreateMessage(Box::new(CreateMessageResult::deserialize(value)?))
            }
            InputKind::ListRoots => InputResponse::ListRoots(ListRootsResult::deserialize(value)?),
        })
    }
}

/// Server-assigned keys to the requests the client must fulfil (schema.ts
/// `InputRequests`).
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answers, under the keys of the server's [`InputRequests`] (schema.ts
/// `InputResponses`), kept raw: parse each with [`InputResponsesExt`].
pub type InputResponses = BTreeMap<String, Value>;

/// A parsed answer to one input request (schema.ts `InputResponse`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// The answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// The answer to `sampling/createMessage` (boxed: it is much larger than the others).
    CreateMessage(Box<CreateMessageResult>),
    /// The answer to `roots/list`.
    ListRoots(ListRootsResult),
}

impl InputResponse {
    /// The answer as JSON, for [`InputResponses`].
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(Box::new(r))
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

/// Typed reads of [`InputResponses`].
///
/// Each method returns `Ok(None)` when the key is absent (the server should ask again with
/// a new [`InputRequiredResult`]) and `Err` when the value is malformed (a -32602 error).
pub trait InputResponsesExt {
    /// Parses the response under `key` as `T`.
    fn parse<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, serde_json::Error>;

    /// The [`ElicitResult`] under `key`.
    fn elicit_result(&self, key: &str) -> Result<Option<ElicitResult>, serde_json::Error> {
        self.parse(key)
    }

    /// The [`CreateMessageResult`] under `key`.
    fn create_message_result(
        &self,
        key: &str,
    ) -> Result<Option<CreateMessageResult>, serde_json::Error> {
        self.parse(key)
    }

    /// The [`ListRootsResult`] under `key`.
    fn list_roots_result(&self, key: &str) -> Result<Option<ListRootsResult>, serde_json::Error> {
        self.parse(key)
    }

    /// Adds a response (client side).
    fn insert_response(&mut self, key: impl Into<String>, response: impl Into<InputResponse>);
}

impl InputResponsesExt for InputResponses {
    fn parse<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, serde_json::Error> {
        self.get(key).map(T::deserialize).transpose()
    }

    fn insert_response(&mut self, key: impl Into<String>, response: impl Into<InputResponse>) {
        self.insert(key.into(), response.into().to_value());
    }
}

/// A result asking the client for input before the request can finish (schema.ts
/// `InputRequiredResult`, `"resultType": "input_required"`). Carries at least one of
/// `inputRequests` and `requestState`. Never cacheable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `input_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// What the client must fulfil before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client echoes on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl InputRequiredResult {
    /// An empty `input_required` result; add requests or state before sending.
    pub fn new() -> Self {
        InputRequiredResult {
            result_type: Some(ResultType::InputRequired),
            ..Default::default()
        }
    }

    /// An `input_required` result with one request.
    pub fn single(key: impl Into<String>, request: impl Into<InputRequest>) -> Self {
        InputRequiredResult::new().with_input_request(key, request)
    }

    /// Adds an input request under `key`.
    pub fn with_input_request(
        mut self,
        key: impl Into<String>,
        request: impl Into<InputRequest>,
    ) -> Self {
        self.input_requests
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), request.into());
        self
    }

    /// Sets the request state.
    pub fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }

    /// Whether it carries `inputRequests` or `requestState`, as the spec requires.
    pub fn is_valid(&self) -> bool {
        self.input_requests.is_some() || self.request_state.is_some()
    }
}

/// The result of a request that may ask for input first (`tools/call`, `prompts/get`,
/// `resources/read`): the final result, or an [`InputRequiredResult`].
///
/// Read by `resultType`: `"input_required"` picks [`MrtrResult::InputRequired`]; anything
/// else, or none, is read as `T`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MrtrResult<T> {
    /// The request finished.
    Complete(T),
    /// The server needs input; retry with the answers.
    InputRequired(InputRequiredResult),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum MrtrRepr<T> {
    InputRequired(StrictInputRequired),
    Complete(T),
}

/// [`InputRequiredResult`] that only reads when `resultType` is `input_required`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StrictInputRequired {
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
    result_type: InputRequiredTag,
    #[serde(default)]
    input_requests: Option<InputRequests>,
    #[serde(default)]
    request_state: Option<String>,
}

#[derive(Deserialize)]
enum InputRequiredTag {
    #[serde(rename = "input_required")]
    InputRequired,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MrtrResult<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match MrtrRepr::<T>::deserialize(d)? {
            MrtrRepr::InputRequired(r) => {
                let InputRequiredTag::InputRequired = r.result_type;
                MrtrResult::InputRequired(InputRequiredResult {
                    meta: r.meta,
                    result_type: Some(ResultType::InputRequired),
                    input_requests: r.input_requests,
                    request_state: r.request_state,
                })
            }
            MrtrRepr::Complete(t) => MrtrResult::Complete(t),
        })
    }
}

impl<T> MrtrResult<T> {
    /// The final result, if the request finished.
    pub fn complete(self) -> Option<T> {
        match self {
            MrtrResult::Complete(t) => Some(t),
            MrtrResult::InputRequired(_) => None,
        }
    }

    /// Whether the server asked for input.
    pub fn is_input_required(&self) -> bool {
        matches!(self, MrtrResult::InputRequired(_))
    }
}

impl<T> From<InputRequiredResult> for MrtrResult<T> {
    fn from(r: InputRequiredResult) -> Self {
        MrtrResult::InputRequired(r)
    }
}

impl_mcp_result!(InputRequiredResult);
