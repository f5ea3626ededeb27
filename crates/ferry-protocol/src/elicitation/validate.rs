//! Checking a form answer (`ElicitResult.content`) against a [`FormSchema`].

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::property::{compare, integer_number, is_integral, json_type};
use super::{ElicitValue, FormError, FormSchema, PropertyKind, PropertySchema};

/// Checks one answer against one property.
fn check_value(name: &str, prop: &PropertySchema, value: &Value) -> Result<(), FormError> {
    let property = || name.to_owned();
    let wrong_type = |expected: &'static str| FormError::WrongType {
        property: property(),
        expected,
        found: json_type(value),
    };
    match &prop.kind {
        PropertyKind::Text {
            min_length,
            max_length,
            format,
        } => {
            let Value::String(s) = value else {
                return Err(wrong_type("a string"));
            };
            let length = s.chars().count() as u64;
            if let Some(min) = *min_length
                && length < min
            {
                return Err(FormError::TooShort {
                    property: property(),
                    min,
                    length,
                });
            }
            if let Some(max) = *max_length
                && length > max
            {
                return Err(FormError::TooLong {
                    property: property(),
                    max,
                    length,
                });
            }
            if let Some(format) = *format
                && !format.matches(s)
            {
                return Err(FormError::InvalidFormat {
                    property: property(),
                    format,
                });
            }
        }
        PropertyKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let Value::Number(n) = value else {
                return Err(wrong_type(if *integer { "an integer" } else { "a number" }));
            };
            if *integer && !is_integral(n) {
                return Err(FormError::NotAnInteger {
                    property: property(),
                    value: n.clone(),
                });
            }
            if let Some(minimum) = minimum
                && compare(n, minimum).is_lt()
            {
                return Err(FormError::BelowMinimum {
                    property: property(),
                    minimum: minimum.clone(),
                    value: n.clone(),
                });
            }
            if let Some(maximum) = maximum
                && compare(n, maximum).is_gt()
            {
                return Err(FormError::AboveMaximum {
                    property: property(),
                    maximum: maximum.clone(),
                    value: n.clone(),
                });
            }
        }
        PropertyKind::Boolean => {
            if !value.is_boolean() {
                return Err(wrong_type("a boolean"));
            }
        }
        PropertyKind::SingleSelect { options, .. } => {
            let Value::String(s) = value else {
                return Err(wrong_type("a string"));
            };
            if !options.iter().any(|o| &o.value == s) {
                return Err(FormError::NotAnOption {
                    property: property(),
                    value: s.clone(),
                });
            }
        }
        PropertyKind::MultiSelect {
            options,
            min_items,
            max_items,
            ..
        } => {
            let Value::Array(items) = value else {
                return Err(wrong_type("an array of strings"));
            };
            let mut seen = HashSet::new();
            for item in items {
                let Value::String(s) = item else {
                    return Err(FormError::WrongType {
                        property: property(),
                        expected: "an array of strings",
                        found: "an array holding something else",
                    });
                };
                if !options.iter().any(|o| &o.value == s) {
                    return Err(FormError::NotAnOption {
                        property: property(),
                        value: s.clone(),
                    });
                }
                if !seen.insert(s.as_str()) {
                    return Err(FormError::DuplicateItem {
                        property: property(),
                        value: s.clone(),
                    });
                }
            }
            let count = items.len() as u64;
            if let Some(min) = *min_items
                && count < min
            {
                return Err(FormError::TooFewItems {
                    property: property(),
                    min,
                    count,
                });
            }
            if let Some(max) = *max_items
                && count > max
            {
                return Err(FormError::TooManyItems {
                    property: property(),
                    max,
                    count,
                });
            }
        }
    }
    Ok(())
}

