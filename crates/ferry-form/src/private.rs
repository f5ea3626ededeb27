//! Items the derive macros' generated code uses. Not public API: they may change in any
//! release.

use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};

use ferry_protocol::elicitation::{
    BooleanSchema, FormSchemaBuilder, MultiSelectSchema, NumberSchema, SingleSelectSchema,
    TextSchema,
};

use crate::{
    BooleanField, FormError, FormField, FormOption, FormSchema, MultiSelectField, NumberField,
    PropertySchema, SelectOption, StringField, StringFormat,
};

pub use serde_json;

/// Seals [`FormField`] and the marker traits.
pub trait Sealed {}

/// Field types a string `default` fits: text fields and single selects.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is neither a text field nor a single-select enum, so a string `default` does not apply to it",
    label = "this option needs a `String` field or an enum deriving `FormEnum`"
)]
pub trait StrDefault {
    /// The options a default must be one of, or `None` for free text.
    const OPTIONS: Option<&'static [FormOption]>;
}

/// The builder of one property, by kind.
#[derive(Debug, Clone)]
enum Kind {
    Text(TextSchema),
    Number(NumberSchema),
    Boolean(BooleanSchema),
    Select(SingleSelectSchema),
    MultiSelect(MultiSelectSchema),
}

/// One property under construction. The derive applies only the options that fit the
/// field's kind (checked while compiling); others leave it unchanged.
#[derive(Debug, Clone)]
pub struct Property {
    kind: Kind,
    required: bool,
}

fn titled(options: &[FormOption]) -> bool {
    options.iter().any(|o| o.title.is_some())
}

fn select_options(options: &[FormOption]) -> impl Iterator<Item = SelectOption> + '_ {
    options.iter().map(|o| match o.title {
        Some(title) => SelectOption::titled(o.value, title),
        None => SelectOption::new(o.value),
    })
}

impl Property {
    fn new(kind: Kind) -> Property {
        Property {
            kind,
            required: true,
        }
    }

    /// The base property of a field type.
    pub fn of<T: FormField + ?Sized>() -> Property {
        T::__property()
    }

    /// `{"type": "string"}`.
    pub fn text() -> Property {
        Property::new(Kind::Text(PropertySchema::text()))
    }

    /// `{"type": "integer"}` or `{"type": "number"}`.
    pub fn number(integer: bool) -> Property {
        Property::new(Kind::Number(if integer {
            PropertySchema::integer()
        } else {
            PropertySchema::number()
        }))
    }

    /// `{"type": "boolean"}`.
    pub fn boolean() -> Property {
        Property::new(Kind::Boolean(PropertySchema::boolean()))
    }

    /// A single select, titled when any option has a title.
    pub fn single_select(options: &[FormOption]) -> Property {
        Property::new(Kind::Select(if titled(options) {
            PropertySchema::titled_single_select(select_options(options))
        } else {
            PropertySchema::single_select(options.iter().map(|o| o.value))
        }))
    }

    /// A multi-select, titled when any option has a title.
    pub fn multi_select(options: &[FormOption]) -> Property {
        Property::new(Kind::MultiSelect(if titled(options) {
            PropertySchema::titled_multi_select(select_options(options))
        } else {
            PropertySchema::multi_select(options.iter().map(|o| o.value))
        }))
    }

    /// The same property, not required.
    pub fn optional(mut self) -> Property {
        self.required = false;
        self
    }

    /// Applies `f` to the builder of the property's kind.
    fn map(&mut self, f: impl FnOnce(Kind) -> Kind) {
        let placeholder = Kind::Boolean(PropertySchema::boolean());
        self.kind = f(std::mem::replace(&mut self.kind, placeholder));
    }

    /// Sets `title`.
    pub fn set_title(&mut self, title: &str) {
        self.map(|kind| match kind {
            Kind::Text(b) => Kind::Text(b.with_title(title)),
            Kind::Number(b) => Kind::Number(b.with_title(title)),
            Kind::Boolean(b) => Kind::Boolean(b.with_title(title)),
            Kind::Select(b) => Kind::Select(b.with_title(title)),
            Kind::MultiSelect(b) => Kind::MultiSelect(b.with_title(title)),
        });
    }

    /// Sets `description`.
    pub fn set_description(&mut self, description: &str) {
        self.map(|kind| match kind {
            Kind::Text(b) => Kind::Text(b.with_description(description)),
            Kind::Number(b) => Kind::Number(b.with_description(description)),
            Kind::Boolean(b) => Kind::Boolean(b.with_description(description)),
            Kind::Select(b) => Kind::Select(b.with_description(description)),
            Kind::MultiSelect(b) => Kind::MultiSelect(b.with_description(description)),
        });
    }

