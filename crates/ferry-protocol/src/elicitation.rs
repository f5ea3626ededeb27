//! Elicitation: asking the user for input through the client (client/elicitation.mdx).
//!
//! In 2026-07-28 an `elicitation/create` request travels inside an
//! [`InputRequiredResult`](crate::mrtr::InputRequiredResult); the answer comes back in the
//! retry's `inputResponses` as an [`ElicitResult`].

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::capabilities::ClientCapabilities;
use crate::meta::Meta;

/// An elicitation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitMode {
    /// A form the client renders from a restricted JSON Schema.
    Form,
    /// A URL the user opens out of band (for sensitive data).
    Url,
}

/// The `"mode": "form"` marker of [`ElicitRequestFormParams`], which may also be omitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FormMode {
    /// `"form"`.
    #[default]
    #[serde(rename = "form")]
    Form,
}

/// Form-mode elicitation params (schema.ts `ElicitRequestFormParams`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// Request metadata; only 2025-11-25 server requests carry it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `"form"`, or absent (which also means form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What is being asked and why.
    pub message: String,
    /// The fields to fill in.
    pub requested_schema: RequestedSchema,
}

impl ElicitRequestFormParams {
    /// Form params with an explicit `"mode": "form"`.
    pub fn new(message: impl Into<String>, requested_schema: RequestedSchema) -> Self {
        ElicitRequestFormParams {
            meta: None,
            mode: Some(FormMode::Form),
            message: message.into(),
            requested_schema,
        }
    }
}

/// URL-mode elicitation params (schema.ts `ElicitRequestURLParams`). Serializes with
/// `"mode": "url"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename = "url", rename_all = "camelCase")]
pub struct ElicitRequestUrlParams {
    /// Request metadata; only 2025-11-25 server requests carry it.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Why the user should open the URL.
    pub message: String,
    /// The URL to open. Must carry no sensitive data and not be pre-authenticated.
    pub url: String,
}

impl ElicitRequestUrlParams {
    /// URL params.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestUrlParams {
            meta: None,
            message: message.into(),
            url: url.into(),
        }
    }
}

/// The params of `elicitation/create` (schema.ts `ElicitRequestParams`): a form or a URL.
///
/// Read by `"mode"`: `"url"` is URL mode; `"form"` or no `mode` at all is form mode.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode.
    Form(ElicitRequestFormParams),
    /// URL mode.
    Url(ElicitRequestUrlParams),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ElicitParamsRepr {
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
    #[serde(default)]
    mode: Option<String>,
    message: String,
    #[serde(default)]
    requested_schema: Option<RequestedSchema>,
    #[serde(default)]
    url: Option<String>,
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = ElicitParamsRepr::deserialize(d)?;
        match r.mode.as_deref() {
            None | Some("form") => {
                let requested_schema = r
                    .requested_schema
                    .ok_or_else(|| de::Error::missing_field("requestedSchema"))?;
                Ok(ElicitRequestParams::Form(ElicitRequestFormParams {
                    meta: r.meta,
                    mode: r.mode.map(|_| FormMode::Form),
                    message: r.message,
                    requested_schema,
                }))
            }
            Some("url") => {
                let url = r.url.ok_or_else(|| de::Error::missing_field("url"))?;
                Ok(ElicitRequestParams::Url(ElicitRequestUrlParams {
                    meta: r.meta,
                    message: r.message,
                    url,
                }))
            }
            Some(other) => Err(de::Error::unknown_variant(other, &["form", "url"])),
        }
    }
}

impl ElicitRequestParams {
    /// Form-mode params.
    pub fn form(message: impl Into<String>, requested_schema: RequestedSchema) -> Self {
        ElicitRequestParams::Form(ElicitRequestFormParams::new(message, requested_schema))
    }

