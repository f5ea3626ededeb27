//! The serde behaviour that is easy to get wrong: untagged unions read by shape, tags,
//! open strings, numbers and ordering.

use std::collections::BTreeMap;

use ferry_protocol::common::Implementation;
use ferry_protocol::content::{ContentBlock, SamplingMessageContentBlock};
use ferry_protocol::elicitation::{
    ElicitAction, ElicitMode, ElicitRequestParams, ElicitResult, ElicitValue, FormSchema,
    PropertyKind, PropertySchema, SelectStyle,
};
use ferry_protocol::jsonrpc::RequestId;
use ferry_protocol::legacy::{self, LegacyCancelledNotificationParams, LegacyElicitRequestParams};
use ferry_protocol::logging::LoggingLevel;
use ferry_protocol::methods;
use ferry_protocol::mrtr::{InputKind, InputRequest, InputResponse, MrtrResult};
use ferry_protocol::notifications::{CancelledNotificationParams, ProgressNotificationParams};
use ferry_protocol::result::{EmptyResult, McpResult, ResultType};
use ferry_protocol::sampling::{CreateMessageResult, SamplingMessageContent};
use ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_protocol::tools::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

fn from<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("parses")
}

fn to(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).expect("serializes")
}

// --- Elicitation params: form or URL by `mode` -------------------------------------

#[test]
fn elicit_params_without_mode_are_form() {
    let v = json!({
        "message": "Who?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    });
    let p: ElicitRequestParams = from(v.clone());
    assert_eq!(p.mode(), ElicitMode::Form);
    assert_eq!(p.message(), "Who?");
    let ElicitRequestParams::Form(form) = &p else {
        panic!("not form")
    };
    assert_eq!(form.mode, None);
    // No `mode` was sent, none is written back.
    assert_eq!(to(&p), v);
}

#[test]
fn elicit_params_with_mode() {
    let form: ElicitRequestParams = from(json!({
        "mode": "form", "message": "m",
        "requestedSchema": {"type": "object", "properties": {}}
    }));
    assert_eq!(form.mode(), ElicitMode::Form);
    assert_eq!(to(&form)["mode"], "form");

    let url: ElicitRequestParams =
        from(json!({"mode": "url", "message": "m", "url": "https://x.example"}));
    assert_eq!(url.mode(), ElicitMode::Url);
    assert_eq!(
        to(&url),
        json!({"mode": "url", "message": "m", "url": "https://x.example"})
    );
    // Built params always say which mode they are.
    assert_eq!(
        to(&ElicitRequestParams::form("m", FormSchema::new()))["mode"],
        "form"
    );
}

#[test]
fn elicit_params_errors() {
    let no_url =
        serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"}));
    assert!(no_url.unwrap_err().to_string().contains("url"));
    let no_schema = serde_json::from_value::<ElicitRequestParams>(json!({"message": "m"}));
    assert!(
        no_schema
            .unwrap_err()
            .to_string()
            .contains("requestedSchema")
    );
    let bad_mode = serde_json::from_value::<ElicitRequestParams>(
        json!({"mode": "telepathy", "message": "m", "url": "x"}),
    );
    assert!(bad_mode.unwrap_err().to_string().contains("telepathy"));
}

#[test]
fn elicit_capability_checks() {
    let caps = ferry_protocol::ClientCapabilities::default().with_elicitation_form();
    assert!(ElicitRequestParams::form("m", FormSchema::new()).supported_by(&caps));
    let url = ElicitRequestParams::url("m", "https://x.example");
    assert!(!url.supported_by(&caps));
    assert_eq!(
        url.required_capability(),
        json!({"elicitation": {"url": {}}})
    );
}

// --- Primitive schema definitions by shape ------------------------------------------

fn kind(v: Value) -> &'static str {
    match from::<PropertySchema>(v).kind() {
        PropertyKind::Text { .. } => "string",
        PropertyKind::Number { integer: true, .. } => "integer",
        PropertyKind::Number { .. } => "number",
        PropertyKind::Boolean => "boolean",
        PropertyKind::SingleSelect {
            style: SelectStyle::Untitled,
            ..
        } => "untitled-single",
        PropertyKind::SingleSelect {
            style: SelectStyle::Titled,
            ..
        } => "titled-single",
        PropertyKind::SingleSelect {
            style: SelectStyle::Legacy,
            ..
        } => "legacy",
        PropertyKind::MultiSelect { titled: false, .. } => "untitled-multi",
        PropertyKind::MultiSelect { titled: true, .. } => "titled-multi",
        other => panic!("unexpected kind {other:?}"),
    }
}

#[test]
fn primitive_schema_variants_by_shape() {
    assert_eq!(kind(json!({"type": "string", "format": "email"})), "string");
    assert_eq!(kind(json!({"type": "number", "minimum": 0})), "number");
    assert_eq!(kind(json!({"type": "integer", "default": 3})), "integer");
    assert_eq!(kind(json!({"type": "boolean", "default": true})), "boolean");
    assert_eq!(
        kind(json!({"type": "string", "enum": ["a", "b"]})),
        "untitled-single"
    );
    assert_eq!(
        kind(json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]})),
        "titled-single"
    );
    assert_eq!(
        kind(json!({"type": "string", "enum": ["a"], "enumNames": ["A"]})),
        "legacy"
    );
    assert_eq!(
        kind(json!({"type": "array", "items": {"type": "string", "enum": ["a"]}})),
        "untitled-multi"
    );
    assert_eq!(
        kind(json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}})),
        "titled-multi"
    );
}

