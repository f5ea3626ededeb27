//! [`FormError`].

use serde_json::Number;

use super::StringFormat;

/// Why a form schema or a form answer was refused.
///
/// Every variant about one property names it; [`FormError::property`] returns that name.
/// Messages name properties and limits but never repeat free-text answers, which may hold
/// personal data.
///
/// ```
/// use ferry_protocol::elicitation::{FormError, FormSchema};
/// use serde_json::json;
///
/// let err = FormSchema::from_value(json!({
///     "type": "object",
///     "properties": {"address": {"type": "object"}}
/// }))
/// .unwrap_err();
/// assert_eq!(err.property(), Some("address"));
/// assert!(matches!(err, FormError::InvalidProperty { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FormError {
    /// The schema as a whole is not in the elicitation subset (not an object, wrong
    /// `type`, unknown keywords, bad `required`).
    #[error("invalid form schema: {reason}")]
    InvalidSchema {
        /// What is wrong.
        reason: String,
    },
    /// A property's schema is not one of the spec's primitive schema definitions.
    #[error("invalid form schema: property `{property}`: {reason}")]
    InvalidProperty {
        /// The property.
        property: String,
        /// What is wrong.
        reason: String,
    },
    /// An answer names a property the form does not have (only
    /// [`FormSchema::check`](super::FormSchema::check) refuses these; JSON Schema, and so
    /// [`FormSchema::validate_content`](super::FormSchema::validate_content), ignores them).
    #[error("property `{property}` is not in the form")]
    UnknownProperty {
        /// The property.
        property: String,
    },
    /// A required property has no answer (absent or `null`).
    #[error("property `{property}` is required")]
    Missing {
        /// The property.
        property: String,
    },
    /// The answer has the wrong JSON type.
    #[error("property `{property}`: expected {expected}, found {found}")]
    WrongType {
        /// The property.
        property: String,
        /// The JSON type the schema asks for, such as `"a string"`.
        expected: &'static str,
        /// The JSON type of the answer.
        found: &'static str,
    },
    /// A text answer has fewer characters than `minLength`.
    #[error("property `{property}`: {length} characters is shorter than the minimum of {min}")]
    TooShort {
        /// The property.
        property: String,
        /// `minLength`.
        min: u64,
        /// The answer's length in characters (Unicode scalar values).
        length: u64,
    },
    /// A text answer has more characters than `maxLength`.
    #[error("property `{property}`: {length} characters is longer than the maximum of {max}")]
    TooLong {
        /// The property.
        property: String,
        /// `maxLength`.
        max: u64,
        /// The answer's length in characters (Unicode scalar values).
        length: u64,
    },
    /// A text answer does not match the property's `format`.
    #[error("property `{property}`: not a valid {format}")]
    InvalidFormat {
        /// The property.
        property: String,
        /// The format it should match.
        format: StringFormat,
    },
    /// An `"integer"` property's answer has a fractional part.
    #[error("property `{property}`: {value} is not a whole number")]
    NotAnInteger {
        /// The property.
        property: String,
        /// The answer.
        value: Number,
    },
    /// A number answer is below `minimum`.
    #[error("property `{property}`: {value} is less than the minimum of {minimum}")]
    BelowMinimum {
        /// The property.
        property: String,
        /// `minimum`.
        minimum: Number,
        /// The answer.
        value: Number,
    },
    /// A number answer is above `maximum`.
    #[error("property `{property}`: {value} is greater than the maximum of {maximum}")]
    AboveMaximum {
        /// The property.
        property: String,
        /// `maximum`.
        maximum: Number,
        /// The answer.
        value: Number,
    },
    /// A select answer (or one item of a multi-select answer) is not one of the options.
    #[error("property `{property}`: {value:?} is not one of the options")]
    NotAnOption {
        /// The property.
        property: String,
        /// The value given.
        value: String,
    },
    /// A multi-select answer has fewer items than `minItems`.
    #[error("property `{property}`: {count} selected, at least {min} required")]
    TooFewItems {
        /// The property.
        property: String,
        /// `minItems`.
        min: u64,
        /// How many were selected.
        count: u64,
    },
    /// A multi-select answer has more items than `maxItems`.
    #[error("property `{property}`: {count} selected, at most {max} allowed")]
    TooManyItems {
        /// The property.
        property: String,
        /// `maxItems`.
        max: u64,
        /// How many were selected.
        count: u64,
    },
    /// A multi-select answer selects the same option twice.
    #[error("property `{property}`: {value:?} is selected more than once")]
    DuplicateItem {
        /// The property.
        property: String,
        /// The repeated option.
        value: String,
    },
    /// The answer matched the schema but could not be deserialized into the Rust type, for
    /// example a number too large for a `u8` field.
    #[error("{}", deserialize_message(.property.as_deref(), .message))]
    Deserialize {
        /// The property, when it could be found.
        property: Option<String>,
        /// serde's message.
        message: String,
    },
}

fn deserialize_message(property: Option<&str>, message: &str) -> String {
    match property {
        Some(property) => format!("property `{property}`: {message}"),
        None => format!("the answer does not fit the form's type: {message}"),
    }
}

impl FormError {
    /// The property this error is about, if it is about one.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormError;
    ///
    /// let err = FormError::Missing { property: "name".into() };
    /// assert_eq!(err.property(), Some("name"));
    /// assert_eq!(err.to_string(), "property `name` is required");
    /// ```
    pub fn property(&self) -> Option<&str> {
        match self {
            FormError::InvalidSchema { .. } => None,
            FormError::Deserialize { property, .. } => property.as_deref(),
            FormError::InvalidProperty { property, .. }
            | FormError::Missing { property }
            | FormError::UnknownProperty { property }
            | FormError::WrongType { property, .. }
            | FormError::TooShort { property, .. }
            | FormError::TooLong { property, .. }
            | FormError::InvalidFormat { property, .. }
            | FormError::NotAnInteger { property, .. }
            | FormError::BelowMinimum { property, .. }
            | FormError::AboveMaximum { property, .. }
            | FormError::NotAnOption { property, .. }
            | FormError::TooFewItems { property, .. }
            | FormError::TooManyItems { property, .. }
            | FormError::DuplicateItem { property, .. } => Some(property),
        }
    }

    /// Whether this error is about the schema rather than about an answer.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormError;
    ///
    /// assert!(FormError::InvalidSchema { reason: "x".into() }.is_schema_error());
    /// assert!(!FormError::Missing { property: "x".into() }.is_schema_error());
    /// ```
    pub fn is_schema_error(&self) -> bool {
        matches!(
            self,
            FormError::InvalidSchema { .. } | FormError::InvalidProperty { .. }
        )
    }
}
