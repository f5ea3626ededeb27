//! Reading a `requestedSchema` from JSON: the flat primitive subset of client/elicitation.mdx
//! ("Requested Schema") and schema.ts `PrimitiveSchemaDefinition`, keyword by keyword.
//!
//! Two modes: [`Mode::Strict`] refuses every keyword outside a shape's schema.ts
//! definition (what a sender must produce); [`Mode::Lenient`] drops them, and unknown
//! `format`s, before the same checks (what a receiver meets in the wild, such as a root
//! `title` from a generated JSON Schema). Everything else is checked the same way in both.

use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::property::{
    PropertyKind, PropertySchema, SelectOption, SelectStyle, check_default, check_min_items,
    check_number_range, check_options, check_range, json_type,
};
use super::schema::Prop;
use super::{FormError, FormSchema, StringFormat};

/// How to treat keywords outside the subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Refuse them.
    Strict,
    /// Drop them.
    Lenient,
}

const TYPE_HINT: &str = "one of \"string\", \"number\", \"integer\", \"boolean\" or \"array\"";

const ROOT_KEYWORDS: [&str; 4] = ["$schema", "type", "properties", "required"];

/// Refuses (strict) or drops (lenient) the keys of `map` outside `allowed`.
fn only(
    map: &mut Map<String, Value>,
    allowed: &[&str],
    what: &str,
    mode: Mode,
) -> Result<(), String> {
    match mode {
        Mode::Lenient => {
            map.retain(|k, _| allowed.contains(&k.as_str()));
            Ok(())
        }
        Mode::Strict => match map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(format!(
                "keyword `{key}` is not allowed in {what}; allowed: {}",
                allowed.join(", ")
            )),
            None => Ok(()),
        },
    }
}

/// Reads the keywords of one property schema, with errors as plain reasons.
struct Keywords<'a> {
    map: &'a Map<String, Value>,
}

impl Keywords<'_> {
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
}

/// Reads `[{"const": "...", "title": "..."}, ...]`.
fn titled_options(
    value: Option<&mut Value>,
    key: &str,
    mode: Mode,
) -> Result<Vec<SelectOption>, String> {
    let Some(Value::Array(items)) = value else {
        return Err(format!(
            "`{key}` must be an array of {{\"const\", \"title\"}} objects"
        ));
    };
    items
        .iter_mut()
        .enumerate()
        .map(|(i, item)| {
            let found = json_type(item);
            let Value::Object(map) = item else {
                return Err(format!(
                    "`{key}[{i}]` must be an object with `const` and `title`, found {found}"
                ));
            };
            only(map, &["const", "title"], &format!("`{key}[{i}]`"), mode)?;
            let keywords = Keywords { map };
            let value = keywords
                .string("const")
                .map_err(|e| format!("`{key}[{i}]`: {e}"))?
                .ok_or_else(|| format!("`{key}[{i}]` has no `const`"))?;
            let title = keywords
                .string("title")
                .map_err(|e| format!("`{key}[{i}]`: {e}"))?
                .ok_or_else(|| format!("`{key}[{i}]` has no `title`"))?;
            Ok(SelectOption::titled(value, title))
        })
        .collect()
}

/// Reads a single select written with `enum` (and, for the legacy form, `enumNames`).
fn enum_select(k: &Keywords<'_>, legacy: bool) -> Result<PropertyKind, String> {
    let values = k.strings("enum")?;
    let mut options: Vec<SelectOption> = values.into_iter().map(SelectOption::new).collect();
    if legacy {
        let names = k.strings("enumNames")?;
        if names.len() != options.len() {
            return Err(format!(
                "`enumNames` has {} names for {} `enum` values",
                names.len(),
                options.len()
            ));
        }
        options = options
            .into_iter()
            .zip(names)
            .map(|(option, name)| SelectOption::titled(option.value(), name))
            .collect();
    }
    check_options(&options)?;
    Ok(PropertyKind::SingleSelect {
        options,
        style: if legacy {
            SelectStyle::Legacy
        } else {
            SelectStyle::Untitled
        },
    })
}

