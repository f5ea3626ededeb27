//! Elicitation forms in the terminal.
//!
//! The form names the asking server, asks each field in order with its default (or an
//! earlier answer) filled in, checks every answer against the schema and asks again when
//! it does not fit, then shows all answers for review with a final choice: send, edit an
//! answer, decline or cancel. Esc or Ctrl-C at any point cancels.

use std::collections::BTreeMap;

use console::style;
use ferry_client::FormRequest;
use ferry_client::ferry_protocol::elicitation::{
    ElicitResult, ElicitValue, FormProperty, FormSchema, PropertyKind, SelectOption, StringFormat,
};
use serde_json::{Map, Number};

use crate::term::{Cancelled, Prompter, sanitize};

/// Checks answers against the form's schema: kinds, lengths, formats, bounds, options and
/// item counts.
pub struct Validator<'a> {
    schema: &'a FormSchema,
}

impl<'a> Validator<'a> {
    /// A validator for `schema`.
    pub fn new(schema: &'a FormSchema) -> Self {
        Validator { schema }
    }

    /// Checks one field's answer (`None`: left empty).
    pub fn field(&self, name: &str, value: Option<&ElicitValue>) -> Result<(), String> {
        let Some(value) = value else {
            return if self.schema.is_required(name) {
                Err("an answer is required".into())
            } else {
                Ok(())
            };
        };
        if self.schema.property(name).is_none() {
            return Err(format!("the form has no field {name}"));
        }
        let mut content = Map::new();
        content.insert(name.to_owned(), value.to_value());
        match self
            .schema
            .content_errors(&content)
            .into_iter()
            .find(|e| e.property() == Some(name))
        {
            Some(e) => Err(strip_property(&e.to_string(), name)),
            None => Ok(()),
        }
    }

    /// Checks a whole answer, refusing fields the form does not have.
    pub fn all(&self, content: &BTreeMap<String, ElicitValue>) -> Result<(), String> {
        self.schema.check(content).map_err(|e| e.to_string())
    }
}

fn strip_property(message: &str, name: &str) -> String {
    message
        .strip_prefix(&format!("property `{name}`: "))
        .unwrap_or(message)
        .to_owned()
}

