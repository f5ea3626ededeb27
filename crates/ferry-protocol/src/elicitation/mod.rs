//! Elicitation: asking the user for input through the client (client/elicitation.mdx).
//!
//! In 2026-07-28 an `elicitation/create` request travels inside an
//! [`InputRequiredResult`](crate::mrtr::InputRequiredResult); the answer comes back in the
//! retry's `inputResponses` as an [`ElicitResult`].
//!
//! A form-mode request carries a [`FormSchema`]: the flat subset of JSON Schema the spec
//! allows (client/elicitation.mdx, "Requested Schema"; schema.ts
//! `PrimitiveSchemaDefinition`), checked when it is read or built, with its properties in
//! form order. Each property is a [`PropertySchema`] whose [`PropertyKind`] is text,
//! number, boolean, single select or multi-select. [`FormSchema::validate_content`]
//! checks an answer against it (lengths, [`StringFormat`]s, bounds, options, item
//! counts), with [`FormError`]s that name the property.
//!
//! ```
//! use ferry_protocol::elicitation::{
//!     ElicitRequestParams, FormSchema, PropertySchema, SelectOption, StringFormat,
//! };
//!
//! let form = FormSchema::builder()
//!     .required("email", PropertySchema::text().with_format(StringFormat::Email))
//!     .property("plan", PropertySchema::titled_single_select([
//!         SelectOption::titled("free", "Free"),
//!         SelectOption::titled("pro", "Pro"),
//!     ]))
//!     .build()
//!     .unwrap();
//! let params = ElicitRequestParams::form("Sign up?", form);
//! assert_eq!(
//!     serde_json::to_value(&params).unwrap()["requestedSchema"]["required"],
//!     serde_json::json!(["email"])
//! );
//! ```

mod builder;
mod error;
mod format;
mod parse;
mod property;
mod schema;
mod validate;

use std::collections::BTreeMap;

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::capabilities::ClientCapabilities;
use crate::meta::Meta;

pub use builder::{
    BooleanSchema, FormSchemaBuilder, MultiSelectSchema, NumberSchema, SingleSelectSchema,
    TextSchema,
};
pub use error::FormError;
pub use format::StringFormat;
pub use property::{PropertyKind, PropertySchema, SelectOption, SelectStyle};
pub use schema::{FormProperty, FormSchema};

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
    /// The fields to fill in. Read leniently
    /// ([`FormSchema::from_value_lenient`]): keywords outside the subset are dropped.
    #[serde(deserialize_with = "FormSchema::deserialize_lenient")]
    pub requested_schema: FormSchema,
}

impl ElicitRequestFormParams {
    /// Form params with an explicit `"mode": "form"`.
    pub fn new(message: impl Into<String>, requested_schema: FormSchema) -> Self {
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
    #[serde(default, deserialize_with = "lenient_schema")]
    requested_schema: Option<FormSchema>,
    #[serde(default)]
    url: Option<String>,
}

/// Reads an optional `requestedSchema` with [`FormSchema::deserialize_lenient`].
pub(crate) fn lenient_schema<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<FormSchema>, D::Error> {
    struct Lenient(FormSchema);
    impl<'de> Deserialize<'de> for Lenient {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            FormSchema::deserialize_lenient(d).map(Lenient)
        }
    }
    Option::<Lenient>::deserialize(d).map(|o| o.map(|l| l.0))
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
    pub fn form(message: impl Into<String>, requested_schema: FormSchema) -> Self {
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
