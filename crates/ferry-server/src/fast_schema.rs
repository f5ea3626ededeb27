//! A small validator for the JSON Schema subset that tool schemas almost always use
//! (`type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`,
//! numeric bounds, length and size bounds, and annotations), with the semantics of JSON
//! Schema 2020-12 (also those of 2019-09, draft 7 and draft 6 for these keywords).
//!
//! Schemas outside the subset go to the `jsonschema` crate. The subset covers what
//! `schemars` derives for flat argument structs, so most tools validate without compiling
//! a general validator: less code at startup and fewer instructions per call. The tests
//! check every verdict against the `jsonschema` crate.

use serde_json::{Map, Number, Value};

/// A schema of the subset, ready to validate.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    types: Option<u8>,
    properties: Vec<(String, Node)>,
    required: Vec<String>,
    additional: Additional,
    items: Option<Box<Node>>,
    allowed: Option<Vec<Value>>,
    constant: Option<Value>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    /// `false` as a whole schema: nothing validates.
    never: bool,
}

#[derive(Debug, Clone)]
enum Additional {
    Any,
    Never,
    Schema(Box<Node>),
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const NUMBER: u8 = 16;
const STRING: u8 = 32;
const INTEGER: u8 = 64;

/// Keywords that only annotate: they never change a verdict.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "$schema",
    "contentMediaType",
    "contentEncoding",
];

impl Node {
    /// Builds the validator, or `None` when the schema uses anything outside the subset.
    pub(crate) fn build(schema: &Value) -> Option<Node> {
        let mut node = Node {
            types: None,
            properties: Vec::new(),
            required: Vec::new(),
            additional: Additional::Any,
            items: None,
            allowed: None,
            constant: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            min_length: None,
            max_length: None,
            min_items: None,
            max_items: None,
            never: false,
        };
        let map = match schema {
            Value::Bool(true) => return Some(node),
            Value::Bool(false) => {
                node.never = true;
                return Some(node);
            }
            Value::Object(m) => m,
            _ => return None,
        };
        for (key, value) in map {
            match key.as_str() {
                "type" => node.types = Some(types(value)?),
                "properties" => {
                    for (name, sub) in value.as_object()? {
                        node.properties.push((name.clone(), Node::build(sub)?));
                    }
                }
                "required" => {
                    for name in value.as_array()? {
                        node.required.push(name.as_str()?.to_owned());
                    }
                }
                "additionalProperties" => {
                    node.additional = match value {
                        Value::Bool(true) => Additional::Any,
                        Value::Bool(false) => Additional::Never,
                        other => Additional::Schema(Box::new(Node::build(other)?)),
                    }
                }
                "items" => node.items = Some(Box::new(Node::build(value)?)),
                "enum" => node.allowed = Some(value.as_array()?.clone()),
                "const" => node.constant = Some(value.clone()),
                "minimum" => node.minimum = Some(number(value)?),
                "maximum" => node.maximum = Some(number(value)?),
                "exclusiveMinimum" => node.exclusive_minimum = Some(number(value)?),
                "exclusiveMaximum" => node.exclusive_maximum = Some(number(value)?),
                "minLength" => node.min_length = Some(count(value)?),
                "maxLength" => node.max_length = Some(count(value)?),
                "minItems" => node.min_items = Some(count(value)?),
                "maxItems" => node.max_items = Some(count(value)?),
                k if ANNOTATIONS.contains(&k) || k.starts_with("x-") => {}
                _ => return None,
            }
        }
        Some(node)
    }

    /// Validates `instance`, collecting at most `limit` problems as `path: message`.
    pub(crate) fn validate(&self, instance: &Value, limit: usize) -> Result<(), String> {
        let mut problems = Vec::new();
        let mut path = String::new();
        self.check(instance, &mut path, &mut problems, limit);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }

