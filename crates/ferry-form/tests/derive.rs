//! The schemas `#[derive(Form)]` and `#[derive(FormEnum)]` produce, and reading answers
//! back into the types.

use ferry_form::{Form, FormEnum, FormError, FormOption, FormSchema, parse_content};
use serde::Deserialize;
use serde_json::{Map, Value, json};

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[derive(FormEnum, Deserialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Shade {
    LightBlue,
    DarkRed,
    #[serde(skip_deserializing)]
    #[allow(dead_code)]
    Internal,
}

#[derive(FormEnum, Deserialize, Debug, PartialEq)]
enum Color {
    #[form(title = "Red")]
    #[serde(rename = "#FF0000")]
    Red,
    #[serde(rename = "#00FF00")]
    Green,
}

#[derive(Form, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Everything {
    /// Your full name
    ///   (as on your passport)
    ///
    /// Second paragraph.
    #[form(title = "Name", min_length = 1, max_length = 50, default = "Ada")]
    full_name: String,
    #[form(format = "email", default = "ada@example.com")]
    email: String,
    #[form(format = "uri")]
    website: Option<String>,
    #[form(format = "date")]
    birthday: Option<String>,
    /// This doc comment is replaced.
    #[form(format = "date-time", description = "When to meet")]
    meeting_at: String,
    agree: bool,
    #[form(default = true)]
    subscribe: Option<bool>,
    #[form(minimum = 0, maximum = 130, default = 30)]
    age: u8,
    count: i64,
    #[form(minimum = -1.5, maximum = 1000.0, default = 0.25)]
    ratio: f64,
    weight: Option<f32>,
    shade: Shade,
    #[form(default = "#00FF00")]
    color: Color,
    maybe_shade: Option<Shade>,
    #[form(min_items = 1, max_items = 2, default = ["light_blue"])]
    shades: Vec<Shade>,
    colors: Option<Vec<Color>>,
    #[serde(rename = "x-custom")]
    custom: String,
    #[serde(default)]
    defaulted: String,
    #[serde(skip)]
    skipped: Vec<u8>,
    /// A doc comment left out.
    #[form(description = "")]
    no_description: u16,
    r#type: String,
}

fn everything_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "fullName": {
                "type": "string",
                "title": "Name",
                "description": "Your full name (as on your passport)\n\nSecond paragraph.",
                "minLength": 1,
                "maxLength": 50,
                "default": "Ada"
            },
            "email": {"type": "string", "format": "email", "default": "ada@example.com"},
            "website": {"type": "string", "format": "uri"},
            "birthday": {"type": "string", "format": "date"},
            "meetingAt": {"type": "string", "format": "date-time", "description": "When to meet"},
            "agree": {"type": "boolean"},
            "subscribe": {"type": "boolean", "default": true},
            "age": {"type": "integer", "minimum": 0, "maximum": 130, "default": 30},
            "count": {"type": "integer"},
            "ratio": {"type": "number", "minimum": -1.5, "maximum": 1000.0, "default": 0.25},
            "weight": {"type": "number"},
            "shade": {"type": "string", "enum": ["light_blue", "dark_red"]},
            "color": {
                "type": "string",
                "oneOf": [
                    {"const": "#FF0000", "title": "Red"},
                    {"const": "#00FF00", "title": "#00FF00"}
                ],
                "default": "#00FF00"
            },
            "maybeShade": {"type": "string", "enum": ["light_blue", "dark_red"]},
            "shades": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "items": {"type": "string", "enum": ["light_blue", "dark_red"]},
                "default": ["light_blue"]
            },
            "colors": {
                "type": "array",
                "items": {"anyOf": [
                    {"const": "#FF0000", "title": "Red"},
                    {"const": "#00FF00", "title": "#00FF00"}
                ]}
            },
            "x-custom": {"type": "string"},
            "defaulted": {"type": "string"},
            "noDescription": {"type": "integer"},
            "type": {"type": "string"}
        },
        "required": [
            "fullName", "email", "meetingAt", "agree", "age", "count", "ratio", "shade",
            "color", "shades", "x-custom", "noDescription", "type"
        ]
    })
}

const EVERYTHING_ORDER: [&str; 20] = [
    "fullName",
    "email",
    "website",
    "birthday",
    "meetingAt",
    "agree",
    "subscribe",
    "age",
    "count",
    "ratio",
    "weight",
    "shade",
    "color",
    "maybeShade",
    "shades",
    "colors",
    "x-custom",
    "defaulted",
    "noDescription",
    "type",
];

