//! Typed forms for MCP elicitation.
//!
//! A server that needs input from the user mid-request sends an `elicitation/create`
//! request whose `requestedSchema` describes a flat form, and gets back an `ElicitResult`
//! whose `content` holds the answers. `ferry-form` derives that schema from a Rust type
//! and reads the answers back into it:
//!
//! ```
//! use ferry_form::{Form, FormEnum};
//! use serde_json::json;
//!
//! #[derive(FormEnum, serde::Deserialize, Debug, PartialEq)]
//! #[serde(rename_all = "lowercase")]
//! enum Scope {
//!     #[form(title = "Only this file")]
//!     File,
//!     #[form(title = "The whole folder")]
//!     Folder,
//! }
//!
//! #[derive(Form, serde::Deserialize, Debug)]
//! struct Confirm {
//!     /// Really delete it?
//!     #[form(title = "Confirm")]
//!     confirm: bool,
//!     /// What to delete
//!     #[form(default = "file")]
//!     scope: Scope,
//!     /// Why (optional)
//!     #[form(max_length = 200)]
//!     reason: Option<String>,
//! }
//!
//! // The `requestedSchema` of the elicitation request:
//! let schema = Confirm::form_schema();
//! assert_eq!(
//!     serde_json::to_value(&schema).unwrap(),
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "confirm": {"type": "boolean", "title": "Confirm",
//!                         "description": "Really delete it?"},
//!             "scope": {"type": "string", "description": "What to delete",
//!                       "oneOf": [{"const": "file", "title": "Only this file"},
//!                                 {"const": "folder", "title": "The whole folder"}],
//!                       "default": "file"},
//!             "reason": {"type": "string", "description": "Why (optional)",
//!                        "maxLength": 200}
//!         },
//!         "required": ["confirm", "scope"]
//!     })
//! );
//!
//! // The client's `ElicitResult.content`, checked against the schema and parsed:
//! let content = json!({"confirm": true, "scope": "folder"});
//! let answer: Confirm = ferry_form::parse_content(content.as_object().unwrap()).unwrap();
//! assert!(answer.confirm);
//! assert_eq!(answer.scope, Scope::Folder);
//! assert_eq!(answer.reason, None);
//!
//! // Answers that do not fit the schema are refused with the property's name:
//! let bad = json!({"confirm": "yes", "scope": "folder"});
//! let err = Confirm::from_content(bad.as_object().unwrap()).unwrap_err();
//! assert_eq!(err.to_string(), "property `confirm`: expected a boolean, found a string");
//! ```
//!
//! # What a form may hold
//!
//! The spec allows only flat forms of primitive fields, and so does this crate: a field's
//! type must implement [`FormField`] (text, booleans, numbers, single and multi selects,
//! and `Option` of these). Anything else is a compile error that names the field. Options
//! given with `#[form(...)]` are checked while compiling too: `min_length` on a number
//! field, a `default` that is not one of an enum's options, or a `minimum` that does not
//! fit a `u8` do not compile. See [`derive@Form`] for the options.
//!
//! # One model of a form
//!
//! [`FormSchema`] is `ferry-protocol`'s model of a `requestedSchema`
//! ([`ferry_protocol::elicitation`]), re-exported here: what the derive builds is what a
//! server sends and what a client reads. Servers that build forms at run time and clients
//! that render them use the same type: [`FormSchema::from_value`] accepts exactly the
//! spec's subset and refuses anything else with an error naming the property,
//! [`FormSchema::builder`] builds one in code, [`FormSchema::properties`] reads each
//! property back as a typed [`FormProperty`], [`FormSchema::validate_content`] checks an
//! answer, and [`FormSchema::defaults`] lists the values to pre-fill.
#![forbid(unsafe_code)]

mod field;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub use ferry_form_derive::{Form, FormEnum};
pub use ferry_protocol::elicitation::{
    BooleanSchema, FormError, FormProperty, FormSchema, FormSchemaBuilder, MultiSelectSchema,
    NumberSchema, PropertyKind, PropertySchema, SelectOption, SelectStyle, SingleSelectSchema,
    StringFormat, TextSchema,
};
pub use field::{
    BooleanField, FormEnum, FormField, FormOption, MultiSelectField, NumberField, StringField,
};

/// Re-exported so that users name the same `serde_json` as this crate's signatures.
pub use serde_json;

/// A type that is an MCP elicitation form: it has a `requestedSchema` and can be read
/// back from the answers. Implement it with [`#[derive(Form)]`](derive@Form).
///
/// ```
/// use ferry_form::Form;
///
/// #[derive(Form, serde::Deserialize)]
/// struct Rename {
///     /// The new name
///     #[form(min_length = 1)]
///     name: String,
/// }
///
/// let schema = Rename::form_schema();
/// assert_eq!(schema.property_names().collect::<Vec<_>>(), ["name"]);
///
/// let content = serde_json::json!({"name": "notes.md"});
/// let rename = Rename::from_content(content.as_object().unwrap()).unwrap();
/// assert_eq!(rename.name, "notes.md");
/// ```
pub trait Form: DeserializeOwned {
    /// The form's `requestedSchema`.
    fn form_schema() -> FormSchema;

    /// Checks an answer against [`Form::form_schema`] and deserializes it: the same as
    /// [`parse_content`].
    fn from_content(content: &Map<String, Value>) -> Result<Self, FormError> {
        parse_content(content)
    }

    /// Finds the field of a validated answer that does not deserialize, for the error
    /// message. Generated by the derive.
    #[doc(hidden)]
    fn __field_error(content: &Map<String, Value>) -> Option<FormError> {
        let _ = content;
        None
    }
}

/// Checks a form answer (`ElicitResult.content`) against `T`'s schema, then deserializes
/// it into `T`.
///
/// The check is [`FormSchema::validate_content`]. Before deserializing, keys the form does
/// not list and `null` answers are dropped, and whole numbers of `"integer"` properties
/// written as floats (`3.0`) are turned into integers, so that they deserialize into
/// integer fields. An answer that fits the schema but not the Rust type, such as `300`
/// for a `u8`, is a [`FormError::Deserialize`] naming the property.
///
/// ```
/// use ferry_form::{Form, FormError};
/// use serde_json::json;
///
/// #[derive(Form, serde::Deserialize, Debug)]
/// struct Seats {
///     count: u8,
/// }
///
/// let ok: Seats = ferry_form::parse_content(json!({"count": 3.0}).as_object().unwrap()).unwrap();
/// assert_eq!(ok.count, 3);
///
/// let err = ferry_form::parse_content::<Seats>(json!({"count": 300}).as_object().unwrap())
///     .unwrap_err();
/// assert!(matches!(err, FormError::Deserialize { property: Some(p), .. } if p == "count"));
/// ```
pub fn parse_content<T: Form>(content: &Map<String, Value>) -> Result<T, FormError> {
    parse_content_with(&T::form_schema(), content)
}

/// [`parse_content`] with `T`'s schema given, for callers that build it once
/// (`T::form_schema()`) and keep it: nothing is rebuilt per answer.
///
/// `schema` must be `T`'s own; with another schema the checks are that schema's.
///
/// ```
/// use ferry_form::Form;
/// use serde_json::json;
///
/// #[derive(Form, serde::Deserialize, Debug)]
/// struct Seats {
///     count: u8,
/// }
///
/// let schema = Seats::form_schema();
/// for n in [1, 2, 3] {
///     let seats: Seats =
///         ferry_form::parse_content_with(&schema, json!({"count": n}).as_object().unwrap())
///             .unwrap();
///     assert_eq!(seats.count, n);
/// }
/// ```
pub fn parse_content_with<T: Form>(
    schema: &FormSchema,
    content: &Map<String, Value>,
) -> Result<T, FormError> {
    schema.validate_content(content)?;
    let normalized = schema.normalize_content(content);
    let value = Value::Object(normalized);
    T::deserialize(&value).map_err(|e| {
        value
            .as_object()
            .and_then(T::__field_error)
            .unwrap_or(FormError::Deserialize {
                property: None,
                message: e.to_string(),
            })
    })
}
