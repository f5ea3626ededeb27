//! Ferry's JSON validates against the spec's `schema.json`: the spec's examples, their
//! round trips, and messages built with Ferry's constructors.

mod support;

use std::collections::BTreeMap;

use ferry_protocol::capabilities::{ListChangedCapability, ServerCapabilities};
use ferry_protocol::common::{Annotations, Icon, Implementation, Role};
use ferry_protocol::completion::{CompleteRequestParams, CompleteResult, CompletionReference};
use ferry_protocol::content::{ContentBlock, ToolResultContent, ToolUseContent};
use ferry_protocol::discover::DiscoverResult;
use ferry_protocol::elicitation::{
    ElicitRequestParams, ElicitResult, ElicitValue, EnumOption, PrimitiveSchemaDefinition,
    RequestedSchema, StringFormat,
};
use ferry_protocol::error::ErrorObject;
use ferry_protocol::jsonrpc::{JsonRpcErrorResponse, JsonRpcResultResponse, RequestId};
use ferry_protocol::legacy::{
    self, InitializeRequestParams, InitializeResult, LegacyElicitRequestUrlParams,
    SetLevelRequestParams,
};
use ferry_protocol::logging::{LoggingLevel, LoggingMessageNotificationParams};
use ferry_protocol::meta::RequestMeta;
use ferry_protocol::methods::{self, NotificationType, RequestType};
use ferry_protocol::mrtr::{InputRequest, InputRequiredResult, InputResponses, InputResponsesExt};
use ferry_protocol::notifications::{
    CancelledNotificationParams, NotificationParams, ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
};
use ferry_protocol::pagination::{PaginatedRequestParams, RequestParams};
use ferry_protocol::prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage,
};
use ferry_protocol::resources::{
    BlobResourceContents, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use ferry_protocol::result::{CacheScope, EmptyResult};
use ferry_protocol::roots::{ListRootsResult, Root};
use ferry_protocol::sampling::{
    CreateMessageRequestParams, CreateMessageResult, ModelPreferences, SamplingMessage, ToolChoice,
    ToolChoiceMode,
};
use ferry_protocol::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult,
};
use ferry_protocol::testing::{
    has_def, validate, validate_legacy, validate_message, validate_response,
};
use ferry_protocol::tools::{
    CallToolRequestParams, CallToolResult, ListToolsResult, Tool, ToolAnnotations,
};
use ferry_protocol::{ClientCapabilities, MrtrResult};
use serde::Serialize;
use serde_json::{Value, json};
use support::{examples, round_trip};

fn to_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("serializes")
}

#[track_caller]
fn ok(def: &str, v: &impl Serialize) {
    let value = to_json(v);
    if let Err(e) = validate(def, &value) {
        panic!("{e}\nvalue: {value:#}");
    }
}

#[track_caller]
fn ok_message(v: &impl Serialize) {
    let value = to_json(v);
    if let Err(e) = validate_message(&value) {
        panic!("{e}\nvalue: {value:#}");
    }
}

fn meta() -> RequestMeta {
    let mut meta = RequestMeta::modern("2026-07-28", ClientCapabilities::default());
    meta.client_info = Some(Implementation::new("ferry-test", "0.1.0"));
    meta
}

fn server_info() -> Implementation {
    Implementation::new("ferry-server", "0.1.0")
}