#[test]
fn schema_of_every_field_kind() {
    let schema = Everything::form_schema();
    assert_eq!(schema.as_value(), &everything_schema());
    assert_eq!(serde_json::to_value(&schema).unwrap(), everything_schema());
    assert_eq!(
        schema.property_names().collect::<Vec<_>>(),
        EVERYTHING_ORDER
    );
    assert_eq!(
        schema.required().collect::<Vec<_>>(),
        [
            "fullName",
            "email",
            "meetingAt",
            "agree",
            "age",
            "count",
            "ratio",
            "shade",
            "color",
            "shades",
            "x-custom",
            "noDescription",
            "type"
        ]
    );
    assert!(schema.is_required("fullName"));
    assert!(!schema.is_required("website"));
    assert_eq!(schema.len(), 20);
}

#[test]
fn serialization_keeps_field_order() {
    let text = serde_json::to_string(&Everything::form_schema()).unwrap();
    assert!(text.starts_with(r#"{"type":"object","properties":{"fullName":"#));
    let positions: Vec<usize> = EVERYTHING_ORDER
        .iter()
        .map(|name| text.find(&format!("\"{name}\":{{")).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    // And reading it back keeps the order too.
    let back: FormSchema = serde_json::from_str(&text).unwrap();
    assert_eq!(back.property_names().collect::<Vec<_>>(), EVERYTHING_ORDER);
    assert_eq!(back, Everything::form_schema());
}

#[test]
fn derived_schemas_pass_the_runtime_checks() {
    let schema = Everything::form_schema();
    let checked = FormSchema::from_value(schema.as_value().clone()).unwrap();
    assert_eq!(checked.as_value(), schema.as_value());
    let sorted = |s: &FormSchema| {
        let mut names: Vec<String> = s.required().map(String::from).collect();
        names.sort();
        names
    };
    assert_eq!(sorted(&checked), sorted(&schema));
}

#[test]
fn defaults_of_a_derived_form() {
    assert_eq!(
        Value::Object(Everything::form_schema().defaults()),
        json!({
            "fullName": "Ada",
            "email": "ada@example.com",
            "subscribe": true,
            "age": 30,
            "ratio": 0.25,
            "color": "#00FF00",
            "shades": ["light_blue"]
        })
    );
}

fn full_answer() -> Value {
    json!({
        "fullName": "Ada Lovelace",
        "email": "ada@example.com",
        "website": "https://example.com/ada",
        "birthday": "1815-12-10",
        "meetingAt": "2026-07-28T09:30:00Z",
        "agree": true,
        "subscribe": false,
        "age": 36,
        "count": -7,
        "ratio": 0.5,
        "weight": 61.5,
        "shade": "dark_red",
        "color": "#FF0000",
        "maybeShade": "light_blue",
        "shades": ["light_blue", "dark_red"],
        "colors": ["#00FF00"],
        "x-custom": "custom",
        "defaulted": "given",
        "noDescription": 65535,
        "type": "t"
    })
}

#[test]
fn round_trip_of_a_full_answer() {
    let parsed: Everything = parse_content(&obj(full_answer())).unwrap();
    assert_eq!(
        parsed,
        Everything {
            full_name: "Ada Lovelace".into(),
            email: "ada@example.com".into(),
            website: Some("https://example.com/ada".into()),
            birthday: Some("1815-12-10".into()),
            meeting_at: "2026-07-28T09:30:00Z".into(),
            agree: true,
            subscribe: Some(false),
            age: 36,
            count: -7,
            ratio: 0.5,
            weight: Some(61.5),
            shade: Shade::DarkRed,
            color: Color::Red,
            maybe_shade: Some(Shade::LightBlue),
            shades: vec![Shade::LightBlue, Shade::DarkRed],
            colors: Some(vec![Color::Green]),
            custom: "custom".into(),
            defaulted: "given".into(),
            skipped: Vec::new(),
            no_description: 65535,
            r#type: "t".into(),
        }
    );
}

#[test]
fn round_trip_of_a_minimal_answer() {
    let answer = json!({
        "fullName": "A",
        "email": "a@b.c",
        "meetingAt": "2026-07-28T09:30:00+02:00",
        "agree": false,
        "age": 0,
        "count": 3.0,
        "ratio": 1,
        "shade": "light_blue",
        "color": "#00FF00",
        "shades": ["dark_red"],
        "x-custom": "",
        "noDescription": 0,
        "type": "",
        // Optional answers may be null, and unknown keys are ignored.
        "website": null,
        "somethingElse": {"nested": true}
    });
    let parsed = Everything::from_content(&obj(answer)).unwrap();
    assert_eq!(parsed.count, 3);
    assert_eq!(parsed.ratio, 1.0);
    assert_eq!(parsed.website, None);
    assert_eq!(parsed.subscribe, None);
    assert_eq!(parsed.colors, None);
    assert_eq!(parsed.defaulted, "");
    assert_eq!(parsed.no_description, 0);
}

#[test]
fn invalid_answers_name_the_property() {
    let mut answer = obj(full_answer());
    answer.insert("shades".into(), json!(["light_blue", "light_blue"]));
    assert_eq!(
        parse_content::<Everything>(&answer).unwrap_err(),
        FormError::DuplicateItem {
            property: "shades".into(),
            value: "light_blue".into()
        }
    );
    let mut answer = obj(full_answer());
    answer.remove("agree");
    assert_eq!(
        parse_content::<Everything>(&answer).unwrap_err(),
        FormError::Missing {
            property: "agree".into()
        }
    );
    let mut answer = obj(full_answer());
    answer.insert("count".into(), json!(2.5));
    assert_eq!(
        parse_content::<Everything>(&answer).unwrap_err().property(),
        Some("count")
    );
}

#[test]
fn answers_that_do_not_fit_the_rust_type_name_the_property() {
    let mut answer = obj(full_answer());
    answer.insert("noDescription".into(), json!(70000));
    let err = parse_content::<Everything>(&answer).unwrap_err();
    assert!(
        matches!(&err, FormError::Deserialize { property: Some(p), .. } if p == "noDescription"),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with("property `noDescription`: "),
        "{err}"
    );

    let mut answer = obj(full_answer());
    answer.insert("count".into(), json!(1e30));
    let err = parse_content::<Everything>(&answer).unwrap_err();
    assert_eq!(err.property(), Some("count"));

    // A skipped variant is not an option.
    let mut answer = obj(full_answer());
    answer.insert("shade".into(), json!("internal"));
    assert_eq!(
        parse_content::<Everything>(&answer).unwrap_err(),
        FormError::NotAnOption {
            property: "shade".into(),
            value: "internal".into()
        }
    );
}

#[test]
fn enum_options_and_values() {
    assert_eq!(
        Shade::OPTIONS,
        [
            FormOption::new("light_blue", None),
            FormOption::new("dark_red", None)
        ]
    );
    assert_eq!(Shade::Internal.form_value(), "internal");
    assert_eq!(
        Color::OPTIONS,
        [
            FormOption::new("#FF0000", Some("Red")),
            FormOption::new("#00FF00", None)
        ]
    );
    assert_eq!(Color::Green.form_value(), "#00FF00");
}

macro_rules! rename_rule_case {
    ($module:ident, $rule:literal, $field:literal, $variant:literal) => {
        mod $module {
            use super::*;

            #[derive(FormEnum, Deserialize, Debug, PartialEq)]
            #[serde(rename_all = $rule)]
            pub enum Kind {
                VeryTasty,
            }

            #[derive(Form, Deserialize, Debug, PartialEq)]
            #[serde(rename_all = $rule)]
            pub struct Meal {
                pub very_tasty: Kind,
            }

            #[test]
            fn names_match_serde() {
                let schema = Meal::form_schema();
                assert_eq!(schema.property_names().collect::<Vec<_>>(), [$field]);
                assert_eq!(
                    schema.property_json($field).unwrap()["enum"],
                    json!([$variant])
                );
                let meal: Meal = parse_content(&obj(json!({ $field: $variant }))).unwrap();
                assert_eq!(meal.very_tasty, Kind::VeryTasty);
                // serde itself agrees on both names.
                let direct: Meal = serde_json::from_value(json!({ $field: $variant })).unwrap();
                assert_eq!(direct, meal);
            }
        }
    };
}

rename_rule_case!(lowercase, "lowercase", "very_tasty", "verytasty");
rename_rule_case!(uppercase, "UPPERCASE", "VERY_TASTY", "VERYTASTY");
rename_rule_case!(pascal, "PascalCase", "VeryTasty", "VeryTasty");
rename_rule_case!(camel, "camelCase", "veryTasty", "veryTasty");
rename_rule_case!(snake, "snake_case", "very_tasty", "very_tasty");
rename_rule_case!(
    screaming_snake,
    "SCREAMING_SNAKE_CASE",
    "VERY_TASTY",
    "VERY_TASTY"
);
rename_rule_case!(kebab, "kebab-case", "very-tasty", "very-tasty");
rename_rule_case!(
    screaming_kebab,
    "SCREAMING-KEBAB-CASE",
    "VERY-TASTY",
    "VERY-TASTY"
);

#[derive(Form, Deserialize, Debug, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
struct AllOptional {
    #[serde(rename(serialize = "out", deserialize = "in"))]
    name: String,
    #[serde(alias = "n")]
    number: u32,
}

#[test]
fn struct_level_default_makes_every_field_optional() {
    let schema = AllOptional::form_schema();
    assert_eq!(
        schema.as_value(),
        &json!({
            "type": "object",
            "properties": {"in": {"type": "string"}, "number": {"type": "integer"}}
        })
    );
    assert_eq!(schema.required().count(), 0);
    // Unknown keys are dropped before serde sees them, so deny_unknown_fields is fine.
    let parsed: AllOptional = parse_content(&obj(json!({"in": "x", "extra": 1}))).unwrap();
    assert_eq!(
        parsed,
        AllOptional {
            name: "x".into(),
            number: 0
        }
    );
}

mod custom {
    use super::*;

    fn parse_upper<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        let s = String::deserialize(d)?;
        Ok(s.to_uppercase())
    }

    #[derive(Form, Deserialize, Debug)]
    pub struct Custom {
        #[serde(deserialize_with = "parse_upper")]
        pub shout: String,
        pub small: u8,
    }

    #[test]
    fn fields_with_custom_deserializers_work() {
        let parsed: Custom = parse_content(&obj(json!({"shout": "hi", "small": 1}))).unwrap();
        assert_eq!(parsed.shout, "HI");
        assert_eq!(parsed.small, 1);
        let err = parse_content::<Custom>(&obj(json!({"shout": "hi", "small": 256}))).unwrap_err();
        assert_eq!(err.property(), Some("small"));
    }
}

mod reexported {
    // The derive can name the crate through another path.
    pub mod forms {
        pub use ferry_form::*;
    }

    #[derive(forms::Form, serde::Deserialize)]
    #[form(crate = "crate::reexported::forms")]
    pub struct Via {
        pub ok: bool,
    }

    #[test]
    fn crate_path_option() {
        use forms::Form as _;
        let via: Via =
            forms::parse_content(serde_json::json!({"ok": true}).as_object().unwrap()).unwrap();
        assert!(via.ok);
        assert_eq!(
            Via::form_schema().as_value(),
            &serde_json::json!({
                "type": "object",
                "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"]
            })
        );
    }
}

#[derive(Form, Deserialize)]
struct Empty {}

#[test]
fn an_empty_form() {
    let schema = Empty::form_schema();
    assert!(schema.is_empty());
    assert_eq!(
        schema.as_value(),
        &json!({"type": "object", "properties": {}})
    );
    assert!(parse_content::<Empty>(&Map::new()).is_ok());
}

#[derive(Form, Deserialize, Debug)]
struct Numbers {
    #[form(minimum = -128, maximum = 127)]
    a: i8,
    #[form(maximum = 18446744073709551615)]
    b: u64,
    #[form(minimum = -9223372036854775808)]
    c: i64,
    #[form(minimum = 0, default = 1.0)]
    d: u128,
    #[form(maximum = 3.4e38)]
    e: f32,
    f: isize,
    g: usize,
    h: i16,
    i: u16,
    j: i32,
    k: u32,
    l: i128,
}

#[test]
fn integer_bounds_at_the_edges_of_their_types() {
    let schema = Numbers::form_schema();
    assert_eq!(schema.property_json("a").unwrap()["minimum"], json!(-128));
    assert_eq!(
        schema.property_json("b").unwrap()["maximum"],
        json!(18446744073709551615u64)
    );
    assert_eq!(
        schema.property_json("c").unwrap()["minimum"],
        json!(i64::MIN)
    );
    assert_eq!(schema.property_json("d").unwrap()["default"], json!(1.0));
    for name in ["f", "g", "h", "i", "j", "k", "l"] {
        assert_eq!(
            schema.property_json(name).unwrap(),
            json!({"type": "integer"}).as_object().unwrap()
        );
    }
    let answer = json!({
        "a": -128, "b": 18446744073709551615u64, "c": i64::MIN, "d": 5, "e": 1.5,
        "f": 1, "g": 2, "h": 3, "i": 4, "j": 5, "k": 6, "l": 7
    });
    let parsed: Numbers = parse_content(&obj(answer)).unwrap();
    assert_eq!(
        (parsed.a, parsed.b, parsed.c, parsed.d),
        (-128, u64::MAX, i64::MIN, 5)
    );
    assert_eq!(parsed.e, 1.5);
    assert_eq!(
        (
            parsed.f, parsed.g, parsed.h, parsed.i, parsed.j, parsed.k, parsed.l
        ),
        (1, 2, 3, 4, 5, 6, 7)
    );
    let mut too_big = obj(json!({
        "a": -129, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0, "h": 0, "i": 0, "j": 0,
        "k": 0, "l": 0
    }));
    assert!(matches!(
        parse_content::<Numbers>(&too_big),
        Err(FormError::BelowMinimum { property, .. }) if property == "a"
    ));
    too_big.insert("a".into(), json!(0));
    too_big.insert("e".into(), json!(3.5e38));
    assert!(matches!(
        parse_content::<Numbers>(&too_big),
        Err(FormError::AboveMaximum { property, .. }) if property == "e"
    ));
}
