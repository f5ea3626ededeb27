//! One property of a form (schema.ts `PrimitiveSchemaDefinition`): [`PropertySchema`], its
//! [`PropertyKind`] and the options of select fields.

use std::collections::HashSet;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value, json};

use super::parse::{self, Mode};
use super::{ElicitValue, StringFormat};

/// One option of a select field: the value sent back in the answer and, for titled
/// selects, the label shown.
///
/// ```
/// use ferry_protocol::elicitation::SelectOption;
///
/// let wide = SelectOption::titled("16:9", "Landscape");
/// assert_eq!((wide.value(), wide.title(), wide.label()), ("16:9", Some("Landscape"), "Landscape"));
/// assert_eq!(SelectOption::new("red").label(), "red");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SelectOption {
    pub(super) value: String,
    pub(super) title: Option<String>,
}

impl SelectOption {
    /// An option without a label of its own (shown as its value).
    pub fn new(value: impl Into<String>) -> SelectOption {
        SelectOption {
            value: value.into(),
            title: None,
        }
    }

    /// An option with a label.
    pub fn titled(value: impl Into<String>, title: impl Into<String>) -> SelectOption {
        SelectOption {
            value: value.into(),
            title: Some(title.into()),
        }
    }

    /// The value submitted when this option is chosen.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The label, if the schema gives one.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// What to show: the label, or else the value.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.value)
    }

    /// Gives the option its value as a label when it has none.
    pub(super) fn titled_by_value(mut self) -> SelectOption {
        if self.title.is_none() {
            self.title = Some(self.value.clone());
        }
        self
    }
}

/// How a single select writes its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SelectStyle {
    /// `"enum": [...]` (schema.ts `UntitledSingleSelectEnumSchema`).
    Untitled,
    /// `"oneOf": [{"const", "title"}, ...]` (schema.ts `TitledSingleSelectEnumSchema`).
    Titled,
    /// `"enum": [...]` with `"enumNames": [...]` (schema.ts `LegacyTitledEnumSchema`,
    /// deprecated in favour of [`SelectStyle::Titled`]).
    Legacy,
}

/// The kind of a property and the constraints that come with it.
///
/// ```
/// use ferry_protocol::elicitation::{PropertyKind, PropertySchema};
///
/// let schema: PropertySchema =
///     serde_json::from_str(r#"{"type": "integer", "minimum": 1, "maximum": 10}"#).unwrap();
/// match schema.kind() {
///     PropertyKind::Number { integer, minimum, maximum, .. } => {
///         assert!(*integer);
///         assert_eq!(minimum.as_ref().and_then(|n| n.as_i64()), Some(1));
///         assert_eq!(maximum.as_ref().and_then(|n| n.as_i64()), Some(10));
///     }
///     other => panic!("not a number: {other:?}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PropertyKind {
    /// A text field (schema.ts `StringSchema`).
    #[non_exhaustive]
    Text {
        /// `minLength`, in Unicode scalar values.
        min_length: Option<u64>,
        /// `maxLength`, in Unicode scalar values.
        max_length: Option<u64>,
        /// `format`.
        format: Option<StringFormat>,
    },
    /// A number field (schema.ts `NumberSchema`).
    #[non_exhaustive]
    Number {
        /// `"type": "integer"` rather than `"number"`.
        integer: bool,
        /// `minimum`, as written.
        minimum: Option<Number>,
        /// `maximum`, as written.
        maximum: Option<Number>,
    },
    /// A checkbox (schema.ts `BooleanSchema`).
    Boolean,
    /// Pick one of `options` (schema.ts `SingleSelectEnumSchema` and
    /// `LegacyTitledEnumSchema`). Every option has a title unless the style is
    /// [`SelectStyle::Untitled`].
    #[non_exhaustive]
    SingleSelect {
        /// The options, in order.
        options: Vec<SelectOption>,
        /// How the options are written.
        style: SelectStyle,
    },
    /// Pick any of `options` (schema.ts `MultiSelectEnumSchema`). Every option has a
    /// title when `titled`.
    #[non_exhaustive]
    MultiSelect {
        /// The options, in order.
        options: Vec<SelectOption>,
        /// `items.anyOf` (titled) rather than `items.enum`.
        titled: bool,
        /// `minItems`.
        min_items: Option<u64>,
        /// `maxItems`.
        max_items: Option<u64>,
    },
}