/// Reads a multi-select (`"type": "array"`).
fn multi_select(map: &mut Map<String, Value>, mode: Mode) -> Result<PropertyKind, String> {
    only(
        map,
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
        mode,
    )?;
    let k = Keywords { map };
    let min_items = k.count("minItems")?;
    let max_items = k.count("maxItems")?;
    check_range(min_items, max_items, "minItems", "maxItems")?;
    let items = match map.get_mut("items") {
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
    let (options, titled) = if items.contains_key("anyOf") {
        only(items, &["anyOf"], "titled multi-select `items`", mode)?;
        (
            titled_options(items.get_mut("anyOf"), "items.anyOf", mode)?,
            true,
        )
    } else if items.contains_key("enum") {
        only(
            items,
            &["type", "enum"],
            "untitled multi-select `items`",
            mode,
        )?;
        match items.get("type") {
            Some(Value::String(t)) if t == "string" => {}
            _ => return Err("`items.type` must be \"string\"".into()),
        }
        let values = Keywords { map: items }
            .strings("enum")
            .map_err(|e| format!("items: {e}"))?;
        (values.into_iter().map(SelectOption::new).collect(), false)
    } else {
        return Err("array items must be an enum of strings (`items.enum` or \
                    `items.anyOf`): lists of free text, numbers or objects are \
                    not allowed"
            .into());
    };
    check_options(&options)?;
    check_min_items(min_items, options.len())?;
    Ok(PropertyKind::MultiSelect {
        options,
        titled,
        min_items,
        max_items,
    })
}

/// Parses one property schema. In lenient mode, `value` loses the keywords it drops.
pub(super) fn property(value: &mut Value, mode: Mode) -> Result<PropertySchema, String> {
    let found = json_type(value);
    let Value::Object(map) = value else {
        return Err(format!(
            "a property schema must be an object, found {found}"
        ));
    };
    let ty = match map.get("type") {
        None => return Err(format!("`type` is missing; it must be {TYPE_HINT}")),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "`type` must be a string, {TYPE_HINT}; found {}",
                json_type(other)
            ));
        }
    };
    let kind = match ty.as_str() {
        "string" if map.contains_key("oneOf") && map.contains_key("enum") => {
            return Err("a string schema has either `enum` or `oneOf`, not both".into());
        }
        "string" if map.contains_key("oneOf") => {
            only(
                map,
                &["type", "title", "description", "oneOf", "default"],
                "a titled single-select enum schema",
                mode,
            )?;
            let options = titled_options(map.get_mut("oneOf"), "oneOf", mode)?;
            check_options(&options)?;
            PropertyKind::SingleSelect {
                options,
                style: SelectStyle::Titled,
            }
        }
        "string" if map.contains_key("enum") => {
            let legacy = map.contains_key("enumNames");
            if legacy {
                only(
                    map,
                    &[
                        "type",
                        "title",
                        "description",
                        "enum",
                        "enumNames",
                        "default",
                    ],
                    "a legacy titled enum schema",
                    mode,
                )?;
            } else {
                only(
                    map,
                    &["type", "title", "description", "enum", "default"],
                    "a single-select enum schema",
                    mode,
                )?;
            }
            enum_select(&Keywords { map }, legacy)?
        }
        "string" => {
            only(
                map,
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
                mode,
            )?;
            if mode == Mode::Lenient
                && let Some(Value::String(name)) = map.get("format")
                && StringFormat::from_name(name).is_none()
            {
                map.remove("format");
            }
            let k = Keywords { map };
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
            PropertyKind::Text {
                min_length,
                max_length,
                format,
            }
        }
        "number" | "integer" => {
            only(
                map,
                &[
                    "type",
                    "title",
                    "description",
                    "minimum",
                    "maximum",
                    "default",
                ],
                "a number schema",
                mode,
            )?;
            let k = Keywords { map };
            let minimum = k.number("minimum")?;
            let maximum = k.number("maximum")?;
            check_number_range(minimum.as_ref(), maximum.as_ref())?;
            PropertyKind::Number {
                integer: ty == "integer",
                minimum,
                maximum,
            }
        }
        "boolean" => {
            only(
                map,
                &["type", "title", "description", "default"],
                "a boolean schema",
                mode,
            )?;
            PropertyKind::Boolean
        }
        "array" => multi_select(map, mode)?,
        "object" => {
            return Err("nested objects are not allowed: elicitation forms are flat".into());
        }
        other => {
            return Err(format!(
                "unsupported `type` {other:?}; it must be {TYPE_HINT}"
            ));
        }
    };
    let k = Keywords { map };
    let mut schema = PropertySchema::of_kind(kind);
    schema.title = k.string("title")?;
    schema.description = k.string("description")?;
    if let Some(default) = map.get("default") {
        check_default(&schema.kind, default)?;
        schema.default = Some(default.clone());
    }
    Ok(schema)
}

/// Checks a `requestedSchema` object, taking the property order from `order` (every
/// property name once), and wraps it.
pub(super) fn form(
    mut value: Value,
    order: Vec<String>,
    mode: Mode,
) -> Result<FormSchema, FormError> {
    let schema_error = |reason: String| FormError::InvalidSchema { reason };
    let found = json_type(&value);
    let Value::Object(root) = &mut value else {
        return Err(schema_error(format!(
            "the schema must be an object, found {found}"
        )));
    };
    match mode {
        Mode::Lenient => root.retain(|k, _| ROOT_KEYWORDS.contains(&k.as_str())),
        Mode::Strict => {
            if let Some(key) = root.keys().find(|k| !ROOT_KEYWORDS.contains(&k.as_str())) {
                return Err(schema_error(format!(
                    "keyword `{key}` is not allowed; a form schema has only `type`, \
                     `properties`, `required` and `$schema`"
                )));
            }
        }
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
    let properties = match root.get_mut("properties") {
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
        let Some(schema) = properties.get_mut(&name) else {
            continue;
        };
        let schema = property(schema, mode).map_err(|reason| FormError::InvalidProperty {
            property: name.clone(),
            reason,
        })?;
        props.push(Prop {
            name,
            required: false,
            schema,
        });
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
                match props.iter_mut().find(|p| p.name == *name) {
                    Some(prop) => prop.required = true,
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
    Ok(FormSchema::from_parts(value, props))
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

/// Deserializes a schema in the order of its text, with the checks of `mode`.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(
    d: D,
    mode: Mode,
) -> Result<FormSchema, D::Error> {
    let RawSchema(value, order) = d.deserialize_map(RawSchemaVisitor)?;
    form(value, order, mode).map_err(de::Error::custom)
}
