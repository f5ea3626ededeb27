//! Answers to a server's input requests: from `--answers`, or by accepting (every boolean
//! true, defaults filled, the first choice of each list).
//!
//! An `--answers` entry is matched to a request by the request's key: an object with
//! `action` is a whole result (`{"confirm": {"action": "decline"}}`), another object is a
//! form's content (`{"confirm": {"confirm": true}}`). An entry that is not an object fills
//! every form field of that name, whatever the request's key (`{"confirm": true}`).

use serde_json::{Map, Value, json};

/// The answers the audit gives.
#[derive(Debug, Clone, Default)]
pub(crate) struct AnswerBook {
    entries: Map<String, Value>,
}

impl AnswerBook {
    pub(crate) fn new(entries: Map<String, Value>) -> Self {
        AnswerBook { entries }
    }

    /// Answers every request of an `inputRequests` map.
    pub(crate) fn answer_all(
        &self,
        requests: &Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        for (key, request) in requests {
            out.insert(key.clone(), self.answer(key, request)?);
        }
        Ok(out)
    }

    fn answer(&self, key: &str, request: &Value) -> Result<Value, String> {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let keyed = self.entries.get(key);
        match method {
            "elicitation/create" => {
                let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
                if let Some(Value::Object(entry)) = keyed
                    && entry.contains_key("action")
                {
                    return Ok(Value::Object(entry.clone()));
                }
                if mode == "url" {
                    return Ok(json!({"action": "accept"}));
                }
                let schema = params.get("requestedSchema").cloned().unwrap_or(json!({}));
                let given = match keyed {
                    Some(Value::Object(entry)) => Some(entry),
                    _ => None,
                };
                Ok(json!({"action": "accept", "content": self.fill(&schema, given)}))
            }
            "sampling/createMessage" => Ok(match keyed {
                Some(Value::Object(entry)) => Value::Object(entry.clone()),
                Some(Value::String(text)) => sampled(text),
                _ => sampled("ferry audit"),
            }),
            "roots/list" => Ok(match keyed {
                Some(Value::Object(entry)) => Value::Object(entry.clone()),
                Some(Value::Array(uris)) => json!({"roots": uris.iter().map(|u| match u {
                    Value::String(s) => json!({"uri": s}),
                    other => other.clone(),
                }).collect::<Vec<_>>()}),
                _ => json!({"roots": []}),
            }),
            other => Err(format!(
                "input request {key:?} has method {:?}, which the audit cannot answer",
                crate::rpc::short(other)
            )),
        }
    }

    /// A form's content: given values, then field-name answers, then the schema's
    /// defaults, then an accepting value for each field.
    fn fill(&self, schema: &Value, given: Option<&Map<String, Value>>) -> Value {
        let mut content = Map::new();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return Value::Object(given.cloned().unwrap_or_default());
        };
        for (name, prop) in props {
            let value = given
                .and_then(|g| g.get(name))
                .cloned()
                .or_else(|| self.entries.get(name).filter(|v| !v.is_object()).cloned())
                .unwrap_or_else(|| accepting_value(prop));
            content.insert(name.clone(), value);
        }
        if let Some(g) = given {
            for (k, v) in g {
                content.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        Value::Object(content)
    }
}

fn sampled(text: &str) -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "ferry-audit",
        "stopReason": "endTurn",
    })
}

/// The value a user who accepts would give a field.
pub(crate) fn accepting_value(prop: &Value) -> Value {
    if let Some(d) = prop.get("default") {
        return d.clone();
    }
    if let Some(first) = first_choice(prop) {
        return first;
    }
    match prop.get("type").and_then(Value::as_str) {
        Some("boolean") => Value::Bool(true),
        Some("integer") | Some("number") => number(prop),
        Some("array") => {
            let item = prop
                .get("items")
                .and_then(first_choice)
                .unwrap_or_else(|| json!("ferry-audit"));
            json!([item])
        }
        _ => string(prop),
    }
}

