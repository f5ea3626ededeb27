//! [`FormSchema`]: a checked `requestedSchema`.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use crate::model::{Choice, Kind, Prop, SelectStyle};
use crate::{FormError, StringFormat};

/// The `requestedSchema` of a form-mode elicitation request, checked to be in the spec's
/// flat primitive subset.
///
/// A `FormSchema` is built by [`Form::form_schema`](crate::Form::form_schema) for a type
/// that derives [`Form`](derive@crate::Form), or by [`FormSchema::from_value`] from JSON.
/// Either way it holds only what the spec allows: an object whose `properties` are each a
/// `StringSchema`, `NumberSchema`, `BooleanSchema` or one of the enum schemas (single
/// select, multi-select, and the legacy `enumNames` form).
///
/// It serializes as the schema object itself and deserializes through the same checks as
/// [`FormSchema::from_value`]. Serializing writes the properties in form order (the order
/// of the struct's fields, or of the JSON it was read from); [`FormSchema::as_value`] is a
/// `serde_json::Value`, whose maps keep that order only when serde_json's `preserve_order`
/// feature is on.
///
/// ```
/// use ferry_form::FormSchema;
/// use serde_json::json;
///
/// let schema: FormSchema = serde_json::from_str(
///     r#"{"type": "object",
///         "properties": {"name": {"type": "string", "minLength": 1},
///                        "age": {"type": "integer", "minimum": 0}},
///         "required": ["name"]}"#,
/// )
/// .unwrap();
/// assert_eq!(schema.property_names().collect::<Vec<_>>(), ["name", "age"]);
/// assert_eq!(schema.required().collect::<Vec<_>>(), ["name"]);
/// assert!(schema.validate_content(json!({"name": "Ada"}).as_object().unwrap()).is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct FormSchema {
    value: Value,
    props: Vec<(String, Prop)>,
}

/// Two schemas are equal when their JSON is equal and they list the properties in the
/// same order.
impl PartialEq for FormSchema {
    fn eq(&self, other: &FormSchema) -> bool {
        self.value == other.value && self.property_names().eq(other.property_names())
    }
}

const SELECT_HINT: &str = "one of \"string\", \"number\", \"integer\", \"boolean\" or \"array\"";

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether a JSON number is a whole number (`3` or `3.0`).
pub(crate) fn is_integral(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Compares two JSON numbers by value, exactly when both are integers.
pub(crate) fn compare(a: &Number, b: &Number) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    // A negative i64 against a u64 above i64::MAX.
    if a.is_i64() && b.is_u64() {
        return Ordering::Less;
    }
    if a.is_u64() && b.is_i64() {
        return Ordering::Greater;
    }
    let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

/// Reads the keywords of one property schema, with errors as plain reasons.
struct Keywords<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Keywords<'a> {
    fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!(
                "`{key}` must be a string, found {}",
                json_type(other)
            )),
        }
    }

    fn count(&self, key: &str) -> Result<Option<u64>, String> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                if let Some(u) = n.as_u64() {
                    return Ok(Some(u));
                }
                match n.as_f64() {
                    Some(f) if f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64 => {
                        Ok(Some(f as u64))
                    }
                    _ => Err(format!("`{key}` must be a non-negative integer, found {n}")),
                }
            }
            Some(other) => Err(format!(
                "`{key}` must be a non-negative integer, found {}",
                json_type(other)
            )),
        }
    }

    fn number(&self, key: &str) -> Result<Option<Number>, String> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n.clone())),
            Some(other) => Err(format!(
                "`{key}` must be a number, found {}",
                json_type(other)
            )),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, String> {
        match self.map.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(format!(
                        "`{key}` must hold only strings, found {}",
                        json_type(other)
                    )),
                })
                .collect(),
            Some(other) => Err(format!(
                "`{key}` must be an array of strings, found {}",
                json_type(other)
            )),
            None => Err(format!("`{key}` is missing")),
        }
    }

    fn only(&self, allowed: &[&str], what: &str) -> Result<(), String> {
        match self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(format!(
                "keyword `{key}` is not allowed in {what}; allowed: {}",
                allowed.join(", ")
            )),
            None => Ok(()),
        }
    }
}

