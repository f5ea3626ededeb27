//! Checks JSON against the specification's own JSON Schema (feature `schema-validation`).
//!
//! Meant for tests: a server or client crate can check every message it emits.
//!
//! ```
//! use ferry_protocol::tools::CallToolResult;
//!
//! let result = serde_json::to_value(CallToolResult::text("hi")).unwrap();
//! ferry_protocol::testing::validate("CallToolResult", &result).unwrap();
//! ```
//!
//! The 2026-07-28 and 2025-11-25 `schema.json` files are embedded and compiled once, on
//! first use. `$ref`s are resolved only inside the document; nothing is fetched. String
//! `format`s are not checked.

use std::sync::OnceLock;

use jsonschema::{Draft, ValidatorMap};
use serde_json::Value;

use crate::{methods, notifications};

const SCHEMA_2026: &str = include_str!("../tests/spec/2026-07-28/schema.json");
const SCHEMA_2025: &str = include_str!("../tests/spec/2025-11-25/schema.json");
const SCHEMA_TASKS: &str = include_str!("../tests/spec/ext-tasks/schema.json");

/// How many errors a report lists at most.
const MAX_ERRORS: usize = 8;

fn compile(text: &str) -> Result<ValidatorMap, String> {
    let schema: Value = serde_json::from_str(text).map_err(|e| format!("schema.json: {e}"))?;
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build_map(&schema)
        .map_err(|e| format!("schema.json does not compile: {e}"))
}

fn modern() -> Result<&'static ValidatorMap, String> {
    static MAP: OnceLock<Result<ValidatorMap, String>> = OnceLock::new();
    MAP.get_or_init(|| compile(SCHEMA_2026))
        .as_ref()
        .map_err(Clone::clone)
}

fn legacy() -> Result<&'static ValidatorMap, String> {
    static MAP: OnceLock<Result<ValidatorMap, String>> = OnceLock::new();
    MAP.get_or_init(|| compile(SCHEMA_2025))
        .as_ref()
        .map_err(Clone::clone)
}

fn check(map: &ValidatorMap, def_name: &str, value: &Value) -> Result<(), String> {
    let validator = map
        .get(&format!("#/$defs/{def_name}"))
        .ok_or_else(|| format!("schema.json has no definition `{def_name}`"))?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(MAX_ERRORS)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            format!("{path}: {e}")
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "not a valid `{def_name}`:\n  {}",
            errors.join("\n  ")
        ))
    }
}

/// Validates `value` against `$defs/<def_name>` of the 2026-07-28 `schema.json`, e.g.
/// `validate("CallToolResult", &v)`. The error lists what failed, with JSON pointers.
pub fn validate(def_name: &str, value: &Value) -> Result<(), String> {
    check(modern()?, def_name, value)
}

fn tasks() -> Result<&'static ValidatorMap, String> {
    static MAP: OnceLock<Result<ValidatorMap, String>> = OnceLock::new();
    MAP.get_or_init(|| compile(SCHEMA_TASKS))
        .as_ref()
        .map_err(Clone::clone)
}

/// Validates `value` against `$defs/<def_name>` of the Tasks extension's `schema.json`,
/// e.g. `validate_tasks("GetTaskResult", &v)`.
pub fn validate_tasks(def_name: &str, value: &Value) -> Result<(), String> {
    check(tasks()?, def_name, value)
}

/// Validates `value` against `$defs/<def_name>` of the 2025-11-25 `schema.json`.
pub fn validate_legacy(def_name: &str, value: &Value) -> Result<(), String> {
    check(legacy()?, def_name, value)
}

/// Whether the 2026-07-28 schema defines `def_name`.
pub fn has_def(def_name: &str) -> bool {
    modern().is_ok_and(|m| m.contains_key(&format!("#/$defs/{def_name}")))
}

/// The schema definitions of a request method: its request and its result response.
fn request_defs(method: &str) -> Option<(&'static str, &'static str)> {
    Some(match method {
        methods::DISCOVER => ("DiscoverRequest", "DiscoverResult"),
        methods::COMPLETION_COMPLETE => ("CompleteRequest", "CompleteResult"),
        methods::PROMPTS_LIST => ("ListPromptsRequest", "ListPromptsResult"),
        methods::PROMPTS_GET => ("GetPromptRequest", "GetPromptResult"),
        methods::RESOURCES_LIST => ("ListResourcesRequest", "ListResourcesResult"),
        methods::RESOURCES_TEMPLATES_LIST => (
            "ListResourceTemplatesRequest",
            "ListResourceTemplatesResult",
        ),
        methods::RESOURCES_READ => ("ReadResourceRequest", "ReadResourceResult"),
        methods::SUBSCRIPTIONS_LISTEN => {
            ("SubscriptionsListenRequest", "SubscriptionsListenResult")
        }
        methods::TOOLS_LIST => ("ListToolsRequest", "ListToolsResult"),
        methods::TOOLS_CALL => ("CallToolRequest", "CallToolResult"),
        _ => return None,
    })
}