#[test]
fn primitive_schema_round_trips_exactly() {
    for v in [
        json!({"type": "integer", "title": "Age", "minimum": 0, "maximum": 130, "default": 30}),
        json!({"type": "number", "minimum": 0.5, "default": 1.25}),
        json!({"type": "string", "enum": ["a"], "enumNames": ["A"], "default": "a"}),
        json!({"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["a"]}, "default": ["a"]}),
    ] {
        assert_eq!(to(&from::<PropertySchema>(v.clone())), v);
    }
}

#[test]
fn primitive_schema_errors() {
    let bad = |v: Value| serde_json::from_value::<PropertySchema>(v).is_err();
    assert!(bad(json!({"type": "object"})));
    assert!(bad(json!({"type": "array"})));
    assert!(bad(json!({"type": "array", "items": {"type": "string"}})));
    assert!(bad(json!({"type": "boolean", "default": "yes"})));
    assert!(bad(json!({"type": "string", "format": "ipv4"})));
    assert!(bad(json!({"title": "no type"})));
}

#[test]
fn requested_schema_keeps_property_order() {
    let text = r#"{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"boolean"},"mid":{"type":"number"}},"required":["zeta"]}"#;
    let schema: FormSchema = serde_json::from_str(text).unwrap();
    let names: Vec<_> = schema.properties().map(|p| p.name).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    assert_eq!(serde_json::to_string(&schema).unwrap(), text);
    assert!(schema.is_required("zeta"));
    assert!(!schema.is_required("alpha"));
}

#[test]
fn requested_schema_checks_content() {
    let schema = FormSchema::builder()
        .required("name", PropertySchema::text())
        .property("age", PropertySchema::integer())
        .property("color", PropertySchema::single_select(["red"]))
        .property("tags", PropertySchema::multi_select(["a", "b"]))
        .build()
        .unwrap();
    let content = |v: Value| -> BTreeMap<String, ElicitValue> { from(v) };
    assert!(
        schema
            .check(&content(
                json!({"name": "x", "age": 3, "color": "red", "tags": ["a"]})
            ))
            .is_ok()
    );
    assert!(schema.check(&content(json!({"age": 3}))).is_err());
    assert!(
        schema
            .check(&content(json!({"name": "x", "age": 3.5})))
            .is_err()
    );
    assert!(
        schema
            .check(&content(json!({"name": "x", "color": "blue"})))
            .is_err()
    );
    assert!(
        schema
            .check(&content(json!({"name": "x", "tags": ["c"]})))
            .is_err()
    );
    assert!(
        schema
            .check(&content(json!({"name": "x", "extra": true})))
            .is_err()
    );
    assert!(schema.check(&content(json!({"name": 1}))).is_err());
}

#[test]
fn received_forms_drop_keywords_outside_the_subset() {
    // A schema generated from a model class, as some SDKs send it.
    let generated = json!({
        "title": "Person", "additionalProperties": false, "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "examples": ["Ada"]},
            "id": {"type": "string", "format": "uuid"},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small", "x": 1}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a"], "x": 1}}
        },
        "required": ["name"]
    });
    let cleaned = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "id": {"type": "string"},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a"]}}
        },
        "required": ["name"]
    });
    let modern: ElicitRequestParams =
        from(json!({"mode": "form", "message": "m", "requestedSchema": generated}));
    let ElicitRequestParams::Form(form) = &modern else {
        panic!("not form")
    };
    assert_eq!(form.requested_schema.as_value(), &cleaned);
    // Read from text, the properties keep their order.
    let text = r#"{"message": "m", "requestedSchema": {"title": "T", "type": "object",
        "properties": {"z": {"type": "string", "examples": ["x"]}, "a": {"type": "boolean"}}}}"#;
    let ElicitRequestParams::Form(ordered) = serde_json::from_str(text).unwrap() else {
        panic!("not form")
    };
    assert_eq!(
        ordered
            .requested_schema
            .property_names()
            .collect::<Vec<_>>(),
        ["z", "a"]
    );
    let legacy: LegacyElicitRequestParams =
        from(json!({"message": "m", "requestedSchema": generated}));
    let LegacyElicitRequestParams::Form(form) = &legacy else {
        panic!("not form")
    };
    assert_eq!(form.requested_schema.as_value(), &cleaned);
    // The same schema on its own is refused: a sender must keep to the subset.
    assert!(serde_json::from_value::<FormSchema>(generated).is_err());
    // What is not a flat primitive form is refused even when received.
    let nested = json!({"message": "m", "requestedSchema": {
        "type": "object", "properties": {"address": {"type": "object"}}
    }});
    let err = serde_json::from_value::<ElicitRequestParams>(nested).unwrap_err();
    assert!(err.to_string().contains("property `address`"), "{err}");
}