    /// URL-mode params.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestParams::Url(ElicitRequestUrlParams::new(message, url))
    }

    /// The mode (form when `mode` was omitted).
    pub fn mode(&self) -> ElicitMode {
        match self {
            ElicitRequestParams::Form(_) => ElicitMode::Form,
            ElicitRequestParams::Url(_) => ElicitMode::Url,
        }
    }

    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form(p) => &p.message,
            ElicitRequestParams::Url(p) => &p.message,
        }
    }

    /// Whether `capabilities` allow this request's mode (`elicitation: {}` means form).
    pub fn supported_by(&self, capabilities: &ClientCapabilities) -> bool {
        match self.mode() {
            ElicitMode::Form => capabilities.supports_elicitation_form(),
            ElicitMode::Url => capabilities.supports_elicitation_url(),
        }
    }

    /// The `requiredCapabilities` value naming this mode, for a -32021 error.
    pub fn required_capability(&self) -> Value {
        match self.mode() {
            ElicitMode::Form => crate::capabilities::required(&["elicitation", "form"]),
            ElicitMode::Url => crate::capabilities::required(&["elicitation", "url"]),
        }
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(p: ElicitRequestFormParams) -> Self {
        ElicitRequestParams::Form(p)
    }
}

impl From<ElicitRequestUrlParams> for ElicitRequestParams {
    fn from(p: ElicitRequestUrlParams) -> Self {
        ElicitRequestParams::Url(p)
    }
}

/// The form of a form-mode elicitation: a flat object schema whose properties are all
/// [`PrimitiveSchemaDefinition`]s. Serializes with `"type": "object"`.
///
/// Properties keep their order, which clients use to lay out the form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "object")]
pub struct RequestedSchema {
    /// The dialect, if not JSON Schema 2020-12.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The fields, in display order.
    #[serde(with = "ordered_properties")]
    pub properties: Vec<(String, PrimitiveSchemaDefinition)>,
    /// The names of the fields that must be filled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

impl RequestedSchema {
    /// An empty form.
    pub fn new() -> Self {
        RequestedSchema::default()
    }

    /// Adds an optional field (or replaces one of the same name, keeping its place).
    pub fn with_property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        self.insert(name.into(), schema.into());
        self
    }

    /// Adds a required field.
    pub fn with_required_property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        let name = name.into();
        self.insert(name.clone(), schema.into());
        let required = self.required.get_or_insert_with(Vec::new);
        if !required.contains(&name) {
            required.push(name);
        }
        self
    }

    /// Adds or replaces a field, keeping the place of a replaced one.
    pub fn insert(&mut self, name: String, schema: PrimitiveSchemaDefinition) {
        match self.properties.iter_mut().find(|(n, _)| *n == name) {
            Some((_, slot)) => *slot = schema,
            None => self.properties.push((name, schema)),
        }
    }

    /// The field called `name`.
    pub fn property(&self, name: &str) -> Option<&PrimitiveSchemaDefinition> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    /// Whether field `name` is required.
    pub fn is_required(&self, name: &str) -> bool {
        self.required
            .as_ref()
            .is_some_and(|r| r.iter().any(|n| n == name))
    }

    /// Checks submitted form content against this schema: required fields present, and
    /// each value of the kind its field asks for (string, number, boolean or list of
    /// strings, and an allowed enum value). Unknown fields are refused. Returns the first
    /// problem found.
    pub fn check(&self, content: &BTreeMap<String, ElicitValue>) -> Result<(), String> {
        for name in self.required.iter().flatten() {
            if !content.contains_key(name) {
                return Err(format!("missing required field `{name}`"));
            }
        }
        for (name, value) in content {
            let schema = self
                .property(name)
                .ok_or_else(|| format!("unknown field `{name}`"))?;
            schema
                .check(value)
                .map_err(|why| format!("field `{name}`: {why}"))?;
        }
        Ok(())
    }
}

mod ordered_properties {
    use super::*;

    pub(super) fn serialize<S: Serializer>(
        props: &[(String, PrimitiveSchemaDefinition)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(props.len()))?;
        for (name, schema) in props {
            map.serialize_entry(name, schema)?;
        }
        map.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, PrimitiveSchemaDefinition)>, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = Vec<(String, PrimitiveSchemaDefinition)>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of primitive schema definitions")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, PrimitiveSchemaDefinition)> = Vec::new();
                while let Some((name, schema)) =
                    a.next_entry::<String, PrimitiveSchemaDefinition>()?
                {
                    match out.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, slot)) => *slot = schema,
                        None => out.push((name, schema)),
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// The `format` of a [`StringSchema`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// `email`.
    Email,
    /// `uri`.
    Uri,
    /// `date`.
    Date,
    /// `date-time`.
    DateTime,
}

