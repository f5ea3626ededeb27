//! Building forms in code: [`FormSchemaBuilder`] and one builder per kind of property.
//!
//! Each property builder offers only the options of its kind, so `minLength` cannot land
//! on a number; [`FormSchemaBuilder::build`] checks what types cannot (bounds in order,
//! options present and distinct, defaults among the options).

use serde_json::{Number, Value};

use super::property::{PropertyKind, PropertySchema, SelectOption, SelectStyle};
use super::schema::Prop;
use super::{FormError, FormSchema, StringFormat};

/// Collects the properties of a form made in code; [`FormSchema::builder`] starts one.
///
/// A property added under a name already used replaces it, keeping its place.
///
/// ```
/// use ferry_protocol::elicitation::{FormError, FormSchema, PropertySchema, SelectOption};
///
/// let form = FormSchema::builder()
///     .required("size", PropertySchema::titled_single_select([
///         SelectOption::titled("s", "Small"),
///         SelectOption::titled("l", "Large"),
///     ]).with_default("l"))
///     .property("tags", PropertySchema::multi_select(["a", "b"]).with_max_items(1))
///     .build()
///     .unwrap();
/// assert_eq!(form.len(), 2);
///
/// let err = FormSchema::builder()
///     .property("size", PropertySchema::single_select(["s"]).with_default("xl"))
///     .build()
///     .unwrap_err();
/// assert!(matches!(err, FormError::InvalidProperty { ref property, .. } if property == "size"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct FormSchemaBuilder {
    dialect: Option<String>,
    props: Vec<Prop>,
}

impl FormSchemaBuilder {
    fn add(mut self, name: String, required: bool, schema: PropertySchema) -> Self {
        let prop = Prop {
            name,
            required,
            schema,
        };
        match self.props.iter_mut().find(|p| p.name == prop.name) {
            Some(slot) => *slot = prop,
            None => self.props.push(prop),
        }
        self
    }

    /// Adds an optional property.
    pub fn property(self, name: impl Into<String>, schema: impl Into<PropertySchema>) -> Self {
        self.add(name.into(), false, schema.into())
    }

    /// Adds a required property.
    pub fn required(self, name: impl Into<String>, schema: impl Into<PropertySchema>) -> Self {
        self.add(name.into(), true, schema.into())
    }

    /// Sets `$schema`, the JSON Schema dialect (2020-12 when absent).
    pub fn dialect(mut self, uri: impl Into<String>) -> Self {
        self.dialect = Some(uri.into());
        self
    }

    /// The form, or the first property that is not in the subset: a lower bound above its
    /// upper bound, a select without options or with one listed twice, `minItems` above
    /// the number of options, or a default outside the options.
    pub fn build(self) -> Result<FormSchema, FormError> {
        for prop in &self.props {
            prop.schema
                .check()
                .map_err(|reason| FormError::InvalidProperty {
                    property: prop.name.clone(),
                    reason,
                })?;
        }
        Ok(FormSchema::from_props(self.dialect, self.props))
    }
}

/// Adds `with_title` and `with_description`, and the conversion into a
/// [`PropertySchema`].
macro_rules! property_builder {
    ($ty:ident) => {
        impl $ty {
            /// Sets the label (`title`).
            pub fn with_title(mut self, title: impl Into<String>) -> Self {
                self.0.title = Some(title.into());
                self
            }

            /// Sets the help text (`description`).
            pub fn with_description(mut self, description: impl Into<String>) -> Self {
                self.0.description = Some(description.into());
                self
            }
        }

        impl From<$ty> for PropertySchema {
            fn from(builder: $ty) -> PropertySchema {
                builder.0
            }
        }
    };
}

/// A text property under construction ([`PropertySchema::text`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TextSchema(PropertySchema);

/// A number or integer property under construction ([`PropertySchema::number`],
/// [`PropertySchema::integer`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NumberSchema(PropertySchema);

/// A checkbox under construction ([`PropertySchema::boolean`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BooleanSchema(PropertySchema);

/// A single select under construction ([`PropertySchema::single_select`],
/// [`PropertySchema::titled_single_select`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SingleSelectSchema(PropertySchema);

/// A multi-select under construction ([`PropertySchema::multi_select`],
/// [`PropertySchema::titled_multi_select`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MultiSelectSchema(PropertySchema);

property_builder!(TextSchema);
property_builder!(NumberSchema);
property_builder!(BooleanSchema);
property_builder!(SingleSelectSchema);
property_builder!(MultiSelectSchema);

impl TextSchema {
    /// Sets `minLength` (in Unicode scalar values).
    pub fn with_min_length(mut self, n: u64) -> Self {
        if let PropertyKind::Text { min_length, .. } = &mut self.0.kind {
            *min_length = Some(n);
        }
        self
    }

    /// Sets `maxLength` (in Unicode scalar values).
    pub fn with_max_length(mut self, n: u64) -> Self {
        if let PropertyKind::Text { max_length, .. } = &mut self.0.kind {
            *max_length = Some(n);
        }
        self
    }

    /// Sets `format`.
    pub fn with_format(mut self, f: StringFormat) -> Self {
        if let PropertyKind::Text { format, .. } = &mut self.0.kind {
            *format = Some(f);
        }
        self
    }