/// Reads `[{"const": "...", "title": "..."}, ...]`.
fn titled_options(value: Option<&Value>, key: &str) -> Result<Vec<Choice>, String> {
    let Some(Value::Array(items)) = value else {
        return Err(format!(
            "`{key}` must be an array of {{\"const\", \"title\"}} objects"
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(map) = item else {
                return Err(format!(
                    "`{key}[{i}]` must be an object with `const` and `title`, found {}",
                    json_type(item)
                ));
            };
            let keywords = Keywords { map };
            keywords.only(&["const", "title"], &format!("`{key}[{i}]`"))?;
            let value = keywords
                .string("const")
                .map_err(|e| format!("`{key}[{i}]`: {e}"))?
                .ok_or_else(|| format!("`{key}[{i}]` has no `const`"))?;
            let title = keywords
                .string("title")
                .map_err(|e| format!("`{key}[{i}]`: {e}"))?
                .ok_or_else(|| format!("`{key}[{i}]` has no `title`"))?;
            Ok(Choice {
                value,
                title: Some(title),
            })
        })
        .collect()
}

fn check_options(options: &[Choice]) -> Result<(), String> {
    if options.is_empty() {
        return Err("a select needs at least one option".into());
    }
    let mut seen = HashSet::new();
    for option in options {
        if !seen.insert(option.value.as_str()) {
            return Err(format!("option {:?} is listed twice", option.value));
        }
    }
    Ok(())
}

fn check_range<T: PartialOrd + fmt::Display>(
    low: Option<T>,
    high: Option<T>,
    low_name: &str,
    high_name: &str,
) -> Result<(), String> {
    if let (Some(low), Some(high)) = (low, high)
        && low > high
    {
        return Err(format!(
            "`{low_name}` ({low}) is greater than `{high_name}` ({high})"
        ));
    }
    Ok(())
}

/// Parses one property schema.
fn parse_property(value: &Value) -> Result<Prop, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "a property schema must be an object, found {}",
            json_type(value)
        ));
    };
    let k = Keywords { map };
    let ty = match map.get("type") {
        None => return Err(format!("`type` is missing; it must be {SELECT_HINT}")),
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(format!(
                "`type` must be a string, {SELECT_HINT}; found {}",
                json_type(other)
            ));
        }
    };
    let kind = match ty {
        "string" if map.contains_key("oneOf") && map.contains_key("enum") => {
            return Err("a string schema has either `enum` or `oneOf`, not both".into());
        }
        "string" if map.contains_key("oneOf") => {
            k.only(
                &["type", "title", "description", "oneOf", "default"],
                "a titled single-select enum schema",
            )?;
            let options = titled_options(map.get("oneOf"), "oneOf")?;
            check_options(&options)?;
            Kind::Select {
                options,
                style: SelectStyle::Titled,
            }
        }
        "string" if map.contains_key("enum") => {
            let legacy = map.contains_key("enumNames");
            if legacy {
                k.only(
                    &[
                        "type",
                        "title",
                        "description",
                        "enum",
                        "enumNames",
                        "default",
                    ],
                    "a legacy titled enum schema",
                )?;
            } else {
                k.only(
                    &["type", "title", "description", "enum", "default"],
                    "a single-select enum schema",
                )?;
            }
            let values = k.strings("enum")?;
            let mut options: Vec<Choice> = values
                .into_iter()
                .map(|value| Choice { value, title: None })
                .collect();
            if legacy {
                let names = k.strings("enumNames")?;
                if names.len() != options.len() {
                    return Err(format!(
                        "`enumNames` has {} names for {} `enum` values",
                        names.len(),
                        options.len()
                    ));
                }
                for (option, name) in options.iter_mut().zip(names) {
                    option.title = Some(name);
                }
            }
            check_options(&options)?;
            Kind::Select {
                options,
                style: if legacy {
                    SelectStyle::Legacy
                } else {
                    SelectStyle::Untitled
                },
            }
        }
        "string" => {
            k.only(
                &[
                    "type",
                    "title",
                    "description",
                    "minLength",
                    "maxLength",
                    "format",
                    "default",
                ],
                "a string schema",
            )?;
            let min_length = k.count("minLength")?;
            let max_length = k.count("maxLength")?;
            check_range(min_length, max_length, "minLength", "maxLength")?;
            let format = match k.string("format")? {
                None => None,
                Some(name) => Some(StringFormat::from_name(&name).ok_or_else(|| {
                    format!(
                        "format {name:?} is not allowed; the elicitation subset allows \
                         \"email\", \"uri\", \"date\" and \"date-time\""
                    )
                })?),
            };
            Kind::Text {
                min_length,
                max_length,
                format,
            }
        }
        "number" | "integer" => {
            k.only(
                &[
                    "type",
                    "title",
                    "description",
                    "minimum",
                    "maximum",
                    "default",
                ],
                "a number schema",
            )?;
            let minimum = k.number("minimum")?;
            let maximum = k.number("maximum")?;
            if let (Some(low), Some(high)) = (&minimum, &maximum)
                && compare(low, high).is_gt()
            {
                return Err(format!(
                    "`minimum` ({low}) is greater than `maximum` ({high})"
                ));
            }
            Kind::Number {
                integer: ty == "integer",
                minimum,
                maximum,
            }
        }
        "boolean" => {
            k.only(
                &["type", "title", "description", "default"],
                "a boolean schema",
            )?;
            Kind::Boolean
        }
        "array" => {
            k.only(
                &[
                    "type",
                    "title",
                    "description",
                    "minItems",
                    "maxItems",
                    "items",
                    "default",
                ],
                "a multi-select enum schema",
            )?;
            let min_items = k.count("minItems")?;
            let max_items = k.count("maxItems")?;
            check_range(min_items, max_items, "minItems", "maxItems")?;
            let items = match map.get("items") {
                Some(Value::Object(items)) => items,
                Some(other) => {
                    return Err(format!(
                        "`items` must be an object, found {}",
                        json_type(other)
                    ));
                }
                None => {
                    return Err("an array schema needs `items`: only multi-select enums of \
                                strings are allowed"
                        .into());
                }
            };
            let item_keywords = Keywords { map: items };
            let (options, titled) = if items.contains_key("anyOf") {
                item_keywords.only(&["anyOf"], "titled multi-select `items`")?;
                (titled_options(items.get("anyOf"), "items.anyOf")?, true)
            } else if items.contains_key("enum") {
                item_keywords.only(&["type", "enum"], "untitled multi-select `items`")?;
                match items.get("type") {
                    Some(Value::String(t)) if t == "string" => {}
                    _ => return Err("`items.type` must be \"string\"".into()),
                }
                let values = item_keywords
                    .strings("enum")
                    .map_err(|e| format!("items: {e}"))?;
                (
                    values
                        .into_iter()
                        .map(|value| Choice { value, title: None })
                        .collect(),
                    false,
                )
            } else {
                return Err("array items must be an enum of strings (`items.enum` or \
                            `items.anyOf`): lists of free text, numbers or objects are \
                            not allowed"
                    .into());
            };
            check_options(&options)?;
            if let Some(min) = min_items
                && min > options.len() as u64
            {
                return Err(format!(
                    "`minItems` ({min}) is more than the {} options",
                    options.len()
                ));
            }
            Kind::MultiSelect {
                options,
                titled,
                min_items,
                max_items,
            }
        }
        "object" => {
            return Err("nested objects are not allowed: elicitation forms are flat".into());
        }
        other => {
            return Err(format!(
                "unsupported `type` {other:?}; it must be {SELECT_HINT}"
            ));
        }
    };
    let mut prop = Prop::new(kind);
    prop.title = k.string("title")?;
    prop.description = k.string("description")?;
    if let Some(default) = map.get("default") {
        check_default(&prop.kind, default)?;
        prop.default = Some(default.clone());
    }
    Ok(prop)
}