/// A text field (schema.ts `StringSchema`, `"type": "string"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct StringSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Expected format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `"number"` or `"integer"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberKind {
    /// Any number.
    #[default]
    Number,
    /// Integers only.
    Integer,
}

/// A numeric field (schema.ts `NumberSchema`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `number` or `integer`.
    #[serde(rename = "type")]
    pub kind: NumberKind,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Smallest allowed value.
    #[serde(
        default,
        serialize_with = "crate::serde_util::compact_f64_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub minimum: Option<f64>,
    /// Largest allowed value.
    #[serde(
        default,
        serialize_with = "crate::serde_util::compact_f64_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub maximum: Option<f64>,
    /// Pre-filled value.
    #[serde(
        default,
        serialize_with = "crate::serde_util::compact_f64_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub default: Option<f64>,
}

/// A checkbox (schema.ts `BooleanSchema`, `"type": "boolean"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "boolean", rename_all = "camelCase")]
pub struct BooleanSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// One choice of a titled enum: a value and its label.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumOption {
    /// The value submitted.
    #[serde(rename = "const")]
    pub value: String,
    /// The label shown.
    pub title: String,
}

impl EnumOption {
    /// A choice.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        EnumOption {
            value: value.into(),
            title: title.into(),
        }
    }
}

/// Pick one of several strings (schema.ts `UntitledSingleSelectEnumSchema`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct UntitledSingleSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub enum_values: Vec<String>,
    /// Pre-selected choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Pick one of several labelled values (schema.ts `TitledSingleSelectEnumSchema`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<EnumOption>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The `items` of an [`UntitledMultiSelectEnumSchema`]: `{"type":"string","enum":[...]}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string")]
pub struct UntitledEnumItems {
    /// The choices.
    #[serde(rename = "enum")]
    pub enum_values: Vec<String>,
}

/// The `items` of a [`TitledMultiSelectEnumSchema`]: `{"anyOf":[{"const","title"}...]}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The choices.
    pub any_of: Vec<EnumOption>,
}

/// Pick several strings (schema.ts `UntitledMultiSelectEnumSchema`, `"type": "array"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "array", rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: UntitledEnumItems,
    /// Pre-selected choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Pick several labelled values (schema.ts `TitledMultiSelectEnumSchema`, `"type": "array"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "array", rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: TitledEnumItems,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Pick one string, with labels in the non-standard `enumNames` (schema.ts
/// `LegacyTitledEnumSchema`). Prefer [`TitledSingleSelectEnumSchema`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub enum_values: Vec<String>,
    /// Labels of the choices, in the same order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Pre-selected choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// One field of a form (schema.ts `PrimitiveSchemaDefinition`, flattened over the enum
