//! [`FormSchema`]: a checked `requestedSchema`, and [`FormProperty`], the view of one of
//! its properties.

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::parse::{self, Mode};
use super::property::{PropertyKind, PropertySchema};
use super::{FormError, FormSchemaBuilder};

/// The `requestedSchema` of a form-mode elicitation request (schema.ts
/// `ElicitRequestFormParams.requestedSchema`), checked to be in the spec's flat primitive
/// subset, with its properties in form order.
///
/// A `FormSchema` comes from JSON ([`FormSchema::from_value`], serde, or an
/// [`ElicitRequestFormParams`](super::ElicitRequestFormParams) read from the wire), from
/// [`FormSchema::builder`], or from `ferry-form`'s `#[derive(Form)]`. Either way it holds
/// only what the spec allows: an object whose `properties` are each a `StringSchema`,
/// `NumberSchema`, `BooleanSchema` or one of the enum schemas (single select,
/// multi-select, and the legacy `enumNames` form). [`FormSchema::properties`] reads them
/// back as typed [`FormProperty`]s; [`FormSchema::validate_content`] checks an answer.
///
/// It serializes as the schema object itself and deserializes through the same checks as
/// [`FormSchema::from_value`]. Serializing writes the properties in form order (the order
/// they were added in, or of the JSON text it was read from); [`FormSchema::as_value`] is a
/// `serde_json::Value`, whose maps keep that order only when serde_json's `preserve_order`
/// feature is on.
///
/// ```
/// use ferry_protocol::elicitation::FormSchema;
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
    props: Vec<Prop>,
}

/// One property as stored: its name, whether it is required, and its schema.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Prop {
    pub(super) name: String,
    pub(super) required: bool,
    pub(super) schema: PropertySchema,
}

/// One property of a [`FormSchema`], read-only: its name, whether the form requires it,
/// and its [`PropertySchema`].
///
/// ```
/// use ferry_protocol::elicitation::{FormSchema, PropertyKind};
/// use serde_json::json;
///
/// let schema = FormSchema::from_value(json!({
///     "type": "object",
///     "properties": {"seats": {"type": "integer", "title": "Seats", "default": 2}},
///     "required": ["seats"]
/// }))
/// .unwrap();
/// let seats = schema.property("seats").unwrap();
/// assert_eq!((seats.name, seats.required, seats.label()), ("seats", true, "Seats"));
/// assert_eq!(seats.default(), Some(&json!(2)));
/// assert!(matches!(seats.kind(), PropertyKind::Number { integer: true, .. }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct FormProperty<'a> {
    /// The property's name: its key in the answer.
    pub name: &'a str,
    /// Its schema.
    pub schema: &'a PropertySchema,
    /// Whether the form requires an answer.
    pub required: bool,
}

impl<'a> FormProperty<'a> {
    /// The label to show: the schema's title, or else the name.
    pub fn label(&self) -> &'a str {
        self.schema.title().unwrap_or(self.name)
    }

    /// The schema's `title`, if any.
    pub fn title(&self) -> Option<&'a str> {
        self.schema.title()
    }

    /// The schema's `description`, if any.
    pub fn description(&self) -> Option<&'a str> {
        self.schema.description()
    }

    /// The schema's `default`, if any.
    pub fn default(&self) -> Option<&'a Value> {
        self.schema.default()
    }

    /// The property's kind and constraints.
    pub fn kind(&self) -> &'a PropertyKind {
        self.schema.kind()
    }
}

/// Two schemas are equal when their JSON is equal and they list the properties in the
/// same order.
impl PartialEq for FormSchema {
    fn eq(&self, other: &FormSchema) -> bool {
        self.value == other.value && self.property_names().eq(other.property_names())
    }
}

/// An empty form: `{"type": "object", "properties": {}}`.
impl Default for FormSchema {
    fn default() -> FormSchema {
        FormSchema::from_props(None, Vec::new())
    }
}

impl FormSchema {
    /// An empty form: `{"type": "object", "properties": {}}`.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    ///
    /// assert_eq!(
    ///     serde_json::to_string(&FormSchema::new()).unwrap(),
    ///     r#"{"type":"object","properties":{}}"#
    /// );
    /// ```
    pub fn new() -> FormSchema {
        FormSchema::default()
    }