#[test]
fn built_forms_are_checked() {
    let refused = |builder: ferry_protocol::elicitation::FormSchemaBuilder, why: &str| {
        let err = builder.build().unwrap_err();
        assert_eq!(err.property(), Some("f"), "{err}");
        assert!(err.to_string().contains(why), "{err}");
    };
    refused(
        FormSchema::builder().property(
            "f",
            PropertySchema::text().with_min_length(3).with_max_length(2),
        ),
        "`minLength` (3) is greater than `maxLength` (2)",
    );
    refused(
        FormSchema::builder().property(
            "f",
            PropertySchema::integer().with_minimum(5).with_maximum(1),
        ),
        "`minimum` (5) is greater than `maximum` (1)",
    );
    refused(
        FormSchema::builder().property(
            "f",
            PropertySchema::integer().with_default(serde_json::Number::from_f64(1.5).unwrap()),
        ),
        "must be a whole number",
    );
    refused(
        FormSchema::builder().property("f", PropertySchema::single_select(Vec::<String>::new())),
        "at least one option",
    );
    refused(
        FormSchema::builder().property("f", PropertySchema::single_select(["a", "a"])),
        "listed twice",
    );
    refused(
        FormSchema::builder().property("f", PropertySchema::single_select(["a"]).with_default("b")),
        "not one of the options",
    );
    refused(
        FormSchema::builder().property("f", PropertySchema::multi_select(["a"]).with_min_items(2)),
        "more than the 1 options",
    );
    refused(
        FormSchema::builder().property(
            "f",
            PropertySchema::multi_select(["a", "b"]).with_default(["a", "a"]),
        ),
        "twice",
    );
    // A name used again replaces the property in its place.
    let form = FormSchema::builder()
        .required("a", PropertySchema::text())
        .property("b", PropertySchema::boolean())
        .property("a", PropertySchema::integer())
        .dialect("https://json-schema.org/draft/2020-12/schema")
        .build()
        .unwrap();
    assert_eq!(form.property_names().collect::<Vec<_>>(), ["a", "b"]);
    assert!(!form.is_required("a"));
    assert_eq!(form.property("a").unwrap().schema.type_name(), "integer");
    assert_eq!(
        to(&form),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
               "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}})
    );
    // What is built reads back the same.
    assert_eq!(FormSchema::from_value(to(&form)).unwrap(), form);
}

