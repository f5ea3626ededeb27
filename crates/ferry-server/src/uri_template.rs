//! Matching URIs against RFC 6570 URI templates (levels 1 to 4), the reverse of
//! expansion: `test://template/{id}/data` matches `test://template/42/data` with `id=42`.

use std::collections::BTreeMap;

/// A parsed URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr { op: Op, vars: Vec<Var> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Var {
    name: String,
    explode: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn prefix(self) -> &'static str {
        match self {
            Op::Simple | Op::Reserved => "",
            Op::Fragment => "#",
            Op::Label => ".",
            Op::Path => "/",
            Op::PathParam => ";",
            Op::Query => "?",
            Op::QueryCont => "&",
        }
    }

    fn separator(self) -> char {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ',',
            Op::Label => '.',
            Op::Path => '/',
            Op::PathParam => ';',
            Op::Query | Op::QueryCont => '&',
        }
    }

    /// Characters a value of this operator can never contain unencoded.
    fn stops(self, c: char) -> bool {
        match self {
            Op::Simple => matches!(c, '/' | '?' | '#' | '&' | '='),
            Op::Label => matches!(c, '/' | '?' | '#' | '.'),
            Op::Path => matches!(c, '/' | '?' | '#'),
            Op::PathParam => matches!(c, '/' | '?' | '#' | ';'),
            Op::Reserved => matches!(c, '?' | '#'),
            Op::Fragment => false,
            Op::Query | Op::QueryCont => c == '#',
        }
    }
}

/// Why a template could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template {template:?}: {reason}")]
pub struct TemplateError {
    template: String,
    reason: &'static str,
}

impl UriTemplate {
    /// Parses a template.
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        let err = |reason| TemplateError {
            template: template.to_owned(),
            reason,
        };
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').ok_or_else(|| err("unclosed '{'"))?;
                    let body = &rest[1..end];
                    let (op, list) = match body.chars().next() {
                        Some('+') => (Op::Reserved, &body[1..]),
                        Some('#') => (Op::Fragment, &body[1..]),
                        Some('.') => (Op::Label, &body[1..]),
                        Some('/') => (Op::Path, &body[1..]),
                        Some(';') => (Op::PathParam, &body[1..]),
                        Some('?') => (Op::Query, &body[1..]),
                        Some('&') => (Op::QueryCont, &body[1..]),
                        Some(_) => (Op::Simple, body),
                        None => return Err(err("empty expression")),
                    };
                    let mut vars = Vec::new();
                    for spec in list.split(',') {
                        let (name, explode) = match spec.strip_suffix('*') {
                            Some(n) => (n, true),
                            None => (spec.split(':').next().unwrap_or(spec), false),
                        };
                        if name.is_empty()
                            || !name
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'))
                        {
                            return Err(err("invalid variable name"));
                        }
                        vars.push(Var {
                            name: name.to_owned(),
                            explode,
                        });
                    }
                    parts.push(Part::Expr { op, vars });
                    rest = &rest[end + 1..];
                }
                Some(i) => {
                    parts.push(Part::Literal(rest[..i].to_owned()));
                    rest = &rest[i..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(err("unmatched '}'"));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
            if let Some(Part::Literal(l)) = parts.last()
                && l.contains('}')
            {
                return Err(err("unmatched '}'"));
            }
        }
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().flat_map(|p| match p {
            Part::Expr { vars, .. } => vars.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            Part::Literal(_) => Vec::new(),
        })
    }

    /// Matches `uri`, returning the variables' values (percent-decoded; list values joined
    /// with `,`). `None` when the URI does not fit the template.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        if match_parts(&self.parts, uri, &mut out) {
            Some(out)
        } else {
            None
        }
    }
}

fn match_parts(parts: &[Part], input: &str, out: &mut BTreeMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return input.is_empty();
    };
    match first {
        Part::Literal(l) => input
            .strip_prefix(l.as_str())
            .is_some_and(|r| match_parts(rest, r, out)),
        Part::Expr { op, vars } => {
            if matches!(op, Op::Query | Op::QueryCont) {
                return match_query(*op, vars, rest, input, out);
            }
            // A prefixed expression expands to nothing when its variables are undefined.
            if !op.prefix().is_empty() {
                let mut trial = out.clone();
                if match_parts(rest, input, &mut trial) {
                    *out = trial;
                    return true;
                }
            }
            let Some(body) = input.strip_prefix(op.prefix()) else {
                return false;
            };
            // Try the shortest value first, then longer ones (backtracking), so a variable
            // stops where the next part of the template can start.
            let limit = body
                .char_indices()
                .find(|(_, c)| {
                    op.stops(*c)
                        && !(vars.len() > 1 && *c == op.separator())
                        && !(vars.iter().any(|v| v.explode) && *c == op.separator())
                })
                .map(|(i, _)| i)
                .unwrap_or(body.len());
            let mut ends: Vec<usize> = body[..limit]
                .char_indices()
                .map(|(i, _)| i)
                .skip(1)
                .collect();
            ends.push(limit);
            for end in ends {
                let value = &body[..end];
                let mut trial = out.clone();
                if assign(*op, vars, value, &mut trial)
                    && match_parts(rest, &body[end..], &mut trial)
                {
                    *out = trial;
                    return true;
                }
            }
            false
        }
    }
}

