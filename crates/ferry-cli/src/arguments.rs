//! Tool and prompt arguments from the command line: `KEY=VALUE`, `KEY:=JSON` and
//! `--args JSON`.
//!
//! A `KEY=VALUE` value is JSON when the tool's input schema gives the property a
//! non-string type (number, integer, boolean, array, object, or null), and a string
//! otherwise. `KEY:=JSON` is always JSON.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A command-line problem with the arguments (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    /// A usage error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}

/// One `KEY=VALUE` or `KEY:=JSON` pair, split but not yet typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair<'a> {
    /// The key.
    pub key: &'a str,
    /// The text after `=` or `:=`.
    pub value: &'a str,
    /// Whether it was `KEY:=JSON`.
    pub json: bool,
}

/// Splits `KEY=VALUE` (at the first `=`) or `KEY:=JSON`.
pub fn split_pair(text: &str) -> Result<Pair<'_>, UsageError> {
    let Some((key, value)) = text.split_once('=') else {
        return Err(UsageError::new(format!(
            "argument {text:?} is not KEY=VALUE (or KEY:=JSON)"
        )));
    };
    let (key, json) = match key.strip_suffix(':') {
        Some(k) => (k, true),
        None => (key, false),
    };
    if key.is_empty() {
        return Err(UsageError::new(format!(
            "argument {text:?} has no name before the ="
        )));
    }
    Ok(Pair { key, value, json })
}

/// Whether any pair needs the tool's input schema to be typed (plain `KEY=VALUE`).
pub fn needs_schema(pairs: &[String]) -> bool {
    pairs
        .iter()
        .any(|p| split_pair(p).is_ok_and(|pair| !pair.json))
}

/// The JSON types the schema allows for `key` (empty when unknown).
fn property_types(schema: Option<&Value>, key: &str) -> Vec<String> {
    let Some(property) = schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(key))
    else {
        return Vec::new();
    };
    let mut types = Vec::new();
    collect_types(property, &mut types);
    types
}

fn collect_types(schema: &Value, out: &mut Vec<String>) {
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => {
            out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {
            if schema
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty() && e.iter().all(|v| !v.is_string()))
            {
                out.push("json".into());
            }
            for k in ["anyOf", "oneOf"] {
                for s in schema
                    .get(k)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    collect_types(s, out);
                }
            }
        }
    }
}

/// Types one `KEY=VALUE` pair with the schema: JSON unless the property may be a string
/// (or its type is unknown).
fn typed_value(pair: &Pair<'_>, schema: Option<&Value>) -> Result<Value, UsageError> {
    let parse_json = |why: &str| {
        serde_json::from_str::<Value>(pair.value).map_err(|e| {
            UsageError::new(format!(
                "argument {key}: {why}, but {value:?} is not valid JSON ({e}); quote strings as KEY:='\"text\"' if needed",
                key = pair.key,
                value = pair.value,
            ))
        })
    };
    if pair.json {
        return parse_json("KEY:=VALUE takes JSON");
    }
    let types = property_types(schema, pair.key);
    if types.is_empty() || types.iter().any(|t| t == "string") {
        return Ok(Value::String(pair.value.to_owned()));
    }
    let value = parse_json(&format!(
        "the tool's schema says it is {}",
        types.join(" or ")
    ))?;
    let fits = types.iter().any(|t| match t.as_str() {
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    });
    if !fits {
        return Err(UsageError::new(format!(
            "argument {}: the tool's schema says it is {}, not {}",
            pair.key,
            types.join(" or "),
            pair.value
        )));
    }
    Ok(value)
}

/// Builds a tool's arguments: `--args` JSON first (an object), then each pair on top.
/// `schema` is the tool's `inputSchema`, when known.
pub fn tool_arguments(
    base: Option<Value>,
    pairs: &[String],
    schema: Option<&Value>,
) -> Result<Map<String, Value>, UsageError> {
    let mut out = match base {
        None => Map::new(),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(UsageError::new(format!(
                "--args must be a JSON object, not {}",
                json_kind(&other)
            )));
        }
    };
    let mut seen = Vec::new();
    for text in pairs {
        let pair = split_pair(text)?;
        if seen.contains(&pair.key) {
            return Err(UsageError::new(format!(
                "argument {} is given twice",
                pair.key
            )));
        }
        seen.push(pair.key);
        let value = typed_value(&pair, schema)?;
        out.insert(pair.key.to_owned(), value);
    }
    Ok(out)
}

/// Builds a prompt's arguments (strings only).
pub fn prompt_arguments(pairs: &[String]) -> Result<BTreeMap<String, String>, UsageError> {
    let mut out = BTreeMap::new();
    for text in pairs {
        let pair = split_pair(text)?;
        if pair.json {
            return Err(UsageError::new(format!(
                "argument {}: prompt arguments are strings, so KEY:=JSON does not apply; use KEY=VALUE",
                pair.key
            )));
        }
        if out
            .insert(pair.key.to_owned(), pair.value.to_owned())
            .is_some()
        {
            return Err(UsageError::new(format!(
                "argument {} is given twice",
                pair.key
            )));
        }
    }
    Ok(out)
}

/// Reads a JSON option: inline JSON, `@FILE`, or `@-` for stdin.
pub fn load_json(option: &str, text: &str) -> Result<Value, UsageError> {
    let (source, body) = match text.strip_prefix('@') {
        Some("-") => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .map_err(|e| UsageError::new(format!("{option}: cannot read stdin: {e}")))?;
            ("stdin".to_owned(), s)
        }
        Some(path) => {
            let s = std::fs::read_to_string(path)
                .map_err(|e| UsageError::new(format!("{option}: cannot read {path}: {e}")))?;
            (path.to_owned(), s)
        }
        None => ("the command line".to_owned(), text.to_owned()),
    };
    serde_json::from_str(&body)
        .map_err(|e| UsageError::new(format!("{option}: invalid JSON from {source}: {e}")))
}