#[test]
fn properties_read_back_typed() {
    let form: FormSchema = from(json!({"type": "object", "properties": {
        "size": {"type": "string", "title": "Size", "description": "Pick one",
                 "enum": ["s", "l"], "enumNames": ["Small", "Large"], "default": "l"},
        "age": {"type": "integer", "default": 30.0},
        "tags": {"type": "array", "items": {"anyOf": [{"const": "rs", "title": "Rust"}]}}
    }, "required": ["size"]}));
    let size = form.property("size").unwrap();
    assert!(size.required);
    assert_eq!(
        (size.label(), size.description()),
        ("Size", Some("Pick one"))
    );
    let PropertyKind::SingleSelect { options, style, .. } = size.kind() else {
        panic!("{:?}", size.kind())
    };
    assert_eq!(*style, SelectStyle::Legacy);
    let labels: Vec<_> = options.iter().map(|o| (o.value(), o.label())).collect();
    assert_eq!(labels, [("s", "Small"), ("l", "Large")]);
    assert_eq!(size.schema.default_value(), Some(ElicitValue::from("l")));
    // A whole-number default of an integer field pre-fills as an integer.
    let age = form.property("age").unwrap();
    assert_eq!(age.schema.default_value(), Some(ElicitValue::from(30)));
    assert_eq!(age.label(), "age");
    let tags = form.property("tags").unwrap();
    assert_eq!(tags.schema.allowed_values(), Some(vec!["rs"]));
    assert!(matches!(
        tags.kind(),
        PropertyKind::MultiSelect { titled: true, .. }
    ));
    assert_eq!(form.properties().len(), 3);
}

// --- Content blocks by "type" -------------------------------------------------------

#[test]
fn content_block_tags() {
    let cases = [
        (json!({"type": "text", "text": "hi"}), "text"),
        (
            json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
            "image",
        ),
        (
            json!({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}),
            "audio",
        ),
        (
            json!({"type": "resource_link", "uri": "file:///a", "name": "a", "size": 3}),
            "resource_link",
        ),
        (
            json!({"type": "resource", "resource": {"uri": "file:///a", "blob": "AA=="}}),
            "resource",
        ),
    ];
    for (v, tag) in cases {
        let block: ContentBlock = from(v.clone());
        assert_eq!(block.type_name(), tag);
        assert_eq!(to(&block), v, "{tag}");
    }
    assert_eq!(
        to(&ContentBlock::text("hi")),
        json!({"type": "text", "text": "hi"})
    );
    assert_eq!(
        to(&ContentBlock::image("AA==", "image/png")),
        json!({"type": "image", "data": "AA==", "mimeType": "image/png"})
    );
    assert_eq!(
        ContentBlock::image_bytes(b"\0", "image/png"),
        ContentBlock::image("AA==", "image/png")
    );
}

#[test]
fn content_block_rejects_unknown_and_sampling_only_types() {
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": "video", "data": ""})).is_err());
    assert!(serde_json::from_value::<ContentBlock>(json!({"text": "no tag"})).is_err());
    let tool_use = json!({"type": "tool_use", "id": "1", "name": "t", "input": {}});
    assert!(serde_json::from_value::<ContentBlock>(tool_use.clone()).is_err());
    let block: SamplingMessageContentBlock = from(tool_use.clone());
    assert_eq!(block.type_name(), "tool_use");
    assert_eq!(to(&block), tool_use);
}