/// A default must have the property's JSON type, be a whole number for an integer, and
/// be one of the options of a select.
fn check_default(kind: &Kind, default: &Value) -> Result<(), String> {
    let wrong = |expected: &str| {
        Err(format!(
            "`default` must be {expected}, found {}",
            json_type(default)
        ))
    };
    match (kind, default) {
        (Kind::Text { .. }, Value::String(_)) => Ok(()),
        (Kind::Text { .. }, _) => wrong("a string"),
        (Kind::Number { integer, .. }, Value::Number(n)) => {
            if *integer && !is_integral(n) {
                Err(format!("`default` ({n}) must be a whole number"))
            } else {
                Ok(())
            }
        }
        (Kind::Number { .. }, _) => wrong("a number"),
        (Kind::Boolean, Value::Bool(_)) => Ok(()),
        (Kind::Boolean, _) => wrong("a boolean"),
        (Kind::Select { options, .. }, Value::String(s)) => {
            if options.iter().any(|o| &o.value == s) {
                Ok(())
            } else {
                Err(format!("`default` {s:?} is not one of the options"))
            }
        }
        (Kind::Select { .. }, _) => wrong("a string"),
        (Kind::MultiSelect { options, .. }, Value::Array(items)) => {
            let mut seen = HashSet::new();
            for item in items {
                let Value::String(s) = item else {
                    return Err(format!(
                        "`default` must hold only strings, found {}",
                        json_type(item)
                    ));
                };
                if !options.iter().any(|o| &o.value == s) {
                    return Err(format!("`default` item {s:?} is not one of the options"));
                }
                if !seen.insert(s) {
                    return Err(format!("`default` selects {s:?} twice"));
                }
            }
            Ok(())
        }
        (Kind::MultiSelect { .. }, _) => wrong("an array of strings"),
    }
}

