//! The spec's own examples (copied under `tests/spec_examples/`) are accepted.

use std::fs;
use std::path::{Path, PathBuf};

use ferry_form::{Form, FormEnum, FormSchema, parse_content};
use serde_json::{Value, json};

fn examples(dir: &str) -> Vec<(PathBuf, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/spec_examples")
        .join(dir);
    let mut out: Vec<(PathBuf, Value)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let text = fs::read_to_string(&path).unwrap();
            let value = serde_json::from_str(&text).unwrap();
            (path, value)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!out.is_empty(), "no examples in {}", dir.display());
    out
}

const PROPERTY_SCHEMA_DIRS: [&str; 7] = [
    "StringSchema",
    "NumberSchema",
    "BooleanSchema",
    "UntitledSingleSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumSchema",
    "TitledMultiSelectEnumSchema",
];

#[test]
fn every_primitive_schema_example_is_accepted_as_a_property() {
    let mut count = 0;
    for dir in PROPERTY_SCHEMA_DIRS {
        for (path, example) in examples(dir) {
            let form = json!({
                "type": "object",
                "properties": {"field": example.clone()},
                "required": ["field"]
            });
            let schema = FormSchema::from_value(form.clone())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(schema.as_value(), &form, "{}", path.display());
            assert_eq!(
                schema.property_json("field").unwrap(),
                example.as_object().unwrap()
            );
            // The example's default is itself a valid answer.
            let default = schema.defaults();
            assert!(default.contains_key("field"), "{}", path.display());
            schema
                .validate_content(&default)
                .unwrap_or_else(|e| panic!("{}: default refused: {e}", path.display()));
            count += 1;
        }
    }
    assert_eq!(count, 7);
}

#[test]
fn every_form_request_example_is_accepted() {
    for (path, example) in examples("ElicitRequestFormParams") {
        let requested = example["requestedSchema"].clone();
        let schema = FormSchema::from_value(requested.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(schema.into_value(), requested);
    }
}

#[test]
fn the_answer_examples_fit_the_request_examples() {
    let multiple = &examples("ElicitRequestFormParams")
        .into_iter()
        .find(|(p, _)| p.ends_with("elicit-multiple-fields.json"))
        .unwrap()
        .1;
    let schema = FormSchema::from_value(multiple["requestedSchema"].clone()).unwrap();
    for (path, example) in examples("ElicitResult") {
        let Some(content) = example.get("content") else {
            continue; // URL mode: no content.
        };
        let content = content.as_object().unwrap();
        if path.ends_with("input-multiple-fields.json") {
            schema
                .validate_content(content)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

#[test]
fn a_derived_form_matches_the_multiple_fields_example() {
    #[derive(Form, serde::Deserialize, Debug, PartialEq)]
    struct Contact {
        /// Your full name
        name: String,
        /// Your email address
        #[form(format = "email")]
        email: String,
        /// Your age
        #[form(minimum = 18)]
        age: Option<f64>,
    }

    // Read from the text, so that the properties keep the example's order.
    #[derive(serde::Deserialize)]
    struct Request {
        #[serde(rename = "requestedSchema")]
        requested_schema: FormSchema,
    }
    let (path, _) = examples("ElicitRequestFormParams")
        .into_iter()
        .find(|(p, _)| p.ends_with("elicit-multiple-fields.json"))
        .unwrap();
    let request: Request = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(
        request
            .requested_schema
            .property_names()
            .collect::<Vec<_>>(),
        ["name", "email", "age"]
    );
    assert_eq!(Contact::form_schema(), request.requested_schema);

    let (_, result) = examples("ElicitResult")
        .into_iter()
        .find(|(p, _)| p.ends_with("input-multiple-fields.json"))
        .unwrap();
    let contact: Contact = parse_content(result["content"].as_object().unwrap()).unwrap();
    assert_eq!(
        contact,
        Contact {
            name: "Monalisa Octocat".into(),
            email: "octocat@github.com".into(),
            age: Some(30.0),
        }
    );
}

#[test]
fn derived_enums_match_the_color_examples() {
    #[derive(FormEnum, serde::Deserialize)]
    #[allow(dead_code)]
    enum Color {
        #[serde(rename = "#FF0000")]
        #[form(title = "Red")]
        Red,
        #[serde(rename = "#00FF00")]
        #[form(title = "Green")]
        Green,
        #[serde(rename = "#0000FF")]
        #[form(title = "Blue")]
        Blue,
    }

    #[derive(FormEnum, serde::Deserialize)]
    #[allow(dead_code)]
    enum Plain {
        Red,
        Green,
        Blue,
    }

    #[derive(Form, serde::Deserialize)]
    #[allow(dead_code)]
    struct Pick {
        /// Choose your favorite color
        #[form(title = "Color Selection", default = "#FF0000")]
        titled_single: Color,
        /// Choose your favorite colors
        #[form(title = "Color Selection", min_items = 1, max_items = 2)]
        #[form(default = ["#FF0000", "#00FF00"])]
        titled_multi: Vec<Color>,
        /// Choose your favorite color
        #[form(title = "Color Selection", default = "Red")]
        untitled_single: Plain,
        /// Choose your favorite colors
        #[form(title = "Color Selection", min_items = 1, max_items = 2)]
        #[form(default = ["Red", "Green"])]
        untitled_multi: Vec<Plain>,
    }

    let schema = Pick::form_schema();
    for (property, dir) in [
        ("titled_single", "TitledSingleSelectEnumSchema"),
        ("titled_multi", "TitledMultiSelectEnumSchema"),
        ("untitled_single", "UntitledSingleSelectEnumSchema"),
        ("untitled_multi", "UntitledMultiSelectEnumSchema"),
    ] {
        let (_, example) = examples(dir).remove(0);
        assert_eq!(
            &Value::Object(schema.property_json(property).unwrap().clone()),
            &example,
            "{property}"
        );
    }
}
