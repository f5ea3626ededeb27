//! `FormSchema::from_value` accepts exactly the spec's subset.

use ferry_form::{FormError, FormSchema};
use serde_json::{Value, json};

fn form(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

fn accepted(value: Value) -> FormSchema {
    FormSchema::from_value(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}"))
}

/// Checks that one property schema is refused with an error naming the property and
/// containing `reason`.
fn refused_property(schema: Value, reason: &str) {
    let value = form(json!({"field": schema}));
    match FormSchema::from_value(value.clone()) {
        Ok(_) => panic!("accepted {value}"),
        Err(FormError::InvalidProperty {
            property,
            reason: got,
        }) => {
            assert_eq!(property, "field");
            assert!(got.contains(reason), "{got:?} does not contain {reason:?}");
        }
        Err(other) => panic!("{value}: unexpected error {other:?}"),
    }
}

fn refused_schema(value: Value, reason: &str) {
    match FormSchema::from_value(value.clone()) {
        Ok(_) => panic!("accepted {value}"),
        Err(FormError::InvalidSchema { reason: got }) => {
            assert!(got.contains(reason), "{got:?} does not contain {reason:?}");
        }
        Err(other) => panic!("{value}: unexpected error {other:?}"),
    }
}

#[test]
fn accepts_every_primitive_variant() {
    let schema = accepted(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "text": {"type": "string", "title": "T", "description": "D", "minLength": 0,
                     "maxLength": 10, "format": "uri", "default": "https://x.y"},
            "plain": {"type": "string"},
            "number": {"type": "number", "minimum": -1.5, "maximum": 2, "default": 0.5},
            "integer": {"type": "integer", "minimum": 0, "maximum": 0, "default": 0.0},
            "flag": {"type": "boolean", "default": false},
            "single": {"type": "string", "enum": ["a", "b"], "default": "b"},
            "titled": {"type": "string", "oneOf": [{"const": "a", "title": "A"}], "default": "a"},
            "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "a"},
            "legacy_plain": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
            "multi": {"type": "array", "minItems": 0, "maxItems": 1,
                      "items": {"type": "string", "enum": ["a", "b"]}, "default": []},
            "titled_multi": {"type": "array",
                             "items": {"anyOf": [{"const": "a", "title": "A"},
                                                 {"const": "b", "title": "B"}]},
                             "default": ["b", "a"]},
            "counts_as_floats": {"type": "string", "minLength": 1.0, "maxLength": 2.0}
        },
        "required": ["text", "multi"]
    }));
    assert_eq!(schema.len(), 12);
    // Form order is the `Value`'s map order here, which depends on serde_json's
    // `preserve_order` feature.
    let mut required: Vec<_> = schema.required().collect();
    required.sort_unstable();
    assert_eq!(required, ["multi", "text"]);
    assert_eq!(
        Value::Object(schema.defaults()),
        json!({
            "text": "https://x.y", "number": 0.5, "integer": 0.0, "flag": false,
            "single": "b", "titled": "a", "legacy": "a", "multi": [], "titled_multi": ["b", "a"]
        })
    );
    // What was accepted is kept as it was.
    assert_eq!(
        schema.property_json("legacy").unwrap()["enumNames"],
        json!(["A", "B"])
    );
}

#[test]
fn legacy_titled_enum_answers_are_checked() {
    let schema = accepted(form(json!({
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]}
    })));
    let ok = json!({"size": "m"});
    assert!(schema.validate_content(ok.as_object().unwrap()).is_ok());
    let bad = json!({"size": "Medium"});
    assert_eq!(
        schema.validate_content(bad.as_object().unwrap()),
        Err(FormError::NotAnOption {
            property: "size".into(),
            value: "Medium".into()
        })
    );
}

#[test]
fn no_required_means_nothing_is_required() {
    let schema = accepted(form(json!({"a": {"type": "string"}})));
    assert_eq!(schema.required().count(), 0);
    assert!(schema.validate_content(&serde_json::Map::new()).is_ok());
}