fn first_choice(prop: &Value) -> Option<Value> {
    if let Some(e) = prop.get("enum").and_then(Value::as_array) {
        return e.first().cloned();
    }
    for k in ["oneOf", "anyOf"] {
        if let Some(alts) = prop.get(k).and_then(Value::as_array)
            && let Some(c) = alts.iter().find_map(|a| a.get("const"))
        {
            return Some(c.clone());
        }
    }
    None
}

fn number(prop: &Value) -> Value {
    let min = prop.get("minimum").and_then(Value::as_f64);
    let max = prop.get("maximum").and_then(Value::as_f64);
    let mut v = min.unwrap_or(0.0);
    if let Some(max) = max {
        v = v.min(max);
    }
    if prop.get("type").and_then(Value::as_str) == Some("integer") {
        json!(v.ceil() as i64)
    } else {
        json!(v)
    }
}

fn string(prop: &Value) -> Value {
    let mut s = match prop.get("format").and_then(Value::as_str) {
        Some("email") => "audit@example.com".to_owned(),
        Some("uri") => "https://example.com/".to_owned(),
        Some("date") => "2026-01-01".to_owned(),
        Some("date-time") => "2026-01-01T00:00:00Z".to_owned(),
        _ => "ferry-audit".to_owned(),
    };
    if let Some(min) = prop.get("minLength").and_then(Value::as_u64) {
        while (s.chars().count() as u64) < min {
            s.push('x');
        }
    }
    if let Some(max) = prop.get("maxLength").and_then(Value::as_u64) {
        s = s.chars().take(max as usize).collect();
    }
    Value::String(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confirm() -> Map<String, Value> {
        let v = json!({"confirm": {"method": "elicitation/create", "params": {"mode": "form", "message": "Sure?",
            "requestedSchema": {"type": "object", "properties": {
                "confirm": {"type": "boolean"},
                "reason": {"type": "string", "minLength": 12},
                "size": {"type": "string", "enum": ["s", "m"]},
                "count": {"type": "integer", "minimum": 2},
                "colour": {"type": "string", "default": "red"}
            }, "required": ["confirm"]}}}});
        v.as_object().unwrap().clone()
    }

    #[test]
    fn accepting_fills_every_field() {
        let a = AnswerBook::default().answer_all(&confirm()).unwrap();
        assert_eq!(
            a["confirm"],
            json!({"action": "accept", "content": {"confirm": true, "reason": "ferry-auditx",
                "size": "s", "count": 2, "colour": "red"}})
        );
    }

    #[test]
    fn answers_by_key_and_by_field_name() {
        let book = AnswerBook::new(json!({"confirm": false}).as_object().unwrap().clone());
        let a = book.answer_all(&confirm()).unwrap();
        assert_eq!(a["confirm"]["content"]["confirm"], false);
        let book = AnswerBook::new(
            json!({"confirm": {"action": "decline"}})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(
            book.answer_all(&confirm()).unwrap()["confirm"],
            json!({"action": "decline"})
        );
        let book = AnswerBook::new(
            json!({"confirm": {"size": "m"}})
                .as_object()
                .unwrap()
                .clone(),
        );
        let a = book.answer_all(&confirm()).unwrap();
        assert_eq!(a["confirm"]["content"]["size"], "m");
        assert_eq!(a["confirm"]["content"]["confirm"], true);
    }

    #[test]
    fn sampling_roots_and_unknown_requests() {
        let req = json!({
            "s": {"method": "sampling/createMessage", "params": {}},
            "r": {"method": "roots/list"},
        });
        let a = AnswerBook::default()
            .answer_all(req.as_object().unwrap())
            .unwrap();
        assert_eq!(a["s"]["role"], "assistant");
        assert_eq!(a["r"], json!({"roots": []}));
        let bad = json!({"x": {"method": "tools/call"}});
        assert!(
            AnswerBook::default()
                .answer_all(bad.as_object().unwrap())
                .is_err()
        );
    }
}