/// Where the form comes from, for its heading: "(tool `x`, question "key")".
pub fn origin_line(request_context: &ferry_client::AskContext) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(o) = &request_context.origin {
        let what = match o.method.as_str() {
            "tools/call" => format!("while calling tool {}", sanitize(&o.target, false)),
            "prompts/get" => format!("while getting prompt {}", sanitize(&o.target, false)),
            "resources/read" => format!("while reading {}", sanitize(&o.target, false)),
            other => format!("during {other} {}", sanitize(&o.target, false)),
        };
        parts.push(what);
    }
    if let Some(k) = &request_context.key {
        parts.push(format!("question \"{}\"", sanitize(k, false)));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Shows the form and returns the user's answer. `initial` pre-fills fields (the
/// schema's defaults, or answers given with `--answers`).
pub fn fill(
    p: &mut dyn Prompter,
    request: &FormRequest,
    initial: &BTreeMap<String, ElicitValue>,
) -> ElicitResult {
    let server = sanitize(request.context.server.display_name(), false);
    p.say("");
    p.say(&format!(
        "{} asks: {}",
        style(&server).for_stderr().bold().magenta(),
        style(sanitize(&request.message, true)).for_stderr().bold()
    ));
    if let Some(origin) = origin_line(&request.context) {
        p.say(
            &style(format!("  ({origin})"))
                .for_stderr()
                .dim()
                .to_string(),
        );
    }
    p.say(
        &style("  Fields marked * are required. Esc or Ctrl-C cancels.")
            .for_stderr()
            .dim()
            .to_string(),
    );
    match run(p, request, initial) {
        Ok(result) => {
            let note = match result.action {
                ferry_client::ferry_protocol::elicitation::ElicitAction::Accept => "Accepted.",
                ferry_client::ferry_protocol::elicitation::ElicitAction::Decline => "Declined.",
                ferry_client::ferry_protocol::elicitation::ElicitAction::Cancel => "Cancelled.",
            };
            p.say(&style(note).for_stderr().dim().to_string());
            result
        }
        Err(Cancelled) => {
            p.say(&style("Cancelled.").for_stderr().dim().to_string());
            ElicitResult::cancel()
        }
    }
}

fn run(
    p: &mut dyn Prompter,
    request: &FormRequest,
    initial: &BTreeMap<String, ElicitValue>,
) -> Result<ElicitResult, Cancelled> {
    let validator = Validator::new(&request.schema);
    let mut values: BTreeMap<String, ElicitValue> = BTreeMap::new();
    for field in request.fields() {
        let start = initial.get(field.name);
        if let Some(v) = ask_field(p, &validator, field, start)? {
            values.insert(field.name.to_owned(), v);
        }
    }
    loop {
        p.say("");
        p.say(&style("Your answers:").for_stderr().bold().to_string());
        if request.schema.is_empty() {
            p.say("  (this form has no fields)");
        }
        for field in request.fields() {
            let shown = values
                .get(field.name)
                .map(|v| show_value(field, v))
                .unwrap_or_else(|| "—".to_owned());
            p.say(&format!("  {}: {}", sanitize(field.label(), false), shown));
        }
        let choices: Vec<String> = ["Send", "Edit an answer", "Decline", "Cancel"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        match p.select("Send these answers?", &choices, 0)? {
            0 => match validator.all(&values) {
                Ok(()) => return Ok(ElicitResult::accept(values)),
                Err(why) => p.warn(&format!("{why}; edit the answer first")),
            },
            1 => {
                let fields: Vec<_> = request.fields().collect();
                if fields.is_empty() {
                    continue;
                }
                let mut items: Vec<String> =
                    fields.iter().map(|f| sanitize(f.label(), false)).collect();
                items.push("(back)".into());
                let i = p.select("Which answer?", &items, 0)?;
                if let Some(&f) = fields.get(i) {
                    let current = values.get(f.name).cloned();
                    match ask_field(p, &validator, f, current.as_ref())? {
                        Some(v) => values.insert(f.name.to_owned(), v),
                        None => values.remove(f.name),
                    };
                }
            }
            2 => return Ok(ElicitResult::decline()),
            _ => return Ok(ElicitResult::cancel()),
        }
    }
}

/// The label a field is asked with: its title, `*` when required, and hints on what fits.
fn prompt_label(field: FormProperty<'_>) -> String {
    let mut label = sanitize(field.label(), false);
    if field.required {
        label.push_str(" *");
    }
    let hint = hint(field);
    if !hint.is_empty() {
        label.push_str(&format!(" ({hint})"));
    }
    label
}

fn range(lo: Option<String>, hi: Option<String>, unit: &str) -> Option<String> {
    match (lo, hi) {
        (Some(l), Some(h)) if l == h => Some(format!("exactly {l}{unit}")),
        (Some(l), Some(h)) => Some(format!("{l} to {h}{unit}")),
        (Some(l), None) => Some(format!("at least {l}{unit}")),
        (None, Some(h)) => Some(format!("at most {h}{unit}")),
        (None, None) => None,
    }
}

/// A bound for a hint: `18` (also for `18.0`), `0.5`.
fn number_text(n: &Number) -> String {
    match n.as_f64() {
        _ if n.is_i64() || n.is_u64() => n.to_string(),
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        Some(f) => format!("{f}"),
        None => n.to_string(),
    }
}

/// What fits in a field, e.g. "email", "integer, 1 to 10", "pick 1 to 3".
pub fn hint(field: FormProperty<'_>) -> String {
    let count = |n: &Option<u64>| n.map(|n| n.to_string());
    let mut parts: Vec<String> = Vec::new();
    match field.kind() {
        PropertyKind::Text {
            min_length,
            max_length,
            format,
            ..
        } => {
            if let Some(f) = format {
                parts.push(
                    match f {
                        StringFormat::Email => "email",
                        StringFormat::Uri => "URI",
                        StringFormat::Date => "date, YYYY-MM-DD",
                        StringFormat::DateTime => "date-time, e.g. 2026-07-28T09:30:00Z",
                    }
                    .to_owned(),
                );
            }
            if let Some(r) = range(count(min_length), count(max_length), " characters") {
                parts.push(r);
            }
        }
        PropertyKind::Number {
            integer,
            minimum,
            maximum,
            ..
        } => {
            parts.push(if *integer { "whole number" } else { "number" }.into());
            if let Some(r) = range(
                minimum.as_ref().map(number_text),
                maximum.as_ref().map(number_text),
                "",
            ) {
                parts.push(r);
            }
        }
        PropertyKind::MultiSelect {
            min_items,
            max_items,
            ..
        } => {
            if let Some(r) = range(count(min_items), count(max_items), "") {
                parts.push(format!("pick {r}"));
            }
        }
        _ => {}
    }
    parts.join(", ")
}

/// Whether `word` appears in `text` on its own, not inside a longer word.
fn names(text: &str, word: &str) -> bool {
    !word.is_empty()
        && text.match_indices(word).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + word.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
}

/// How an option is shown: its label, and its value too when the label does not already
/// name it (`Large (l)`, but `Landscape (16:9)` for a label that names its value).
fn option_text(option: &SelectOption) -> (String, Option<String>) {
    let label = sanitize(option.label(), false);
    let value = option.value();
    if names(option.label(), value) {
        (label, None)
    } else {
        (label, Some(sanitize(value, false)))
    }
}

fn option_label(option: &SelectOption) -> String {
    match option_text(option) {
        (label, None) => label,
        (label, Some(value)) => format!("{label} ({})", style(value).for_stderr().dim()),
    }
}

/// How an answer is shown in the review.
pub fn show_value(field: FormProperty<'_>, value: &ElicitValue) -> String {
    let title_of = |v: &str| {
        field
            .schema
            .options()
            .and_then(|o| o.iter().find(|o| o.value() == v))
            .map(|o| match option_text(o) {
                (label, None) => label,
                (label, Some(value)) => format!("{label} ({value})"),
            })
            .unwrap_or_else(|| sanitize(v, false))
    };
    match value {
        ElicitValue::Bool(b) => if *b { "yes" } else { "no" }.into(),
        ElicitValue::Number(n) => n.to_string(),
        ElicitValue::String(s) => title_of(s),
        ElicitValue::StringArray(items) if items.is_empty() => "(none)".into(),
        ElicitValue::StringArray(items) => items
            .iter()
            .map(|i| title_of(i))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Reads a number typed for a field; `integer` refuses fractions.
pub fn parse_number(text: &str, integer: bool) -> Result<Number, String> {
    let t = text.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Ok(Number::from(i));
    }
    let f: f64 = t
        .parse()
        .ok()
        .filter(|f: &f64| f.is_finite())
        .ok_or_else(|| format!("{t:?} is not a number"))?;
    if integer {
        if f.fract() != 0.0 {
            return Err(format!("{t} is not a whole number"));
        }
        if f.abs() < 9.0e15 {
            return Ok(Number::from(f as i64));
        }
    }
    Number::from_f64(f).ok_or_else(|| format!("{t:?} is not a number"))
}

/// Asks one field until its answer fits. `None`: left empty (optional fields only).
fn ask_field(
    p: &mut dyn Prompter,
    validator: &Validator<'_>,
    field: FormProperty<'_>,
    start: Option<&ElicitValue>,
) -> Result<Option<ElicitValue>, Cancelled> {
    let (name, required) = (field.name, field.required);
    let label = prompt_label(field);
    if let Some(d) = field.description().filter(|d| *d != field.label()) {
        p.say(
            &style(format!("  {}", sanitize(d, true)))
                .for_stderr()
                .dim()
                .to_string(),
        );
    }
    let mut current: Option<ElicitValue> = start.cloned();
    loop {
        let answer = match field.kind() {
            PropertyKind::Text { .. } => {
                let initial = current.as_ref().and_then(ElicitValue::as_str).unwrap_or("");
                let text = p.text(&label, initial)?;
                (!text.is_empty()).then_some(ElicitValue::String(text))
            }
            PropertyKind::Number { integer, .. } => {
                let initial = current
                    .as_ref()
                    .map(|v| v.to_value().to_string())
                    .unwrap_or_default();
                let text = p.text(&label, &initial)?;
                if text.trim().is_empty() {
                    None
                } else {
                    match parse_number(&text, *integer) {
                        Ok(n) => Some(ElicitValue::Number(n)),
                        Err(why) => {
                            p.warn(&why);
                            continue;
                        }
                    }
                }
            }
            PropertyKind::Boolean => {
                let default = current.as_ref().and_then(ElicitValue::as_bool);
                if required || default.is_some() {
                    Some(ElicitValue::Bool(p.confirm(&label, default)?))
                } else {
                    let items = vec!["Yes".to_owned(), "No".to_owned(), "(no answer)".to_owned()];
                    match p.select(&label, &items, 2)? {
                        0 => Some(ElicitValue::Bool(true)),
                        1 => Some(ElicitValue::Bool(false)),
                        _ => None,
                    }
                }
            }
            PropertyKind::MultiSelect { options, .. } => {
                let chosen = current
                    .as_ref()
                    .and_then(ElicitValue::as_string_array)
                    .unwrap_or(&[]);
                let items: Vec<String> = options.iter().map(option_label).collect();
                let checked: Vec<bool> = options
                    .iter()
                    .map(|o| chosen.iter().any(|c| c == o.value()))
                    .collect();
                let ticks = p.multi_select(&label, &items, &checked)?;
                let picked: Vec<String> = options
                    .iter()
                    .zip(ticks)
                    .filter(|(_, t)| *t)
                    .map(|(o, _)| o.value().to_owned())
                    .collect();
                if picked.is_empty() && !required && current.is_none() {
                    None
                } else {
                    Some(ElicitValue::StringArray(picked))
                }
            }
            _ => {
                let opts = field.schema.options().unwrap_or_default();
                let mut items: Vec<String> = opts.iter().map(option_label).collect();
                if !required {
                    items.push("(no answer)".into());
                }
                let default = current
                    .as_ref()
                    .and_then(ElicitValue::as_str)
                    .and_then(|c| opts.iter().position(|o| o.value() == c))
                    .unwrap_or(if required { 0 } else { opts.len() });
                let i = p.select(&label, &items, default)?;
                opts.get(i)
                    .map(|o| ElicitValue::String(o.value().to_owned()))
            }
        };
        match validator.field(name, answer.as_ref()) {
            Ok(()) => return Ok(answer),
            Err(why) => {
                p.warn(&why);
                current = answer.or(current);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::script::{Script, Step};
    use ferry_client::ferry_protocol::elicitation::ElicitAction;
    use ferry_client::{AskContext, AskOrigin, AskingServer};
    use serde_json::{Value, json};

    fn request(schema: Value) -> FormRequest {
        FormRequest {
            context: AskContext {
                server: AskingServer {
                    name: "files".into(),
                    title: Some("File Server".into()),
                    version: None,
                },
                origin: Some(AskOrigin {
                    method: "tools/call".into(),
                    target: "delete".into(),
                }),
                key: Some("confirm".into()),
            },
            message: "Delete /tmp/x?".into(),
            schema: serde_json::from_value(schema).unwrap(),
        }
    }

    fn content(r: &ElicitResult) -> Value {
        serde_json::to_value(r.content.as_ref().unwrap()).unwrap()
    }

    #[test]
    fn names_the_server_and_sends_a_confirmation() {
        let req = request(json!({"type": "object", "properties": {
            "confirm": {"type": "boolean", "title": "Confirm", "description": "Delete it?"}
        }, "required": ["confirm"]}));
        let mut s = Script::new([Step::Yes(true), Step::Pick("Send")]);
        let r = fill(&mut s, &req, &BTreeMap::new());
        assert_eq!(r.action, ElicitAction::Accept);
        assert_eq!(content(&r), json!({"confirm": true}));
        let shown = console::strip_ansi_codes(&s.shown.join("\n")).into_owned();
        assert!(
            shown.contains("File Server asks: Delete /tmp/x?"),
            "{shown}"
        );
        assert!(
            shown.contains("while calling tool delete, question \"confirm\""),
            "{shown}"
        );
        assert!(shown.contains("? Confirm *"), "{shown}");
        assert!(shown.contains("Delete it?"), "{shown}");
        assert!(shown.contains("Confirm: yes"), "{shown}");
    }

    #[test]
    fn decline_and_cancel_are_always_there() {
        let req = request(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}));
        let mut s = Script::new([Step::Pick("Yes"), Step::Pick("Decline")]);
        assert_eq!(
            fill(&mut s, &req, &BTreeMap::new()).action,
            ElicitAction::Decline
        );
        let mut s = Script::new([Step::Pick("Yes"), Step::Pick("Cancel")]);
        assert_eq!(
            fill(&mut s, &req, &BTreeMap::new()).action,
            ElicitAction::Cancel
        );
        let mut s = Script::new([Step::Esc]);
        assert_eq!(
            fill(&mut s, &req, &BTreeMap::new()).action,
            ElicitAction::Cancel
        );
        let mut s = Script::new([Step::Pick("No"), Step::Esc]);
        assert_eq!(
            fill(&mut s, &req, &BTreeMap::new()).action,
            ElicitAction::Cancel
        );
    }

    #[test]
    fn every_field_type_with_defaults_and_validation() {
        let req = request(json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 5, "default": "Al"},
            "email": {"type": "string", "format": "email"},
            "birthday": {"type": "string", "format": "date"},
            "age": {"type": "integer", "minimum": 18, "maximum": 120},
            "score": {"type": "number", "default": 9.5},
            "news": {"type": "boolean", "default": false},
            "color": {"type": "string", "enum": ["red", "green"]},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}], "default": "l"},
            "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Option A", "Option B"]},
            "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["x", "y", "z"]}},
            "langs": {"type": "array", "items": {"anyOf": [{"const": "rs", "title": "Rust"}, {"const": "py", "title": "Python"}]}, "default": ["rs"]}
        }, "required": ["email", "age", "color", "tags"]}));
        let mut s = Script::new([
            Step::Text("Alexander"), // too long
            Step::Text("Alex"),
            Step::Text("not-an-email"),
            Step::Text("me@example.com"),
            Step::Text("28 July"), // not a date
            Step::Text("2026-07-28"),
            Step::Text(""),    // required
            Step::Text("3.5"), // not whole
            Step::Text("12"),  // below the minimum
            Step::Text("42"),
            Step::Keep,
            Step::Enter,
            Step::Pick("green"),
            Step::Enter,
            Step::Pick("Option B"),
            Step::Tick(&[]),              // too few
            Step::Tick(&["x", "y", "z"]), // too many
            Step::Tick(&["x", "z"]),
            Step::Enter,
            Step::Pick("Send"),
        ]);
        let r = fill(&mut s, &req, &req.defaults());
        assert_eq!(r.action, ElicitAction::Accept, "{:?}", s.shown);
        assert_eq!(
            content(&r),
            json!({"name": "Alex", "email": "me@example.com", "birthday": "2026-07-28", "age": 42,
                   "score": 9.5, "news": false, "color": "green", "size": "l", "legacy": "b",
                   "tags": ["x", "z"], "langs": ["rs"]})
        );
        let warnings: Vec<&String> = s.shown.iter().filter(|l| l.starts_with("! ")).collect();
        assert_eq!(warnings.len(), 8, "{warnings:?}");
        let shown = console::strip_ansi_codes(&s.shown.join("\n")).into_owned();
        assert!(
            shown.contains("initial: \"Al\""),
            "the default is prefilled: {shown}"
        );
        assert!(shown.contains("2 to 5 characters"), "{shown}");
        assert!(shown.contains("whole number, 18 to 120"), "{shown}");
        assert!(shown.contains("pick 1 to 2"), "{shown}");
        assert!(shown.contains("Large (l)"), "{shown}");
        assert!(shown.contains("Option B (b)"), "{shown}");
        assert!(
            shown.contains("default 1"),
            "the select default is preselected: {shown}"
        );
    }

    #[test]
    fn optional_fields_can_stay_empty() {
        let req = request(json!({"type": "object", "properties": {
            "note": {"type": "string"},
            "count": {"type": "integer"},
            "flag": {"type": "boolean"},
            "pick": {"type": "string", "enum": ["a"]},
            "many": {"type": "array", "items": {"type": "string", "enum": ["a"]}}
        }}));
        let mut s = Script::new([
            Step::Text(""),
            Step::Text(""),
            Step::Pick("(no answer)"),
            Step::Pick("(no answer)"),
            Step::Tick(&[]),
            Step::Pick("Send"),
        ]);
        let r = fill(&mut s, &req, &BTreeMap::new());
        assert_eq!(r.action, ElicitAction::Accept);
        assert_eq!(content(&r), json!({}));
    }

    #[test]
    fn answers_can_be_edited_before_sending() {
        let req = request(json!({"type": "object", "properties": {
            "name": {"type": "string"}, "ok": {"type": "boolean"}
        }, "required": ["name"]}));
        let mut s = Script::new([
            Step::Text("Bob"),
            Step::Pick("No"),
            Step::Pick("Edit an answer"),
            Step::Pick("ok"),
            Step::Yes(true),
            Step::Pick("Edit an answer"),
            Step::Pick("(back)"),
            Step::Pick("Send"),
        ]);
        let r = fill(&mut s, &req, &BTreeMap::new());
        assert_eq!(content(&r), json!({"name": "Bob", "ok": true}));
    }

    #[test]
    fn control_characters_from_the_server_are_escaped() {
        let mut req = request(json!({"type": "object", "properties": {}}));
        req.message = "Hi\u{1b}[2J there".into();
        let mut s = Script::new([Step::Pick("Send")]);
        let r = fill(&mut s, &req, &BTreeMap::new());
        assert_eq!(r.action, ElicitAction::Accept);
        let shown = s.shown.join("\n");
        assert!(!shown.contains("\u{1b}[2J"), "{shown:?}");
        assert!(shown.contains("\\u{1b}[2J"), "{shown:?}");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("42", true).unwrap(), Number::from(42));
        assert_eq!(parse_number(" 4.0 ", true).unwrap(), Number::from(4));
        assert!(parse_number("4.5", true).is_err());
        assert_eq!(parse_number("-1.25", false).unwrap().as_f64(), Some(-1.25));
        assert_eq!(parse_number("7", false).unwrap(), Number::from(7));
        assert!(parse_number("abc", false).is_err());
        assert!(parse_number("inf", false).is_err());
        assert!(parse_number("NaN", false).is_err());
    }

    #[test]
    fn validator_checks_kinds_when_the_schema_is_unusual() {
        let schema: FormSchema = serde_json::from_value(json!({
            "type": "object",
            "properties": {"x": {"type": "string", "enum": ["a"]}},
            "required": ["x"]
        }))
        .unwrap();
        let v = Validator::new(&schema);
        assert!(v.field("x", Some(&ElicitValue::from("a"))).is_ok());
        assert!(v.field("x", Some(&ElicitValue::from("b"))).is_err());
        assert_eq!(v.field("x", None), Err("an answer is required".into()));
        assert!(v.all(&BTreeMap::new()).is_err());
    }

    #[test]
    fn an_option_whose_title_names_its_value_is_shown_once() {
        let req = request(json!({"type": "object", "properties": {
            "ratio": {"type": "string", "title": "Aspect ratio", "oneOf": [
                {"const": "16:9", "title": "Landscape (16:9)"},
                {"const": "sq", "title": "Square"}
            ]}
        }, "required": ["ratio"]}));
        let mut s = Script::new([Step::Pick("Landscape (16:9)"), Step::Pick("Send")]);
        let r = fill(&mut s, &req, &BTreeMap::new());
        assert_eq!(content(&r), json!({"ratio": "16:9"}));
        let shown = console::strip_ansi_codes(&s.shown.join("\n")).into_owned();
        assert!(!shown.contains("(16:9) (16:9)"), "{shown}");
        assert!(shown.contains("\"Landscape (16:9)\""), "{shown}");
        assert!(shown.contains("\"Square (sq)\""), "{shown}");
        assert!(
            shown.contains("Aspect ratio: Landscape (16:9)\n"),
            "{shown}"
        );
    }

    #[test]
    fn a_value_inside_a_longer_word_is_still_shown() {
        assert!(names("Landscape (16:9)", "16:9"));
        assert!(names("red", "red"));
        assert!(!names("Large", "e"));
        assert!(!names("Rust", "rs"));
        assert!(!names("Greenish", "green"));
        let (label, value) = option_text(&SelectOption::titled("e", "Large"));
        assert_eq!((label.as_str(), value.as_deref()), ("Large", Some("e")));
    }

    #[test]
    fn forms_from_other_servers_are_checked_in_full() {
        // A schema generated from a model class carries keywords outside the subset
        // (a root `title`); the client reads it leniently and still checks every rule.
        let params: ferry_client::ferry_protocol::elicitation::ElicitRequestFormParams =
            serde_json::from_value(json!({
                "message": "Who?",
                "requestedSchema": {"title": "Person", "type": "object", "properties": {
                    "email": {"type": "string", "format": "email", "title": "Email"}
                }, "required": ["email"]}
            }))
            .unwrap();
        let v = Validator::new(&params.requested_schema);
        assert_eq!(
            v.field("email", Some(&ElicitValue::from("nope"))),
            Err("not a valid email".into())
        );
        assert!(
            v.field("email", Some(&ElicitValue::from("a@example.com")))
                .is_ok()
        );
    }
}