/// The schema of one property of a form (schema.ts `PrimitiveSchemaDefinition`): its kind
/// and constraints, label, help text and default. Always in the spec's subset.
///
/// Read one from JSON with serde (the same checks as [`FormSchema::from_value`]
/// applies to each property), or build one with [`PropertySchema::text`] and the other
/// constructors. Inside a [`FormSchema`], reach it through
/// [`FormProperty::schema`](super::FormProperty).
///
/// ```
/// use ferry_protocol::elicitation::{PropertyKind, PropertySchema, StringFormat};
///
/// let email: PropertySchema = PropertySchema::text()
///     .with_title("Email")
///     .with_format(StringFormat::Email)
///     .into();
/// assert_eq!(email.title(), Some("Email"));
/// assert!(matches!(
///     email.kind(),
///     PropertyKind::Text { format: Some(StringFormat::Email), .. }
/// ));
/// assert_eq!(
///     serde_json::to_value(&email).unwrap(),
///     serde_json::json!({"type": "string", "format": "email", "title": "Email"})
/// );
/// ```
///
/// [`FormSchema`]: super::FormSchema
/// [`FormSchema::from_value`]: super::FormSchema::from_value
#[derive(Debug, Clone, PartialEq)]
pub struct PropertySchema {
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    pub(super) default: Option<Value>,
    pub(super) kind: PropertyKind,
}