#[test]
fn sampling_content_is_one_block_or_many() {
    let one: SamplingMessageContent = from(json!({"type": "text", "text": "a"}));
    assert!(matches!(one, SamplingMessageContent::One(_)));
    assert_eq!(one.blocks().len(), 1);
    let many: SamplingMessageContent =
        from(json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]));
    assert_eq!(many.text(), "a\nb");
    assert_eq!(to(&many).as_array().map(Vec::len), Some(2));
}

#[test]
fn structured_content_null_is_kept() {
    let v = json!({"resultType": "complete", "content": [], "structuredContent": null});
    let r: CallToolResult = from(v.clone());
    assert_eq!(r.structured_content, Some(Value::Null));
    assert_eq!(to(&r), v);
    let absent: CallToolResult = from(json!({"content": []}));
    assert_eq!(absent.structured_content, None);
}

#[test]
fn call_tool_result_helpers() {
    assert_eq!(
        to(&CallToolResult::error("nope")),
        json!({"resultType": "complete", "content": [{"type": "text", "text": "nope"}], "isError": true})
    );
    let s = CallToolResult::structured(json!({"a": 1}));
    assert_eq!(s.structured_content, Some(json!({"a": 1})));
    assert_eq!(s.content[0].as_text(), Some(r#"{"a":1}"#));
    assert!(!s.failed());
    let with_info = CallToolResult::text("x").with_server_info(&Implementation::new("s", "1"));
    assert_eq!(
        to(&with_info)["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "s", "version": "1"})
    );
}

// --- Input requests and responses ----------------------------------------------------

#[test]
fn input_request_tolerates_unknown_members() {
    let r: InputRequest = from(json!({"id": "list-roots-example", "method": "roots/list"}));
    assert_eq!(r.kind(), InputKind::ListRoots);
    assert_eq!(to(&r), json!({"method": "roots/list"}));
    let r: InputRequest = from(json!({
        "jsonrpc": "2.0", "id": 9, "method": "elicitation/create",
        "params": {"mode": "url", "message": "m", "url": "https://x.example"}
    }));
    assert_eq!(r.method(), methods::ELICITATION_CREATE);
    let r: InputRequest = from(json!({"method": "roots/list", "params": {"_meta": {"k": 1}}}));
    assert_eq!(
        to(&r),
        json!({"method": "roots/list", "params": {"_meta": {"k": 1}}})
    );
}

#[test]
fn input_request_rejects_unknown_methods() {
    assert!(serde_json::from_value::<InputRequest>(json!({"method": "ping"})).is_err());
    assert!(serde_json::from_value::<InputRequest>(json!({"params": {}})).is_err());
}

#[test]
fn elicit_result_content_with_numbers() {
    let v = json!({"action": "accept", "content": {
        "age": 30, "height": 1.85, "name": "Mona", "ok": true, "tags": ["a", "b"]
    }});
    let r: ElicitResult = from(v.clone());
    assert_eq!(r.action, ElicitAction::Accept);
    assert_eq!(r.value("age").and_then(ElicitValue::as_i64), Some(30));
    assert_eq!(r.value("height").and_then(ElicitValue::as_f64), Some(1.85));
    assert_eq!(r.value("name").and_then(ElicitValue::as_str), Some("Mona"));
    assert_eq!(r.value("ok").and_then(ElicitValue::as_bool), Some(true));
    assert_eq!(
        r.value("tags").and_then(ElicitValue::as_string_array),
        Some(&["a".to_owned(), "b".to_owned()][..])
    );
    // Integers stay integers and fractions stay fractions.
    assert_eq!(to(&r), v);

    #[derive(Deserialize)]
    struct Form {
        age: u32,
        height: f64,
        name: String,
        ok: bool,
        tags: Vec<String>,
    }
    let form: Form = r.parse_content().unwrap();
    assert_eq!((form.age, form.name.as_str(), form.ok), (30, "Mona", true));
    assert_eq!((form.height, form.tags.len()), (1.85, 2));
    assert!(serde_json::from_value::<ElicitResult>(json!({"action": "maybe"})).is_err());
    assert!(
        serde_json::from_value::<ElicitResult>(
            json!({"action": "accept", "content": {"x": {"y": 1}}})
        )
        .is_err()
    );
}

#[test]
fn input_kinds_parse_their_responses() {
    let elicit = InputKind::Elicit
        .parse(&json!({"action": "decline"}))
        .unwrap();
    assert_eq!(elicit, InputResponse::Elicit(ElicitResult::decline()));
    let sample = InputKind::CreateMessage
        .parse(&to(&CreateMessageResult::text("m", "hi")))
        .unwrap();
    assert!(matches!(sample, InputResponse::CreateMessage(_)));
    assert!(
        InputKind::ListRoots
            .parse(&json!({"action": "accept"}))
            .is_err()
    );
}

// --- resultType ------------------------------------------------------------------------

#[test]
fn result_type_unknown_string_round_trips() {
    for s in ["complete", "input_required", "task", "com.example/deferred"] {
        let rt: ResultType = from(json!(s));
        assert_eq!(to(&rt), json!(s));
        assert_eq!(rt.as_str(), s);
        assert_eq!(s.parse::<ResultType>().unwrap(), rt);
    }
    assert_eq!(from::<ResultType>(json!("task")), ResultType::Task);
    assert_eq!(
        from::<ResultType>(json!("later")),
        ResultType::Other("later".into())
    );
    assert!(serde_json::from_value::<ResultType>(json!(1)).is_err());
    let v = json!({"resultType": "com.example/x", "content": []});
    assert_eq!(to(&from::<CallToolResult>(v.clone())), v);
}

#[test]
fn missing_result_type_reads_as_complete() {
    let legacy: CallToolResult = from(json!({"content": []}));
    assert_eq!(legacy.result_type, None);
    assert_eq!(legacy.effective_result_type(), ResultType::Complete);
    assert_eq!(to(&legacy), json!({"content": []}));
    assert_eq!(to(&EmptyResult::default()), json!({}));
    assert_eq!(
        to(&EmptyResult::complete()),
        json!({"resultType": "complete"})
    );
}

#[test]
fn mrtr_result_dispatches_on_result_type() {
    let input: MrtrResult<CallToolResult> =
        from(json!({"resultType": "input_required", "requestState": "s"}));
    assert!(input.is_input_required());
    let done: MrtrResult<CallToolResult> = from(json!({"resultType": "complete", "content": []}));
    assert!(done.clone().complete().is_some());
    let legacy: MrtrResult<CallToolResult> = from(json!({"content": []}));
    assert!(!legacy.is_input_required());
    assert!(
        serde_json::from_value::<MrtrResult<CallToolResult>>(json!({"resultType": "complete"}))
            .is_err()
    );
}

// --- Logging ---------------------------------------------------------------------------

#[test]
fn logging_levels_are_ordered() {
    use LoggingLevel::*;
    let all = LoggingLevel::ALL;
    assert!(all.windows(2).all(|w| w[0] < w[1]));
    assert!(Debug < Info && Info < Notice && Notice < Warning && Warning < Error);
    assert!(Error < Critical && Critical < Alert && Alert < Emergency);
    assert!(Error.passes(Warning));
    assert!(!Info.passes(Warning));
    for level in all {
        assert_eq!(level.as_str().parse::<LoggingLevel>().unwrap(), level);
        assert_eq!(to(&level), json!(level.as_str()));
        assert_eq!(level.to_string(), level.as_str());
    }
    assert!("verbose".parse::<LoggingLevel>().is_err());
    assert_eq!(LoggingLevel::parse("WARNING"), None);
}

// --- Notifications, subscriptions ------------------------------------------------------

#[test]
fn progress_numbers_keep_their_form() {
    let v = json!({"progressToken": 1, "progress": 50, "total": 100});
    assert_eq!(to(&from::<ProgressNotificationParams>(v.clone())), v);
    let v = json!({"progressToken": "t", "progress": 0.5});
    assert_eq!(to(&from::<ProgressNotificationParams>(v.clone())), v);
}

#[test]
fn cancel_needs_request_id_except_in_legacy() {
    assert!(serde_json::from_value::<CancelledNotificationParams>(json!({"reason": "x"})).is_err());
    let legacy: LegacyCancelledNotificationParams = from(json!({"reason": "x"}));
    assert_eq!(legacy.request_id, None);
    let p: CancelledNotificationParams = from(json!({"requestId": 5}));
    assert_eq!(p.request_id, RequestId::Number(5));
}

#[test]
fn subscription_filter_restriction() {
    let asked = SubscriptionFilter::new()
        .with_tools_list_changed()
        .with_prompts_list_changed()
        .with_resource("file:///a")
        .with_task("t1");
    let offered = SubscriptionFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec![]),
        ..Default::default()
    };
    let ack = asked.restrict_to(&offered);
    assert!(ack.wants_tools_list_changed());
    assert!(!ack.wants_prompts_list_changed());
    assert!(ack.wants_resource("file:///a"));
    assert!(!ack.wants_task("t1"));
    assert_eq!(
        to(&ack),
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
    );
    assert!(SubscriptionFilter::new().is_empty());
    let with_tasks: SubscriptionFilter = from(json!({"taskIds": ["t1"]}));
    assert!(with_tasks.wants_task("t1"));
}

// --- Legacy ----------------------------------------------------------------------------

#[test]
fn legacy_elicitation_params() {
    let url: LegacyElicitRequestParams = from(json!({
        "mode": "url", "message": "m", "url": "https://x.example", "elicitationId": "e1"
    }));
    let LegacyElicitRequestParams::Url(url) = url else {
        panic!("not url")
    };
    assert_eq!(url.elicitation_id, "e1");
    assert_eq!(url.clone().into_modern().url, "https://x.example");
    assert!(
        serde_json::from_value::<LegacyElicitRequestParams>(
            json!({"mode": "url", "message": "m", "url": "https://x.example"})
        )
        .is_err()
    );
    let form: LegacyElicitRequestParams = from(json!({
        "message": "m", "requestedSchema": {"type": "object", "properties": {}}
    }));
    assert!(matches!(form, LegacyElicitRequestParams::Form(_)));
}

#[test]
fn legacy_version_negotiation() {
    let supported = ["2025-06-18", "2025-11-25"];
    assert_eq!(
        legacy::negotiate_version("2025-06-18", &supported),
        Some("2025-06-18")
    );
    assert_eq!(
        legacy::negotiate_version("2099-01-01", &supported),
        Some("2025-11-25")
    );
    assert_eq!(legacy::negotiate_version("x", &[]), None);
    let e = legacy::unsupported_version_error(&supported, "2099-01-01");
    assert_eq!(e.code, ferry_protocol::ErrorCode::INVALID_PARAMS);
    assert!(legacy::is_removed_in_2026("ping"));
    assert!(!legacy::is_removed_in_2026("tools/call"));
}

#[test]
fn method_tables() {
    assert!(methods::is_request("tools/call"));
    assert!(!methods::is_request("ping"));
    assert!(methods::is_mrtr_capable("resources/read"));
    assert!(!methods::is_mrtr_capable("tools/list"));
    assert!(methods::is_cacheable("server/discover"));
    assert!(methods::is_paginated("resources/templates/list"));
    assert_eq!(methods::name_member("tools/call"), Some("name"));
    assert_eq!(methods::name_member("resources/read"), Some("uri"));
    assert_eq!(methods::name_member("tasks/get"), Some("taskId"));
    assert_eq!(methods::name_member("tools/list"), None);
}