#[test]
fn every_example_and_its_round_trip_validate() {
    let mut failures = Vec::new();
    for ex in examples() {
        let name = format!("{}/{}", ex.folder, ex.file);
        if !has_def(&ex.folder) {
            failures.push(format!("{name}: schema.json has no `{}`", ex.folder));
            continue;
        }
        if let Err(e) = validate(&ex.folder, &ex.value) {
            failures.push(format!("{name} (as published): {e}"));
        }
        match round_trip(&ex.folder, &ex.text) {
            Some(Ok(back)) => {
                if let Err(e) = validate(&ex.folder, &back) {
                    failures.push(format!("{name} (Ferry's output): {e}"));
                }
            }
            Some(Err(e)) => failures.push(format!("{name}: {e}")),
            None => failures.push(format!("{name}: not mapped")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_json_rpc_example_validates_as_a_message() {
    for ex in examples() {
        if ex.value.get("jsonrpc").is_some() {
            validate_message(&ex.value)
                .unwrap_or_else(|e| panic!("{}/{}: {e}", ex.folder, ex.file));
        }
    }
}

#[test]
fn tool_results() {
    ok("CallToolResult", &CallToolResult::text("72°F"));
    ok("CallToolResult", &CallToolResult::error("bad date"));
    ok(
        "CallToolResult",
        &CallToolResult::structured(json!({"temperature": 22.5})),
    );
    ok(
        "CallToolResult",
        &CallToolResult::structured(json!([1, 2, 3])),
    );
    ok("CallToolResult", &CallToolResult::structured(Value::Null));
    ok(
        "CallToolResult",
        &CallToolResult::new(vec![
            ContentBlock::text("t").with_annotations(Annotations {
                audience: Some(vec![Role::User]),
                priority: Some(0.5),
                last_modified: None,
            }),
            ContentBlock::image_bytes(b"\x89PNG", "image/png"),
            ContentBlock::audio("UklGRg==", "audio/wav"),
            ContentBlock::resource_link(
                Resource::new("file:///a.txt", "a.txt")
                    .with_mime_type("text/plain")
                    .with_size(12),
            ),
            ContentBlock::embedded(ResourceContents::text("file:///a.txt", "hello")),
            ContentBlock::embedded(BlobResourceContents::from_bytes("file:///b", b"\0\x01")),
        ])
        .with_server_info(&server_info()),
    );
    let tool = Tool::new(
        "get_weather",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )
    .with_title("Weather")
    .with_description("Current weather")
    .with_output_schema(json!({"type": "object"}))
    .with_annotations(
        ToolAnnotations::new()
            .with_read_only(true)
            .with_open_world(true),
    )
    .with_icons(vec![Icon {
        src: "https://example.com/i.png".into(),
        mime_type: Some("image/png".into()),
        sizes: Some(vec!["48x48".into()]),
        theme: Some("light".into()),
    }]);
    ok("Tool", &tool);
    ok("Tool", &Tool::without_params("now"));
    let list = ListToolsResult::new(vec![tool])
        .with_next_cursor("")
        .with_cache(60_000, CacheScope::Public);
    ok("ListToolsResult", &list);
    ok_message(&JsonRpcResultResponse::new(
        RequestId::Number(1),
        list.clone(),
    ));
    validate_response(
        methods::TOOLS_LIST,
        &to_json(&JsonRpcResultResponse::new(RequestId::Number(1), list)),
    )
    .unwrap();
}

#[test]
fn cacheable_results_need_cache_hints() {
    let bare = to_json(&ListToolsResult::new(vec![]));
    assert!(validate("ListToolsResult", &bare).is_err());
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": bare});
    assert!(validate_response(methods::TOOLS_LIST, &response).is_err());
    let cached = to_json(&ListToolsResult::new(vec![]).with_cache(0, CacheScope::Private));
    validate("ListToolsResult", &cached).unwrap();
}

#[test]
fn other_results() {
    let caps = ServerCapabilities {
        tools: Some(ListChangedCapability {
            list_changed: Some(true),
        }),
        ..Default::default()
    };
    ok(
        "DiscoverResult",
        &DiscoverResult::new(["2026-07-28", "2025-11-25"], caps)
            .with_instructions("Use get_weather.")
            .with_cache(3_600_000, CacheScope::Public)
            .with_server_info(&server_info()),
    );
    ok(
        "GetPromptResult",
        &GetPromptResult::new(vec![
            PromptMessage::user_text("Review this"),
            PromptMessage::assistant_text("Sure"),
            PromptMessage::new(
                Role::User,
                ContentBlock::embedded(ResourceContents::text("file:///x", "x")),
            ),
        ])
        .with_description("Code review"),
    );
    ok(
        "ListPromptsResult",
        &ListPromptsResult::new(vec![
            Prompt::new("code_review")
                .with_title("Code review")
                .with_argument(PromptArgument::required("code").with_description("The code"))
                .with_argument(PromptArgument::new("language")),
        ])
        .with_cache(600_000, CacheScope::Public),
    );
    ok(
        "ListResourcesResult",
        &ListResourcesResult::new(vec![Resource::new("file:///a", "a").with_title("A")])
            .with_next_cursor("next")
            .with_cache(1, CacheScope::Private),
    );
    ok(
        "ListResourceTemplatesResult",
        &ListResourceTemplatesResult::new(vec![
            ResourceTemplate::new("file:///{path}", "files").with_mime_type("text/plain"),
        ])
        .with_cache(1, CacheScope::Public),
    );
    ok(
        "ReadResourceResult",
        &ReadResourceResult::new(vec![
            ResourceContents::text("file:///a", "A").with_mime_type("text/plain"),
            ResourceContents::blob("file:///b", "AAE="),
        ])
        .with_cache(0, CacheScope::Private),
    );
    ok(
        "CompleteResult",
        &CompleteResult::new(vec!["python".into(), "pytorch".into()]),
    );
    let many = CompleteResult::new((0..150).map(|i| i.to_string()).collect());
    assert_eq!(many.completion.values.len(), 100);
    assert_eq!(many.completion.has_more, Some(true));
    ok("CompleteResult", &many);
    ok("EmptyResult", &EmptyResult::complete());
    ok(
        "SubscriptionsListenResult",
        &SubscriptionsListenResult::closed(&RequestId::from("listen-1")),
    );
}

fn form() -> RequestedSchema {
    RequestedSchema::new()
        .with_required_property(
            "name",
            PrimitiveSchemaDefinition::string().with_title("Name"),
        )
        .with_property(
            "email",
            PrimitiveSchemaDefinition::string_with_format(StringFormat::Email),
        )
        .with_property("age", PrimitiveSchemaDefinition::integer())
        .with_property("score", PrimitiveSchemaDefinition::number())
        .with_property("subscribe", PrimitiveSchemaDefinition::boolean())
        .with_property(
            "color",
            PrimitiveSchemaDefinition::single_select(["red", "green"]),
        )
        .with_property(
            "size",
            PrimitiveSchemaDefinition::titled_single_select(vec![
                EnumOption::new("s", "Small"),
                EnumOption::new("l", "Large"),
            ]),
        )
        .with_property("tags", PrimitiveSchemaDefinition::multi_select(["a", "b"]))
        .with_property(
            "langs",
            PrimitiveSchemaDefinition::titled_multi_select(vec![EnumOption::new("rs", "Rust")]),
        )
}

#[test]
fn input_required_results_of_each_kind() {
    let sampling = CreateMessageRequestParams::new(
        vec![
            SamplingMessage::user_text("Weather in Paris?"),
            SamplingMessage::new(
                Role::Assistant,
                vec![ToolUseContent::new("call_1", "get_weather", serde_json::Map::new()).into()],
            ),
            SamplingMessage::new(
                Role::User,
                vec![ToolResultContent::new("call_1", vec![ContentBlock::text("18°C")]).into()],
            ),
        ],
        200,
    )
    .with_system_prompt("Be brief.")
    .with_temperature(0.2)
    .with_model_preferences(
        ModelPreferences::new()
            .with_hint("claude")
            .with_speed_priority(0.5)
            .with_intelligence_priority(1.0),
    )
    .with_tools(vec![Tool::without_params("now")])
    .with_tool_choice(ToolChoice::new(ToolChoiceMode::Auto));

    let all = InputRequiredResult::new()
        .with_input_request(
            "form",
            InputRequest::elicit(ElicitRequestParams::form("Who are you?", form())),
        )
        .with_input_request(
            "url",
            InputRequest::elicit(ElicitRequestParams::url(
                "Set your API key",
                "https://example.com/key",
            )),
        )
        .with_input_request("sample", InputRequest::create_message(sampling))
        .with_input_request("roots", InputRequest::list_roots())
        .with_request_state("opaque");
    ok("InputRequiredResult", &all);
    let response = JsonRpcResultResponse::new(
        RequestId::Number(2),
        MrtrResult::<CallToolResult>::from(all),
    );
    ok("CallToolResultResponse", &response);
    for method in methods::MRTR_CAPABLE {
        validate_response(method, &to_json(&response)).unwrap();
    }
    // Only tools/call, prompts/get and resources/read may ask for input.
    assert!(validate_response(methods::TOOLS_LIST, &to_json(&response)).is_err());

    let state_only = InputRequiredResult::new().with_request_state("s");
    ok("InputRequiredResult", &state_only);
    let empty = json!({"jsonrpc": "2.0", "id": 1, "result": InputRequiredResult::new()});
    assert!(validate_response(methods::TOOLS_CALL, &empty).is_err());

    for (key, request) in all_requests() {
        ok("InputRequest", &request);
        ok(
            "InputRequiredResult",
            &InputRequiredResult::single(key, request),
        );
    }
}

fn all_requests() -> Vec<(&'static str, InputRequest)> {
    vec![
        (
            "e",
            InputRequest::elicit(ElicitRequestParams::form("Hi", form())),
        ),
        (
            "u",
            InputRequest::elicit(ElicitRequestParams::url("Go", "https://x.example")),
        ),
        (
            "s",
            InputRequest::create_message(CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text("Hi")],
                10,
            )),
        ),
        ("r", InputRequest::list_roots()),
    ]
}

#[test]
fn input_responses() {
    let mut content = BTreeMap::new();
    content.insert("name".to_owned(), ElicitValue::from("octocat"));
    content.insert("age".to_owned(), ElicitValue::from(30));
    content.insert("subscribe".to_owned(), ElicitValue::from(true));
    content.insert("tags".to_owned(), ElicitValue::from(vec!["a".to_owned()]));
    ok("ElicitResult", &ElicitResult::accept(content));
    ok("ElicitResult", &ElicitResult::decline());
    ok("ElicitResult", &ElicitResult::cancel());
    ok("ElicitResult", &ElicitResult::accept_without_content());
    ok(
        "CreateMessageResult",
        &CreateMessageResult::text("model-1", "Paris"),
    );
    ok(
        "ListRootsResult",
        &ListRootsResult::new(vec![Root::new("file:///home/u/p").with_name("p")]),
    );

    let mut responses = InputResponses::new();
    responses.insert_response("e", ElicitResult::decline());
    responses.insert_response("s", CreateMessageResult::text("m", "x"));
    responses.insert_response("r", ListRootsResult::new(vec![]));
    ok("InputResponses", &responses);
    let params = CallToolRequestParams::new("t")
        .with_meta(meta())
        .with_input_responses(responses)
        .with_request_state("opaque");
    ok("CallToolRequestParams", &params);
    ok_message(&methods::CallTool::request(3, params));
}

/// schema.ts types `ElicitResult.content` numbers as `number`, but the generated
/// schema.json says `integer` (the spec sources). Ferry reads and writes any number; the
/// published schema refuses a fractional one.
#[test]
fn schema_json_types_elicit_numbers_as_integers() {
    let mut content = BTreeMap::new();
    content.insert(
        "score".to_owned(),
        ElicitValue::Number(serde_json::Number::from_f64(3.5).unwrap()),
    );
    let value = to_json(&ElicitResult::accept(content));
    assert!(validate("ElicitResult", &value).is_err());
    let back: ElicitResult = serde_json::from_value(value).unwrap();
    assert_eq!(back.value("score").and_then(ElicitValue::as_f64), Some(3.5));
}

#[test]
fn requests() {
    ok_message(&methods::Discover::request("d", RequestParams::new(meta())));
    ok_message(&methods::ListTools::request(
        1,
        PaginatedRequestParams::new(meta()).with_cursor("c"),
    ));
    ok_message(&methods::ListPrompts::request(
        1,
        PaginatedRequestParams::new(meta()),
    ));
    ok_message(&methods::ListResources::request(
        1,
        PaginatedRequestParams::new(meta()),
    ));
    ok_message(&methods::ListResourceTemplates::request(
        1,
        PaginatedRequestParams::new(meta()),
    ));
    ok_message(&methods::CallTool::request(
        1,
        CallToolRequestParams::new("get_weather")
            .with_meta(meta())
            .with_argument("city", "Paris"),
    ));
    ok_message(&methods::GetPrompt::request(
        1,
        GetPromptRequestParams::new("review")
            .with_meta(meta())
            .with_argument("code", "fn main() {}"),
    ));
    ok_message(&methods::ReadResource::request(
        1,
        ReadResourceRequestParams::new("file:///a").with_meta(meta()),
    ));
    ok_message(&methods::Complete::request(
        1,
        CompleteRequestParams::new(CompletionReference::prompt("review"), "language", "py")
            .with_meta(meta())
            .with_context_argument("framework", "flask"),
    ));
    ok_message(&methods::Complete::request(
        1,
        CompleteRequestParams::new(
            CompletionReference::resource_template("file:///{p}"),
            "p",
            "",
        )
        .with_meta(meta()),
    ));
    ok_message(&methods::SubscriptionsListen::request(
        "listen-1",
        SubscriptionsListenRequestParams::new(
            SubscriptionFilter::new()
                .with_tools_list_changed()
                .with_prompts_list_changed()
                .with_resources_list_changed()
                .with_resource("file:///a"),
        )
        .with_meta(meta()),
    ));
    // A request without the required `_meta` does not validate.
    assert!(
        validate_message(&to_json(&methods::ListTools::request(
            1,
            PaginatedRequestParams::default()
        )))
        .is_err()
    );
}

#[test]
fn notifications() {
    let id = RequestId::from("listen-1");
    ok_message(&methods::Cancelled::notification(
        CancelledNotificationParams::new(7).with_reason("user"),
    ));
    ok_message(&methods::Progress::notification(
        ProgressNotificationParams::new("tok", 50.0)
            .with_total(100.0)
            .with_message("half"),
    ));
    ok_message(&methods::Progress::notification(
        ProgressNotificationParams::new(3, 0.25),
    ));
    ok_message(&methods::LoggingMessage::notification(
        LoggingMessageNotificationParams::new(LoggingLevel::Error, json!({"error": "x"}))
            .with_logger("db"),
    ));
    ok_message(&methods::ResourceUpdated::notification(
        ResourceUpdatedNotificationParams::new("file:///a").with_subscription_id(&id),
    ));
    ok_message(&methods::ResourceListChanged::notification(
        NotificationParams::for_subscription(&id),
    ));
    ok_message(&methods::ToolListChanged::notification(
        NotificationParams::for_subscription(&id),
    ));
    ok_message(&methods::PromptListChanged::notification(
        NotificationParams::new(),
    ));
    ok_message(&methods::SubscriptionsAcknowledged::notification(
        SubscriptionsAcknowledgedNotificationParams::new(
            &id,
            SubscriptionFilter::new().with_tools_list_changed(),
        ),
    ));
}

#[test]
fn errors() {
    let id = Some(RequestId::Number(1));
    for error in [
        ErrorObject::unsupported_version(&["2026-07-28", "2025-11-25"], "1900-01-01"),
        ErrorObject::missing_capability(
            "Needs elicitation",
            ferry_protocol::capabilities::required(&["elicitation"]),
        ),
        ErrorObject::header_mismatch("Mcp-Name does not match"),
        ErrorObject::method_not_found("ping"),
        ErrorObject::invalid_params("Unknown tool: x"),
        ErrorObject::resource_not_found("file:///nope"),
        ErrorObject::internal("boom"),
    ] {
        ok_message(&JsonRpcErrorResponse::new(id.clone(), error.clone()));
        validate_response(
            methods::TOOLS_CALL,
            &to_json(&JsonRpcErrorResponse::new(id.clone(), error)),
        )
        .unwrap();
    }
    ok_message(&JsonRpcErrorResponse::new(
        None,
        ErrorObject::new(ferry_protocol::ErrorCode::PARSE_ERROR, "Parse error"),
    ));
    // -32022 without its required data is not a valid UnsupportedProtocolVersionError.
    let bare = ErrorObject::new(
        ferry_protocol::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        "no",
    );
    assert!(validate_message(&to_json(&JsonRpcErrorResponse::new(id, bare))).is_err());
}

#[test]
fn responses_are_checked_against_the_method() {
    let result = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}});
    // A bare result is a valid JSON-RPC response, but not a CallToolResult.
    validate_message(&result).unwrap();
    assert!(validate_response(methods::TOOLS_CALL, &result).is_err());
    // Nor is a result without resultType a 2026-07-28 result.
    let legacy = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
    assert!(validate_message(&legacy).is_err());
}

