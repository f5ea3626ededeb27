//! The typed model of one property of a form, shared by the derive's builder, the schema
//! parser and the answer checks.

use serde_json::{Map, Number, Value, json};

use crate::StringFormat;

/// One option of a select field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    pub(crate) value: String,
    pub(crate) title: Option<String>,
}

/// How a single select writes its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SelectStyle {
    /// `enum: [...]`
    Untitled,
    /// `oneOf: [{const, title}]`
    Titled,
    /// `enum: [...]` with `enumNames: [...]` (legacy)
    Legacy,
}

/// The kind of a property and the constraints that come with it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<StringFormat>,
    },
    Number {
        integer: bool,
        minimum: Option<Number>,
        maximum: Option<Number>,
    },
    Boolean,
    Select {
        options: Vec<Choice>,
        style: SelectStyle,
    },
    MultiSelect {
        options: Vec<Choice>,
        titled: bool,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

/// One property of a form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prop {
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) default: Option<Value>,
    pub(crate) required: bool,
    pub(crate) kind: Kind,
}

impl Prop {
    pub(crate) fn new(kind: Kind) -> Prop {
        Prop {
            title: None,
            description: None,
            default: None,
            required: true,
            kind,
        }
    }

    /// The property's schema as JSON.
    pub(crate) fn to_value(&self) -> Value {
        let mut map = Map::new();
        let mut put = |key: &str, value: Value| {
            map.insert(key.to_owned(), value);
        };
        let titled = |options: &[Choice]| -> Value {
            options
                .iter()
                .map(|c| json!({"const": c.value, "title": c.title.as_ref().unwrap_or(&c.value)}))
                .collect()
        };
        let values = |options: &[Choice]| -> Value {
            options
                .iter()
                .map(|c| Value::from(c.value.as_str()))
                .collect()
        };
        match &self.kind {
            Kind::Text {
                min_length,
                max_length,
                format,
            } => {
                put("type", "string".into());
                if let Some(n) = min_length {
                    put("minLength", (*n).into());
                }
                if let Some(n) = max_length {
                    put("maxLength", (*n).into());
                }
                if let Some(f) = format {
                    put("format", f.as_str().into());
                }
            }
            Kind::Number {
                integer,
                minimum,
                maximum,
            } => {
                put("type", if *integer { "integer" } else { "number" }.into());
                if let Some(n) = minimum {
                    put("minimum", Value::Number(n.clone()));
                }
                if let Some(n) = maximum {
                    put("maximum", Value::Number(n.clone()));
                }
            }
            Kind::Boolean => put("type", "boolean".into()),
            Kind::Select { options, style } => {
                put("type", "string".into());
                match style {
                    SelectStyle::Untitled => put("enum", values(options)),
                    SelectStyle::Titled => put("oneOf", titled(options)),
                    SelectStyle::Legacy => {
                        put("enum", values(options));
                        put(
                            "enumNames",
                            options
                                .iter()
                                .map(|c| Value::from(c.title.as_ref().unwrap_or(&c.value).as_str()))
                                .collect(),
                        );
                    }
                }
            }
            Kind::MultiSelect {
                options,
                titled: is_titled,
                min_items,
                max_items,
            } => {
                put("type", "array".into());
                if let Some(n) = min_items {
                    put("minItems", (*n).into());
                }
                if let Some(n) = max_items {
                    put("maxItems", (*n).into());
                }
                if *is_titled {
                    put("items", json!({"anyOf": titled(options)}));
                } else {
                    put("items", json!({"type": "string", "enum": values(options)}));
                }
            }
        }
        if let Some(title) = &self.title {
            put("title", title.as_str().into());
        }
        if let Some(description) = &self.description {
            put("description", description.as_str().into());
        }
        if let Some(default) = &self.default {
            put("default", default.clone());
        }
        Value::Object(map)
    }
}