fn assign(op: Op, vars: &[Var], value: &str, out: &mut BTreeMap<String, String>) -> bool {
    if value.is_empty() {
        return false;
    }
    if vars.len() == 1 {
        let v = &vars[0];
        let text = if v.explode {
            value
                .split(op.separator())
                .map(decode)
                .collect::<Option<Vec<_>>>()
                .map(|p| p.join(","))
        } else if op == Op::PathParam {
            named(value)
                .filter(|(k, _)| *k == v.name)
                .and_then(|(_, v)| decode(v))
        } else {
            decode(value)
        };
        return match text {
            Some(t) => {
                out.insert(v.name.clone(), t);
                true
            }
            None => false,
        };
    }
    let pieces: Vec<&str> = value.split(op.separator()).collect();
    if pieces.len() > vars.len() {
        return false;
    }
    if op == Op::PathParam {
        // Each piece names its variable (`;x=1;y=2`, or `;x` for an empty value); an
        // undefined variable is left out, so the names, not the positions, say which.
        for piece in pieces {
            let Some((name, raw)) = named(piece) else {
                return false;
            };
            let Some(var) = vars.iter().find(|var| var.name == name) else {
                return false;
            };
            match decode(raw) {
                Some(t) => {
                    out.insert(var.name.clone(), t);
                }
                None => return false,
            }
        }
        return true;
    }
    for (var, piece) in vars.iter().zip(pieces) {
        match decode(piece) {
            Some(t) => {
                out.insert(var.name.clone(), t);
            }
            None => return false,
        }
    }
    true
}

fn match_query(
    op: Op,
    vars: &[Var],
    rest: &[Part],
    input: &str,
    out: &mut BTreeMap<String, String>,
) -> bool {
    let Some(body) = input.strip_prefix(op.prefix()) else {
        // No query at all: every variable is undefined.
        return match_parts(rest, input, out);
    };
    let end = body.find('#').unwrap_or(body.len());
    let mut trial = out.clone();
    for pair in body[..end].split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if let Some(var) = vars.iter().find(|var| var.name == k) {
            match decode(v) {
                Some(t) => {
                    trial
                        .entry(var.name.clone())
                        .and_modify(|e| {
                            e.push(',');
                            e.push_str(&t);
                        })
                        .or_insert(t);
                }
                None => return false,
            }
        }
    }
    if match_parts(rest, &body[end..], &mut trial) {
        *out = trial;
        true
    } else {
        false
    }
}

/// A path-style parameter, `name=value` or a bare `name` (an empty value), as name and
/// raw value.
fn named(piece: &str) -> Option<(&str, &str)> {
    let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
    (!name.is_empty()).then_some((name, value))
}

fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Two hex digits exactly (`from_str_radix` alone would take a sign: `%+f`).
            let hex = s
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t)
            .unwrap()
            .matches(uri)
            .map(|m| m.into_iter().collect())
    }

    fn kv(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn simple() {
        assert_eq!(
            m("test://template/{id}/data", "test://template/42/data"),
            kv(&[("id", "42")])
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template/4/2/data"),
            None
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(m("file:///{name}", "file:///a%20b"), kv(&[("name", "a b")]));
        assert_eq!(m("x://{a}-{b}", "x://1-2"), kv(&[("a", "1"), ("b", "2")]));
    }

    #[test]
    fn reserved_and_path() {
        assert_eq!(
            m("file:///{+path}", "file:///a/b/c.txt"),
            kv(&[("path", "a/b/c.txt")])
        );
        assert_eq!(
            m("repo://{owner}{/segs*}", "repo://me/a/b"),
            kv(&[("owner", "me"), ("segs", "a,b")])
        );
        assert_eq!(m("x://h{/a,b}", "x://h/1/2"), kv(&[("a", "1"), ("b", "2")]));
        assert_eq!(
            m("x://h/{name}{.ext}", "x://h/file.txt"),
            kv(&[("ext", "txt"), ("name", "file")])
        );
    }

    #[test]
    fn query() {
        assert_eq!(
            m("search://q{?term,limit}", "search://q?limit=5&term=rust"),
            kv(&[("limit", "5"), ("term", "rust")])
        );
        assert_eq!(m("search://q{?term}", "search://q"), kv(&[]));
        assert_eq!(
            m("x://{id}{#frag}", "x://7#top"),
            kv(&[("frag", "top"), ("id", "7")])
        );
    }

    #[test]
    fn path_parameters_are_read_by_name() {
        assert_eq!(
            m("matrix://x{;a,b}", "matrix://x;a=mat;b=rix"),
            kv(&[("a", "mat"), ("b", "rix")])
        );
        // An undefined variable is left out of the expansion: the other keeps its name.
        assert_eq!(m("matrix://x{;a,b}", "matrix://x;b=2"), kv(&[("b", "2")]));
        assert_eq!(m("matrix://x{;a,b}", "matrix://x;c=2"), None);
        assert_eq!(m("m://x{;a}", "m://x;a=1"), kv(&[("a", "1")]));
        assert_eq!(m("m://x{;a}", "m://x;a"), kv(&[("a", "")]));
        // `;ab` is a parameter named `ab`, not `a` with the value `b`.
        assert_eq!(m("m://x{;a}", "m://x;ab"), None);
    }

    #[test]
    fn percent_escapes_are_two_hex_digits() {
        assert_eq!(m("x://{a}", "x://%41"), kv(&[("a", "A")]));
        assert_eq!(m("x://{a}", "x://%+f"), None);
        assert_eq!(m("x://{a}", "x://%4"), None);
    }

    #[test]
    fn bad_templates() {
        assert!(UriTemplate::parse("x://{").is_err());
        assert!(UriTemplate::parse("x://}").is_err());
        assert!(UriTemplate::parse("x://{}").is_err());
    }
}
