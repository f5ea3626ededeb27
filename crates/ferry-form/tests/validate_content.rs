//! `FormSchema::validate_content` refuses every kind of bad answer.

use ferry_form::{FormError, FormSchema, StringFormat};
use serde_json::{Map, Number, Value, json};

fn schema() -> FormSchema {
    FormSchema::from_value(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 5},
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "age": {"type": "integer", "minimum": 18, "maximum": 130},
            "score": {"type": "number", "minimum": -1.5, "maximum": 1.5},
            "big": {"type": "integer", "maximum": 18446744073709551615u64, "minimum": -5},
            "ok": {"type": "boolean"},
            "size": {"type": "string", "enum": ["s", "m"]},
            "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
            "tags": {"type": "array", "minItems": 1, "maxItems": 2,
                     "items": {"type": "string", "enum": ["a", "b", "c"]}},
            "titled_tags": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}}
        },
        "required": ["name", "age", "ok", "tags"]
    }))
    .unwrap()
}

fn valid() -> Map<String, Value> {
    match json!({
        "name": "Ada",
        "email": "ada@example.com",
        "site": "https://example.com",
        "day": "2026-07-28",
        "at": "2026-07-28T10:00:00Z",
        "age": 36,
        "score": 0,
        "big": 18446744073709551615u64,
        "ok": true,
        "size": "m",
        "color": "r",
        "tags": ["a", "c"],
        "titled_tags": ["x"]
    }) {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn with(key: &str, value: Value) -> Map<String, Value> {
    let mut content = valid();
    content.insert(key.into(), value);
    content
}

fn without(key: &str) -> Map<String, Value> {
    let mut content = valid();
    content.remove(key);
    content
}

fn n(value: Value) -> Number {
    match value {
        Value::Number(n) => n,
        _ => unreachable!(),
    }
}

#[test]
fn a_valid_answer_passes() {
    let schema = schema();
    assert_eq!(schema.validate_content(&valid()), Ok(()));
    assert!(schema.content_errors(&valid()).is_empty());
    // Optional properties may be absent or null; unknown keys are ignored.
    let mut minimal = Map::new();
    for key in ["name", "age", "ok", "tags"] {
        minimal.insert(key.into(), valid()[key].clone());
    }
    minimal.insert("email".into(), Value::Null);
    minimal.insert("unknown".into(), json!({"any": "thing"}));
    assert_eq!(schema.validate_content(&minimal), Ok(()));
    // Whole numbers written as floats count as integers.
    assert_eq!(schema.validate_content(&with("age", json!(40.0))), Ok(()));
    // Lengths count characters, not bytes.
    assert_eq!(
        schema.validate_content(&with("name", json!("ÅÄÖÜß"))),
        Ok(())
    );
}

#[test]
fn each_failure() {
    let schema = schema();
    let cases: Vec<(Map<String, Value>, FormError)> = vec![
        (
            without("name"),
            FormError::Missing {
                property: "name".into(),
            },
        ),
        (
            with("ok", Value::Null),
            FormError::Missing {
                property: "ok".into(),
            },
        ),
        (
            with("name", json!(7)),
            FormError::WrongType {
                property: "name".into(),
                expected: "a string",
                found: "a number",
            },
        ),
        (
            with("name", json!("A")),
            FormError::TooShort {
                property: "name".into(),
                min: 2,
                length: 1,
            },
        ),
        (
            with("name", json!("ÅÄÖÜßx")),
            FormError::TooLong {
                property: "name".into(),
                max: 5,
                length: 6,
            },
        ),
        (
            with("email", json!("not-an-email")),
            FormError::InvalidFormat {
                property: "email".into(),
                format: StringFormat::Email,
            },
        ),
        (
            with("site", json!("example.com")),
            FormError::InvalidFormat {
                property: "site".into(),
                format: StringFormat::Uri,
            },
        ),
        (
            with("day", json!("2026-02-30")),
            FormError::InvalidFormat {
                property: "day".into(),
                format: StringFormat::Date,
            },
        ),
        (
            with("at", json!("2026-07-28 10:00")),
            FormError::InvalidFormat {
                property: "at".into(),
                format: StringFormat::DateTime,
            },
        ),
        (
            with("age", json!("36")),
            FormError::WrongType {
                property: "age".into(),
                expected: "an integer",
                found: "a string",
            },
        ),
        (
            with("age", json!(36.5)),
            FormError::NotAnInteger {
                property: "age".into(),
                value: n(json!(36.5)),
            },
        ),
        (
            with("age", json!(17)),
            FormError::BelowMinimum {
                property: "age".into(),
                minimum: n(json!(18)),
                value: n(json!(17)),
            },
        ),
        (
            with("age", json!(131)),
            FormError::AboveMaximum {
                property: "age".into(),
                maximum: n(json!(130)),
                value: n(json!(131)),
            },
        ),
        (
            with("score", json!(true)),
            FormError::WrongType {
                property: "score".into(),
                expected: "a number",
                found: "a boolean",
            },
        ),
        (
            with("score", json!(-1.6)),
            FormError::BelowMinimum {
                property: "score".into(),
                minimum: n(json!(-1.5)),
                value: n(json!(-1.6)),
            },
        ),
        (
            with("score", json!(2)),
            FormError::AboveMaximum {
                property: "score".into(),
                maximum: n(json!(1.5)),
                value: n(json!(2)),
            },
        ),
        (
            with("big", json!(-6)),
            FormError::BelowMinimum {
                property: "big".into(),
                minimum: n(json!(-5)),
                value: n(json!(-6)),
            },
        ),
        (
            with("ok", json!("true")),
            FormError::WrongType {
                property: "ok".into(),
                expected: "a boolean",
                found: "a string",
            },
        ),
        (
            with("size", json!(["s"])),
            FormError::WrongType {
                property: "size".into(),
                expected: "a string",
                found: "an array",
            },
        ),
        (
            with("size", json!("l")),
            FormError::NotAnOption {
                property: "size".into(),
                value: "l".into(),
            },
        ),
        (
            with("color", json!("Red")),
            FormError::NotAnOption {
                property: "color".into(),
                value: "Red".into(),
            },
        ),
        (
            with("tags", json!("a")),
            FormError::WrongType {
                property: "tags".into(),
                expected: "an array of strings",
                found: "a string",
            },
        ),
        (
            with("tags", json!(["a", 1])),
            FormError::WrongType {
                property: "tags".into(),
                expected: "an array of strings",
                found: "an array holding something else",
            },
        ),
        (
            with("tags", json!(["a", "z"])),
            FormError::NotAnOption {
                property: "tags".into(),
                value: "z".into(),
            },
        ),
        (
            with("tags", json!(["a", "a"])),
            FormError::DuplicateItem {
                property: "tags".into(),
                value: "a".into(),
            },
        ),
        (
            with("tags", json!([])),
            FormError::TooFewItems {
                property: "tags".into(),
                min: 1,
                count: 0,
            },
        ),
        (
            with("tags", json!(["a", "b", "c"])),
            FormError::TooManyItems {
                property: "tags".into(),
                max: 2,
                count: 3,
            },
        ),
        (
            with("titled_tags", json!(["X"])),
            FormError::NotAnOption {
                property: "titled_tags".into(),
                value: "X".into(),
            },
        ),
        (
            with("titled_tags", json!({"x": true})),
            FormError::WrongType {
                property: "titled_tags".into(),
                expected: "an array of strings",
                found: "an object",
            },
        ),
    ];
    for (content, expected) in cases {
        assert_eq!(schema.validate_content(&content), Err(expected.clone()));
        assert_eq!(
            schema.content_errors(&content),
            std::slice::from_ref(&expected)
        );
        assert!(expected.property().is_some());
        assert!(!expected.is_schema_error());
    }
}

#[test]
fn all_errors_in_form_order() {
    let mut content = valid();
    content.remove("tags");
    content.insert("name".into(), json!(""));
    content.insert("age".into(), json!(1));
    let errors = schema().content_errors(&content);
    let properties: Vec<_> = errors.iter().filter_map(FormError::property).collect();
    // Form order; for a schema read from a `Value`, that is the map's order, which
    // depends on serde_json's `preserve_order` feature.
    let (ordered, sorted) = (["name", "age", "tags"], ["age", "name", "tags"]);
    assert!(
        properties == ordered || properties == sorted,
        "{properties:?}"
    );
    // validate_content reports the first.
    assert_eq!(schema().validate_content(&content), Err(errors[0].clone()));
}

#[test]
fn messages() {
    let cases = [
        (
            FormError::Missing {
                property: "a".into(),
            },
            "property `a` is required",
        ),
        (
            FormError::TooShort {
                property: "a".into(),
                min: 2,
                length: 1,
            },
            "property `a`: 1 characters is shorter than the minimum of 2",
        ),
        (
            FormError::InvalidFormat {
                property: "a".into(),
                format: StringFormat::DateTime,
            },
            "property `a`: not a valid date-time",
        ),
        (
            FormError::BelowMinimum {
                property: "a".into(),
                minimum: 18.into(),
                value: 3.into(),
            },
            "property `a`: 3 is less than the minimum of 18",
        ),
        (
            FormError::TooManyItems {
                property: "a".into(),
                max: 1,
                count: 2,
            },
            "property `a`: 2 selected, at most 1 allowed",
        ),
        (
            FormError::Deserialize {
                property: None,
                message: "boom".into(),
            },
            "the answer does not fit the form's type: boom",
        ),
        (
            FormError::Deserialize {
                property: Some("a".into()),
                message: "boom".into(),
            },
            "property `a`: boom",
        ),
    ];
    for (error, message) in cases {
        assert_eq!(error.to_string(), message);
    }
}