#[test]
fn legacy_shapes() {
    let caps = ClientCapabilities::default()
        .with_elicitation_form()
        .with_roots();
    ok_legacy(
        "InitializeRequestParams",
        &InitializeRequestParams::new("2025-11-25", caps, Implementation::new("c", "1")),
    );
    ok_legacy(
        "InitializeResult",
        &InitializeResult::new("2025-11-25", ServerCapabilities::default(), server_info())
            .with_instructions("hi"),
    );
    ok_legacy(
        "SetLevelRequestParams",
        &SetLevelRequestParams {
            meta: None,
            level: LoggingLevel::Warning,
        },
    );
    ok_legacy(
        "ElicitRequestURLParams",
        &LegacyElicitRequestUrlParams::new("Log in", "el-1", "https://x.example/login"),
    );
    ok_legacy(
        "ElicitRequestFormParams",
        &ElicitRequestParams::form("Hi", form()),
    );
    let error = legacy::url_elicitation_required(
        "Authorization required",
        vec![LegacyElicitRequestUrlParams::new(
            "Log in",
            "el-1",
            "https://x.example",
        )],
    );
    ok_legacy(
        "URLElicitationRequiredError",
        &JsonRpcErrorResponse::new(Some(RequestId::Number(1)), error),
    );
    // Legacy results leave resultType out, and 2025-11-25 accepts that.
    let mut result = CallToolResult::text("x");
    result.result_type = None;
    ok_legacy("CallToolResult", &result);
    ok_legacy("EmptyResult", &EmptyResult::default());
}

