//! `--answers`: answering the server's questions without a terminal.
//!
//! The answers are one JSON object. Its entries are matched to a question by the
//! question's key (the key of the `inputRequests` entry):
//!
//! - a form: `{"confirm": {"confirm": true}}` (the content; fields left out take their
//!   defaults) or a whole `ElicitResult`, `{"confirm": {"action": "decline"}}`;
//! - a URL: `{"connect-1": {"action": "accept"}}` or `{"connect-1": "decline"}`;
//! - sampling (deprecated): `{"key": "the reply text"}`, a `CreateMessageResult`, or
//!   `false` to refuse;
//! - roots (deprecated): `{"key": ["file:///work"]}` (URIs or `Root` objects), or
//!   `false` to refuse.
//!
//! Entries that are not objects also fill form fields by name: `{"confirm": true}` fills
//! any form field named `confirm`, whatever the question's key.

use std::collections::BTreeMap;

use ferry_client::ferry_protocol::elicitation::{ElicitAction, ElicitResult, ElicitValue};
use ferry_client::ferry_protocol::roots::Root;
use ferry_client::ferry_protocol::sampling::CreateMessageResult;
use ferry_client::{FormRequest, UrlRequest};
use serde_json::{Map, Value};

use crate::arguments::{UsageError, json_kind};
use crate::form::Validator;

/// The form's fields with their types, for messages: `confirm (boolean), note (string)`.
fn field_list(request: &FormRequest) -> String {
    let fields: Vec<String> = request
        .fields()
        .map(|f| format!("{} ({})", f.name, f.schema.type_name()))
        .collect();
    if fields.is_empty() {
        "none".to_owned()
    } else {
        fields.join(", ")
    }
}