#[test]
fn refuses_nested_and_unknown_shapes() {
    refused_property(
        json!({"type": "object", "properties": {}}),
        "nested objects",
    );
    refused_property(
        json!({"type": "array", "items": {"type": "string"}}),
        "lists of free text",
    );
    refused_property(
        json!({"type": "array", "items": {"type": "object", "properties": {}}}),
        "must be an enum of strings",
    );
    refused_property(json!({"type": "array"}), "needs `items`");
    refused_property(
        json!({"type": "array", "items": []}),
        "`items` must be an object",
    );
    refused_property(
        json!({"type": "array", "items": {"type": "integer", "enum": ["1"]}}),
        "`items.type` must be \"string\"",
    );
    refused_property(
        json!({"type": "array", "items": {"enum": ["a"]}}),
        "`items.type` must be \"string\"",
    );
    refused_property(
        json!({"type": "array", "items": {"type": "string", "enum": ["a"], "format": "email"}}),
        "keyword `format` is not allowed in untitled multi-select `items`",
    );
    refused_property(
        json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}], "type": "string"}}),
        "keyword `type` is not allowed in titled multi-select `items`",
    );
    refused_property(json!({"type": "null"}), "unsupported `type` \"null\"");
    refused_property(
        json!({"type": ["string", "null"]}),
        "`type` must be a string",
    );
    refused_property(json!({"title": "no type"}), "`type` is missing");
    refused_property(json!("string"), "must be an object");
    refused_property(
        json!({"$ref": "#/defs/x", "type": "string"}),
        "keyword `$ref`",
    );
    refused_property(
        json!({"type": "string", "pattern": "^a$"}),
        "keyword `pattern`",
    );
    refused_property(
        json!({"type": "number", "multipleOf": 2}),
        "keyword `multipleOf`",
    );
    refused_property(
        json!({"type": "integer", "exclusiveMinimum": 0}),
        "keyword `exclusiveMinimum`",
    );
    refused_property(json!({"type": "boolean", "const": true}), "keyword `const`");
    refused_property(
        json!({"type": "string", "anyOf": [{"const": "a", "title": "A"}]}),
        "keyword `anyOf`",
    );
    refused_property(
        json!({"type": "string", "enum": ["a"], "minLength": 1}),
        "keyword `minLength` is not allowed in a single-select enum schema",
    );
    refused_property(
        json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}], "enumNames": ["A"]}),
        "keyword `enumNames` is not allowed in a titled single-select enum schema",
    );
}

#[test]
fn refuses_bad_keyword_values() {
    refused_property(
        json!({"type": "string", "format": "ipv4"}),
        "format \"ipv4\"",
    );
    refused_property(
        json!({"type": "string", "format": 1}),
        "`format` must be a string",
    );
    refused_property(
        json!({"type": "string", "title": 1}),
        "`title` must be a string",
    );
    refused_property(
        json!({"type": "string", "description": null}),
        "`description` must be a string",
    );
    refused_property(
        json!({"type": "string", "minLength": -1}),
        "non-negative integer",
    );
    refused_property(
        json!({"type": "string", "maxLength": 1.5}),
        "non-negative integer",
    );
    refused_property(
        json!({"type": "string", "maxLength": "3"}),
        "non-negative integer",
    );
    refused_property(
        json!({"type": "string", "minLength": 3, "maxLength": 2}),
        "`minLength` (3) is greater than `maxLength` (2)",
    );
    refused_property(
        json!({"type": "number", "minimum": "0"}),
        "`minimum` must be a number",
    );
    refused_property(
        json!({"type": "number", "minimum": 2, "maximum": 1.5}),
        "`minimum` (2) is greater than `maximum` (1.5)",
    );
    refused_property(
        json!({"type": "array", "minItems": 2, "maxItems": 1, "items": {"type": "string", "enum": ["a", "b"]}}),
        "`minItems` (2) is greater than `maxItems` (1)",
    );
    refused_property(
        json!({"type": "array", "minItems": 3, "items": {"type": "string", "enum": ["a", "b"]}}),
        "`minItems` (3) is more than the 2 options",
    );
}

#[test]
fn refuses_bad_options() {
    refused_property(json!({"type": "string", "enum": []}), "at least one option");
    refused_property(
        json!({"type": "string", "enum": ["a", "a"]}),
        "\"a\" is listed twice",
    );
    refused_property(json!({"type": "string", "enum": ["a", 1]}), "only strings");
    refused_property(json!({"type": "string", "enum": "a"}), "array of strings");
    refused_property(
        json!({"type": "string", "enum": ["a"], "oneOf": []}),
        "not both",
    );
    refused_property(
        json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}),
        "`enumNames` has 1 names for 2 `enum` values",
    );
    refused_property(
        json!({"type": "string", "oneOf": []}),
        "at least one option",
    );
    refused_property(
        json!({"type": "string", "oneOf": "a"}),
        "`oneOf` must be an array",
    );
    refused_property(
        json!({"type": "string", "oneOf": ["a"]}),
        "`oneOf[0]` must be an object",
    );
    refused_property(
        json!({"type": "string", "oneOf": [{"const": "a"}]}),
        "`oneOf[0]` has no `title`",
    );
    refused_property(
        json!({"type": "string", "oneOf": [{"title": "A"}]}),
        "`oneOf[0]` has no `const`",
    );
    refused_property(
        json!({"type": "string", "oneOf": [{"const": 1, "title": "A"}]}),
        "`const` must be a string",
    );
    refused_property(
        json!({"type": "string", "oneOf": [{"const": "a", "title": "A", "description": "x"}]}),
        "keyword `description` is not allowed in `oneOf[0]`",
    );
    refused_property(
        json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "a", "title": "B"}]}}),
        "\"a\" is listed twice",
    );
}

