//! Shared by the integration tests: where the spec copy lives, and which Ferry type each
//! example folder of the spec maps to.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use ferry_protocol::common::JsonObject;
use ferry_protocol::completion::{CompleteRequestParams, CompleteResult};
use ferry_protocol::content::{
    AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceLink,
    SamplingMessageContentBlock, TextContent, ToolResultContent, ToolUseContent,
};
use ferry_protocol::discover::DiscoverResult;
use ferry_protocol::elicitation::{
    BooleanSchema, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams,
    ElicitResult, NumberSchema, PrimitiveSchemaDefinition, StringSchema,
    TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
};
use ferry_protocol::error::ErrorObject;
use ferry_protocol::jsonrpc::{
    JsonRpcErrorResponse, JsonRpcNotification, JsonRpcRequest, JsonRpcResultResponse,
};
use ferry_protocol::logging::LoggingMessageNotificationParams;
use ferry_protocol::methods;
use ferry_protocol::mrtr::{
    CreateMessageRequest, ElicitRequest, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, InputResponsesExt, ListRootsRequest, MrtrResult,
};
use ferry_protocol::notifications::{
    self, CancelledNotificationParams, NotificationParams, ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
};
use ferry_protocol::pagination::{PaginatedRequestParams, RequestParams};
use ferry_protocol::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use ferry_protocol::resources::{
    BlobResourceContents, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents,
    TextResourceContents,
};
use ferry_protocol::roots::{ListRootsResult, Root};
use ferry_protocol::sampling::{
    CreateMessageRequestParams, CreateMessageResult, ModelPreferences, SamplingMessage,
};
use ferry_protocol::subscriptions::{
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
};
use ferry_protocol::tools::{CallToolRequestParams, CallToolResult, ListToolsResult, Tool};
use ferry_protocol::{ClientCapabilities, ServerCapabilities};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The in-repository copy of the spec files (`tests/spec`).
pub fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spec")
}

/// `tests/spec/2026-07-28/examples`.
pub fn examples_dir() -> PathBuf {
    spec_dir().join("2026-07-28/examples")
}

/// One example file.
pub struct Example {
    /// The folder, named after the schema type.
    pub folder: String,
    /// The file name.
    pub file: String,
    /// The file's text.
    pub text: String,
    /// The file as JSON.
    pub value: Value,
}

/// Every example, sorted by folder and file.
pub fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    let mut folders: Vec<_> = fs::read_dir(examples_dir())
        .expect("tests/spec/2026-07-28/examples is missing")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<_> = fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let text = fs::read_to_string(&file).unwrap();
            let value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", file.display()));
            out.push(Example {
                folder: name.clone(),
                file: file.file_name().unwrap().to_string_lossy().into_owned(),
                text,
                value,
            });
        }
    }
    out
}

type Outcome = Result<Value, String>;

/// Reads `text` as `T` and writes it back as JSON.
fn rt<T: Serialize + DeserializeOwned>(text: &str) -> Outcome {
    let parsed: T = serde_json::from_str(text).map_err(|e| format!("parse: {e}"))?;
    serde_json::to_value(&parsed).map_err(|e| format!("serialize: {e}"))
}

/// Like [`rt`], and also requires a second reading as `U` (an enum the type belongs to)
/// to give the same JSON back.
fn rt_also<T, U>(text: &str) -> Outcome
where
    T: Serialize + DeserializeOwned,
    U: Serialize + DeserializeOwned,
{
    let a = rt::<T>(text)?;
    let b = rt::<U>(text).map_err(|e| format!("as {}: {e}", std::any::type_name::<U>()))?;
    if a != b {
        return Err(format!(
            "reading as {} gave a different result: {b}",
            std::any::type_name::<U>()
        ));
    }
    Ok(a)
}

/// A JSON-RPC request with `method`.
fn request<P: Serialize + DeserializeOwned>(text: &str, method: &str) -> Outcome {
    let parsed: JsonRpcRequest<P> =
        serde_json::from_str(text).map_err(|e| format!("parse: {e}"))?;
    if parsed.method != method {
        return Err(format!("method `{}`, expected `{method}`", parsed.method));
    }
    serde_json::to_value(&parsed).map_err(|e| e.to_string())
}