    /// Sets `default`: a string, number, boolean or array of strings, matching the
    /// property's kind.
    pub fn set_default(&mut self, default: Value) {
        self.map(|kind| match (kind, default) {
            (Kind::Text(b), Value::String(s)) => Kind::Text(b.with_default(s)),
            (Kind::Number(b), Value::Number(n)) => Kind::Number(b.with_default(n)),
            (Kind::Boolean(b), Value::Bool(v)) => Kind::Boolean(b.with_default(v)),
            (Kind::Select(b), Value::String(s)) => Kind::Select(b.with_default(s)),
            (Kind::MultiSelect(b), Value::Array(items)) => {
                Kind::MultiSelect(b.with_default(items.into_iter().filter_map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })))
            }
            (kind, _) => kind,
        });
    }

    /// Sets `minLength` of a text field.
    pub fn set_min_length(&mut self, n: u64) {
        self.map(|kind| match kind {
            Kind::Text(b) => Kind::Text(b.with_min_length(n)),
            other => other,
        });
    }

    /// Sets `maxLength` of a text field.
    pub fn set_max_length(&mut self, n: u64) {
        self.map(|kind| match kind {
            Kind::Text(b) => Kind::Text(b.with_max_length(n)),
            other => other,
        });
    }

    /// Sets `format` of a text field.
    pub fn set_format(&mut self, f: StringFormat) {
        self.map(|kind| match kind {
            Kind::Text(b) => Kind::Text(b.with_format(f)),
            other => other,
        });
    }

    /// Sets `minimum` of a number field.
    pub fn set_minimum(&mut self, n: Number) {
        self.map(|kind| match kind {
            Kind::Number(b) => Kind::Number(b.with_minimum(n)),
            other => other,
        });
    }

    /// Sets `maximum` of a number field.
    pub fn set_maximum(&mut self, n: Number) {
        self.map(|kind| match kind {
            Kind::Number(b) => Kind::Number(b.with_maximum(n)),
            other => other,
        });
    }

    /// Sets `minItems` of a multi-select field.
    pub fn set_min_items(&mut self, n: u64) {
        self.map(|kind| match kind {
            Kind::MultiSelect(b) => Kind::MultiSelect(b.with_min_items(n)),
            other => other,
        });
    }

    /// Sets `maxItems` of a multi-select field.
    pub fn set_max_items(&mut self, n: u64) {
        self.map(|kind| match kind {
            Kind::MultiSelect(b) => Kind::MultiSelect(b.with_max_items(n)),
            other => other,
        });
    }

    fn into_schema(self) -> PropertySchema {
        match self.kind {
            Kind::Text(b) => b.into(),
            Kind::Number(b) => b.into(),
            Kind::Boolean(b) => b.into(),
            Kind::Select(b) => b.into(),
            Kind::MultiSelect(b) => b.into(),
        }
    }
}

/// Collects the properties of a derived form.
#[derive(Debug, Default)]
pub struct SchemaBuilder {
    builder: FormSchemaBuilder,
}

impl SchemaBuilder {
    /// An empty form.
    pub fn new() -> SchemaBuilder {
        SchemaBuilder::default()
    }

    /// Adds a property; `optional` is set when serde fills the field in when it is missing.
    pub fn push(&mut self, name: &str, property: Property, optional: bool) {
        let required = property.required && !optional;
        let schema = property.into_schema();
        let builder = std::mem::take(&mut self.builder);
        self.builder = if required {
            builder.required(name, schema)
        } else {
            builder.property(name, schema)
        };
    }

    /// The finished schema.
    ///
    /// # Panics
    ///
    /// When the form is not in the spec's subset, which the derive's compile-time checks
    /// rule out: this names the property if one of them was missed.
    pub fn finish(self) -> FormSchema {
        match self.builder.build() {
            Ok(schema) => schema,
            Err(e) => panic!("#[derive(Form)] built a form outside the MCP subset: {e}"),
        }
    }
}

/// A JSON number from a finite float literal.
pub fn number_from_f64(value: f64) -> Number {
    Number::from_f64(value).unwrap_or_else(|| Number::from(0))
}

/// Compiles only for text fields.
pub const fn string_field<T: StringField + ?Sized>() {}

/// Compiles only for boolean fields.
pub const fn boolean_field<T: BooleanField + ?Sized>() {}

/// Compiles only for multi-select fields.
pub const fn multi_select_field<T: MultiSelectField + ?Sized>() {}

/// Checks a number option against a number field's type: 0 when it fits, 1 when it is
/// not a whole number for an integer field, 2 when it is out of the type's range.
pub const fn number_check<T: NumberField + ?Sized>(integral: bool, int: i128, float: f64) -> u8 {
    if T::__INTEGER {
        if !integral {
            return 1;
        }
        if int < T::__MIN || int > T::__MAX {
            return 2;
        }
    } else if float > T::__FLOAT_MAX || float < -T::__FLOAT_MAX {
        return 2;
    }
    0
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn is_option(options: &[FormOption], value: &str) -> bool {
    let mut i = 0;
    while i < options.len() {
        if str_eq(options[i].value, value) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether a multi-select field has at least `min_items` options.
pub const fn min_items_ok<T: MultiSelectField + ?Sized>(min_items: u64) -> bool {
    min_items <= T::__OPTIONS.len() as u64
}

/// Whether a string default fits the field: any text for a text field, one of the
/// options for a select.
pub const fn str_default_ok<T: StrDefault + ?Sized>(value: &str) -> bool {
    match T::OPTIONS {
        None => true,
        Some(options) => is_option(options, value),
    }
}

/// Checks a multi-select default: 0 when every value is an option, else the 1-based
/// index of the first one that is not.
pub const fn multi_default_check<T: MultiSelectField + ?Sized>(values: &[&str]) -> usize {
    let mut i = 0;
    while i < values.len() {
        if !is_option(T::__OPTIONS, values[i]) {
            return i + 1;
        }
        i += 1;
    }
    0
}

/// Finds why one field of a validated answer does not deserialize into its type.
pub fn probe<T: DeserializeOwned>(content: &Map<String, Value>, name: &str) -> Option<FormError> {
    let value = content.get(name)?;
    T::deserialize(value).err().map(|e| FormError::Deserialize {
        property: Some(name.to_owned()),
        message: e.to_string(),
    })
}