/// The JSON type named in error messages.
pub(super) fn json_type(value: &Value) -> &'static str {
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
pub(super) fn is_integral(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Compares two JSON numbers by value, exactly when both are integers.
pub(super) fn compare(a: &Number, b: &Number) -> std::cmp::Ordering {
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

/// A whole float as an integer JSON number, when it fits an i64 or u64.
pub(super) fn integer_number(n: &Number) -> Option<Number> {
    if n.is_i64() || n.is_u64() {
        return Some(n.clone());
    }
    let f = n.as_f64()?;
    if f.fract() != 0.0 {
        return None;
    }
    // `as` saturates, so check the round trip to reject values out of range.
    if f >= 0.0 {
        let u = f as u64;
        (u as f64 == f && f < 18_446_744_073_709_551_616.0).then(|| Number::from(u))
    } else {
        let i = f as i64;
        (i as f64 == f && f >= -9_223_372_036_854_775_808.0).then(|| Number::from(i))
    }
}

/// Options must be there, each value once.
pub(super) fn check_options(options: &[SelectOption]) -> Result<(), String> {
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

/// A lower bound must not exceed its upper bound.
pub(super) fn check_range<T: PartialOrd + fmt::Display>(
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

/// `minimum` must not exceed `maximum`.
pub(super) fn check_number_range(
    minimum: Option<&Number>,
    maximum: Option<&Number>,
) -> Result<(), String> {
    if let (Some(low), Some(high)) = (minimum, maximum)
        && compare(low, high).is_gt()
    {
        return Err(format!(
            "`minimum` ({low}) is greater than `maximum` ({high})"
        ));
    }
    Ok(())
}

/// A multi-select cannot require more items than it has options.
pub(super) fn check_min_items(min_items: Option<u64>, options: usize) -> Result<(), String> {
    if let Some(min) = min_items
        && min > options as u64
    {
        return Err(format!(
            "`minItems` ({min}) is more than the {options} options"
        ));
    }
    Ok(())
}

/// A default must have the property's JSON type, be a whole number for an integer, and
/// be one of the options of a select.
pub(super) fn check_default(kind: &PropertyKind, default: &Value) -> Result<(), String> {
    let wrong = |expected: &str| {
        Err(format!(
            "`default` must be {expected}, found {}",
            json_type(default)
        ))
    };
    match (kind, default) {
        (PropertyKind::Text { .. }, Value::String(_)) => Ok(()),
        (PropertyKind::Text { .. }, _) => wrong("a string"),
        (PropertyKind::Number { integer, .. }, Value::Number(n)) => {
            if *integer && !is_integral(n) {
                Err(format!("`default` ({n}) must be a whole number"))
            } else {
                Ok(())
            }
        }
        (PropertyKind::Number { .. }, _) => wrong("a number"),
        (PropertyKind::Boolean, Value::Bool(_)) => Ok(()),
        (PropertyKind::Boolean, _) => wrong("a boolean"),
        (PropertyKind::SingleSelect { options, .. }, Value::String(s)) => {
            if options.iter().any(|o| &o.value == s) {
                Ok(())
            } else {
                Err(format!("`default` {s:?} is not one of the options"))
            }
        }
        (PropertyKind::SingleSelect { .. }, _) => wrong("a string"),
        (PropertyKind::MultiSelect { options, .. }, Value::Array(items)) => {
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
        (PropertyKind::MultiSelect { .. }, _) => wrong("an array of strings"),
    }
}

impl PropertySchema {
    pub(super) fn of_kind(kind: PropertyKind) -> PropertySchema {
        PropertySchema {
            title: None,
            description: None,
            default: None,
            kind,
        }
    }

    /// The label (`title`), if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The help text (`description`), if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The `default`, as written in the schema. It always fits the property.
    pub fn default(&self) -> Option<&Value> {
        self.default.as_ref()
    }

    /// The `default` as an answer value, ready to pre-fill: a whole-number default of an
    /// `"integer"` property comes back as an integer (`3.0` becomes `3`).
    ///
    /// ```
    /// use ferry_protocol::elicitation::{ElicitValue, PropertySchema};
    ///
    /// let age: PropertySchema =
    ///     serde_json::from_str(r#"{"type": "integer", "default": 30.0}"#).unwrap();
    /// assert_eq!(age.default_value(), Some(ElicitValue::from(30)));
    /// ```
    pub fn default_value(&self) -> Option<ElicitValue> {
        Some(match (self.default.as_ref()?, &self.kind) {
            (Value::Number(n), PropertyKind::Number { integer: true, .. }) => {
                ElicitValue::Number(integer_number(n).unwrap_or_else(|| n.clone()))
            }
            (Value::Number(n), _) => ElicitValue::Number(n.clone()),
            (Value::String(s), _) => ElicitValue::String(s.clone()),
            (Value::Bool(b), _) => ElicitValue::Bool(*b),
            (Value::Array(items), _) => ElicitValue::StringArray(
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            ),
            _ => return None,
        })
    }

    /// The kind of the property, with its constraints.
    pub fn kind(&self) -> &PropertyKind {
        &self.kind
    }

    /// The JSON Schema `type`: `"string"` (text and single selects), `"number"`,
    /// `"integer"`, `"boolean"` or `"array"` (multi-selects).
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            PropertyKind::Text { .. } | PropertyKind::SingleSelect { .. } => "string",
            PropertyKind::Number { integer: true, .. } => "integer",
            PropertyKind::Number { .. } => "number",
            PropertyKind::Boolean => "boolean",
            PropertyKind::MultiSelect { .. } => "array",
        }
    }

    /// The options of a select field; `None` for free-form fields.
    pub fn options(&self) -> Option<&[SelectOption]> {
        match &self.kind {
            PropertyKind::SingleSelect { options, .. }
            | PropertyKind::MultiSelect { options, .. } => Some(options),
            _ => None,
        }
    }

    /// The values a select field allows; `None` for free-form fields.
    pub fn allowed_values(&self) -> Option<Vec<&str>> {
        self.options()
            .map(|options| options.iter().map(SelectOption::value).collect())
    }

    /// Checks what the parser checks keyword by keyword, for a property built in code.
    pub(super) fn check(&self) -> Result<(), String> {
        match &self.kind {
            PropertyKind::Text {
                min_length,
                max_length,
                ..
            } => check_range(*min_length, *max_length, "minLength", "maxLength")?,
            PropertyKind::Number {
                minimum, maximum, ..
            } => check_number_range(minimum.as_ref(), maximum.as_ref())?,
            PropertyKind::Boolean => {}
            PropertyKind::SingleSelect { options, .. } => check_options(options)?,
            PropertyKind::MultiSelect {
                options,
                min_items,
                max_items,
                ..
            } => {
                check_range(*min_items, *max_items, "minItems", "maxItems")?;
                check_options(options)?;
                check_min_items(*min_items, options.len())?;
            }
        }
        match &self.default {
            Some(default) => check_default(&self.kind, default),
            None => Ok(()),
        }
    }

    /// The property's schema as JSON.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        let mut put = |key: &str, value: Value| {
            map.insert(key.to_owned(), value);
        };
        let titled = |options: &[SelectOption]| -> Value {
            options
                .iter()
                .map(|o| json!({"const": o.value, "title": o.label()}))
                .collect()
        };
        let values = |options: &[SelectOption]| -> Value {
            options
                .iter()
                .map(|o| Value::from(o.value.as_str()))
                .collect()
        };
        match &self.kind {
            PropertyKind::Text {
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
            PropertyKind::Number {
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
            PropertyKind::Boolean => put("type", "boolean".into()),
            PropertyKind::SingleSelect { options, style } => {
                put("type", "string".into());
                match style {
                    SelectStyle::Untitled => put("enum", values(options)),
                    SelectStyle::Titled => put("oneOf", titled(options)),
                    SelectStyle::Legacy => {
                        put("enum", values(options));
                        put(
                            "enumNames",
                            options.iter().map(|o| Value::from(o.label())).collect(),
                        );
                    }
                }
            }
            PropertyKind::MultiSelect {
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

impl Serialize for PropertySchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

/// Reads one property schema with the checks of
/// [`FormSchema::from_value`](super::FormSchema::from_value): any keyword outside the
/// property's schema.ts shape is refused.
impl<'de> Deserialize<'de> for PropertySchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PropertySchema, D::Error> {
        let mut value = Value::deserialize(d)?;
        parse::property(&mut value, Mode::Strict).map_err(serde::de::Error::custom)
    }
}