#[track_caller]
fn ok_legacy(def: &str, v: &impl Serialize) {
    let value = to_json(v);
    if let Err(e) = validate_legacy(def, &value) {
        panic!("{e}\nvalue: {value:#}");
    }
}

#[test]
fn unknown_definition_is_an_error() {
    let e = validate("NoSuchThing", &json!({})).unwrap_err();
    assert!(e.contains("NoSuchThing"), "{e}");
    assert!(!has_def("NoSuchThing"));
    assert!(has_def("CallToolResult"));
    // Keep the responses helper honest about the parse side too.
    let r: InputResponses = serde_json::from_value(json!({"k": {"action": "cancel"}})).unwrap();
    assert!(r.elicit_result("k").unwrap().is_some());
    assert!(r.elicit_result("missing").unwrap().is_none());
    assert!(r.create_message_result("k").is_err());
}

/// The spec's `read-resource-result-response.json` has no `ttlMs`/`cacheScope`, which
/// `ReadResourceResult` requires. It passes the published `ReadResourceResultResponse`
/// only through that union's `InputRequiredResult` branch (whose `resultType` is not
/// pinned); the per-method check refuses it.
#[test]
fn read_resource_example_without_cache_hints_fails_the_strict_check() {
    let ex = examples()
        .into_iter()
        .find(|e| e.file == "read-resource-result-response.json")
        .expect("example");
    validate("ReadResourceResultResponse", &ex.value).unwrap();
    assert!(validate_response(methods::RESOURCES_READ, &ex.value).is_err());
    let with_ttl = examples()
        .into_iter()
        .find(|e| e.file == "read-resource-result-response-with-ttl.json")
        .expect("example");
    validate_response(methods::RESOURCES_READ, &with_ttl.value).unwrap();
}