    fn check(&self, v: &Value, path: &mut String, out: &mut Vec<String>, limit: usize) {
        let mut fail = |path: &str, message: String| {
            if out.len() < limit {
                out.push(if path.is_empty() {
                    message
                } else {
                    format!("{path}: {message}")
                });
            }
        };
        if self.never {
            fail(path, "no value is allowed here".into());
            return;
        }
        if let Some(t) = self.types
            && t & type_of(v) == 0
        {
            fail(
                path,
                format!("{} is not of type {}", short(v), type_names(t)),
            );
            return;
        }
        if let Some(c) = &self.constant
            && !json_eq(c, v)
        {
            fail(
                path,
                format!("{} is not the expected constant {}", short(v), short(c)),
            );
        }
        if let Some(allowed) = &self.allowed
            && !allowed.iter().any(|a| json_eq(a, v))
        {
            fail(
                path,
                format!("{} is not one of the allowed values", short(v)),
            );
        }
        match v {
            Value::Number(n) => {
                if let Some(m) = &self.minimum
                    && cmp(n, m).is_lt()
                {
                    fail(path, format!("{n} is less than the minimum of {m}"));
                }
                if let Some(m) = &self.maximum
                    && cmp(n, m).is_gt()
                {
                    fail(path, format!("{n} is greater than the maximum of {m}"));
                }
                if let Some(m) = &self.exclusive_minimum
                    && cmp(n, m).is_le()
                {
                    fail(path, format!("{n} is not greater than {m}"));
                }
                if let Some(m) = &self.exclusive_maximum
                    && cmp(n, m).is_ge()
                {
                    fail(path, format!("{n} is not less than {m}"));
                }
            }
            Value::String(s) => {
                let len = s.chars().count() as u64;
                if self.min_length.is_some_and(|m| len < m) {
                    fail(
                        path,
                        format!(
                            "{} is shorter than {} characters",
                            short(v),
                            self.min_length.unwrap_or(0)
                        ),
                    );
                }
                if self.max_length.is_some_and(|m| len > m) {
                    fail(
                        path,
                        format!(
                            "{} is longer than {} characters",
                            short(v),
                            self.max_length.unwrap_or(0)
                        ),
                    );
                }
            }
            Value::Array(items) => {
                let len = items.len() as u64;
                if self.min_items.is_some_and(|m| len < m) {
                    fail(
                        path,
                        format!("has fewer than {} items", self.min_items.unwrap_or(0)),
                    );
                }
                if self.max_items.is_some_and(|m| len > m) {
                    fail(
                        path,
                        format!("has more than {} items", self.max_items.unwrap_or(0)),
                    );
                }
                if let Some(item) = &self.items {
                    for (i, value) in items.iter().enumerate() {
                        let len = path.len();
                        path.push('/');
                        path.push_str(&i.to_string());
                        item.check(value, path, out, limit);
                        path.truncate(len);
                    }
                }
            }
            Value::Object(map) => self.check_object(map, path, out, limit),
            _ => {}
        }
    }

    fn check_object(
        &self,
        map: &Map<String, Value>,
        path: &mut String,
        out: &mut Vec<String>,
        limit: usize,
    ) {
        for name in &self.required {
            if !map.contains_key(name) && out.len() < limit {
                out.push(if path.is_empty() {
                    format!("{name:?} is a required property")
                } else {
                    format!("{path}: {name:?} is a required property")
                });
            }
        }
        for (name, value) in map {
            let len = path.len();
            path.push('/');
            escape_pointer(name, path);
            match self.properties.iter().find(|(p, _)| p == name) {
                Some((_, node)) => node.check(value, path, out, limit),
                None => match &self.additional {
                    Additional::Any => {}
                    Additional::Never => {
                        if out.len() < limit {
                            out.push(format!(
                                "{path}: additional property {name:?} is not allowed"
                            ));
                        }
                    }
                    Additional::Schema(node) => node.check(value, path, out, limit),
                },
            }
            path.truncate(len);
        }
    }
}

fn types(value: &Value) -> Option<u8> {
    let one = |s: &str| {
        Some(match s {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "number" => NUMBER | INTEGER,
            "string" => STRING,
            "integer" => INTEGER,
            _ => return None,
        })
    };
    match value {
        Value::String(s) => one(s),
        Value::Array(list) if !list.is_empty() => list
            .iter()
            .try_fold(0u8, |acc, t| Some(acc | one(t.as_str()?)?)),
        _ => None,
    }
}

fn type_of(v: &Value) -> u8 {
    match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        // 1.0 is an integer in JSON Schema.
        Value::Number(n) if is_integral(n) => INTEGER,
        Value::Number(_) => NUMBER,
    }
}