impl FormSchema {
    /// Checks a `requestedSchema` object against the spec's subset and wraps it.
    ///
    /// Accepted: an object with `type: "object"`, `properties` (each a primitive schema
    /// definition: string, number or integer, boolean, untitled or titled single select,
    /// untitled or titled multi-select, or the legacy `enum` + `enumNames` form),
    /// optionally `required` (names of listed properties, each once) and `$schema`.
    ///
    /// Refused, with a [`FormError::InvalidProperty`] naming the property or a
    /// [`FormError::InvalidSchema`] for the object itself: any other keyword, nested
    /// objects, arrays that are not multi-select enums, formats outside `email`, `uri`,
    /// `date` and `date-time`, empty or duplicated options, lower bounds above upper
    /// ones, and defaults of the wrong type or outside the options.
    ///
    /// The properties keep the order of `value`'s map, which is insertion order only with
    /// serde_json's `preserve_order` feature; deserialize a `FormSchema` directly to keep
    /// the order of the JSON text.
    ///
    /// ```
    /// use ferry_form::{FormError, FormSchema};
    /// use serde_json::json;
    ///
    /// let ok = FormSchema::from_value(json!({
    ///     "type": "object",
    ///     "properties": {"tags": {"type": "array",
    ///                             "items": {"type": "string", "enum": ["a", "b"]}}}
    /// }));
    /// assert!(ok.is_ok());
    ///
    /// let err = FormSchema::from_value(json!({
    ///     "type": "object",
    ///     "properties": {"notes": {"type": "array", "items": {"type": "string"}}}
    /// }))
    /// .unwrap_err();
    /// assert_eq!(err.property(), Some("notes"));
    /// ```
    pub fn from_value(value: Value) -> Result<FormSchema, FormError> {
        let order = match value.get("properties") {
            Some(Value::Object(props)) => props.keys().cloned().collect(),
            _ => Vec::new(),
        };
        Self::parse(value, order)
    }