/// A JSON-RPC notification with `method`.
fn notification<P: Serialize + DeserializeOwned>(text: &str, method: &str) -> Outcome {
    let parsed: JsonRpcNotification<P> =
        serde_json::from_str(text).map_err(|e| format!("parse: {e}"))?;
    if parsed.method != method {
        return Err(format!("method `{}`, expected `{method}`", parsed.method));
    }
    serde_json::to_value(&parsed).map_err(|e| e.to_string())
}

/// A JSON-RPC error response with `code`.
fn error_response(text: &str, code: i64) -> Outcome {
    let parsed: JsonRpcErrorResponse =
        serde_json::from_str(text).map_err(|e| format!("parse: {e}"))?;
    if parsed.error.code.get() != code {
        return Err(format!("code {}, expected {code}", parsed.error.code));
    }
    serde_json::to_value(&parsed).map_err(|e| e.to_string())
}

/// A bare error object with `code`.
fn error_object(text: &str, code: i64) -> Outcome {
    let parsed: ErrorObject = serde_json::from_str(text).map_err(|e| format!("parse: {e}"))?;
    if parsed.code.get() != code {
        return Err(format!("code {}, expected {code}", parsed.code));
    }
    serde_json::to_value(&parsed).map_err(|e| e.to_string())
}

/// `InputResponses`, also parsing each entry as the kind its key names in the example.
fn input_responses(text: &str) -> Outcome {
    let parsed: InputResponses = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let elicit = parsed
        .elicit_result("github_login")
        .map_err(|e| e.to_string())?
        .ok_or("github_login missing")?;
    if !elicit.is_accept() {
        return Err("github_login: expected accept".into());
    }
    parsed
        .create_message_result("capital_of_france")
        .map_err(|e| e.to_string())?
        .ok_or("capital_of_france missing")?;
    serde_json::to_value(&parsed).map_err(|e| e.to_string())
}

/// `ListRootsRequest`. The spec's example carries a stray `"id"` (the spec sources): an
/// input request has none, so Ferry reads past it and does not write it back. The
/// expected JSON is the example without `id`.
fn list_roots_request(text: &str) -> Outcome {
    rt_also::<ListRootsRequest, InputRequest>(text)
}