    /// A builder for a form made in code.
    ///
    /// ```
    /// use ferry_protocol::elicitation::{FormSchema, PropertySchema};
    ///
    /// let form = FormSchema::builder()
    ///     .required("name", PropertySchema::text().with_title("Name").with_max_length(60))
    ///     .property("age", PropertySchema::integer().with_minimum(0))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(form.property_names().collect::<Vec<_>>(), ["name", "age"]);
    /// assert!(form.is_required("name"));
    /// ```
    pub fn builder() -> FormSchemaBuilder {
        FormSchemaBuilder::default()
    }

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
    /// use ferry_protocol::elicitation::{FormError, FormSchema};
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
        let order = key_order(&value);
        parse::form(value, order, Mode::Strict)
    }

    /// [`FormSchema::from_value`] for a schema received from a peer: keywords outside the
    /// subset (a root `title` or `additionalProperties`, a property's `examples`, a
    /// `format` other than the four the spec allows) are dropped rather than refused, as
    /// JSON Schema treats unknown keywords as annotations. Everything else is checked the
    /// same way, and the schema kept is only what remains.
    ///
    /// [`ElicitRequestFormParams`](super::ElicitRequestFormParams) reads its
    /// `requestedSchema` this way.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// let generated = json!({
    ///     "title": "Confirm",
    ///     "type": "object",
    ///     "properties": {"confirm": {"type": "boolean", "title": "Confirm", "examples": [true]}},
    ///     "required": ["confirm"]
    /// });
    /// assert!(FormSchema::from_value(generated.clone()).is_err());
    /// let schema = FormSchema::from_value_lenient(generated).unwrap();
    /// assert_eq!(
    ///     schema.as_value(),
    ///     &json!({
    ///         "type": "object",
    ///         "properties": {"confirm": {"type": "boolean", "title": "Confirm"}},
    ///         "required": ["confirm"]
    ///     })
    /// );
    /// // Nested objects are still refused.
    /// assert!(FormSchema::from_value_lenient(json!({
    ///     "type": "object", "properties": {"a": {"type": "object"}}
    /// }))
    /// .is_err());
    /// ```
    pub fn from_value_lenient(value: Value) -> Result<FormSchema, FormError> {
        let order = key_order(&value);
        parse::form(value, order, Mode::Lenient)
    }

    /// Deserializes a schema the way [`FormSchema::from_value_lenient`] reads it, keeping
    /// the order of the JSON text; for `#[serde(deserialize_with = "...")]`.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Received {
    ///     #[serde(deserialize_with = "FormSchema::deserialize_lenient")]
    ///     schema: FormSchema,
    /// }
    ///
    /// let r: Received = serde_json::from_str(
    ///     r#"{"schema": {"type": "object", "additionalProperties": false,
    ///                    "properties": {"b": {"type": "string"}, "a": {"type": "string"}}}}"#,
    /// )
    /// .unwrap();
    /// assert_eq!(r.schema.property_names().collect::<Vec<_>>(), ["b", "a"]);
    /// ```
    pub fn deserialize_lenient<'de, D: Deserializer<'de>>(d: D) -> Result<FormSchema, D::Error> {
        parse::deserialize(d, Mode::Lenient)
    }

    pub(super) fn from_parts(value: Value, props: Vec<Prop>) -> FormSchema {
        FormSchema { value, props }
    }

    /// Builds the JSON of properties that are already checked.
    pub(super) fn from_props(dialect: Option<String>, props: Vec<Prop>) -> FormSchema {
        let mut properties = Map::new();
        for prop in &props {
            properties.insert(prop.name.clone(), prop.schema.to_value());
        }
        let mut root = Map::new();
        if let Some(dialect) = dialect {
            root.insert("$schema".into(), dialect.into());
        }
        root.insert("type".into(), "object".into());
        root.insert("properties".into(), Value::Object(properties));
        let required: Vec<Value> = props
            .iter()
            .filter(|p| p.required)
            .map(|p| Value::from(p.name.as_str()))
            .collect();
        if !required.is_empty() {
            root.insert("required".into(), Value::Array(required));
        }
        FormSchema {
            value: Value::Object(root),
            props,
        }
    }

    pub(super) fn props(&self) -> &[Prop] {
        &self.props
    }

    /// The schema object as JSON.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
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
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// let value = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    /// assert_eq!(FormSchema::from_value(value.clone()).unwrap().into_value(), value);
    /// ```
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The `$schema` dialect, if the schema names one.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "$schema": "https://json-schema.org/draft/2020-12/schema",
    ///     "type": "object", "properties": {}
    /// }))
    /// .unwrap();
    /// assert_eq!(schema.dialect(), Some("https://json-schema.org/draft/2020-12/schema"));
    /// ```
    pub fn dialect(&self) -> Option<&str> {
        self.value.get("$schema").and_then(Value::as_str)
    }

    /// The properties in form order.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object",
    ///     "properties": {"ok": {"type": "boolean", "title": "OK?"}},
    ///     "required": ["ok"]
    /// }))
    /// .unwrap();
    /// let labels: Vec<_> = schema.properties().map(|p| (p.label(), p.required)).collect();
    /// assert_eq!(labels, [("OK?", true)]);
    /// ```
    pub fn properties(&self) -> impl ExactSizeIterator<Item = FormProperty<'_>> + '_ {
        self.props.iter().map(Prop::view)
    }

    /// The property called `name`.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object", "properties": {"ok": {"type": "boolean", "default": true}}
    /// }))
    /// .unwrap();
    /// assert_eq!(schema.property("ok").unwrap().default(), Some(&json!(true)));
    /// assert!(schema.property("nope").is_none());
    /// ```
    pub fn property(&self, name: &str) -> Option<FormProperty<'_>> {
        self.props.iter().find(|p| p.name == name).map(Prop::view)
    }

    /// The JSON schema of one property, as in the schema object.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object", "properties": {"ok": {"type": "boolean", "default": true}}
    /// }))
    /// .unwrap();
    /// assert_eq!(schema.property_json("ok").unwrap()["default"], json!(true));
    /// assert!(schema.property_json("nope").is_none());
    /// ```
    pub fn property_json(&self, name: &str) -> Option<&Map<String, Value>> {
        self.value
            .get("properties")?
            .get(name)
            .and_then(Value::as_object)
    }

    /// The property names in form order.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    ///
    /// let schema: FormSchema = serde_json::from_str(
    ///     r#"{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}}}"#,
    /// )
    /// .unwrap();
    /// assert_eq!(schema.property_names().collect::<Vec<_>>(), ["z", "a"]);
    /// ```
    pub fn property_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.props.iter().map(|p| p.name.as_str())
    }

    /// The names of the required properties, in form order.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
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
            .filter(|p| p.required)
            .map(|p| p.name.as_str())
    }

    /// Whether `name` is a required property.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
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
        self.props.iter().any(|p| p.name == name && p.required)
    }

    /// The number of properties.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    ///
    /// assert_eq!(FormSchema::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.props.len()
    }

    /// Whether the form has no properties.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// assert!(FormSchema::new().is_empty());
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
    /// use ferry_protocol::elicitation::FormSchema;
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
            .filter_map(|p| p.schema.default().map(|d| (p.name.clone(), d.clone())))
            .collect()
    }
}

impl Prop {
    fn view(&self) -> FormProperty<'_> {
        FormProperty {
            name: &self.name,
            schema: &self.schema,
            required: self.required,
        }
    }
}

/// The property names of a schema object, in its map's order.
fn key_order(value: &Value) -> Vec<String> {
    match value.get("properties") {
        Some(Value::Object(props)) => props.keys().cloned().collect(),
        _ => Vec::new(),
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
        let properties = self.0.value.get("properties");
        let mut map = serializer.serialize_map(Some(self.0.props.len()))?;
        for prop in &self.0.props {
            if let Some(schema) = properties.and_then(|p| p.get(&prop.name)) {
                map.serialize_entry(&prop.name, schema)?;
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

/// Reads a schema with the checks of [`FormSchema::from_value`], in the order of the JSON
/// text. For a schema from a peer, see [`FormSchema::deserialize_lenient`].
impl<'de> Deserialize<'de> for FormSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FormSchema, D::Error> {
        parse::deserialize(d, Mode::Strict)
    }
}
