//! Items the derive macros' generated code uses. Not public API: they may change in any
//! release.

use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};

use crate::model::{Choice, Kind, Prop, SelectStyle};
use crate::{
    BooleanField, FormError, FormField, FormOption, FormSchema, MultiSelectField, NumberField,
    StringField, StringFormat,
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

/// One property under construction.
#[derive(Debug, Clone)]
pub struct Property {
    prop: Prop,
}

fn choices(options: &[FormOption]) -> Vec<Choice> {
    options
        .iter()
        .map(|o| Choice {
            value: o.value.to_owned(),
            title: o.title.map(str::to_owned),
        })
        .collect()
}

impl Property {
    /// The base property of a field type.
    pub fn of<T: FormField + ?Sized>() -> Property {
        T::__property()
    }

    /// `{"type": "string"}`.
    pub fn text() -> Property {
        Property {
            prop: Prop::new(Kind::Text {
                min_length: None,
                max_length: None,
                format: None,
            }),
        }
    }

    /// `{"type": "integer"}` or `{"type": "number"}`.
    pub fn number(integer: bool) -> Property {
        Property {
            prop: Prop::new(Kind::Number {
                integer,
                minimum: None,
                maximum: None,
            }),
        }
    }

    /// `{"type": "boolean"}`.
    pub fn boolean() -> Property {
        Property {
            prop: Prop::new(Kind::Boolean),
        }
    }

    /// A single select, titled when any option has a title.
    pub fn single_select(options: &[FormOption]) -> Property {
        let titled = options.iter().any(|o| o.title.is_some());
        Property {
            prop: Prop::new(Kind::Select {
                options: choices(options),
                style: if titled {
                    SelectStyle::Titled
                } else {
                    SelectStyle::Untitled
                },
            }),
        }
    }

    /// A multi-select, titled when any option has a title.
    pub fn multi_select(options: &[FormOption]) -> Property {
        Property {
            prop: Prop::new(Kind::MultiSelect {
                options: choices(options),
                titled: options.iter().any(|o| o.title.is_some()),
                min_items: None,
                max_items: None,
            }),
        }
    }

    /// The same property, not required.
    pub fn optional(mut self) -> Property {
        self.prop.required = false;
        self
    }

    /// Sets `title`.
    pub fn set_title(&mut self, title: &str) {
        self.prop.title = Some(title.to_owned());
    }

    /// Sets `description`.
    pub fn set_description(&mut self, description: &str) {
        self.prop.description = Some(description.to_owned());
    }

    /// Sets `default`.
    pub fn set_default(&mut self, default: Value) {
        self.prop.default = Some(default);
    }

    /// Sets `minLength` of a text field.
    pub fn set_min_length(&mut self, n: u64) {
        if let Kind::Text { min_length, .. } = &mut self.prop.kind {
            *min_length = Some(n);
        }
    }

    /// Sets `maxLength` of a text field.
    pub fn set_max_length(&mut self, n: u64) {
        if let Kind::Text { max_length, .. } = &mut self.prop.kind {
            *max_length = Some(n);
        }
    }

    /// Sets `format` of a text field.
    pub fn set_format(&mut self, f: StringFormat) {
        if let Kind::Text { format, .. } = &mut self.prop.kind {
            *format = Some(f);
        }
    }

    /// Sets `minimum` of a number field.
    pub fn set_minimum(&mut self, n: Number) {
        if let Kind::Number { minimum, .. } = &mut self.prop.kind {
            *minimum = Some(n);
        }
    }

    /// Sets `maximum` of a number field.
    pub fn set_maximum(&mut self, n: Number) {
        if let Kind::Number { maximum, .. } = &mut self.prop.kind {
            *maximum = Some(n);
        }
    }

    /// Sets `minItems` of a multi-select field.
    pub fn set_min_items(&mut self, n: u64) {
        if let Kind::MultiSelect { min_items, .. } = &mut self.prop.kind {
            *min_items = Some(n);
        }
    }

    /// Sets `maxItems` of a multi-select field.
    pub fn set_max_items(&mut self, n: u64) {
        if let Kind::MultiSelect { max_items, .. } = &mut self.prop.kind {
            *max_items = Some(n);
        }
    }
}

/// Collects the properties of a derived form.
#[derive(Debug, Default)]
pub struct SchemaBuilder {
    props: Vec<(String, Prop)>,
}

impl SchemaBuilder {
    /// An empty form.
    pub fn new() -> SchemaBuilder {
        SchemaBuilder::default()
    }

    /// Adds a property; `optional` is set when serde fills the field in when it is missing.
    pub fn push(&mut self, name: &str, property: Property, optional: bool) {
        let mut prop = property.prop;
        if optional {
            prop.required = false;
        }
        self.props.push((name.to_owned(), prop));
    }

    /// The finished schema.
    pub fn finish(self) -> FormSchema {
        FormSchema::from_props(self.props)
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