/// variants of `EnumSchema`).
///
/// The union is untagged; it is read by shape. `"type"` picks the family, then:
/// for `"string"`, `oneOf` means titled single-select, `enum` with `enumNames` means the
/// legacy titled enum, `enum` alone means untitled single-select, neither means a text
/// field; for `"array"`, `items.anyOf` means titled multi-select and `items.enum`
/// untitled multi-select.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// A text field.
    String(StringSchema),
    /// A numeric field.
    Number(NumberSchema),
    /// A checkbox.
    Boolean(BooleanSchema),
    /// Pick one string.
    UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
    /// Pick one labelled value.
    TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
    /// Pick several strings.
    UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
    /// Pick several labelled values.
    TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
    /// Pick one string, labels in `enumNames`.
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PrimitiveRepr {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    min_length: Option<u64>,
    #[serde(default)]
    max_length: Option<u64>,
    #[serde(default)]
    format: Option<StringFormat>,
    #[serde(default)]
    default: Option<Value>,
    #[serde(default)]
    minimum: Option<f64>,
    #[serde(default)]
    maximum: Option<f64>,
    #[serde(rename = "enum", default)]
    enum_values: Option<Vec<String>>,
    #[serde(default)]
    enum_names: Option<Vec<String>>,
    #[serde(default)]
    one_of: Option<Vec<EnumOption>>,
    #[serde(default)]
    items: Option<ItemsRepr>,
    #[serde(default)]
    min_items: Option<u64>,
    #[serde(default)]
    max_items: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ItemsRepr {
    #[serde(rename = "enum", default)]
    enum_values: Option<Vec<String>>,
    #[serde(default)]
    any_of: Option<Vec<EnumOption>>,
}

fn default_as<T: DeserializeOwned, E: de::Error>(v: Option<Value>) -> Result<Option<T>, E> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v)
            .map(Some)
            .map_err(|e| E::custom(format_args!("invalid `default`: {e}"))),
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = PrimitiveRepr::deserialize(d)?;
        let (title, description) = (r.title, r.description);
        Ok(match r.kind.as_str() {
            "string" => {
                if let Some(one_of) = r.one_of {
                    PrimitiveSchemaDefinition::TitledSingleSelectEnum(
                        TitledSingleSelectEnumSchema {
                            title,
                            description,
                            one_of,
                            default: default_as(r.default)?,
                        },
                    )
                } else if let Some(enum_values) = r.enum_values {
                    if r.enum_names.is_some() {
                        PrimitiveSchemaDefinition::LegacyTitledEnum(LegacyTitledEnumSchema {
                            title,
                            description,
                            enum_values,
                            enum_names: r.enum_names,
                            default: default_as(r.default)?,
                        })
                    } else {
                        PrimitiveSchemaDefinition::UntitledSingleSelectEnum(
                            UntitledSingleSelectEnumSchema {
                                title,
                                description,
                                enum_values,
                                default: default_as(r.default)?,
                            },
                        )
                    }
                } else {
                    PrimitiveSchemaDefinition::String(StringSchema {
                        title,
                        description,
                        min_length: r.min_length,
                        max_length: r.max_length,
                        format: r.format,
                        default: default_as(r.default)?,
                    })
                }
            }
            "number" | "integer" => PrimitiveSchemaDefinition::Number(NumberSchema {
                kind: if r.kind == "integer" {
                    NumberKind::Integer
                } else {
                    NumberKind::Number
                },
                title,
                description,
                minimum: r.minimum,
                maximum: r.maximum,
                default: default_as(r.default)?,
            }),
            "boolean" => PrimitiveSchemaDefinition::Boolean(BooleanSchema {
                title,
                description,
                default: default_as(r.default)?,
            }),
            "array" => {
                let items = r.items.ok_or_else(|| de::Error::missing_field("items"))?;
                if let Some(any_of) = items.any_of {
                    PrimitiveSchemaDefinition::TitledMultiSelectEnum(TitledMultiSelectEnumSchema {
                        title,
                        description,
                        min_items: r.min_items,
                        max_items: r.max_items,
                        items: TitledEnumItems { any_of },
                        default: default_as(r.default)?,
                    })
                } else if let Some(enum_values) = items.enum_values {
                    PrimitiveSchemaDefinition::UntitledMultiSelectEnum(
                        UntitledMultiSelectEnumSchema {
                            title,
                            description,
                            min_items: r.min_items,
                            max_items: r.max_items,
                            items: UntitledEnumItems { enum_values },
                            default: default_as(r.default)?,
                        },
                    )
                } else {
                    return Err(de::Error::custom(
                        "an array field needs `items.enum` or `items.anyOf`",
                    ));
                }
            }
            other => {
                return Err(de::Error::unknown_variant(
                    other,
                    &["string", "number", "integer", "boolean", "array"],
                ));
            }
        })
    }
}

impl PrimitiveSchemaDefinition {
    /// A text field.
    pub fn string() -> Self {
        PrimitiveSchemaDefinition::String(StringSchema::default())
    }

    /// A text field with a format.
    pub fn string_with_format(format: StringFormat) -> Self {
        PrimitiveSchemaDefinition::String(StringSchema {
            format: Some(format),
            ..Default::default()
        })
    }

    /// A number field.
    pub fn number() -> Self {
        PrimitiveSchemaDefinition::Number(NumberSchema::default())
    }

    /// An integer field.
    pub fn integer() -> Self {
        PrimitiveSchemaDefinition::Number(NumberSchema {
            kind: NumberKind::Integer,
            ..Default::default()
        })
    }

    /// A checkbox.
    pub fn boolean() -> Self {
        PrimitiveSchemaDefinition::Boolean(BooleanSchema::default())
    }