/// Round-trips one example through the Ferry type its folder names, giving the JSON Ferry
/// writes back. `None` when the folder has no mapping (a test failure).
pub fn round_trip(folder: &str, text: &str) -> Option<Outcome> {
    Some(match folder {
        // Content.
        "TextContent" => rt_also::<TextContent, ContentBlock>(text),
        "ImageContent" => rt_also::<ImageContent, ContentBlock>(text),
        "AudioContent" => rt_also::<AudioContent, SamplingMessageContentBlock>(text),
        "ResourceLink" => rt_also::<ResourceLink, ContentBlock>(text),
        "EmbeddedResource" => rt_also::<EmbeddedResource, ContentBlock>(text),
        "ToolUseContent" => rt_also::<ToolUseContent, SamplingMessageContentBlock>(text),
        "ToolResultContent" => rt_also::<ToolResultContent, SamplingMessageContentBlock>(text),
        "TextResourceContents" => rt_also::<TextResourceContents, ResourceContents>(text),
        "BlobResourceContents" => rt_also::<BlobResourceContents, ResourceContents>(text),

        // Capabilities and discovery.
        "ClientCapabilities" => rt::<ClientCapabilities>(text),
        "ServerCapabilities" => rt::<ServerCapabilities>(text),
        "DiscoverRequest" => request::<RequestParams>(text, methods::DISCOVER),
        "DiscoverResult" => rt::<DiscoverResult>(text),
        "DiscoverResultResponse" => rt::<JsonRpcResultResponse<DiscoverResult>>(text),

        // Tools.
        "Tool" => rt::<Tool>(text),
        "ListToolsRequest" => request::<PaginatedRequestParams>(text, methods::TOOLS_LIST),
        "ListToolsResult" => rt::<ListToolsResult>(text),
        "ListToolsResultResponse" => rt::<JsonRpcResultResponse<ListToolsResult>>(text),
        "CallToolRequest" => request::<CallToolRequestParams>(text, methods::TOOLS_CALL),
        "CallToolRequestParams" => rt::<CallToolRequestParams>(text),
        "CallToolResult" => rt_also::<CallToolResult, MrtrResult<CallToolResult>>(text),
        "CallToolResultResponse" => rt::<JsonRpcResultResponse<MrtrResult<CallToolResult>>>(text),
        "ToolListChangedNotification" => {
            notification::<NotificationParams>(text, notifications::TOOLS_LIST_CHANGED)
        }

        // Prompts.
        "ListPromptsRequest" => request::<PaginatedRequestParams>(text, methods::PROMPTS_LIST),
        "ListPromptsResult" => rt::<ListPromptsResult>(text),
        "ListPromptsResultResponse" => rt::<JsonRpcResultResponse<ListPromptsResult>>(text),
        "GetPromptRequest" => request::<GetPromptRequestParams>(text, methods::PROMPTS_GET),
        "GetPromptRequestParams" => rt::<GetPromptRequestParams>(text),
        "GetPromptResult" => rt_also::<GetPromptResult, MrtrResult<GetPromptResult>>(text),
        "GetPromptResultResponse" => rt::<JsonRpcResultResponse<MrtrResult<GetPromptResult>>>(text),
        "PromptListChangedNotification" => {
            notification::<NotificationParams>(text, notifications::PROMPTS_LIST_CHANGED)
        }

        // Resources.
        "Resource" => rt::<Resource>(text),
        "ListResourcesRequest" => request::<PaginatedRequestParams>(text, methods::RESOURCES_LIST),
        "ListResourcesResult" => rt::<ListResourcesResult>(text),
        "ListResourcesResultResponse" => rt::<JsonRpcResultResponse<ListResourcesResult>>(text),
        "ListResourceTemplatesRequest" => {
            request::<PaginatedRequestParams>(text, methods::RESOURCES_TEMPLATES_LIST)
        }
        "ListResourceTemplatesResult" => rt::<ListResourceTemplatesResult>(text),
        "ListResourceTemplatesResultResponse" => {
            rt::<JsonRpcResultResponse<ListResourceTemplatesResult>>(text)
        }
        "ReadResourceRequest" => {
            request::<ReadResourceRequestParams>(text, methods::RESOURCES_READ)
        }
        "ReadResourceResult" => rt_also::<ReadResourceResult, MrtrResult<ReadResourceResult>>(text),
        "ReadResourceResultResponse" => {
            rt::<JsonRpcResultResponse<MrtrResult<ReadResourceResult>>>(text)
        }
        "ResourceListChangedNotification" => {
            notification::<NotificationParams>(text, notifications::RESOURCES_LIST_CHANGED)
        }
        "ResourceUpdatedNotification" => notification::<ResourceUpdatedNotificationParams>(
            text,
            notifications::RESOURCES_UPDATED,
        ),
        "ResourceUpdatedNotificationParams" => rt::<ResourceUpdatedNotificationParams>(text),

        // Completion.
        "CompleteRequest" => request::<CompleteRequestParams>(text, methods::COMPLETION_COMPLETE),
        "CompleteRequestParams" => rt::<CompleteRequestParams>(text),
        "CompleteResult" => rt::<CompleteResult>(text),
        "CompleteResultResponse" => rt::<JsonRpcResultResponse<CompleteResult>>(text),

        // Subscriptions.
        "SubscriptionsListenRequest" => {
            request::<SubscriptionsListenRequestParams>(text, methods::SUBSCRIPTIONS_LISTEN)
        }
        "SubscriptionsListenResult" => rt::<SubscriptionsListenResult>(text),
        "SubscriptionsListenResultResponse" => {
            rt::<JsonRpcResultResponse<SubscriptionsListenResult>>(text)
        }
        "SubscriptionsAcknowledgedNotification" => {
            notification::<SubscriptionsAcknowledgedNotificationParams>(
                text,
                notifications::SUBSCRIPTIONS_ACKNOWLEDGED,
            )
        }

        // Utilities.
        "PaginatedRequestParams" => rt::<PaginatedRequestParams>(text),
        "CancelledNotification" => {
            notification::<CancelledNotificationParams>(text, notifications::CANCELLED)
        }
        "CancelledNotificationParams" => rt::<CancelledNotificationParams>(text),
        "ProgressNotification" => {
            notification::<ProgressNotificationParams>(text, notifications::PROGRESS)
        }
        "ProgressNotificationParams" => rt::<ProgressNotificationParams>(text),
        "LoggingMessageNotification" => {
            notification::<LoggingMessageNotificationParams>(text, notifications::MESSAGE)
        }
        "LoggingMessageNotificationParams" => rt::<LoggingMessageNotificationParams>(text),

        // Errors.
        "ParseError" => error_object(text, -32700),
        "InvalidParamsError" => error_object(text, -32602),
        "MethodNotFoundError" => error_object(text, -32601),
        "InternalError" => error_object(text, -32603),
        "HeaderMismatchError" => error_response(text, -32020),
        "MissingRequiredClientCapabilityError" => error_response(text, -32021),
        "UnsupportedProtocolVersionError" => error_response(text, -32022),

        // Multi round-trip requests.
        "InputRequests" => rt::<InputRequests>(text),
        "InputResponses" => input_responses(text),
        "InputRequiredResult" => rt_also::<InputRequiredResult, MrtrResult<CallToolResult>>(text),

        // Elicitation.
        "ElicitRequest" => rt_also::<ElicitRequest, InputRequest>(text),
        "ElicitRequestFormParams" => rt_also::<ElicitRequestFormParams, ElicitRequestParams>(text),
        "ElicitRequestURLParams" => rt_also::<ElicitRequestUrlParams, ElicitRequestParams>(text),
        "ElicitResult" => rt::<ElicitResult>(text),
        "StringSchema" => rt_also::<StringSchema, PrimitiveSchemaDefinition>(text),
        "NumberSchema" => rt_also::<NumberSchema, PrimitiveSchemaDefinition>(text),
        "BooleanSchema" => rt_also::<BooleanSchema, PrimitiveSchemaDefinition>(text),
        "UntitledSingleSelectEnumSchema" => {
            rt_also::<UntitledSingleSelectEnumSchema, PrimitiveSchemaDefinition>(text)
        }
        "TitledSingleSelectEnumSchema" => {
            rt_also::<TitledSingleSelectEnumSchema, PrimitiveSchemaDefinition>(text)
        }
        "UntitledMultiSelectEnumSchema" => {
            rt_also::<UntitledMultiSelectEnumSchema, PrimitiveSchemaDefinition>(text)
        }
        "TitledMultiSelectEnumSchema" => {
            rt_also::<TitledMultiSelectEnumSchema, PrimitiveSchemaDefinition>(text)
        }

        // Sampling.
        "CreateMessageRequest" => rt_also::<CreateMessageRequest, InputRequest>(text),
        "CreateMessageRequestParams" => rt::<CreateMessageRequestParams>(text),
        "CreateMessageResult" => rt::<CreateMessageResult>(text),
        "SamplingMessage" => rt::<SamplingMessage>(text),
        "ModelPreferences" => rt::<ModelPreferences>(text),

        // Roots.
        "ListRootsRequest" => list_roots_request(text),
        "ListRootsResult" => rt::<ListRootsResult>(text),
        "Root" => rt::<Root>(text),

        _ => return None,
    })
}

/// The JSON a faithful round trip of this example gives back: the example itself, except
/// for the documented spec erratum handled in [`list_roots_request`].
pub fn expected(folder: &str, value: &Value) -> Value {
    let mut v = value.clone();
    if folder == "ListRootsRequest"
        && let Some(obj) = v.as_object_mut()
    {
        obj.remove("id");
    }
    v
}

/// Makes sure `JsonObject` stays the same type as Ferry's (the import is used by tests).
pub fn empty_object() -> JsonObject {
    JsonObject::new()
}
