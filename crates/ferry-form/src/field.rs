//! The field traits and their implementations for the allowed Rust types.

use crate::__private::{Property, Sealed, StrDefault};

/// A Rust type that can be one field of an MCP elicitation form.
///
/// Implemented for exactly the types that map onto the spec's primitive schema
/// definitions:
///
/// | Rust type | property schema |
/// | --- | --- |
/// | `String` | `{"type": "string"}` |
/// | `bool` | `{"type": "boolean"}` |
/// | `i8` … `i128`, `isize`, `u8` … `u128`, `usize` | `{"type": "integer"}` (no bounds unless given) |
/// | `f32`, `f64` | `{"type": "number"}` |
/// | an enum deriving [`FormEnum`](derive@crate::FormEnum) | a single select |
/// | `Vec<E>` where `E` derives `FormEnum` | a multi-select |
/// | `Option<T>` of any of the above | the same, not required |
///
/// The trait is sealed: other types, such as nested structs, maps, tuples, `Vec<String>`
/// or `Vec` of a struct, cannot be form fields, and `#[derive(Form)]` refuses them at
/// compile time, naming the field.
///
/// ```
/// fn is_form_field<T: ferry_form::FormField>() {}
///
/// is_form_field::<String>();
/// is_form_field::<Option<u16>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an MCP elicitation form",
    label = "not a form field type",
    note = "MCP elicitation forms are flat: a field must be `String`, `bool`, an integer type, \
            `f32`, `f64`, an enum deriving `FormEnum` (single select), `Vec<E>` where `E` \
            derives `FormEnum` (multi-select), or `Option` of one of these",
    note = "nested structs, maps, tuples, and lists of text, numbers or structs are not allowed"
)]
pub trait FormField: Sealed {
    /// The property schema of this type, before the field's own options are applied.
    #[doc(hidden)]
    fn __property() -> Property;
}

/// A text field (`String` or `Option<String>`): the kind `min_length`, `max_length` and
/// `format` apply to.
///
/// ```
/// fn is_text<T: ferry_form::StringField>() {}
///
/// is_text::<String>();
/// is_text::<Option<String>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a text field, so `min_length`, `max_length` and `format` do not apply to it",
    label = "this option needs a `String` or `Option<String>` field"
)]
pub trait StringField: FormField {}

/// A number field (an integer type, `f32`, `f64`, or `Option` of one): the kind `minimum`,
/// `maximum` and a number `default` apply to.
///
/// ```
/// fn is_number<T: ferry_form::NumberField>() {}
///
/// is_number::<u8>();
/// is_number::<Option<f64>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number field, so `minimum`, `maximum` and a number `default` do not apply to it",
    label = "this option needs an integer, `f32` or `f64` field (or `Option` of one)"
)]
pub trait NumberField: FormField {
    /// Whether the schema type is `"integer"`.
    #[doc(hidden)]
    const __INTEGER: bool;
    /// The smallest value of an integer type, clamped to `i128`.
    #[doc(hidden)]
    const __MIN: i128;
    /// The largest value of an integer type, clamped to `i128`.
    #[doc(hidden)]
    const __MAX: i128;
    /// The largest finite value of a float type.
    #[doc(hidden)]
    const __FLOAT_MAX: f64;
}

/// A boolean field (`bool` or `Option<bool>`): the kind `default = true | false` applies to.
///
/// ```
/// fn is_boolean<T: ferry_form::BooleanField>() {}
///
/// is_boolean::<bool>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a boolean field, so `default = true` or `default = false` does not apply to it",
    label = "this option needs a `bool` or `Option<bool>` field"
)]
pub trait BooleanField: FormField {}

/// A multi-select field (`Vec<E>` or `Option<Vec<E>>` where `E` derives
/// [`FormEnum`](derive@crate::FormEnum)): the kind `min_items`, `max_items` and an array
/// `default` apply to.
///
/// ```
/// use ferry_form::FormEnum;
///
/// #[derive(FormEnum, serde::Deserialize)]
/// enum Topping {
///     Cheese,
///     Olives,
/// }
///
/// fn is_multi<T: ferry_form::MultiSelectField>() {}
/// is_multi::<Vec<Topping>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a multi-select field, so `min_items`, `max_items` and an array `default` do not apply to it",
    label = "this option needs a `Vec<E>` field where `E` derives `FormEnum`"
)]
pub trait MultiSelectField: FormField {
    /// The options of the item enum.
    #[doc(hidden)]
    const __OPTIONS: &'static [FormOption];
}

/// One option of a select field: the value sent back in the answer and an optional
/// display title.
///
/// ```
/// use ferry_form::FormOption;
///
/// const RED: FormOption = FormOption::new("#FF0000", Some("Red"));
/// assert_eq!(RED.value, "#FF0000");
/// assert_eq!(RED.title, Some("Red"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FormOption {
    /// The value: the name serde deserializes the variant from.
    pub value: &'static str,
    /// The display title from `#[form(title = "...")]`, if any.
    pub title: Option<&'static str>,
}