/// The candidate closest to `given`, when it is close enough to be a likely typo.
pub fn closest<'a>(given: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .filter(|c| *c != given)
        .map(|c| (strsim::jaro_winkler(given, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// What `--answers` says about one form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// A complete answer, checked against the form.
    Ready(ElicitResult),
    /// An answer that does not fit the form: why, and the values to start from.
    Unfit {
        /// What is wrong.
        problem: String,
        /// The values given (with the form's defaults), to pre-fill a terminal form.
        values: BTreeMap<String, ElicitValue>,
    },
    /// Nothing in the answers is meant for this form.
    Nothing,
}

/// The parsed `--answers` object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answers {
    entries: Map<String, Value>,
}

impl Answers {
    /// Reads the answers from JSON (an object).
    pub fn from_value(value: Value) -> Result<Answers, UsageError> {
        match value {
            Value::Object(entries) => Ok(Answers { entries }),
            other => Err(UsageError::new(format!(
                "--answers must be a JSON object keyed by question key or field name, not {}",
                json_kind(&other)
            ))),
        }
    }

    /// The entry for a question's key.
    fn keyed(&self, key: Option<&str>) -> Option<&Value> {
        key.and_then(|k| self.entries.get(k))
    }

    /// Answers a form.
    pub fn form(&self, request: &FormRequest) -> FormAnswer {
        let defaults = request.defaults();
        let validator = Validator::new(&request.schema);
        let finish = |values: BTreeMap<String, ElicitValue>| match validator.all(&values) {
            Ok(()) => FormAnswer::Ready(ElicitResult::accept(values)),
            Err(problem) => FormAnswer::Unfit { problem, values },
        };
        let key = request.context.key.as_deref();
        if let Some(Value::Object(entry)) = self.keyed(key) {
            let key = key.unwrap_or_default();
            if entry.contains_key("action") {
                let result: ElicitResult =
                    match serde_json::from_value(Value::Object(entry.clone())) {
                        Ok(r) => r,
                        Err(e) => {
                            return FormAnswer::Unfit {
                                problem: format!(
                                    "the answer for {key:?} is not an ElicitResult: {e}"
                                ),
                                values: defaults,
                            };
                        }
                    };
                return match (result.action, result.content) {
                    (ElicitAction::Accept, Some(content)) => {
                        let mut values = defaults;
                        values.extend(content);
                        finish(values)
                    }
                    (ElicitAction::Accept, None) => finish(defaults),
                    (action, _) => FormAnswer::Ready(ElicitResult {
                        action,
                        content: None,
                    }),
                };
            }
            let mut values = defaults;
            for (name, v) in entry {
                if !request.fields().any(|f| f.name == name.as_str()) {
                    return FormAnswer::Unfit {
                        problem: format!(
                            "the answer for {key:?} names a field {name:?} the form does not have ({}){}",
                            field_list(request),
                            closest(name, request.fields().map(|f| f.name))
                                .map(|c| format!("; did you mean {c:?}?"))
                                .unwrap_or_default()
                        ),
                        values,
                    };
                }
                match to_elicit_value(v) {
                    Ok(Some(v)) => {
                        values.insert(name.clone(), v);
                    }
                    Ok(None) => {
                        values.remove(name);
                    }
                    Err(why) => {
                        return FormAnswer::Unfit {
                            problem: format!("the answer for {key:?}, field {name}: {why}"),
                            values,
                        };
                    }
                }
            }
            return finish(values);
        }
        // Field names, for entries that are not objects.
        let mut values = defaults;
        let mut matched = false;
        for field in request.fields() {
            let Some(v) = self.entries.get(field.name).filter(|v| !v.is_object()) else {
                continue;
            };
            matched = true;
            match to_elicit_value(v) {
                Ok(Some(v)) => {
                    values.insert(field.name.to_owned(), v);
                }
                Ok(None) => {
                    values.remove(field.name);
                }
                Err(why) => {
                    return FormAnswer::Unfit {
                        problem: format!("the answer for field {}: {why}", field.name),
                        values,
                    };
                }
            }
        }
        if matched {
            finish(values)
        } else {
            FormAnswer::Nothing
        }
    }

    /// Why nothing in the answers fits `request`: its key and fields, and the entry that
    /// comes closest to one of them.
    pub fn missing(&self, request: &FormRequest) -> String {
        let key = request.context.key.as_deref().unwrap_or("(none)");
        let wanted: Vec<&str> = request
            .context
            .key
            .as_deref()
            .into_iter()
            .chain(request.fields().map(|f| f.name))
            .collect();
        let suggestion = self
            .entries
            .keys()
            .filter_map(|given| closest(given, wanted.iter().copied()).map(|c| (given.as_str(), c)))
            .next()
            .map(|(given, c)| format!("; {given:?} is not one of them: did you mean {c:?}?"))
            .unwrap_or_default();
        format!(
            "--answers has no entry for this form: its key is {key:?} and its fields are {}{suggestion}",
            field_list(request)
        )
    }

    /// Answers a URL request: `Err` when the entry is unusable.
    pub fn url(&self, request: &UrlRequest) -> Option<Result<ElicitResult, String>> {
        let key = request.context.key.as_deref()?;
        let entry = self.keyed(Some(key))?;
        Some(match entry {
            Value::String(s) => action(s).map(|action| ElicitResult {
                action,
                content: None,
            }),
            Value::Object(o) => match o.get("action").and_then(Value::as_str) {
                Some(s) => action(s).map(|action| ElicitResult {
                    action,
                    content: None,
                }),
                None => Err(format!("the answer for {key:?} needs an \"action\"")),
            },
            other => Err(format!(
                "the answer for {key:?} should be \"accept\", \"decline\" or \"cancel\", not {}",
                json_kind(other)
            )),
        })
    }

    /// Answers a sampling request: `Some(Ok(None))` refuses.
    pub fn sampling(
        &self,
        key: Option<&str>,
    ) -> Option<Result<Option<CreateMessageResult>, String>> {
        let entry = self.keyed(key)?;
        Some(match entry {
            Value::String(text) => Ok(Some(typed_reply(text))),
            Value::Bool(false) | Value::Null => Ok(None),
            Value::Object(_) => serde_json::from_value(entry.clone())
                .map(Some)
                .map_err(|e| format!("not a CreateMessageResult: {e}")),
            other => Err(format!(
                "a sampling answer is a reply text, a CreateMessageResult or false, not {}",
                json_kind(other)
            )),
        })
    }

    /// Answers a roots request: `Some(Ok(None))` refuses.
    pub fn roots(&self, key: Option<&str>) -> Option<Result<Option<Vec<Root>>, String>> {
        let entry = self.keyed(key)?;
        let list = match entry {
            Value::Bool(false) | Value::Null => return Some(Ok(None)),
            Value::Array(items) => items,
            Value::Object(o) => match o.get("roots") {
                Some(Value::Array(items)) => items,
                _ => return Some(Err("a roots answer needs a \"roots\" list".into())),
            },
            other => {
                return Some(Err(format!(
                    "a roots answer is a list of file:// URIs or false, not {}",
                    json_kind(other)
                )));
            }
        };
        let mut roots = Vec::new();
        for item in list {
            match item {
                Value::String(uri) => roots.push(Root::new(uri.clone())),
                Value::Object(_) => match serde_json::from_value::<Root>(item.clone()) {
                    Ok(r) => roots.push(r),
                    Err(e) => return Some(Err(format!("not a root: {e}"))),
                },
                other => {
                    return Some(Err(format!(
                        "a root is a URI or an object, not {}",
                        json_kind(other)
                    )));
                }
            }
        }
        Some(Ok(Some(roots)))
    }
}

/// The reply to a sampling request that a person typed.
pub fn typed_reply(text: &str) -> CreateMessageResult {
    CreateMessageResult::text("human (typed in ferry)", text)
}

fn action(s: &str) -> Result<ElicitAction, String> {
    match s {
        "accept" => Ok(ElicitAction::Accept),
        "decline" => Ok(ElicitAction::Decline),
        "cancel" => Ok(ElicitAction::Cancel),
        other => Err(format!("{other:?} is not accept, decline or cancel")),
    }
}

/// A JSON answer as a form value; `null` means "no answer".
fn to_elicit_value(v: &Value) -> Result<Option<ElicitValue>, String> {
    Ok(Some(match v {
        Value::Null => return Ok(None),
        Value::String(s) => ElicitValue::String(s.clone()),
        Value::Number(n) => ElicitValue::Number(n.clone()),
        Value::Bool(b) => ElicitValue::Bool(*b),
        Value::Array(items) => ElicitValue::StringArray(
            items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or("a list answer holds strings only")?,
        ),
        Value::Object(_) => return Err("a field's answer cannot be an object".into()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_client::{AskContext, AskingServer};
    use serde_json::json;

    fn answers(v: Value) -> Answers {
        Answers::from_value(v).unwrap()
    }

    fn context(key: Option<&str>) -> AskContext {
        AskContext {
            server: AskingServer {
                name: "s".into(),
                title: None,
                version: None,
            },
            origin: None,
            key: key.map(str::to_owned),
        }
    }

    fn confirm_form(key: Option<&str>) -> FormRequest {
        FormRequest {
            context: context(key),
            message: "Delete?".into(),
            schema: serde_json::from_value(json!({
                "type": "object",
                "properties": {"confirm": {"type": "boolean", "title": "Confirm"}},
                "required": ["confirm"]
            }))
            .unwrap(),
        }
    }

    fn image_form(key: &str) -> FormRequest {
        FormRequest {
            context: context(Some(key)),
            message: "Which ratio?".into(),
            schema: serde_json::from_value(json!({
                "type": "object",
                "properties": {
                    "aspect_ratio": {"type": "string", "oneOf": [
                        {"const": "16:9", "title": "Landscape"}, {"const": "1:1", "title": "Square"}]},
                    "note": {"type": "string", "default": "none"}
                },
                "required": ["aspect_ratio"]
            }))
            .unwrap(),
        }
    }

    fn ready(a: FormAnswer) -> Value {
        match a {
            FormAnswer::Ready(r) => serde_json::to_value(r).unwrap(),
            other => panic!("not ready: {other:?}"),
        }
    }

    #[test]
    fn keyed_content() {
        let a = answers(json!({"confirm": {"confirm": true}}));
        assert_eq!(
            ready(a.form(&confirm_form(Some("confirm")))),
            json!({"action": "accept", "content": {"confirm": true}})
        );
    }

    #[test]
    fn keyed_elicit_results() {
        let a = answers(json!({"confirm": {"action": "decline"}}));
        assert_eq!(
            ready(a.form(&confirm_form(Some("confirm")))),
            json!({"action": "decline"})
        );
        let a = answers(json!({"confirm": {"action": "cancel", "content": {"x": 1}}}));
        assert_eq!(
            ready(a.form(&confirm_form(Some("confirm")))),
            json!({"action": "cancel"})
        );
        let a = answers(json!({"confirm": {"action": "accept", "content": {"confirm": false}}}));
        assert_eq!(
            ready(a.form(&confirm_form(Some("confirm")))),
            json!({"action": "accept", "content": {"confirm": false}})
        );
        let a = answers(json!({"confirm": {"action": "maybe"}}));
        assert!(matches!(
            a.form(&confirm_form(Some("confirm"))),
            FormAnswer::Unfit { .. }
        ));
    }

    #[test]
    fn flattened_field_names() {
        let a = answers(json!({"confirm": true}));
        assert_eq!(
            ready(a.form(&confirm_form(Some("other-key")))),
            json!({"action": "accept", "content": {"confirm": true}})
        );
        assert_eq!(
            ready(a.form(&confirm_form(None))),
            json!({"action": "accept", "content": {"confirm": true}}),
            "legacy server requests have no key"
        );
        let a = answers(json!({"aspect_ratio": "1:1", "go_ahead": true}));
        assert_eq!(
            ready(a.form(&image_form("aspect_ratio"))),
            json!({"action": "accept", "content": {"aspect_ratio": "1:1", "note": "none"}}),
            "defaults fill the fields not given"
        );
    }

    #[test]
    fn unfit_answers_say_why() {
        let a = answers(json!({"confirm": "yes"}));
        let FormAnswer::Unfit { problem, .. } = a.form(&confirm_form(Some("confirm"))) else {
            panic!("a string is no boolean")
        };
        assert!(problem.contains("confirm"), "{problem}");
        let a = answers(json!({"aspect_ratio": "4:3"}));
        assert!(matches!(a.form(&image_form("k")), FormAnswer::Unfit { .. }));
        let a = answers(json!({"k": {"note": "x"}}));
        let FormAnswer::Unfit { problem, values } = a.form(&image_form("k")) else {
            panic!("the required field is missing")
        };
        assert!(problem.contains("aspect_ratio"), "{problem}");
        assert_eq!(values.get("note"), Some(&ElicitValue::from("x")));
        let a = answers(json!({"k": {"aspect_ratio": {"nested": 1}}}));
        assert!(matches!(a.form(&image_form("k")), FormAnswer::Unfit { .. }));
        let a = answers(json!({"k": {"aspect_ratio": "1:1", "unknown": 1}}));
        assert!(matches!(a.form(&image_form("k")), FormAnswer::Unfit { .. }));
    }

    #[test]
    fn nothing_for_unrelated_forms() {
        let a = answers(json!({"something": true, "confirm": {"nested": "object is keyed"}}));
        assert_eq!(a.form(&confirm_form(Some("other"))), FormAnswer::Nothing);
        assert_eq!(
            Answers::default().form(&confirm_form(Some("confirm"))),
            FormAnswer::Nothing
        );
    }

    #[test]
    fn urls() {
        let url = |key: &str| UrlRequest {
            context: context(Some(key)),
            message: "m".into(),
            url: "https://e.com".into(),
            elicitation_id: None,
        };
        let a = answers(
            json!({"c1": "decline", "c2": {"action": "accept"}, "c3": 5, "c4": {"action": "no"}}),
        );
        assert_eq!(a.url(&url("c1")), Some(Ok(ElicitResult::decline())));
        assert_eq!(
            a.url(&url("c2")),
            Some(Ok(ElicitResult::accept_without_content()))
        );
        assert!(matches!(a.url(&url("c3")), Some(Err(_))));
        assert!(matches!(a.url(&url("c4")), Some(Err(_))));
        assert_eq!(a.url(&url("c5")), None);
    }

    #[test]
    fn sampling_and_roots() {
        let a = answers(json!({
            "q": "Paris",
            "no": false,
            "full": {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"},
            "r": ["file:///work", {"uri": "file:///tmp", "name": "tmp"}],
            "r2": {"roots": []},
            "bad": 3
        }));
        let reply = a.sampling(Some("q")).unwrap().unwrap().unwrap();
        assert_eq!(reply.content.text(), "Paris");
        assert_eq!(a.sampling(Some("no")), Some(Ok(None)));
        assert_eq!(
            a.sampling(Some("full")).unwrap().unwrap().unwrap().model,
            "m"
        );
        assert!(a.sampling(Some("bad")).unwrap().is_err());
        assert_eq!(a.sampling(Some("missing")), None);
        assert_eq!(a.sampling(None), None);
        let roots = a.roots(Some("r")).unwrap().unwrap().unwrap();
        assert_eq!(roots.len(), 2);
        assert_eq!(roots[1].name.as_deref(), Some("tmp"));
        assert_eq!(a.roots(Some("r2")), Some(Ok(Some(vec![]))));
        assert_eq!(a.roots(Some("no")), Some(Ok(None)));
        assert!(a.roots(Some("bad")).unwrap().is_err());
    }

    #[test]
    fn must_be_an_object() {
        assert!(Answers::from_value(json!([1])).is_err());
        assert!(Answers::from_value(json!({})).is_ok());
    }
}