impl FormSchema {
    /// Checks a form answer (`ElicitResult.content`) against the schema, and returns the
    /// first problem in form order.
    ///
    /// Checked: every required property is present; each answer has the property's JSON
    /// type; text lengths (in Unicode scalar values) are within `minLength`/`maxLength`;
    /// text matches the property's `format` (syntactically, see
    /// [`StringFormat`](super::StringFormat)); numbers are within `minimum`/`maximum` and
    /// are whole numbers for `"integer"` properties (`3.0` counts as whole); select
    /// answers are among the options; multi-select answers have between `minItems` and
    /// `maxItems` items, each an option, none twice.
    ///
    /// Keys the schema does not list are ignored, as in JSON Schema. A `null` answer
    /// counts as no answer: refused for a required property, accepted for an optional one.
    ///
    /// ```
    /// use ferry_protocol::elicitation::{FormError, FormSchema};
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object",
    ///     "properties": {"age": {"type": "integer", "minimum": 18}},
    ///     "required": ["age"]
    /// }))
    /// .unwrap();
    /// let answer = json!({"age": 17});
    /// assert!(matches!(
    ///     schema.validate_content(answer.as_object().unwrap()),
    ///     Err(FormError::BelowMinimum { property, .. }) if property == "age"
    /// ));
    /// assert!(schema.validate_content(json!({"age": 30}).as_object().unwrap()).is_ok());
    /// ```
    pub fn validate_content(&self, content: &Map<String, Value>) -> Result<(), FormError> {
        match self.content_errors(content).into_iter().next() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Every problem of a form answer, one per property at most, in form order; empty
    /// when the answer is valid. See [`FormSchema::validate_content`] for what is checked.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object",
    ///     "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}},
    ///     "required": ["a", "b"]
    /// }))
    /// .unwrap();
    /// let errors = schema.content_errors(json!({"b": "yes"}).as_object().unwrap());
    /// let names: Vec<_> = errors.iter().filter_map(|e| e.property()).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// ```
    pub fn content_errors(&self, content: &Map<String, Value>) -> Vec<FormError> {
        let mut errors = Vec::new();
        for prop in self.props() {
            match content.get(&prop.name) {
                None | Some(Value::Null) => {
                    if prop.required {
                        errors.push(FormError::Missing {
                            property: prop.name.clone(),
                        });
                    }
                }
                Some(value) => {
                    if let Err(error) = check_value(&prop.name, &prop.schema, value) {
                        errors.push(error);
                    }
                }
            }
        }
        errors
    }

    /// Checks a form answer as the client holds it (`ElicitResult.content`): the checks
    /// of [`FormSchema::validate_content`], and also no key the form does not list
    /// ([`FormError::UnknownProperty`]): a client sends back only the form's fields.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use ferry_protocol::elicitation::{ElicitValue, FormError, FormSchema};
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]
    /// }))
    /// .unwrap();
    /// let mut answer = BTreeMap::from([("ok".to_owned(), ElicitValue::from(true))]);
    /// assert!(schema.check(&answer).is_ok());
    /// answer.insert("extra".into(), ElicitValue::from("x"));
    /// assert!(matches!(schema.check(&answer), Err(FormError::UnknownProperty { .. })));
    /// ```
    pub fn check(&self, content: &BTreeMap<String, ElicitValue>) -> Result<(), FormError> {
        if let Some(name) = content
            .keys()
            .find(|name| !self.props().iter().any(|p| p.name == **name))
        {
            return Err(FormError::UnknownProperty {
                property: name.clone(),
            });
        }
        let content: Map<String, Value> = content
            .iter()
            .map(|(name, value)| (name.clone(), value.to_value()))
            .collect();
        self.validate_content(&content)
    }

    /// The answer as a deserializer should read it: only the schema's properties, no
    /// `null`s, and whole numbers of `"integer"` properties written as integers (`3.0`
    /// becomes `3`), so that they deserialize into integer fields. Meant for an answer
    /// [`FormSchema::validate_content`] accepted.
    ///
    /// ```
    /// use ferry_protocol::elicitation::FormSchema;
    /// use serde_json::json;
    ///
    /// let schema = FormSchema::from_value(json!({
    ///     "type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}
    /// }))
    /// .unwrap();
    /// let answer = json!({"n": 3.0, "s": null, "other": 1});
    /// assert_eq!(
    ///     serde_json::Value::Object(schema.normalize_content(answer.as_object().unwrap())),
    ///     json!({"n": 3})
    /// );
    /// ```
    pub fn normalize_content(&self, content: &Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::new();
        for prop in self.props() {
            let Some(value) = content.get(&prop.name) else {
                continue;
            };
            let value = match (value, &prop.schema.kind) {
                (Value::Null, _) => continue,
                (Value::Number(n), PropertyKind::Number { integer: true, .. }) => {
                    Value::Number(integer_number(n).unwrap_or_else(|| n.clone()))
                }
                (other, _) => other.clone(),
            };
            out.insert(prop.name.clone(), value);
        }
        out
    }
}