impl FormOption {
    /// An option with this value and title.
    ///
    /// ```
    /// let option = ferry_form::FormOption::new("small", None);
    /// assert_eq!(option.title, None);
    /// ```
    pub const fn new(value: &'static str, title: Option<&'static str>) -> FormOption {
        FormOption { value, title }
    }
}

/// A unit-only enum whose variants are the options of a select field. Implement it with
/// [`#[derive(FormEnum)]`](derive@crate::FormEnum); the trait is sealed.
///
/// The enum itself is a single-select field and `Vec` of it a multi-select field.
///
/// ```
/// use ferry_form::{FormEnum, FormOption};
///
/// #[derive(FormEnum, serde::Deserialize)]
/// #[serde(rename_all = "snake_case")]
/// enum Plan {
///     #[form(title = "Free tier")]
///     Free,
///     ProMonthly,
/// }
///
/// assert_eq!(
///     Plan::OPTIONS,
///     [
///         FormOption::new("free", Some("Free tier")),
///         FormOption::new("pro_monthly", None),
///     ]
/// );
/// assert_eq!(Plan::ProMonthly.form_value(), "pro_monthly");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an enum deriving `FormEnum`, so it cannot be the item type of a multi-select form field",
    label = "not a `FormEnum`",
    note = "a `Vec<E>` form field is a multi-select: `E` must be a unit-only enum with \
            `#[derive(FormEnum)]`; lists of free text, numbers or structs are not allowed \
            in MCP elicitation forms"
)]
pub trait FormEnum: FormField + 'static {
    /// The options, in declaration order, without variants serde skips.
    const OPTIONS: &'static [FormOption];

    /// The value of this variant: the name serde deserializes it from.
    fn form_value(&self) -> &'static str;
}

impl Sealed for String {}
impl FormField for String {
    fn __property() -> Property {
        Property::text()
    }
}
impl StringField for String {}
impl StrDefault for String {
    const OPTIONS: Option<&'static [FormOption]> = None;
}

impl Sealed for bool {}
impl FormField for bool {
    fn __property() -> Property {
        Property::boolean()
    }
}
impl BooleanField for bool {}

macro_rules! integer_fields {
    ($($ty:ty),*) => {
        $(
            impl Sealed for $ty {}
            impl FormField for $ty {
                fn __property() -> Property {
                    Property::number(true)
                }
            }
            impl NumberField for $ty {
                const __INTEGER: bool = true;
                #[allow(clippy::unnecessary_cast, clippy::cast_possible_wrap)]
                const __MIN: i128 = <$ty>::MIN as i128;
                #[allow(clippy::unnecessary_cast, clippy::cast_possible_wrap)]
                const __MAX: i128 = if (<$ty>::MAX as u128) > (i128::MAX as u128) {
                    i128::MAX
                } else {
                    <$ty>::MAX as i128
                };
                const __FLOAT_MAX: f64 = f64::MAX;
            }
        )*
    };
}

integer_fields!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

macro_rules! float_fields {
    ($($ty:ty),*) => {
        $(
            impl Sealed for $ty {}
            impl FormField for $ty {
                fn __property() -> Property {
                    Property::number(false)
                }
            }
            impl NumberField for $ty {
                const __INTEGER: bool = false;
                const __MIN: i128 = i128::MIN;
                const __MAX: i128 = i128::MAX;
                const __FLOAT_MAX: f64 = <$ty>::MAX as f64;
            }
        )*
    };
}

float_fields!(f32, f64);

impl<T> Sealed for Option<T> {}
impl<T: FormField> FormField for Option<T> {
    fn __property() -> Property {
        T::__property().optional()
    }
}
impl<T: StringField> StringField for Option<T> {}
impl<T: BooleanField> BooleanField for Option<T> {}
impl<T: NumberField> NumberField for Option<T> {
    const __INTEGER: bool = T::__INTEGER;
    const __MIN: i128 = T::__MIN;
    const __MAX: i128 = T::__MAX;
    const __FLOAT_MAX: f64 = T::__FLOAT_MAX;
}
impl<T: MultiSelectField> MultiSelectField for Option<T> {
    const __OPTIONS: &'static [FormOption] = T::__OPTIONS;
}
impl<T: StrDefault> StrDefault for Option<T> {
    const OPTIONS: Option<&'static [FormOption]> = T::OPTIONS;
}

impl<E> Sealed for Vec<E> {}
impl<E: FormEnum> FormField for Vec<E> {
    fn __property() -> Property {
        Property::multi_select(E::OPTIONS)
    }
}
impl<E: FormEnum> MultiSelectField for Vec<E> {
    const __OPTIONS: &'static [FormOption] = E::OPTIONS;
}
