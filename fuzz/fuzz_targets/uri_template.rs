//! URI template matching (ferry-server `uri_template`), run on every `resources/read`
//! of a templated resource with the URI the client sent.
//!
//! Input: a template, a newline, a URI. Checks: parsing and matching never panic; a match
//! names only the template's variables; and the template expanded with values made from
//! the URI (RFC 6570, every character but letters and digits percent-encoded) always
//! matches, with exactly those values when that reading is the only one.
#![no_main]

use std::collections::BTreeMap;

use ferry_server::uri_template::UriTemplate;
use libfuzzer_sys::fuzz_target;

/// The expressions of a template: operator and variable names, and whether a literal
/// that no expanded value can contain follows each one.
struct Expr {
    op: Option<char>,
    names: Vec<String>,
    separated: bool,
}

/// Splits a template that parsed into its expressions, or `None` for one this target
/// does not expand (explode and prefix modifiers).
fn expressions(template: &str) -> Option<(Vec<Expr>, bool)> {
    let mut out: Vec<Expr> = Vec::new();
    let mut starts_with_literal = false;
    let mut rest = template;
    while !rest.is_empty() {
        if let Some(body) = rest.strip_prefix('{') {
            let end = body.find('}')?;
            let inner = &body[..end];
            if inner.contains('*') || inner.contains(':') {
                return None;
            }
            let (op, list) = match inner.chars().next() {
                Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &inner[1..]),
                _ => (None, inner),
            };
            out.push(Expr {
                op,
                names: list.split(',').map(str::to_owned).collect(),
                separated: false,
            });
            rest = &body[end + 1..];
        } else {
            let end = rest.find('{').unwrap_or(rest.len());
            let first = rest.chars().next()?;
            match out.last_mut() {
                // Not a character a value can hold, nor one of the operators' separators
                // (a multi-variable expression reads those as its own).
                Some(last) => {
                    last.separated = !first.is_ascii_alphanumeric()
                        && !matches!(first, '%' | ',' | '.' | '/' | ';' | '&' | '=' | '?' | '#')
                }
                None => starts_with_literal = true,
            }
            rest = &rest[end..];
        }
    }
    Some((out, starts_with_literal))
}

fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// RFC 6570 §3.2 expansion of one expression whose variables are all defined.
fn expand(expr: &Expr, values: &BTreeMap<String, String>) -> String {
    let value = |n: &String| encode(&values[n]);
    let join = |sep: &str| expr.names.iter().map(value).collect::<Vec<_>>().join(sep);
    let named = |first: &str, sep: &str| {
        let pairs: Vec<String> = expr
            .names
            .iter()
            .map(|n| format!("{n}={}", value(n)))
            .collect();
        format!("{first}{}", pairs.join(sep))
    };
    match expr.op {
        None | Some('+') => join(","),
        Some('#') => format!("#{}", join(",")),
        Some('.') => format!(".{}", join(".")),
        Some('/') => format!("/{}", join("/")),
        Some(';') => named(";", ";"),
        Some('?') => named("?", "&"),
        Some('&') => named("&", "&"),
        Some(_) => unreachable!(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(parsed) = UriTemplate::parse(template) else {
        return;
    };
    let variables: Vec<&str> = parsed.variables().collect();
    if let Some(found) = parsed.matches(uri) {
        for name in found.keys() {
            assert!(
                variables.contains(&name.as_str()),
                "{name} is not a variable of {template}"
            );
        }
    }

    let Some((exprs, _)) = expressions(template) else {
        return;
    };
    let mut names: Vec<&str> = exprs
        .iter()
        .flat_map(|e| e.names.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    let unique = names.windows(2).all(|w| w[0] != w[1]);
    // A query expression takes the rest of the URI up to a fragment: it must end the template.
    let query_last = exprs
        .iter()
        .position(|e| matches!(e.op, Some('?' | '&')))
        .is_none_or(|i| i + 1 == exprs.len() && template.ends_with('}'));
    if !unique || !query_last || exprs.is_empty() {
        return;
    }
    // Values from the URI's characters, one slice per variable, never empty.
    let chars: Vec<char> = uri.chars().collect();
    let values: BTreeMap<String, String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let piece: String = chars.iter().skip(i * 3).take(3).collect();
            (
                (*n).to_owned(),
                if piece.is_empty() {
                    format!("v{i}")
                } else {
                    piece
                },
            )
        })
        .collect();
    let mut expanded = String::new();
    let mut rest = template;
    while !rest.is_empty() {
        if let Some(body) = rest.strip_prefix('{') {
            let end = body
                .find('}')
                .expect("a parsed template closes its expressions");
            let (exprs, _) = expressions(&rest[..end + 2]).expect("checked above");
            expanded.push_str(&expand(&exprs[0], &values));
            rest = &body[end + 1..];
        } else {
            let end = rest.find('{').unwrap_or(rest.len());
            expanded.push_str(&rest[..end]);
            rest = &rest[end..];
        }
    }
    let found = parsed
        .matches(&expanded)
        .unwrap_or_else(|| panic!("{template} does not match its own expansion {expanded}"));
    // Values are exact only where the reading is unambiguous: expressions kept apart by
    // literals, and no expression that could also have expanded to nothing or taken a
    // reserved character.
    let apart = exprs.iter().rev().skip(1).all(|e| e.separated);
    let plain = exprs
        .iter()
        .all(|e| matches!(e.op, None | Some(';' | '?' | '&')));
    if apart && plain {
        assert_eq!(found, values, "{template} matched {expanded}");
    }
});