#[test]
fn refuses_bad_defaults() {
    refused_property(
        json!({"type": "string", "default": 1}),
        "`default` must be a string",
    );
    refused_property(
        json!({"type": "number", "default": "1"}),
        "`default` must be a number",
    );
    refused_property(
        json!({"type": "integer", "default": 1.5}),
        "must be a whole number",
    );
    refused_property(
        json!({"type": "boolean", "default": "true"}),
        "`default` must be a boolean",
    );
    refused_property(
        json!({"type": "string", "enum": ["a"], "default": "b"}),
        "not one of the options",
    );
    refused_property(
        json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}], "default": "A"}),
        "not one of the options",
    );
    refused_property(
        json!({"type": "string", "enum": ["a"], "default": ["a"]}),
        "must be a string",
    );
    refused_property(
        json!({"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": "a"}),
        "`default` must be an array of strings",
    );
    refused_property(
        json!({"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["b"]}),
        "item \"b\" is not one of the options",
    );
    refused_property(
        json!({"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": [1]}),
        "only strings",
    );
    refused_property(
        json!({"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["a", "a"]}),
        "selects \"a\" twice",
    );
}

#[test]
fn refuses_bad_top_levels() {
    refused_schema(json!([]), "must be an object");
    refused_schema(json!({"properties": {}}), "`type` is missing");
    refused_schema(
        json!({"type": "array", "properties": {}}),
        "`type` must be \"object\"",
    );
    refused_schema(json!({"type": "object"}), "`properties` is missing");
    refused_schema(
        json!({"type": "object", "properties": []}),
        "`properties` must be an object",
    );
    refused_schema(
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        "keyword `additionalProperties` is not allowed",
    );
    refused_schema(
        json!({"type": "object", "properties": {}, "title": "Form"}),
        "keyword `title` is not allowed",
    );
    refused_schema(
        json!({"type": "object", "properties": {}, "$schema": 7}),
        "`$schema` must be a string",
    );
    refused_schema(
        json!({"type": "object", "properties": {}, "required": "a"}),
        "`required` must be an array of strings",
    );
    refused_schema(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": [1]}),
        "`required` must hold only strings",
    );
    assert_eq!(
        FormSchema::from_value(json!({
            "type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]
        })),
        Err(FormError::InvalidProperty {
            property: "b".into(),
            reason: "listed in `required` but not in `properties`".into()
        })
    );
    assert_eq!(
        FormSchema::from_value(json!({
            "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]
        })),
        Err(FormError::InvalidProperty {
            property: "a".into(),
            reason: "listed twice in `required`".into()
        })
    );
}

#[test]
fn errors_name_the_first_bad_property() {
    let err = FormSchema::from_value(json!({
        "type": "object",
        "properties": {
            "good": {"type": "string"},
            "nested": {"type": "object", "properties": {"x": {"type": "string"}}}
        }
    }))
    .unwrap_err();
    assert_eq!(err.property(), Some("nested"));
    assert!(err.is_schema_error());
    assert_eq!(
        err.to_string(),
        "invalid form schema: property `nested`: nested objects are not allowed: \
         elicitation forms are flat"
    );
}

#[test]
fn deserializing_checks_too_and_keeps_text_order() {
    let ok: FormSchema = serde_json::from_str(
        r#"{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"boolean"}},
            "required":["a"]}"#,
    )
    .unwrap();
    assert_eq!(ok.property_names().collect::<Vec<_>>(), ["b", "a"]);
    assert_eq!(
        serde_json::to_string(&ok).unwrap(),
        r#"{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"boolean"}},"required":["a"]}"#
    );

    let err = serde_json::from_str::<FormSchema>(
        r#"{"type":"object","properties":{"x":{"type":"object"}}}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("property `x`"), "{err}");

    let err = serde_json::from_str::<FormSchema>(
        r#"{"type":"object","properties":{"x":{"type":"string"},"x":{"type":"boolean"}}}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("property `x`: defined twice"),
        "{err}"
    );

    let err =
        serde_json::from_str::<FormSchema>(r#"{"type":"object","type":"object","properties":{}}"#)
            .unwrap_err();
    assert!(err.to_string().contains("`type` appears twice"), "{err}");

    let err = serde_json::from_str::<FormSchema>(r#""object""#).unwrap_err();
    assert!(err.to_string().contains("form schema object"), "{err}");

    let err =
        serde_json::from_str::<FormSchema>(r#"{"type":"object","properties":[1]}"#).unwrap_err();
    assert!(
        err.to_string().contains("`properties` must be an object"),
        "{err}"
    );
}

#[test]
fn conversions() {
    let value = form(json!({"a": {"type": "string"}}));
    let schema = FormSchema::try_from(value.clone()).unwrap();
    assert_eq!(Value::from(schema.clone()), value);
    assert_eq!(schema.properties().len(), 1);
    assert!(FormSchema::try_from(json!(null)).is_err());
}
