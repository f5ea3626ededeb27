//! Derive macros for [`ferry-form`](https://docs.rs/ferry-form): `#[derive(Form)]` turns a
//! struct into an MCP elicitation form, and `#[derive(FormEnum)]` turns a unit-only enum
//! into the options of a select field.
//!
//! Use them through `ferry-form`, which re-exports both and holds the traits and types the
//! generated code names:
//!
//! ```
//! use ferry_form::{Form, FormEnum};
//!
//! #[derive(FormEnum, serde::Deserialize)]
//! #[serde(rename_all = "lowercase")]
//! enum Size {
//!     Small,
//!     Large,
//! }
//!
//! #[derive(Form, serde::Deserialize)]
//! struct Order {
//!     /// How big?
//!     size: Size,
//! }
//!
//! let schema = Order::form_schema();
//! assert_eq!(schema.required().collect::<Vec<_>>(), ["size"]);
//! ```
#![forbid(unsafe_code)]

mod attr;
mod case;
mod form;
mod form_enum;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `ferry_form::Form` for a struct with named fields: each field becomes one
/// property of the form's `requestedSchema`.
///
/// # Field types
///
/// Every field's type must implement `ferry_form::FormField`: `String`, `bool`, the integer
/// types, `f32`, `f64`, an enum deriving [`FormEnum`](derive@FormEnum) (a single select),
/// `Vec<E>` of such an enum (a multi-select), or `Option` of any of these (a field that
/// may be left empty). Any other type, such as a nested struct, a map or a `Vec<String>`,
/// is a compile error that names the field.
///
/// # Field options
///
/// `#[form(...)]` on a field takes these options, each at most once:
///
/// | option | applies to | emits |
/// | --- | --- | --- |
/// | `title = "..."` | any field | `title` |
/// | `description = "..."` | any field; defaults to the field's doc comment | `description` |
/// | `min_length = N`, `max_length = N` | text fields | `minLength`, `maxLength` |
/// | `format = "email" \| "uri" \| "date" \| "date-time"` | text fields | `format` |
/// | `minimum = N`, `maximum = N` | number fields | `minimum`, `maximum` |
/// | `min_items = N`, `max_items = N` | multi-select fields | `minItems`, `maxItems` |
/// | `default = "..."` | text and single-select fields | `default` |
/// | `default = 3`, `default = -2.5` | number fields | `default` |
/// | `default = true` | boolean fields | `default` |
/// | `default = ["a", "b"]` | multi-select fields | `default` |
///
/// An option on a field of the wrong kind is a compile error, and so is a default that
/// is not an option of the field's enum, a default or bound that is not a whole number
/// for an integer field or does not fit the field's type, a default outside the field's
/// own bounds or lengths, a default that does not match the field's `format`, a lower
/// bound above an upper one, and a `min_items` above the number of the enum's options. The doc comment becomes the description with each
/// line trimmed and the lines of a paragraph joined with spaces; `description = ""`
/// leaves it out.
///
/// # Serde attributes
///
/// Property names are the names serde deserializes: `#[serde(rename = "...")]` on a field
/// and `#[serde(rename_all = "...")]` on the struct are honoured (the deserialize name,
/// when they differ). A field with `#[serde(default)]`, or any field of a struct with
/// `#[serde(default)]`, is not required. A field with `#[serde(skip)]` or
/// `#[serde(skip_deserializing)]` is not part of the form. `#[serde(flatten)]`,
/// `#[serde(transparent)]`, `#[serde(from = "...")]` and `#[serde(try_from = "...")]` are
/// refused.
///
/// # Other options
///
/// `#[form(crate = "path")]` on the struct names the `ferry_form` crate when it is reached
/// through another path, such as a re-export. Generic structs are refused.
///
/// # Example
///
/// ```
/// use ferry_form::Form;
///
/// #[derive(Form, serde::Deserialize)]
/// #[serde(rename_all = "camelCase")]
/// struct Contact {
///     /// Your full name
///     #[form(min_length = 1, max_length = 80)]
///     full_name: String,
///     #[form(title = "Email", format = "email")]
///     email: Option<String>,
///     #[form(minimum = 18, default = 30)]
///     age: u8,
/// }
///
/// let schema = Contact::form_schema();
/// assert_eq!(
///     serde_json::to_value(&schema).unwrap(),
///     serde_json::json!({
///         "type": "object",
///         "properties": {
///             "fullName": {"type": "string", "description": "Your full name",
///                          "minLength": 1, "maxLength": 80},
///             "email": {"type": "string", "title": "Email", "format": "email"},
///             "age": {"type": "integer", "minimum": 18, "default": 30}
///         },
///         "required": ["fullName", "age"]
///     })
/// );
/// ```
#[proc_macro_derive(Form, attributes(form))]
pub fn derive_form(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    form::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives `ferry_form::FormEnum` (and `ferry_form::FormField`) for an enum whose variants
/// are all unit variants: the enum becomes a single-select field, and `Vec` of it a
/// multi-select field.
///
/// Each variant's value is the name serde deserializes, so `#[serde(rename = "...")]` on a
/// variant and `#[serde(rename_all = "...")]` on the enum are honoured. Variants with
/// `#[serde(skip)]` or `#[serde(skip_deserializing)]` are not offered.
///
/// `#[form(title = "...")]` on a variant gives it a display title. When any variant has a
/// title the field uses the titled form of the schema (`oneOf` / `items.anyOf` entries of
/// `const` and `title`), and variants without a title show their value; otherwise it uses
/// the plain `enum` form.
///
/// Variants with fields, generic enums, and enums with `#[serde(untagged)]`,
/// `#[serde(tag = "...")]` or `#[serde(content = "...")]` are refused.
///
/// # Example
///
/// ```
/// use ferry_form::{Form, FormEnum};
///
/// #[derive(FormEnum, serde::Deserialize)]
/// enum Color {
///     #[form(title = "Bright red")]
///     #[serde(rename = "#FF0000")]
///     Red,
///     #[serde(rename = "#00FF00")]
///     Green,
/// }
///
/// #[derive(Form, serde::Deserialize)]
/// struct Pick {
///     color: Color,
/// }
///
/// assert_eq!(
///     serde_json::to_value(Pick::form_schema()).unwrap()["properties"]["color"],
///     serde_json::json!({
///         "type": "string",
///         "oneOf": [
///             {"const": "#FF0000", "title": "Bright red"},
///             {"const": "#00FF00", "title": "#00FF00"}
///         ]
///     })
/// );
/// assert_eq!(Color::Green.form_value(), "#00FF00");
/// ```
#[proc_macro_derive(FormEnum, attributes(form))]
pub fn derive_form_enum(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    form_enum::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