    /// Sets the pre-filled text.
    pub fn with_default(mut self, default: impl Into<String>) -> Self {
        self.0.default = Some(Value::String(default.into()));
        self
    }
}

impl NumberSchema {
    /// Sets `minimum`.
    pub fn with_minimum(mut self, n: impl Into<Number>) -> Self {
        if let PropertyKind::Number { minimum, .. } = &mut self.0.kind {
            *minimum = Some(n.into());
        }
        self
    }

    /// Sets `maximum`.
    pub fn with_maximum(mut self, n: impl Into<Number>) -> Self {
        if let PropertyKind::Number { maximum, .. } = &mut self.0.kind {
            *maximum = Some(n.into());
        }
        self
    }

    /// Sets the pre-filled number (a whole number for an integer property).
    pub fn with_default(mut self, default: impl Into<Number>) -> Self {
        self.0.default = Some(Value::Number(default.into()));
        self
    }
}

impl BooleanSchema {
    /// Sets the pre-filled state.
    pub fn with_default(mut self, default: bool) -> Self {
        self.0.default = Some(Value::Bool(default));
        self
    }
}

impl SingleSelectSchema {
    /// Sets the pre-selected value (one of the options).
    pub fn with_default(mut self, default: impl Into<String>) -> Self {
        self.0.default = Some(Value::String(default.into()));
        self
    }
}

impl MultiSelectSchema {
    /// Sets `minItems`.
    pub fn with_min_items(mut self, n: u64) -> Self {
        if let PropertyKind::MultiSelect { min_items, .. } = &mut self.0.kind {
            *min_items = Some(n);
        }
        self
    }

    /// Sets `maxItems`.
    pub fn with_max_items(mut self, n: u64) -> Self {
        if let PropertyKind::MultiSelect { max_items, .. } = &mut self.0.kind {
            *max_items = Some(n);
        }
        self
    }

    /// Sets the pre-selected values (each one of the options, none twice).
    pub fn with_default<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.0.default = Some(Value::Array(
            values
                .into_iter()
                .map(|v| Value::String(v.into()))
                .collect(),
        ));
        self
    }
}

fn untitled<I, S>(values: I) -> Vec<SelectOption>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    values.into_iter().map(SelectOption::new).collect()
}

fn titled(options: impl IntoIterator<Item = SelectOption>) -> Vec<SelectOption> {
    options
        .into_iter()
        .map(SelectOption::titled_by_value)
        .collect()
}

impl PropertySchema {
    /// A text field: `{"type": "string"}`.
    pub fn text() -> TextSchema {
        TextSchema(PropertySchema::of_kind(PropertyKind::Text {
            min_length: None,
            max_length: None,
            format: None,
        }))
    }

    fn numeric(integer: bool) -> NumberSchema {
        NumberSchema(PropertySchema::of_kind(PropertyKind::Number {
            integer,
            minimum: None,
            maximum: None,
        }))
    }

    /// A number field: `{"type": "number"}`.
    pub fn number() -> NumberSchema {
        PropertySchema::numeric(false)
    }

    /// An integer field: `{"type": "integer"}`.
    pub fn integer() -> NumberSchema {
        PropertySchema::numeric(true)
    }

    /// A checkbox: `{"type": "boolean"}`.
    pub fn boolean() -> BooleanSchema {
        BooleanSchema(PropertySchema::of_kind(PropertyKind::Boolean))
    }

    /// Pick one of `values`: `{"type": "string", "enum": [...]}`.
    pub fn single_select<I, S>(values: I) -> SingleSelectSchema
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        SingleSelectSchema(PropertySchema::of_kind(PropertyKind::SingleSelect {
            options: untitled(values),
            style: SelectStyle::Untitled,
        }))
    }

    /// Pick one of `options`, shown by their titles: `{"type": "string", "oneOf":
    /// [{"const", "title"}, ...]}`. An option without a title is titled by its value.
    pub fn titled_single_select(
        options: impl IntoIterator<Item = SelectOption>,
    ) -> SingleSelectSchema {
        SingleSelectSchema(PropertySchema::of_kind(PropertyKind::SingleSelect {
            options: titled(options),
            style: SelectStyle::Titled,
        }))
    }

    /// Pick any of `values`: `{"type": "array", "items": {"type": "string", "enum":
    /// [...]}}`.
    pub fn multi_select<I, S>(values: I) -> MultiSelectSchema
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        MultiSelectSchema(PropertySchema::of_kind(PropertyKind::MultiSelect {
            options: untitled(values),
            titled: false,
            min_items: None,
            max_items: None,
        }))
    }

    /// Pick any of `options`, shown by their titles: `{"type": "array", "items":
    /// {"anyOf": [{"const", "title"}, ...]}}`. An option without a title is titled by its
    /// value.
    pub fn titled_multi_select(
        options: impl IntoIterator<Item = SelectOption>,
    ) -> MultiSelectSchema {
        MultiSelectSchema(PropertySchema::of_kind(PropertyKind::MultiSelect {
            options: titled(options),
            titled: true,
            min_items: None,
            max_items: None,
        }))
    }
}