fn notification_def(method: &str) -> Option<&'static str> {
    Some(match method {
        notifications::CANCELLED => "CancelledNotification",
        notifications::PROGRESS => "ProgressNotification",
        notifications::MESSAGE => "LoggingMessageNotification",
        notifications::RESOURCES_UPDATED => "ResourceUpdatedNotification",
        notifications::RESOURCES_LIST_CHANGED => "ResourceListChangedNotification",
        notifications::TOOLS_LIST_CHANGED => "ToolListChangedNotification",
        notifications::PROMPTS_LIST_CHANGED => "PromptListChangedNotification",
        notifications::SUBSCRIPTIONS_ACKNOWLEDGED => "SubscriptionsAcknowledgedNotification",
        _ => return None,
    })
}

fn error_def(value: &Value) -> &'static str {
    match value.pointer("/error/code").and_then(Value::as_i64) {
        Some(-32020) => "HeaderMismatchError",
        Some(-32021) => "MissingRequiredClientCapabilityError",
        Some(-32022) => "UnsupportedProtocolVersionError",
        _ => "JSONRPCErrorResponse",
    }
}

/// Validates any 2026-07-28 JSON-RPC message, as precisely as the message allows:
///
/// - a request or notification with a known method against that method's definition
///   (e.g. `CallToolRequest`), otherwise `JSONRPCRequest` / `JSONRPCNotification`;
/// - an error response against the definition of its code (-32020, -32021, -32022) or
///   `JSONRPCErrorResponse`;
/// - a result response against `JSONRPCResultResponse` (which requires `resultType`).
///   Use [`validate_response`] to check the result against the request's method.
pub fn validate_message(value: &Value) -> Result<(), String> {
    let has = |k: &str| value.get(k).is_some();
    let method = value.get("method").and_then(Value::as_str);
    match method {
        Some(m) if has("id") => match request_defs(m) {
            Some((def, _)) => validate(def, value),
            None => validate("JSONRPCRequest", value),
        },
        Some(m) => validate(notification_def(m).unwrap_or("JSONRPCNotification"), value),
        None if has("error") => validate(error_def(value), value),
        None if has("result") => validate("JSONRPCResultResponse", value),
        None => validate("JSONRPCMessage", value),
    }
}

/// Validates the response to a request for `method`: an error response as in
/// [`validate_message`], or a result response whose `result` must be that method's result
/// (e.g. `CallToolResult`, with `ttlMs` and `cacheScope` where the method is cacheable) or,
/// when `resultType` is `input_required` on `tools/call`, `prompts/get` or
/// `resources/read`, an `InputRequiredResult` with `inputRequests` or `requestState`;
/// the Tasks extension's results against its own schema.
pub fn validate_response(method: &str, value: &Value) -> Result<(), String> {
    if value.get("error").is_some() {
        return validate(error_def(value), value);
    }
    validate("JSONRPCResultResponse", value)?;
    let result = value.get("result").unwrap_or(&Value::Null);
    validate_result(method, result)
}

/// Validates the `result` of a request for `method` (see [`validate_response`]).
pub fn validate_result(method: &str, result: &Value) -> Result<(), String> {
    // The Tasks extension (ext-tasks/schema.json): its methods, and a task handle in
    // place of a tool's result.
    let task_def = match method {
        methods::TASKS_GET => Some("GetTaskResult"),
        methods::TASKS_UPDATE => Some("UpdateTaskResult"),
        methods::TASKS_CANCEL => Some("CancelTaskResult"),
        methods::TOOLS_CALL if result.get("resultType").and_then(Value::as_str) == Some("task") => {
            Some("CreateTaskResult")
        }
        _ => None,
    };
    if let Some(def) = task_def {
        return validate_tasks(def, result);
    }
    let Some((_, def)) = request_defs(method) else {
        return validate("Result", result);
    };
    let input_required = result.get("resultType").and_then(Value::as_str) == Some("input_required");
    if input_required {
        if !methods::is_mrtr_capable(method) {
            return Err(format!("`{method}` must not return an InputRequiredResult"));
        }
        validate("InputRequiredResult", result)?;
        if result.get("inputRequests").is_none() && result.get("requestState").is_none() {
            return Err(
                "an InputRequiredResult needs `inputRequests` or `requestState`".to_owned(),
            );
        }
        return Ok(());
    }
    validate(def, result)
}