    /// Pick one of `values`.
    pub fn single_select<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        PrimitiveSchemaDefinition::UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema {
            enum_values: values.into_iter().map(Into::into).collect(),
            ..Default::default()
        })
    }

    /// Pick one of `options` (value and label).
    pub fn titled_single_select(options: Vec<EnumOption>) -> Self {
        PrimitiveSchemaDefinition::TitledSingleSelectEnum(TitledSingleSelectEnumSchema {
            one_of: options,
            ..Default::default()
        })
    }

    /// Pick several of `values`.
    pub fn multi_select<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        PrimitiveSchemaDefinition::UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema {
            items: UntitledEnumItems {
                enum_values: values.into_iter().map(Into::into).collect(),
            },
            ..Default::default()
        })
    }

    /// Pick several of `options` (value and label).
    pub fn titled_multi_select(options: Vec<EnumOption>) -> Self {
        PrimitiveSchemaDefinition::TitledMultiSelectEnum(TitledMultiSelectEnumSchema {
            items: TitledEnumItems { any_of: options },
            ..Default::default()
        })
    }

    fn title_and_description(&mut self) -> (&mut Option<String>, &mut Option<String>) {
        match self {
            PrimitiveSchemaDefinition::String(s) => (&mut s.title, &mut s.description),
            PrimitiveSchemaDefinition::Number(s) => (&mut s.title, &mut s.description),
            PrimitiveSchemaDefinition::Boolean(s) => (&mut s.title, &mut s.description),
            PrimitiveSchemaDefinition::UntitledSingleSelectEnum(s) => {
                (&mut s.title, &mut s.description)
            }
            PrimitiveSchemaDefinition::TitledSingleSelectEnum(s) => {
                (&mut s.title, &mut s.description)
            }
            PrimitiveSchemaDefinition::UntitledMultiSelectEnum(s) => {
                (&mut s.title, &mut s.description)
            }
            PrimitiveSchemaDefinition::TitledMultiSelectEnum(s) => {
                (&mut s.title, &mut s.description)
            }
            PrimitiveSchemaDefinition::LegacyTitledEnum(s) => (&mut s.title, &mut s.description),
        }
    }

    /// Sets the label.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        *self.title_and_description().0 = Some(title.into());
        self
    }

    /// Sets the help text.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        *self.title_and_description().1 = Some(description.into());
        self
    }

    /// The JSON Schema `type` of the field.
    pub fn type_name(&self) -> &'static str {
        match self {
            PrimitiveSchemaDefinition::String(_)
            | PrimitiveSchemaDefinition::UntitledSingleSelectEnum(_)
            | PrimitiveSchemaDefinition::TitledSingleSelectEnum(_)
            | PrimitiveSchemaDefinition::LegacyTitledEnum(_) => "string",
            PrimitiveSchemaDefinition::Number(n) => match n.kind {
                NumberKind::Number => "number",
                NumberKind::Integer => "integer",
            },
            PrimitiveSchemaDefinition::Boolean(_) => "boolean",
            PrimitiveSchemaDefinition::UntitledMultiSelectEnum(_)
            | PrimitiveSchemaDefinition::TitledMultiSelectEnum(_) => "array",
        }
    }

    /// The values a select field allows; `None` for free-form fields.
    pub fn allowed_values(&self) -> Option<Vec<&str>> {
        Some(match self {
            PrimitiveSchemaDefinition::UntitledSingleSelectEnum(s) => {
                s.enum_values.iter().map(String::as_str).collect()
            }
            PrimitiveSchemaDefinition::LegacyTitledEnum(s) => {
                s.enum_values.iter().map(String::as_str).collect()
            }
            PrimitiveSchemaDefinition::TitledSingleSelectEnum(s) => {
                s.one_of.iter().map(|o| o.value.as_str()).collect()
            }
            PrimitiveSchemaDefinition::UntitledMultiSelectEnum(s) => {
                s.items.enum_values.iter().map(String::as_str).collect()
            }
            PrimitiveSchemaDefinition::TitledMultiSelectEnum(s) => {
                s.items.any_of.iter().map(|o| o.value.as_str()).collect()
            }
            _ => return None,
        })
    }

    /// Checks one submitted value against this field: its kind, and for selects that
    /// every value is allowed. Other constraints (lengths, ranges, formats) are not
    /// checked.
    pub fn check(&self, value: &ElicitValue) -> Result<(), String> {
        let allowed = self.allowed_values();
        let in_allowed = |v: &str| allowed.as_ref().is_none_or(|a| a.contains(&v));
        match (self.type_name(), value) {
            ("string", ElicitValue::String(s)) if in_allowed(s) => Ok(()),
            ("string", ElicitValue::String(s)) => Err(format!("`{s}` is not an allowed value")),
            ("number", ElicitValue::Number(_)) | ("boolean", ElicitValue::Bool(_)) => Ok(()),
            ("integer", ElicitValue::Number(n))
                if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
            {
                Ok(())
            }
            ("array", ElicitValue::StringArray(items)) => {
                match items.iter().find(|s| !in_allowed(s)) {
                    Some(s) => Err(format!("`{s}` is not an allowed value")),
                    None => Ok(()),
                }
            }
            (expected, _) => Err(format!("expected a value of type {expected}")),
        }
    }
}