    /// Checks `value`, taking the property order from `order` (every property name once).
    fn parse(value: Value, order: Vec<String>) -> Result<FormSchema, FormError> {
        let schema_error = |reason: String| FormError::InvalidSchema { reason };
        let Value::Object(root) = &value else {
            return Err(schema_error(format!(
                "the schema must be an object, found {}",
                json_type(&value)
            )));
        };
        if let Some(key) = root
            .keys()
            .find(|k| !["$schema", "type", "properties", "required"].contains(&k.as_str()))
        {
            return Err(schema_error(format!(
                "keyword `{key}` is not allowed; a form schema has only `type`, \
                 `properties`, `required` and `$schema`"
            )));
        }
        match root.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => {
                return Err(schema_error(format!(
                    "`type` must be \"object\", found {other}"
                )));
            }
            None => {
                return Err(schema_error(
                    "`type` is missing; it must be \"object\"".into(),
                ));
            }
        }
        match root.get("$schema") {
            None | Some(Value::String(_)) => {}
            Some(other) => {
                return Err(schema_error(format!(
                    "`$schema` must be a string, found {}",
                    json_type(other)
                )));
            }
        }
        let properties = match root.get("properties") {
            Some(Value::Object(p)) => p,
            Some(other) => {
                return Err(schema_error(format!(
                    "`properties` must be an object, found {}",
                    json_type(other)
                )));
            }
            None => return Err(schema_error("`properties` is missing".into())),
        };
        let mut props = Vec::with_capacity(properties.len());
        for name in order {
            let Some(schema) = properties.get(&name) else {
                continue;
            };
            let prop = parse_property(schema).map_err(|reason| FormError::InvalidProperty {
                property: name.clone(),
                reason,
            })?;
            props.push((name, prop));
        }
        for (_, prop) in &mut props {
            prop.required = false;
        }
        match root.get("required") {
            None => {}
            Some(Value::Array(names)) => {
                let mut seen = HashSet::new();
                for name in names {
                    let Value::String(name) = name else {
                        return Err(schema_error(format!(
                            "`required` must hold only strings, found {}",
                            json_type(name)
                        )));
                    };
                    if !seen.insert(name.as_str()) {
                        return Err(FormError::InvalidProperty {
                            property: name.clone(),
                            reason: "listed twice in `required`".into(),
                        });
                    }
                    match props.iter_mut().find(|(n, _)| n == name) {
                        Some((_, prop)) => prop.required = true,
                        None => {
                            return Err(FormError::InvalidProperty {
                                property: name.clone(),
                                reason: "listed in `required` but not in `properties`".into(),
                            });
                        }
                    }
                }
            }
            Some(other) => {
                return Err(schema_error(format!(
                    "`required` must be an array of strings, found {}",
                    json_type(other)
                )));
            }
        }
        Ok(FormSchema { value, props })
    }

    /// Builds a schema from properties that are valid by construction.
    pub(crate) fn from_props(props: Vec<(String, Prop)>) -> FormSchema {
        let mut properties = Map::new();
        for (name, prop) in &props {
            properties.insert(name.clone(), prop.to_value());
        }
        let mut root = Map::new();
        root.insert("type".into(), "object".into());
        root.insert("properties".into(), Value::Object(properties));
        let required: Vec<Value> = props
            .iter()
            .filter(|(_, p)| p.required)
            .map(|(name, _)| Value::from(name.as_str()))
            .collect();
        if !required.is_empty() {
            root.insert("required".into(), Value::Array(required));
        }
        FormSchema {
            value: Value::Object(root),
            props,
        }
    }

    pub(crate) fn props(&self) -> &[(String, Prop)] {
        &self.props
    }

    /// The schema object as JSON.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let value = json!({"type": "object", "properties": {}});
    /// let schema = FormSchema::from_value(value.clone()).unwrap();
    /// assert_eq!(schema.as_value(), &value);
    /// ```
    pub fn as_value(&self) -> &Value {
        &self.value
    }

    /// The schema object as JSON, by value.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let value = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    /// assert_eq!(FormSchema::from_value(value.clone()).unwrap().into_value(), value);
    /// ```
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The `properties` object: property name to property schema.
    ///
    /// Its iteration order is serde_json's map order; [`FormSchema::property_names`]
    /// gives form order.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object", "properties": {"ok": {"type": "boolean"}}
    /// }))
    /// .unwrap();
    /// assert_eq!(schema.properties()["ok"], json!({"type": "boolean"}));
    /// ```
    pub fn properties(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        match self.value.get("properties") {
            Some(Value::Object(p)) => p,
            _ => EMPTY.get_or_init(Map::new),
        }
    }

    /// The schema of one property.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object", "properties": {"ok": {"type": "boolean", "default": true}}
    /// }))
    /// .unwrap();
    /// assert_eq!(schema.property("ok").unwrap()["default"], json!(true));
    /// assert!(schema.property("nope").is_none());
    /// ```
    pub fn property(&self, name: &str) -> Option<&Map<String, Value>> {
        self.properties().get(name).and_then(Value::as_object)
    }

    /// The property names in form order.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    ///
    /// let schema: FormSchema = serde_json::from_str(
    ///     r#"{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}}}"#,
    /// )
    /// .unwrap();
    /// assert_eq!(schema.property_names().collect::<Vec<_>>(), ["z", "a"]);
    /// ```
    pub fn property_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.props.iter().map(|(name, _)| name.as_str())
    }

    /// The names of the required properties, in form order.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object",
    ///     "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    ///     "required": ["b"]
    /// }))
    /// .unwrap();
    /// assert_eq!(schema.required().collect::<Vec<_>>(), ["b"]);
    /// ```
    pub fn required(&self) -> impl Iterator<Item = &str> + '_ {
        self.props
            .iter()
            .filter(|(_, p)| p.required)
            .map(|(name, _)| name.as_str())
    }

    /// Whether `name` is a required property.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]
    /// }))
    /// .unwrap();
    /// assert!(schema.is_required("a"));
    /// assert!(!schema.is_required("b"));
    /// ```
    pub fn is_required(&self, name: &str) -> bool {
        self.props.iter().any(|(n, p)| n == name && p.required)
    }

    /// The number of properties.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({"type": "object", "properties": {}})).unwrap();
    /// assert_eq!(schema.len(), 0);
    /// assert!(schema.is_empty());
    /// ```
    pub fn len(&self) -> usize {
        self.props.len()
    }

    /// Whether the form has no properties.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object", "properties": {"a": {"type": "boolean"}}
    /// }))
    /// .unwrap();
    /// assert!(!schema.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// The `default` of every property that has one: the values a client should pre-fill.
    ///
    /// ```
    /// use ferry_form::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "count": {"type": "integer", "default": 3},
    ///         "name": {"type": "string"}
    ///     }
    /// }))
    /// .unwrap();
    /// assert_eq!(serde_json::Value::Object(schema.defaults()), json!({"count": 3}));
    /// ```
    pub fn defaults(&self) -> Map<String, Value> {
        self.props
            .iter()
            .filter_map(|(name, p)| p.default.clone().map(|d| (name.clone(), d)))
            .collect()
    }
}