fn type_names(t: u8) -> String {
    let mut names = Vec::new();
    for (bit, name) in [
        (NULL, "null"),
        (BOOLEAN, "boolean"),
        (OBJECT, "object"),
        (ARRAY, "array"),
        (NUMBER, "number"),
        (STRING, "string"),
    ] {
        if t & bit != 0 {
            names.push(name);
        }
    }
    if t & INTEGER != 0 && t & NUMBER == 0 {
        names.push("integer");
    }
    names.join(" or ")
}

fn number(v: &Value) -> Option<Number> {
    match v {
        Value::Number(n) => Some(n.clone()),
        _ => None,
    }
}

fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        _ => None,
    }
}

fn is_integral(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Compares two JSON numbers by value, exactly for integers.
fn cmp(a: &Number, b: &Number) -> std::cmp::Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    let (x, y) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
}

/// JSON Schema equality: numbers by value (1 equals 1.0), objects regardless of order.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp(x, y).is_eq(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn escape_pointer(name: &str, out: &mut String) {
    for c in name.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.len() > 60 {
        let mut cut = 57;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &text[..cut])
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every verdict of the subset validator equals the `jsonschema` crate's.
    #[test]
    fn agrees_with_jsonschema() {
        let schemas = [
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 255}},
                   "additionalProperties": false}),
            json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "minLength": 2},
                   "minItems": 1, "maxItems": 2}}}),
            json!({"type": ["string", "null"]}),
            json!({"enum": ["a", 1, null, {"x": [1]}]}),
            json!({"const": 2}),
            json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5}),
            json!({"type": "string", "maxLength": 3, "format": "email"}),
            json!({"type": "object", "additionalProperties": {"type": "boolean"}}),
            json!({"type": "object", "properties": {"a": false, "b": true}}),
            json!(true),
            json!(false),
            json!({"type": "integer"}),
            json!({"type": "object", "properties": {"big": {"type": "integer", "maximum": 9007199254740993_u64}}}),
        ];
        let instances = [
            json!({}),
            json!({"text": "hi"}),
            json!({"text": 3}),
            json!({"n": 0}),
            json!({"n": 255}),
            json!({"n": 256}),
            json!({"n": -1}),
            json!({"n": 3.0}),
            json!({"n": 3.5}),
            json!({"n": 1, "extra": true}),
            json!({"tags": []}),
            json!({"tags": ["ab"]}),
            json!({"tags": ["a"]}),
            json!({"tags": ["ab", "cd", "ef"]}),
            json!("héllo"),
            json!("héé"),
            json!("abcd"),
            json!(null),
            json!("a"),
            json!(1),
            json!(1.0),
            json!(2),
            json!(2.0),
            json!(0),
            json!(0.5),
            json!(1.5),
            json!({"x": [1]}),
            json!({"x": [1.0]}),
            json!({"a": 1}),
            json!({"b": 1}),
            json!({"k": true, "j": "no"}),
            json!([1, 2]),
            json!(true),
            json!({"big": 9007199254740993_u64}),
            json!({"big": 9007199254740994_u64}),
        ];
        for schema in &schemas {
            let node = Node::build(schema).unwrap_or_else(|| panic!("in the subset: {schema}"));
            let reference = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(schema)
                .expect("valid schema");
            for instance in &instances {
                assert_eq!(
                    node.validate(instance, 8).is_ok(),
                    reference.is_valid(instance),
                    "schema {schema} instance {instance}: {:?}",
                    node.validate(instance, 8)
                );
            }
        }
    }

    #[test]
    fn other_keywords_leave_the_subset() {
        for schema in [
            json!({"$ref": "#/$defs/x", "$defs": {"x": {}}}),
            json!({"type": "string", "pattern": "^a"}),
            json!({"anyOf": [{"type": "string"}]}),
            json!({"type": "object", "patternProperties": {"^a": {}}}),
            json!({"type": "array", "uniqueItems": true}),
            json!({"type": "mystery"}),
            json!({"minLength": "3"}),
        ] {
            assert!(Node::build(&schema).is_none(), "{schema}");
        }
    }

    #[test]
    fn messages_name_the_path() {
        let node = Node::build(
            &json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {"b/c": {"type": "integer"}}}}, "required": ["z"]}),
        )
        .expect("subset");
        let err = node.validate(&json!({"a": {"b/c": "x"}}), 8).unwrap_err();
        assert!(err.contains("\"z\" is a required property"), "{err}");
        assert!(
            err.contains("/a/b~1c: \"x\" is not of type integer"),
            "{err}"
        );
    }
}
