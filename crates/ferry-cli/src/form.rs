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
    ElicitResult, ElicitValue, EnumOption, NumberKind, PrimitiveSchemaDefinition, RequestedSchema,
    StringFormat,
};
use ferry_form::FormSchema;
use serde_json::{Map, Number, Value};

use crate::term::{Cancelled, Prompter, sanitize};

/// Checks answers against the form's schema: with `ferry-form` (lengths, formats, bounds,
/// item counts), or with the protocol's own kind checks when the schema is outside what
/// `ferry-form` accepts.
pub struct Validator {
    full: Option<FormSchema>,
    schema: RequestedSchema,
}

impl Validator {
    /// A validator for `schema`.
    pub fn new(schema: &RequestedSchema) -> Self {
        let full = serde_json::to_value(schema)
            .ok()
            .and_then(|v| FormSchema::from_value(v).ok());
        if full.is_none() {
            tracing::debug!("the form schema is outside ferry-form's subset; checking kinds only");
        }
        Validator {
            full,
            schema: schema.clone(),
        }
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
        match &self.full {
            Some(full) => {
                let mut content = Map::new();
                content.insert(name.to_owned(), value.to_value());
                match full
                    .content_errors(&content)
                    .into_iter()
                    .find(|e| e.property() == Some(name))
                {
                    Some(e) => Err(strip_property(&e.to_string(), name)),
                    None => Ok(()),
                }
            }
            None => match self.schema.property(name) {
                Some(p) => p.check(value),
                None => Err(format!("the form has no field {name}")),
            },
        }
    }

