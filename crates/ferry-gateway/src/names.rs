//! Names as clients see them: with several upstreams, tools, prompts and resource
//! templates are prefixed with their upstream's name.
//!
//! tools.mdx ("Tool Names") allows ASCII letters, digits, `_`, `-` and `.` in tool
//! names, and suggests that proxies aggregating several servers prefix names with a
//! server identifier. Upstream names may not contain `.`, so the first `.` of a prefixed
//! name always ends the upstream's name: `files.delete` is `delete` on `files`, and
//! `files.admin.list` is `admin.list` on `files`.

use serde_json::Value;

/// Between an upstream's name and the name of one of its tools, prompts or templates.
pub const SEPARATOR: char = '.';

/// `upstream.name`.
pub fn join(upstream: &str, name: &str) -> String {
    let mut out = String::with_capacity(upstream.len() + 1 + name.len());
    out.push_str(upstream);
    out.push(SEPARATOR);
    out.push_str(name);
    out
}

/// The kinds of input an `InputRequiredResult` asks for: `elicitation/form`,
/// `elicitation/url`, `sampling`, `roots` (sorted, each once).
pub fn input_kinds(result: &Value) -> Vec<String> {
    let mut kinds: Vec<String> = result
        .get("inputRequests")
        .and_then(Value::as_object)
        .map(|requests| {
            requests
                .values()
                .map(|r| match r.get("method").and_then(Value::as_str) {
                    Some("elicitation/create") => {
                        match r.pointer("/params/mode").and_then(Value::as_str) {
                            Some("url") => "elicitation/url".to_owned(),
                            _ => "elicitation/form".to_owned(),
                        }
                    }
                    Some("sampling/createMessage") => "sampling".to_owned(),
                    Some("roots/list") => "roots".to_owned(),
                    Some(other) => other.to_owned(),
                    None => "unknown".to_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    kinds.sort();
    kinds.dedup();
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_of_input() {
        let r = json!({"resultType": "input_required", "inputRequests": {
            "a": {"method": "elicitation/create", "params": {"mode": "form"}},
            "b": {"method": "elicitation/create", "params": {"mode": "url"}},
            "c": {"method": "sampling/createMessage", "params": {}},
            "d": {"method": "elicitation/create", "params": {}},
        }});
        assert_eq!(
            input_kinds(&r),
            ["elicitation/form", "elicitation/url", "sampling"]
        );
        assert_eq!(join("files", "admin.list"), "files.admin.list");
    }
}