impl TryFrom<Value> for FormSchema {
    type Error = FormError;

    fn try_from(value: Value) -> Result<FormSchema, FormError> {
        FormSchema::from_value(value)
    }
}

impl From<FormSchema> for Value {
    fn from(schema: FormSchema) -> Value {
        schema.into_value()
    }
}

/// The properties in form order, for serializing.
struct OrderedProperties<'a>(&'a FormSchema);

impl Serialize for OrderedProperties<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let properties = self.0.properties();
        let mut map = serializer.serialize_map(Some(self.0.props.len()))?;
        for (name, _) in &self.0.props {
            if let Some(schema) = properties.get(name) {
                map.serialize_entry(name, schema)?;
            }
        }
        map.end()
    }
}

impl Serialize for FormSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let root = self.value.as_object();
        let get = |key: &str| root.and_then(|r| r.get(key));
        let schema = get("$schema");
        let required = get("required");
        let len = 2 + usize::from(schema.is_some()) + usize::from(required.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        if let Some(schema) = schema {
            map.serialize_entry("$schema", schema)?;
        }
        map.serialize_entry("type", "object")?;
        map.serialize_entry("properties", &OrderedProperties(self))?;
        if let Some(required) = required {
            map.serialize_entry("required", required)?;
        }
        map.end()
    }
}

/// A JSON value read with its objects' key order, for deserializing a schema in form
/// order without serde_json's `preserve_order` feature.
enum Ordered {
    Object(Vec<(String, Value)>),
    Other(Value),
}

struct OrderedVisitor;

macro_rules! forward_to_value {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<Ordered, E> {
                Ok(Ordered::Other(Value::from(v)))
            }
        )*
    };
}

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    forward_to_value!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_f64(f64),
        visit_str(&str),
        visit_string(String),
    );

    fn visit_unit<E: de::Error>(self) -> Result<Ordered, E> {
        Ok(Ordered::Other(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Ordered, E> {
        Ok(Ordered::Other(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Ordered, D::Error> {
        Value::deserialize(d).map(Ordered::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Ordered, A::Error> {
        Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Ordered::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Ordered, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = access.next_entry::<String, Value>()? {
            entries.push((key, value));
        }
        Ok(Ordered::Object(entries))
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

/// The top level of a schema, with the `properties` object read in order.
struct RawSchema(Value, Vec<String>);

struct RawSchemaVisitor;

impl<'de> Visitor<'de> for RawSchemaVisitor {
    type Value = RawSchema;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a form schema object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<RawSchema, A::Error> {
        let mut root = Map::new();
        let mut order = Vec::new();
        while let Some(key) = access.next_key::<String>()? {
            if root.contains_key(&key) {
                return Err(de::Error::custom(FormError::InvalidSchema {
                    reason: format!("keyword `{key}` appears twice"),
                }));
            }
            let value = if key == "properties" {
                match access.next_value::<Ordered>()? {
                    Ordered::Object(entries) => {
                        let mut properties = Map::new();
                        for (name, schema) in entries {
                            if properties.contains_key(&name) {
                                return Err(de::Error::custom(FormError::InvalidProperty {
                                    property: name,
                                    reason: "defined twice".into(),
                                }));
                            }
                            order.push(name.clone());
                            properties.insert(name, schema);
                        }
                        Value::Object(properties)
                    }
                    Ordered::Other(value) => value,
                }
            } else {
                access.next_value::<Value>()?
            };
            root.insert(key, value);
        }
        Ok(RawSchema(Value::Object(root), order))
    }
}

impl<'de> Deserialize<'de> for FormSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FormSchema, D::Error> {
        let RawSchema(value, order) = d.deserialize_map(RawSchemaVisitor)?;
        FormSchema::parse(value, order).map_err(de::Error::custom)
    }
}