    /// Checks a whole answer.
    pub fn all(&self, content: &BTreeMap<String, ElicitValue>) -> Result<(), String> {
        match &self.full {
            Some(full) => {
                let map: Map<String, Value> = content
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect();
                full.validate_content(&map).map_err(|e| e.to_string())?;
                // ferry-form ignores unknown keys, as JSON Schema does; the protocol's
                // check refuses them.
                self.schema.check(content)
            }
            None => self.schema.check(content),
        }
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
                ferry_client::ferry_protocol::elicitation::ElicitAction::Accept => "Sent.",
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
        if let Some(v) = ask_field(
            p,
            &validator,
            field.name,
            field.schema,
            field.required,
            start,
        )? {
            values.insert(field.name.to_owned(), v);
        }
    }
    loop {
        p.say("");
        p.say(&style("Your answers:").for_stderr().bold().to_string());
        if request.schema.properties.is_empty() {
            p.say("  (this form has no fields)");
        }
        for field in request.fields() {
            let shown = values
                .get(field.name)
                .map(|v| show_value(field.schema, v))
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
                if let Some(f) = fields.get(i) {
                    let current = values.get(f.name).cloned();
                    match ask_field(
                        p,
                        &validator,
                        f.name,
                        f.schema,
                        f.required,
                        current.as_ref(),
                    )? {
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
fn prompt_label(name: &str, schema: &PrimitiveSchemaDefinition, required: bool) -> String {
    let field = ferry_client::FormField {
        name,
        schema,
        required,
    };
    let mut label = sanitize(field.label(), false);
    if required {
        label.push_str(" *");
    }
    let hint = hint(schema);
    if !hint.is_empty() {
        label.push_str(&format!(" ({hint})"));
    }
    label
}

fn description(schema: &PrimitiveSchemaDefinition) -> Option<&str> {
    match schema {
        PrimitiveSchemaDefinition::String(s) => s.description.as_deref(),
        PrimitiveSchemaDefinition::Number(s) => s.description.as_deref(),
        PrimitiveSchemaDefinition::Boolean(s) => s.description.as_deref(),
        PrimitiveSchemaDefinition::UntitledSingleSelectEnum(s) => s.description.as_deref(),
        PrimitiveSchemaDefinition::TitledSingleSelectEnum(s) => s.description.as_deref(),
        PrimitiveSchemaDefinition::UntitledMultiSelectEnum(s) => s.description.as_deref(),
        PrimitiveSchemaDefinition::TitledMultiSelectEnum(s) => s.description.as_deref(),
        PrimitiveSchemaDefinition::LegacyTitledEnum(s) => s.description.as_deref(),
    }
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

fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// What fits in a field, e.g. "email", "integer, 1 to 10", "pick 1 to 3".
pub fn hint(schema: &PrimitiveSchemaDefinition) -> String {
    let mut parts: Vec<String> = Vec::new();
    match schema {
        PrimitiveSchemaDefinition::String(s) => {
            if let Some(f) = s.format {
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
            let plural = |n: Option<u64>| n.map(|n| n.to_string());
            if let Some(r) = range(plural(s.min_length), plural(s.max_length), " characters") {
                parts.push(r);
            }
        }
        PrimitiveSchemaDefinition::Number(s) => {
            parts.push(
                if s.kind == NumberKind::Integer {
                    "whole number"
                } else {
                    "number"
                }
                .into(),
            );
            if let Some(r) = range(s.minimum.map(number_text), s.maximum.map(number_text), "") {
                parts.push(r);
            }
        }
        PrimitiveSchemaDefinition::UntitledMultiSelectEnum(s) => {
            if let Some(r) = range(
                s.min_items.map(|n| n.to_string()),
                s.max_items.map(|n| n.to_string()),
                "",
            ) {
                parts.push(format!("pick {r}"));
            }
        }
        PrimitiveSchemaDefinition::TitledMultiSelectEnum(s) => {
            if let Some(r) = range(
                s.min_items.map(|n| n.to_string()),
                s.max_items.map(|n| n.to_string()),
                "",
            ) {
                parts.push(format!("pick {r}"));
            }
        }
        _ => {}
    }
    parts.join(", ")
}

/// The options of a select field: (value, label).
pub fn options(schema: &PrimitiveSchemaDefinition) -> Option<Vec<(String, String)>> {
    let titled = |o: &[EnumOption]| {
        o.iter()
            .map(|o| (o.value.clone(), o.title.clone()))
            .collect()
    };
    let plain = |v: &[String]| v.iter().map(|v| (v.clone(), v.clone())).collect();
    Some(match schema {
        PrimitiveSchemaDefinition::UntitledSingleSelectEnum(s) => plain(&s.enum_values),
        PrimitiveSchemaDefinition::TitledSingleSelectEnum(s) => titled(&s.one_of),
        PrimitiveSchemaDefinition::LegacyTitledEnum(s) => s
            .enum_values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let title = s
                    .enum_names
                    .as_ref()
                    .and_then(|n| n.get(i))
                    .cloned()
                    .unwrap_or_else(|| v.clone());
                (v.clone(), title)
            })
            .collect(),
        PrimitiveSchemaDefinition::UntitledMultiSelectEnum(s) => plain(&s.items.enum_values),
        PrimitiveSchemaDefinition::TitledMultiSelectEnum(s) => titled(&s.items.any_of),
        _ => return None,
    })
}

fn option_label(value: &str, title: &str) -> String {
    if value == title {
        sanitize(value, false)
    } else {
        format!(
            "{} ({})",
            sanitize(title, false),
            style(sanitize(value, false)).for_stderr().dim()
        )
    }
}

/// How an answer is shown in the review.
pub fn show_value(schema: &PrimitiveSchemaDefinition, value: &ElicitValue) -> String {
    let title_of = |v: &str| {
        options(schema)
            .and_then(|o| o.into_iter().find(|(val, _)| val == v))
            .map(|(val, title)| {
                if val == title {
                    sanitize(&val, false)
                } else {
                    format!("{} ({})", sanitize(&title, false), sanitize(&val, false))
                }
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

/// Reads a number typed for a field.
pub fn parse_number(text: &str, kind: NumberKind) -> Result<Number, String> {
    let t = text.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Ok(Number::from(i));
    }
    let f: f64 = t
        .parse()
        .ok()
        .filter(|f: &f64| f.is_finite())
        .ok_or_else(|| format!("{t:?} is not a number"))?;
    if kind == NumberKind::Integer {
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
    validator: &Validator,
    name: &str,
    schema: &PrimitiveSchemaDefinition,
    required: bool,
    start: Option<&ElicitValue>,
) -> Result<Option<ElicitValue>, Cancelled> {
    let label = prompt_label(name, schema, required);
    let field = ferry_client::FormField {
        name,
        schema,
        required,
    };
    if let Some(d) = description(schema).filter(|d| *d != field.label()) {
        p.say(
            &style(format!("  {}", sanitize(d, true)))
                .for_stderr()
                .dim()
                .to_string(),
        );
    }
    let mut current: Option<ElicitValue> = start.cloned();
    loop {
        let answer = match schema {
            PrimitiveSchemaDefinition::String(_) => {
                let initial = current.as_ref().and_then(ElicitValue::as_str).unwrap_or("");
                let text = p.text(&label, initial)?;
                (!text.is_empty()).then_some(ElicitValue::String(text))
            }
            PrimitiveSchemaDefinition::Number(n) => {
                let initial = current
                    .as_ref()
                    .map(|v| v.to_value().to_string())
                    .unwrap_or_default();
                let text = p.text(&label, &initial)?;
                if text.trim().is_empty() {
                    None
                } else {
                    match parse_number(&text, n.kind) {
                        Ok(n) => Some(ElicitValue::Number(n)),
                        Err(why) => {
                            p.warn(&why);
                            continue;
                        }
                    }
                }
            }
            PrimitiveSchemaDefinition::Boolean(_) => {
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
            PrimitiveSchemaDefinition::UntitledMultiSelectEnum(_)
            | PrimitiveSchemaDefinition::TitledMultiSelectEnum(_) => {
                let opts = options(schema).unwrap_or_default();
                let chosen = current
                    .as_ref()
                    .and_then(ElicitValue::as_string_array)
                    .unwrap_or(&[]);
                let items: Vec<String> = opts.iter().map(|(v, t)| option_label(v, t)).collect();
                let checked: Vec<bool> = opts.iter().map(|(v, _)| chosen.contains(v)).collect();
                let ticks = p.multi_select(&label, &items, &checked)?;
                let picked: Vec<String> = opts
                    .iter()
                    .zip(ticks)
                    .filter(|(_, t)| *t)
                    .map(|((v, _), _)| v.clone())
                    .collect();
                if picked.is_empty() && !required && current.is_none() {
                    None
                } else {
                    Some(ElicitValue::StringArray(picked))
                }
            }
            _ => {
                let opts = options(schema).unwrap_or_default();
                let mut items: Vec<String> = opts.iter().map(|(v, t)| option_label(v, t)).collect();
                if !required {
                    items.push("(no answer)".into());
                }
                let default = current
                    .as_ref()
                    .and_then(ElicitValue::as_str)
                    .and_then(|c| opts.iter().position(|(v, _)| v == c))
                    .unwrap_or(if required { 0 } else { opts.len() });
                let i = p.select(&label, &items, default)?;
                opts.get(i).map(|(v, _)| ElicitValue::String(v.clone()))
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
    use serde_json::json;

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
        assert_eq!(
            parse_number("42", NumberKind::Integer).unwrap(),
            Number::from(42)
        );
        assert_eq!(
            parse_number(" 4.0 ", NumberKind::Integer).unwrap(),
            Number::from(4)
        );
        assert!(parse_number("4.5", NumberKind::Integer).is_err());
        assert_eq!(
            parse_number("-1.25", NumberKind::Number).unwrap().as_f64(),
            Some(-1.25)
        );
        assert_eq!(
            parse_number("7", NumberKind::Number).unwrap(),
            Number::from(7)
        );
        assert!(parse_number("abc", NumberKind::Number).is_err());
        assert!(parse_number("inf", NumberKind::Number).is_err());
        assert!(parse_number("NaN", NumberKind::Number).is_err());
    }

    #[test]
    fn validator_checks_kinds_when_the_schema_is_unusual() {
        let schema: RequestedSchema = serde_json::from_value(json!({
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
}