macro_rules! primitive_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for PrimitiveSchemaDefinition {
            fn from(s: $ty) -> Self {
                PrimitiveSchemaDefinition::$variant(s)
            }
        }
    )*};
}

primitive_from!(
    String(StringSchema),
    Number(NumberSchema),
    Boolean(BooleanSchema),
    UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
    TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
    UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
    TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
    LegacyTitledEnum(LegacyTitledEnumSchema),
);

/// What the user did with an elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form, or (URL mode) agreed to open the URL.
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// One submitted form value: a string, a number, a boolean or a list of strings.
///
/// Numbers keep their JSON form (integer or not) as sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// A string.
    String(String),
    /// A number.
    Number(Number),
    /// A boolean.
    Bool(bool),
    /// A list of strings (multi-select).
    StringArray(Vec<String>),
}

impl ElicitValue {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ElicitValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number as `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ElicitValue::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// The number as `i64`, if this is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            ElicitValue::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ElicitValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The list of strings, if this is one.
    pub fn as_string_array(&self) -> Option<&[String]> {
        match self {
            ElicitValue::StringArray(v) => Some(v),
            _ => None,
        }
    }

    /// The value as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            ElicitValue::String(s) => Value::from(s.as_str()),
            ElicitValue::Number(n) => Value::Number(n.clone()),
            ElicitValue::Bool(b) => Value::Bool(*b),
            ElicitValue::StringArray(v) => Value::from(v.clone()),
        }
    }
}

impl From<&str> for ElicitValue {
    fn from(s: &str) -> Self {
        ElicitValue::String(s.to_owned())
    }
}

impl From<String> for ElicitValue {
    fn from(s: String) -> Self {
        ElicitValue::String(s)
    }
}

impl From<bool> for ElicitValue {
    fn from(b: bool) -> Self {
        ElicitValue::Bool(b)
    }
}

impl From<i64> for ElicitValue {
    fn from(n: i64) -> Self {
        ElicitValue::Number(n.into())
    }
}

impl From<Vec<String>> for ElicitValue {
    fn from(v: Vec<String>) -> Self {
        ElicitValue::StringArray(v)
    }
}

/// The answer to an elicitation (schema.ts `ElicitResult`). In 2026-07-28 it is an input
/// response, not a JSON-RPC result, so it has no `resultType`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values; only for `accept` in form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
}

impl ElicitResult {
    /// The user submitted the form with `content`.
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// The user accepted without content (URL mode: agreed to open the URL).
    pub fn accept_without_content() -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: None,
        }
    }

    /// The user refused.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    /// The user dismissed the request.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
        }
    }

    /// Whether the user accepted.
    pub fn is_accept(&self) -> bool {
        self.action == ElicitAction::Accept
    }

    /// The submitted value of field `name`.
    pub fn value(&self, name: &str) -> Option<&ElicitValue> {
        self.content.as_ref()?.get(name)
    }

    /// Reads the submitted content into `T` (e.g. a struct whose fields are the form's).
    /// Missing content reads as an empty object.
    pub fn parse_content<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        let map: serde_json::Map<String, Value> = self
            .content
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect();
        serde_json::from_value(Value::Object(map))
    }
}