/// "an array", "a string", ...: for messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "force": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "options": {"type": "object"},
                "maybe": {"type": ["integer", "null"]},
                "either": {"type": ["string", "number"]},
                "level": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
            }
        })
    }

    fn args(pairs: &[&str]) -> Result<Value, UsageError> {
        let pairs: Vec<String> = pairs.iter().map(|s| s.to_string()).collect();
        tool_arguments(None, &pairs, Some(&schema())).map(Value::Object)
    }

    #[test]
    fn splits_at_the_first_equals_sign() {
        assert_eq!(
            split_pair("q=a=b").unwrap(),
            Pair {
                key: "q",
                value: "a=b",
                json: false
            }
        );
        assert_eq!(
            split_pair("n:=[1]").unwrap(),
            Pair {
                key: "n",
                value: "[1]",
                json: true
            }
        );
        assert_eq!(split_pair("empty=").unwrap().value, "");
        assert!(split_pair("novalue").is_err());
        assert!(split_pair("=x").is_err());
        assert!(split_pair(":=1").is_err());
    }

    #[test]
    fn values_follow_the_schema() {
        assert_eq!(
            args(&[
                "text=42",
                "count=42",
                "ratio=0.5",
                "force=true",
                "tags=[\"a\"]",
                "options={\"k\":1}"
            ])
            .unwrap(),
            json!({"text": "42", "count": 42, "ratio": 0.5, "force": true, "tags": ["a"], "options": {"k": 1}})
        );
        assert_eq!(args(&["maybe=null"]).unwrap(), json!({"maybe": null}));
        assert_eq!(args(&["maybe=3"]).unwrap(), json!({"maybe": 3}));
        assert_eq!(args(&["level=7"]).unwrap(), json!({"level": 7}));
        assert_eq!(args(&["either=3"]).unwrap(), json!({"either": "3"}));
        assert_eq!(args(&["unknown=true"]).unwrap(), json!({"unknown": "true"}));
    }

    #[test]
    fn colon_equals_forces_json() {
        assert_eq!(args(&["text:=\"x\""]).unwrap(), json!({"text": "x"}));
        assert_eq!(args(&["unknown:=true"]).unwrap(), json!({"unknown": true}));
        assert_eq!(
            args(&["unknown:={\"a\":[1,2]}"]).unwrap(),
            json!({"unknown": {"a": [1, 2]}})
        );
        let err = args(&["text:=bare"]).unwrap_err();
        assert!(err.0.contains("not valid JSON"), "{err}");
    }

    #[test]
    fn typed_values_are_checked() {
        let err = args(&["count=many"]).unwrap_err();
        assert!(
            err.0.contains("count") && err.0.contains("integer"),
            "{err}"
        );
        let err = args(&["count=1.5"]).unwrap_err();
        assert!(err.0.contains("integer"), "{err}");
        let err = args(&["force=yes"]).unwrap_err();
        assert!(err.0.contains("boolean"), "{err}");
        let err = args(&["tags=\"a\""]).unwrap_err();
        assert!(err.0.contains("array"), "{err}");
    }

    #[test]
    fn without_a_schema_values_are_strings() {
        let pairs = vec!["n=1".to_owned(), "b=true".to_owned()];
        let m = tool_arguments(None, &pairs, None).unwrap();
        assert_eq!(Value::Object(m), json!({"n": "1", "b": "true"}));
    }

    #[test]
    fn pairs_add_to_args_json() {
        let pairs = vec!["count=2".to_owned()];
        let m = tool_arguments(
            Some(json!({"text": "t", "count": 1})),
            &pairs,
            Some(&schema()),
        )
        .unwrap();
        assert_eq!(Value::Object(m), json!({"text": "t", "count": 2}));
        let err = tool_arguments(Some(json!([1])), &[], None).unwrap_err();
        assert!(err.0.contains("--args must be a JSON object"), "{err}");
    }

    #[test]
    fn duplicates_are_refused() {
        let err = args(&["text=a", "text=b"]).unwrap_err();
        assert!(err.0.contains("twice"), "{err}");
    }

    #[test]
    fn prompt_arguments_are_strings() {
        let pairs = vec!["code=fn main() {}".to_owned(), "n=1".to_owned()];
        let m = prompt_arguments(&pairs).unwrap();
        assert_eq!(m["code"], "fn main() {}");
        assert_eq!(m["n"], "1");
        assert!(prompt_arguments(&["x:=1".to_owned()]).is_err());
        assert!(prompt_arguments(&["x".to_owned()]).is_err());
    }

    #[test]
    fn needs_schema_only_for_plain_pairs() {
        assert!(needs_schema(&["a=1".to_owned()]));
        assert!(!needs_schema(&["a:=1".to_owned()]));
        assert!(!needs_schema(&[]));
    }

    #[test]
    fn load_json_reads_inline_and_files() {
        assert_eq!(load_json("--args", "{\"a\":1}").unwrap(), json!({"a": 1}));
        let err = load_json("--args", "{oops").unwrap_err();
        assert!(err.0.starts_with("--args: invalid JSON"), "{err}");
        let err = load_json("--answers", "@/nonexistent/answers.json").unwrap_err();
        assert!(
            err.0.contains("cannot read /nonexistent/answers.json"),
            "{err}"
        );
        let dir = std::env::temp_dir().join(format!("ferry-cli-args-{}", std::process::id()));
        std::fs::write(&dir, "{\"b\": true}").unwrap();
        let v = load_json("--answers", &format!("@{}", dir.display())).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(v, json!({"b": true}));
    }
}
