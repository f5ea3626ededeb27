//! A small validator for the JSON Schema subset that tool schemas almost always use:
//! `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`,
//! numeric bounds, length and size bounds, the applicators `allOf`, `anyOf`, `oneOf`,
//! `not` and `if`/`then`/`else`, local references (`$ref` to `#` plus a JSON pointer, or
//! to `#name` for a `$anchor`, with `$defs`/`definitions` as containers and `$id` on the
//! root only), and annotations. Semantics are those of JSON Schema 2020-12 (also those
//! of 2019-09 for these keywords).
//!
//! References are inlined when the validator is built. Recursive references, remote
//! references, `$dynamicRef`, and schemas that would expand to too many nodes go to the
//! `jsonschema` crate, as does anything else outside the subset. The subset covers what
//! `schemars` derives for argument structs and enums, so most tools validate without
//! compiling a general validator: less code at startup and fewer instructions per call.
//! The tests check every verdict against the `jsonschema` crate.

use ferry_protocol::quote::quote;
use std::collections::HashMap;
use std::ops::ControlFlow;

use serde_json::{Map, Number, Value};

/// A schema of the subset, ready to validate.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    types: Option<u8>,
    properties: Vec<(String, Node)>,
    required: Vec<String>,
    additional: Additional,
    items: Option<Box<Node>>,
    allowed: Option<Vec<Value>>,
    constant: Option<Value>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    /// `allOf` members and the target of `$ref`: all must hold.
    all_of: Vec<Node>,
    /// `anyOf` members (never empty when present).
    any_of: Vec<Node>,
    /// `oneOf` members (never empty when present).
    one_of: Vec<Node>,
    not: Option<Box<Node>>,
    condition: Option<Condition>,
    /// `false` as a whole schema: nothing validates.
    never: bool,
}

#[derive(Debug, Clone, Default)]
enum Additional {
    #[default]
    Any,
    Never,
    Schema(Box<Node>),
}

/// `if`, with the `then` and `else` it chooses between (at least one present).
#[derive(Debug, Clone)]
struct Condition {
    test: Box<Node>,
    then: Option<Box<Node>>,
    otherwise: Option<Box<Node>>,
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const NUMBER: u8 = 16;
const STRING: u8 = 32;
const INTEGER: u8 = 64;

/// Keywords that only annotate: they never change a verdict.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "$schema",
    "contentMediaType",
    "contentEncoding",
];

/// Most nodes one schema may expand to. References are inlined, so a schema that fans
/// out through them goes to the general validator instead of growing without bound.
const NODE_LIMIT: usize = 4096;

/// Most data (string bytes plus one per JSON value) one schema may copy into its nodes
/// for `enum`, `const`, `required` and property names: the node limit alone would let a
/// large `enum` behind a fanned-out reference take thousands of copies.
const COPY_LIMIT: usize = 1 << 22;

/// Deepest nesting of subschemas, counting inlined references.
const DEPTH_LIMIT: usize = 128;

impl Node {
    /// Builds the validator, or `None` when the schema uses anything outside the subset.
    pub(crate) fn build(schema: &Value) -> Option<Node> {
        Builder {
            root: schema,
            expanding: vec![schema],
            anchors: None,
            nodes: 0,
            copied: 0,
            depth: 0,
        }
        .node(schema)
        .map(|node| *node)
    }

    /// Validates `instance`, collecting at most `limit` problems as `path: message`.
    pub(crate) fn validate(&self, instance: &Value, limit: usize) -> Result<(), String> {
        let mut problems = Problems::new(limit);
        let _ = self.check(instance, &mut problems);
        if problems.failed {
            Err(problems.list.join("; "))
        } else {
            Ok(())
        }
    }

    /// Whether `instance` is valid; stops at the first problem and describes none.
    fn is_valid(&self, instance: &Value) -> bool {
        // With a limit of 0 the first problem breaks the walk.
        self.check(instance, &mut Problems::new(0)).is_continue()
    }

    /// Checks `v`, breaking once `p` wants no more problems.
    fn check(&self, v: &Value, p: &mut Problems) -> ControlFlow<()> {
        if self.never {
            return p.fail(|| "no value is allowed here".into());
        }
        if let Some(t) = self.types
            && t & type_of(v) == 0
        {
            return p.fail(|| format!("{} is not of type {}", short(v), type_names(t)));
        }
        if let Some(c) = &self.constant
            && !json_eq(c, v)
        {
            p.fail(|| format!("{} is not the expected constant {}", short(v), short(c)))?;
        }
        if let Some(allowed) = &self.allowed
            && !allowed.iter().any(|a| json_eq(a, v))
        {
            p.fail(|| format!("{} is not one of the allowed values", short(v)))?;
        }
        match v {
            Value::Number(n) => self.check_number(n, p)?,
            Value::String(s) => {
                // UTF-8 holds a character in one to four bytes: the length in bytes
                // settles most bounds, and characters are counted only when it does not.
                let bytes = s.len() as u64;
                let fewest = bytes.div_ceil(4);
                let chars = || s.chars().count() as u64;
                if let Some(m) = self.min_length
                    && fewest < m
                    && (bytes < m || chars() < m)
                {
                    p.fail(|| format!("{} is shorter than {m} characters", short(v)))?;
                }
                if let Some(m) = self.max_length
                    && bytes > m
                    && (fewest > m || chars() > m)
                {
                    p.fail(|| format!("{} is longer than {m} characters", short(v)))?;
                }
            }
            Value::Array(items) => {
                let len = items.len() as u64;
                if let Some(m) = self.min_items
                    && len < m
                {
                    p.fail(|| format!("has fewer than {m} items"))?;
                }
                if let Some(m) = self.max_items
                    && len > m
                {
                    p.fail(|| format!("has more than {m} items"))?;
                }
                if let Some(item) = &self.items {
                    for (i, value) in items.iter().enumerate() {
                        let len = p.enter_index(i);
                        item.check(value, p)?;
                        p.leave(len);
                    }
                }
            }
            Value::Object(map) => self.check_object(map, p)?,
            _ => {}
        }
        self.check_applicators(v, p)
    }

    fn check_number(&self, n: &Number, p: &mut Problems) -> ControlFlow<()> {
        if let Some(m) = &self.minimum
            && cmp(n, m).is_lt()
        {
            p.fail(|| format!("{n} is less than the minimum of {m}"))?;
        }
        if let Some(m) = &self.maximum
            && cmp(n, m).is_gt()
        {
            p.fail(|| format!("{n} is greater than the maximum of {m}"))?;
        }
        if let Some(m) = &self.exclusive_minimum
            && cmp(n, m).is_le()
        {
            p.fail(|| format!("{n} is not greater than {m}"))?;
        }
        if let Some(m) = &self.exclusive_maximum
            && cmp(n, m).is_ge()
        {
            p.fail(|| format!("{n} is not less than {m}"))?;
        }
        ControlFlow::Continue(())
    }

    fn check_object(&self, map: &Map<String, Value>, p: &mut Problems) -> ControlFlow<()> {
        for name in &self.required {
            if !map.contains_key(name) {
                p.fail(|| format!("{:?} is a required property", quote(name)))?;
            }
        }
        for (name, value) in map {
            let node = match self.properties.iter().find(|(key, _)| key == name) {
                Some((_, node)) => node,
                None => match &self.additional {
                    Additional::Any => continue,
                    Additional::Never => {
                        let len = p.enter_key(name);
                        p.fail(|| format!("additional property {:?} is not allowed", quote(name)))?;
                        p.leave(len);
                        continue;
                    }
                    Additional::Schema(node) => node,
                },
            };
            let len = p.enter_key(name);
            node.check(value, p)?;
            p.leave(len);
        }
        ControlFlow::Continue(())
    }

    /// `allOf` (with `$ref`), `anyOf`, `oneOf`, `not` and `if`/`then`/`else`.
    fn check_applicators(&self, v: &Value, p: &mut Problems) -> ControlFlow<()> {
        for node in &self.all_of {
            node.check(v, p)?;
        }
        if !self.any_of.is_empty() && !self.any_of.iter().any(|n| n.is_valid(v)) {
            p.fail(|| {
                format!(
                    "{} is not valid under any of the schemas listed in 'anyOf'",
                    short(v)
                )
            })?;
        }
        if !self.one_of.is_empty() {
            let mut valid = self.one_of.iter().filter(|n| n.is_valid(v));
            match (valid.next(), valid.next()) {
                (None, _) => p.fail(|| {
                    format!(
                        "{} is not valid under any of the schemas listed in 'oneOf'",
                        short(v)
                    )
                })?,
                (Some(_), Some(_)) => p.fail(|| {
                    format!(
                        "{} is valid under more than one of the schemas listed in 'oneOf'",
                        short(v)
                    )
                })?,
                (Some(_), None) => {}
            }
        }
        if let Some(not) = &self.not
            && not.is_valid(v)
        {
            p.fail(|| format!("{} must not be valid under the schema in 'not'", short(v)))?;
        }
        if let Some(c) = &self.condition {
            let branch = if c.test.is_valid(v) {
                &c.then
            } else {
                &c.otherwise
            };
            if let Some(node) = branch {
                node.check(v, p)?;
            }
        }
        ControlFlow::Continue(())
    }
}

/// Problems found so far, and the instance path of the value being checked.
struct Problems {
    /// Descriptions, at most `limit` of them.
    list: Vec<String>,
    limit: usize,
    /// Whether any problem was found, described or not.
    failed: bool,
    /// JSON pointer to the current value; kept only when describing (`limit > 0`).
    path: String,
}

impl Problems {
    fn new(limit: usize) -> Self {
        Problems {
            list: Vec::new(),
            limit,
            failed: false,
            path: String::new(),
        }
    }

    /// Records a problem at the current path; breaks once no more are wanted.
    fn fail(&mut self, message: impl FnOnce() -> String) -> ControlFlow<()> {
        self.failed = true;
        if self.list.len() < self.limit {
            let message = message();
            self.list.push(if self.path.is_empty() {
                message
            } else {
                format!("{}: {message}", quote(&self.path))
            });
        }
        if self.list.len() >= self.limit {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    /// Steps into property `name`; returns the path length to restore with `leave`.
    fn enter_key(&mut self, name: &str) -> usize {
        let len = self.path.len();
        if self.limit > 0 {
            self.path.push('/');
            escape_pointer(name, &mut self.path);
        }
        len
    }

    /// Steps into array item `i`; returns the path length to restore with `leave`.
    fn enter_index(&mut self, i: usize) -> usize {
        let len = self.path.len();
        if self.limit > 0 {
            use std::fmt::Write;
            let _ = write!(self.path, "/{i}");
        }
        len
    }

    fn leave(&mut self, len: usize) {
        self.path.truncate(len);
    }
}

/// Builds the nodes of one schema document, inlining its references.
struct Builder<'a> {
    root: &'a Value,
    /// The root and the targets of the references being expanded: meeting one of them
    /// again means the schema is recursive.
    expanding: Vec<&'a Value>,
    /// The document's anchors, indexed on first use.
    anchors: Option<Anchors<'a>>,
    /// Nodes built so far.
    nodes: usize,
    /// Data copied so far (see `COPY_LIMIT`).
    copied: usize,
    /// Current nesting depth.
    depth: usize,
}

/// The `$anchor`s of a document.
struct Anchors<'a> {
    /// Each name with its subschema; `None` when the name occurs more than once, or
    /// somewhere the subset does not keep a schema.
    names: HashMap<&'a str, Option<&'a Value>>,
    /// Whether a subschema below the root has an `$id`, starting a resource of its own
    /// (whose anchors `#name` on the root would not reach).
    embedded: bool,
}

impl<'a> Anchors<'a> {
    /// Indexes the anchors of the document `root` in one walk.
    fn of(root: &'a Value) -> Self {
        let mut anchors = Anchors {
            names: HashMap::new(),
            embedded: false,
        };
        visit(root, true, &mut |value, schema| {
            if let Some(name) = value.get("$anchor").and_then(Value::as_str) {
                anchors
                    .names
                    .entry(name)
                    .and_modify(|found| *found = None)
                    .or_insert(schema.then_some(value));
            }
            if schema && !std::ptr::eq(value, root) && value.get("$id").is_some() {
                anchors.embedded = true;
            }
        });
        anchors
    }
}

impl<'a> Builder<'a> {
    /// Builds one subschema (boxed, to keep the recursion's stack frames small).
    fn node(&mut self, schema: &'a Value) -> Option<Box<Node>> {
        self.nodes += 1;
        if self.nodes > NODE_LIMIT || self.depth >= DEPTH_LIMIT {
            return None;
        }
        self.depth += 1;
        let node = self.keywords(schema);
        self.depth -= 1;
        node
    }

    fn keywords(&mut self, schema: &'a Value) -> Option<Box<Node>> {
        let mut node = Box::<Node>::default();
        let map = match schema {
            Value::Bool(true) => return Some(node),
            Value::Bool(false) => {
                node.never = true;
                return Some(node);
            }
            Value::Object(m) => m,
            _ => return None,
        };
        let is_root = std::ptr::eq(schema, self.root);
        let (mut test, mut then, mut otherwise) = (None, None, None);
        for (key, value) in map {
            match key.as_str() {
                "type" => node.types = Some(types(value)?),
                "properties" => node.properties = self.properties(value)?,
                "required" => {
                    for name in value.as_array()? {
                        let name = name.as_str()?;
                        self.charge(name.len() + 1)?;
                        node.required.push(name.to_owned());
                    }
                }
                "additionalProperties" => {
                    node.additional = match value {
                        Value::Bool(true) => Additional::Any,
                        Value::Bool(false) => Additional::Never,
                        other => Additional::Schema(self.node(other)?),
                    }
                }
                "items" => node.items = Some(self.node(value)?),
                "enum" => {
                    let list = value.as_array()?;
                    self.charge(weight(value))?;
                    node.allowed = Some(list.clone());
                }
                "const" => {
                    self.charge(weight(value))?;
                    node.constant = Some(value.clone());
                }
                "minimum" => node.minimum = Some(number(value)?),
                "maximum" => node.maximum = Some(number(value)?),
                "exclusiveMinimum" => node.exclusive_minimum = Some(number(value)?),
                "exclusiveMaximum" => node.exclusive_maximum = Some(number(value)?),
                "minLength" => node.min_length = Some(count(value)?),
                "maxLength" => node.max_length = Some(count(value)?),
                "minItems" => node.min_items = Some(count(value)?),
                "maxItems" => node.max_items = Some(count(value)?),
                "allOf" => node.all_of.extend(self.list(value)?),
                "anyOf" => node.any_of = self.list(value)?,
                "oneOf" => node.one_of = self.list(value)?,
                "not" => node.not = Some(self.node(value)?),
                "if" => test = Some(schema_value(value)?),
                "then" => then = Some(schema_value(value)?),
                "else" => otherwise = Some(schema_value(value)?),
                "$ref" => node.all_of.push(self.reference(value.as_str()?)?),
                // Containers: members are inlined where they are referenced, and each is
                // also built once here, so a broken definition nobody references is still
                // refused (by the general validator, which checks the whole document).
                "$defs" | "definitions" => {
                    for member in value.as_object()?.values() {
                        self.node(member)?;
                    }
                }
                "$anchor" if value.as_str().is_some_and(anchor_name) => {}
                "$id" if is_root && value.as_str().is_some_and(root_id) => {}
                k if ANNOTATIONS.contains(&k) || k.starts_with("x-") => {}
                _ => return None,
            }
        }
        // `then` and `else` without `if`, and `if` without either, have no effect.
        if let Some(test) = test
            && (then.is_some() || otherwise.is_some())
        {
            let test = self.node(test)?;
            let then = match then {
                Some(s) => Some(self.node(s)?),
                None => None,
            };
            let otherwise = match otherwise {
                Some(s) => Some(self.node(s)?),
                None => None,
            };
            node.condition = Some(Condition {
                test,
                then,
                otherwise,
            });
        }
        Some(node)
    }

    /// The members of `allOf`, `anyOf` or `oneOf`: a non-empty array of schemas.
    fn list(&mut self, value: &'a Value) -> Option<Vec<Node>> {
        let members = value.as_array().filter(|m| !m.is_empty())?;
        members.iter().map(|s| self.node(s).map(|n| *n)).collect()
    }

    /// The members of `properties`, by name.
    fn properties(&mut self, value: &'a Value) -> Option<Vec<(String, Node)>> {
        let members = value.as_object()?;
        members
            .iter()
            .map(|(name, s)| {
                self.charge(name.len() + 1)?;
                Some((name.clone(), *self.node(s)?))
            })
            .collect()
    }

    /// Counts `amount` of copied data against `COPY_LIMIT`.
    fn charge(&mut self, amount: usize) -> Option<()> {
        self.copied = self.copied.saturating_add(amount);
        (self.copied <= COPY_LIMIT).then_some(())
    }

    /// The target of a local `$ref`, built in place.
    fn reference(&mut self, reference: &str) -> Option<Node> {
        let target = self.resolve(reference)?;
        if self.expanding.iter().any(|t| std::ptr::eq(*t, target)) {
            return None;
        }
        self.expanding.push(target);
        let node = self.node(target);
        self.expanding.pop();
        node.map(|n| *n)
    }

    /// Finds the subschema a local reference (`#`, `#/pointer` or `#anchor`) names.
    fn resolve(&mut self, reference: &str) -> Option<&'a Value> {
        let fragment = reference.strip_prefix('#')?;
        // Percent-encoding and characters a URI fragment cannot hold are left to the
        // general validator.
        if !fragment.bytes().all(fragment_byte) {
            return None;
        }
        if fragment.is_empty() {
            return Some(self.root);
        }
        match fragment.strip_prefix('/') {
            Some(pointer) => pointer_target(self.root, pointer),
            None => {
                let root = self.root;
                let anchors = self.anchors.get_or_insert_with(|| Anchors::of(root));
                if anchors.embedded {
                    return None;
                }
                anchors.names.get(fragment).copied().flatten()
            }
        }
    }
}

/// `value` if it can be a schema (an object or a boolean).
fn schema_value(value: &Value) -> Option<&Value> {
    matches!(value, Value::Object(_) | Value::Bool(_)).then_some(value)
}

/// Whether `name` is a valid `$anchor` in both 2020-12 and 2019-09.
fn anchor_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
}

/// Whether `id` is a plain `$id` for the root: a URI without a fragment (an empty
/// one aside) and without characters that need percent-encoding.
fn root_id(id: &str) -> bool {
    let id = id.strip_suffix('#').unwrap_or(id);
    !id.is_empty() && id.bytes().all(|b| b != b'%' && fragment_byte(b))
}

/// Whether `b` may appear, unencoded, in a URI fragment (RFC 3986), `%` excepted.
fn fragment_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&b)
}

/// Follows a JSON pointer (the part after `#/`) from `root`.
fn pointer_target<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut at = root;
    for token in pointer.split('/') {
        // A pointer into an embedded resource would be resolved against its own `$id`.
        if !std::ptr::eq(at, root) && at.get("$id").is_some() {
            return None;
        }
        let token = unescape(token)?;
        at = match at {
            Value::Object(map) => map.get(&token)?,
            Value::Array(list) => list.get(array_index(&token)?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Decodes `~0` and `~1` in a JSON pointer token.
fn unescape(token: &str) -> Option<String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '~' => match chars.next()? {
                '0' => '~',
                '1' => '/',
                _ => return None,
            },
            c => c,
        });
    }
    Some(out)
}

/// An array index token: digits without a leading zero.
fn array_index(token: &str) -> Option<usize> {
    let canonical = token == "0" || (!token.starts_with('0') && !token.is_empty());
    if canonical && token.bytes().all(|b| b.is_ascii_digit()) {
        token.parse().ok()
    } else {
        None
    }
}

/// How much data copying `value` takes: string bytes plus one per JSON value.
fn weight(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len() + 1,
        Value::Array(list) => list.iter().map(weight).sum::<usize>() + 1,
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + weight(v)).sum::<usize>() + 1,
        _ => 1,
    }
}

/// Where a keyword of the subset keeps its subschemas.
enum Subschemas {
    One,
    Map,
    List,
    Elsewhere,
}

fn subschemas(keyword: &str) -> Subschemas {
    match keyword {
        "additionalProperties" | "items" | "not" | "if" | "then" | "else" => Subschemas::One,
        "properties" | "$defs" | "definitions" => Subschemas::Map,
        "allOf" | "anyOf" | "oneOf" => Subschemas::List,
        _ => Subschemas::Elsewhere,
    }
}

/// Calls `f` on `value` and everything inside it, saying whether each sits where the
/// subset's keywords keep a schema.
fn visit<'a>(value: &'a Value, schema: bool, f: &mut impl FnMut(&'a Value, bool)) {
    f(value, schema);
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let place = if schema {
                    subschemas(key)
                } else {
                    Subschemas::Elsewhere
                };
                match (place, child) {
                    (Subschemas::One, _) => visit(child, true, f),
                    (Subschemas::Map, Value::Object(members)) => {
                        f(child, false);
                        members.values().for_each(|m| visit(m, true, f));
                    }
                    (Subschemas::List, Value::Array(members)) => {
                        f(child, false);
                        members.iter().for_each(|m| visit(m, true, f));
                    }
                    _ => visit(child, false, f),
                }
            }
        }
        Value::Array(list) => list.iter().for_each(|m| visit(m, false, f)),
        _ => {}
    }
}

fn types(value: &Value) -> Option<u8> {
    let one = |s: &str| {
        Some(match s {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "number" => NUMBER | INTEGER,
            "string" => STRING,
            "integer" => INTEGER,
            _ => return None,
        })
    };
    match value {
        Value::String(s) => one(s),
        Value::Array(list) if !list.is_empty() => list
            .iter()
            .try_fold(0u8, |acc, t| Some(acc | one(t.as_str()?)?)),
        _ => None,
    }
}

fn type_of(v: &Value) -> u8 {
    match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        // 1.0 is an integer in JSON Schema.
        Value::Number(n) if is_integral(n) => INTEGER,
        Value::Number(_) => NUMBER,
    }
}

fn type_names(t: u8) -> String {
    let mut names = Vec::new();
    for (bit, name) in [
        (NULL, "null"),
        (BOOLEAN, "boolean"),
        (OBJECT, "object"),
        (ARRAY, "array"),
        (NUMBER, "number"),
        (STRING, "string"),
    ] {
        if t & bit != 0 {
            names.push(name);
        }
    }
    if t & INTEGER != 0 && t & NUMBER == 0 {
        names.push("integer");
    }
    names.join(" or ")
}

fn number(v: &Value) -> Option<Number> {
    match v {
        Value::Number(n) => Some(n.clone()),
        _ => None,
    }
}

fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        _ => None,
    }
}

fn is_integral(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Compares two JSON numbers by value, exactly for integers.
fn cmp(a: &Number, b: &Number) -> std::cmp::Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    let (x, y) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
}

/// JSON Schema equality: numbers by value (1 equals 1.0), objects regardless of order.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp(x, y).is_eq(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn escape_pointer(name: &str, out: &mut String) {
    for c in name.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

fn short(v: &Value) -> String {
    quote(&v.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::{Duration, Instant};

    /// The schema from the 2020-12 examples: definitions, an anchor, all kinds of
    /// applicators.
    fn contact_schema() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                "required": ["street", "city"]}},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string", "format": "email"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        })
    }

    /// What `schemars` derives for a struct with an enum field and an optional struct.
    fn schemars_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "mode": {"$ref": "#/$defs/Mode"},
                "opt": {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}]}
            },
            "$defs": {
                "Mode": {"oneOf": [
                    {"type": "string", "const": "fast", "description": "d"},
                    {"type": "string", "const": "slow"}
                ]},
                "Inner": {"type": "object", "properties": {"x": {"type": "integer", "format": "int32"}},
                          "required": ["x"]}
            }
        })
    }

    /// Every verdict of the subset validator equals the `jsonschema` crate's.
    #[test]
    fn agrees_with_jsonschema() {
        let schemas = [
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 255}},
                   "additionalProperties": false}),
            json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "minLength": 2},
                   "minItems": 1, "maxItems": 2}}}),
            json!({"type": ["string", "null"]}),
            json!({"enum": ["a", 1, null, {"x": [1]}]}),
            json!({"const": 2}),
            json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5}),
            json!({"type": "string", "maxLength": 3, "format": "email"}),
            json!({"type": "object", "additionalProperties": {"type": "boolean"}}),
            json!({"type": "object", "properties": {"a": false, "b": true}}),
            json!(true),
            json!(false),
            json!({"type": "integer"}),
            json!({"type": "object", "properties": {"big": {"type": "integer", "maximum": 9007199254740993_u64}}}),
            // Applicators.
            json!({"allOf": [{"type": "object"}, {"required": ["a"]}, true]}),
            json!({"allOf": [{"type": "integer"}, false]}),
            json!({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}]}),
            json!({"anyOf": [false, {"const": null}]}),
            json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
            json!({"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 1}, {"const": null}]}),
            json!({"oneOf": [{"required": ["a"]}, {"required": ["b"]}], "type": "object"}),
            json!({"not": {"type": "string"}}),
            json!({"not": {"const": 1}}),
            json!({"not": true}),
            json!({"not": {"not": {"type": "array"}}}),
            json!({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}}),
            json!({"if": {"type": "string"}, "then": {"minLength": 2}}),
            json!({"if": {"type": "string"}, "else": {"type": "integer"}}),
            json!({"if": {"type": "string"}}),
            json!({"then": false}),
            json!({"else": false}),
            json!({"if": false, "then": false, "else": {"type": "object"}}),
            json!({"if": true, "then": {"type": "boolean"}}),
            json!({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]},
                   "else": {"properties": {"b": false}}}),
            // References.
            contact_schema(),
            json!({"type": "object", "properties": {"home": {"$ref": "#addressDef"}, "work": {"$ref": "#addressDef"}},
                   "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                       "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                       "required": ["street", "city"]}}}),
            json!({"$ref": "#/$defs/base", "properties": {"extra": {"type": "integer"}}, "required": ["extra"],
                   "$defs": {"base": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}}}),
            json!({"$ref": "#/$defs/base", "properties": {"n": true}, "additionalProperties": false,
                   "$defs": {"base": {"type": "object", "properties": {"id": {"type": "string"}}}}}),
            json!({"$ref": "#/$defs/a",
                   "$defs": {"a": {"type": "object", "properties": {"tags": {"$ref": "#/$defs/b"}, "n": {"$ref": "#/$defs/c"}}},
                             "b": {"type": "array", "items": {"$ref": "#/$defs/c"}},
                             "c": {"type": ["integer", "string"], "minimum": 1, "minLength": 2}}}),
            json!({"properties": {"text": {"$ref": "#/definitions/t"}}, "definitions": {"t": {"type": "string"}}}),
            json!({"properties": {"n": {"type": "integer"}, "big": {"$ref": "#/properties/n", "minimum": 10}}}),
            json!({"properties": {"a": {"$ref": "#/$defs/x~1y~0z"}}, "$defs": {"x/y~z": {"type": "boolean"}}}),
            json!({"anyOf": [{"type": "object"}, {"type": "null"}], "properties": {"x": {"$ref": "#/anyOf/1"}}}),
            json!({"$id": "https://example.com/schemas/root.json", "properties": {"n": {"$ref": "#/$defs/n"}},
                   "$defs": {"n": {"type": "integer"}}}),
            json!({"properties": {"a": {"$ref": "#/$defs/t"}}, "$defs": {"t": true, "f": false}}),
            json!({"properties": {"a": {"$ref": "#/$defs/f"}}, "$defs": {"t": true, "f": false}}),
            json!({"properties": {"tag": {"$ref": "#tag"}}, "$defs": {"x": {"anyOf": [{"$anchor": "tag", "enum": ["a", "ab"]}]}}}),
            schemars_schema(),
        ];
        let instances = [
            json!({}),
            json!({"text": "hi"}),
            json!({"text": 3}),
            json!({"n": 0}),
            json!({"n": 255}),
            json!({"n": 256}),
            json!({"n": -1}),
            json!({"n": 3.0}),
            json!({"n": 3.5}),
            json!({"n": 1, "extra": true}),
            json!({"n": 1, "id": "x"}),
            json!({"n": "ab"}),
            json!({"n": "a"}),
            json!({"tags": []}),
            json!({"tags": ["ab"]}),
            json!({"tags": ["a"]}),
            json!({"tags": ["ab", "cd", "ef"]}),
            json!({"tags": [1, 0, "ab"]}),
            json!("héllo"),
            json!("héé"),
            json!("abcd"),
            json!(null),
            json!("a"),
            json!("ab"),
            json!(""),
            json!(1),
            json!(1.0),
            json!(2),
            json!(2.0),
            json!(0),
            json!(0.5),
            json!(1.5),
            json!({"x": [1]}),
            json!({"x": [1.0]}),
            json!({"x": null}),
            json!({"x": 1}),
            json!({"a": 1}),
            json!({"b": 1}),
            json!({"a": 1, "b": 2}),
            json!({"a": true, "b": "x"}),
            json!({"k": true, "j": "no"}),
            json!([1, 2]),
            json!([]),
            json!(true),
            json!({"big": 9007199254740993_u64}),
            json!({"big": 9007199254740994_u64}),
            json!({"big": 5}),
            json!({"big": 12}),
            json!({"tag": "ab"}),
            json!({"tag": "b"}),
            // The contact schema.
            json!({"name": "A", "contactMethod": "phone", "phone": "1"}),
            json!({"name": "A", "contactMethod": "phone", "email": "a@b"}),
            json!({"name": "A", "contactMethod": "email", "email": "a@b"}),
            json!({"name": "A", "phone": "1"}),
            json!({"name": "A", "email": "a@b"}),
            json!({"name": "A", "email": "a@b", "address": {"street": "S", "city": "C"}}),
            json!({"name": "A", "email": "a@b", "address": {"street": "S"}}),
            json!({"email": "a@b", "address": {"street": "S", "city": 3}}),
            json!({"email": "a@b", "nickname": "x"}),
            json!({"contactMethod": "fax", "email": "a@b"}),
            json!({"home": {"street": "S", "city": "C"}}),
            json!({"home": {"street": "S", "city": "C"}, "work": {"city": "C"}}),
            json!({"home": []}),
            // `$ref` with siblings.
            json!({"id": "x", "extra": 1}),
            json!({"id": "x"}),
            json!({"extra": 1}),
            json!({"id": 1, "extra": 1}),
            json!({"n": 1}),
            json!({"a": false}),
            // The schemars schema.
            json!({"mode": "fast"}),
            json!({"mode": "slow", "opt": null}),
            json!({"mode": "medium"}),
            json!({"mode": 1}),
            json!({"opt": {"x": 1}}),
            json!({"opt": {"x": 1.5}}),
            json!({"opt": {}}),
            json!({"opt": "x"}),
        ];
        let mut built = 0;
        for schema in &schemas {
            let node = Node::build(schema).unwrap_or_else(|| panic!("in the subset: {schema}"));
            let reference = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(schema)
                .expect("valid schema");
            for instance in &instances {
                let expected = reference.is_valid(instance);
                let verdict = node.validate(instance, 8);
                assert_eq!(
                    verdict.is_ok(),
                    expected,
                    "schema {schema} instance {instance}: {verdict:?}"
                );
                assert_eq!(node.is_valid(instance), expected, "{schema} {instance}");
                assert_eq!(node.validate(instance, 0).is_ok(), expected);
                assert_eq!(node.validate(instance, 1).is_ok(), expected);
                if let Err(message) = verdict {
                    assert!(!message.is_empty(), "{schema} {instance}");
                }
            }
            built += 1;
        }
        assert_eq!(built, schemas.len());
    }

    /// String length bounds over strings of one- to four-byte characters, where a
    /// string's length in bytes settles a bound or does not, agree with `jsonschema`.
    #[test]
    fn string_lengths_count_characters() {
        let strings = [
            "",
            "a",
            "é",
            "😀",
            "ab",
            "aé",
            "é😀",
            "😀😀",
            "abcd",
            "éééé",
            "😀a",
            "abcdefgh",
            "😀😀😀",
            "ééé😀a",
        ];
        for bound in 0..=9u64 {
            for keyword in ["minLength", "maxLength"] {
                let schema = json!({"type": "string", keyword: bound});
                let node = Node::build(&schema).expect("in the subset");
                let reference = jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(&schema)
                    .expect("valid schema");
                for s in strings {
                    let instance = json!(s);
                    assert_eq!(
                        node.is_valid(&instance),
                        reference.is_valid(&instance),
                        "{schema} {instance}"
                    );
                }
            }
        }
    }

    #[test]
    fn other_keywords_leave_the_subset() {
        for schema in [
            json!({"type": "string", "pattern": "^a"}),
            json!({"type": "object", "patternProperties": {"^a": {}}}),
            json!({"type": "array", "uniqueItems": true}),
            json!({"type": "array", "items": [{"type": "string"}]}),
            json!({"type": "mystery"}),
            json!({"minLength": "3"}),
            json!({"anyOf": []}),
            json!({"oneOf": {"type": "string"}}),
            json!({"if": 3, "then": true}),
            // Recursion goes to the general validator.
            json!({"$ref": "#/$defs/n", "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}}),
            // Definitions are built even when unreferenced, so a recursive one leaves too.
            json!({"$defs": {"unused": {"$ref": "#/$defs/unused"}}, "type": "object"}),
            json!({"properties": {"self": {"$ref": "#"}}}),
            json!({"properties": {"p": {"properties": {"q": {"$ref": "#/properties/p"}}}}}),
            json!({"$ref": "#a", "$defs": {"a": {"$anchor": "a", "items": {"$ref": "#/$defs/a"}}}}),
            // Remote and dynamic references, and ones that do not resolve.
            json!({"$ref": "https://example.com/remote.json"}),
            json!({"$ref": "other.json#/$defs/x"}),
            json!({"$dynamicRef": "#meta", "$defs": {"m": {"$dynamicAnchor": "meta"}}}),
            json!({"$recursiveRef": "#"}),
            json!({"$ref": "#missing", "$defs": {"a": {"$anchor": "present"}}}),
            json!({"$ref": "#twice", "$defs": {"a": {"$anchor": "twice"}, "b": {"$anchor": "twice"}}}),
            json!({"$ref": "#/$defs/missing", "$defs": {}}),
            json!({"$ref": "#a", "$defs": {"x": {"$anchor": "a"}}, "const": {"$anchor": "a"}}),
            json!({"$ref": "#a", "const": {"$anchor": "a"}}),
            json!({"$ref": "#/$defs/a%20b", "$defs": {"a b": {}}}),
            json!({"$ref": "#/$defs/a b", "$defs": {"a b": {}}}),
            json!({"$ref": "#/$defs/a~2", "$defs": {"a~2": {}}}),
            json!({"$ref": "#/$defs/a/01", "$defs": {"a": [{}, {}]}}),
            json!({"$ref": 3}),
            // `$id` is allowed on the root only.
            json!({"properties": {"a": {"$id": "https://example.com/a.json", "type": "string"}}}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"$id": "a.json"}}}),
            json!({"$ref": "#/$defs/a/$defs/b", "$defs": {"a": {"$id": "a.json", "$defs": {"b": {}}}}}),
            json!({"$ref": "#x", "$defs": {"a": {"$id": "a.json", "$defs": {"b": {"$anchor": "x"}}}}}),
            json!({"$id": "https://example.com/a.json#frag"}),
            json!({"$anchor": "1bad"}),
        ] {
            assert!(Node::build(&schema).is_none(), "{schema}");
        }
    }

    #[test]
    fn messages_name_the_path() {
        let node = Node::build(
            &json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {"b/c": {"type": "integer"}}}}, "required": ["z"]}),
        )
        .expect("subset");
        let err = node.validate(&json!({"a": {"b/c": "x"}}), 8).unwrap_err();
        assert!(err.contains("\"z\" is a required property"), "{err}");
        assert!(
            err.contains("/a/b~1c: \"x\" is not of type integer"),
            "{err}"
        );
    }

    #[test]
    fn messages_from_a_reference_name_the_instance_path() {
        let node = Node::build(&json!({
            "type": "object",
            "properties": {"list": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
            "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "integer"}},
                               "required": ["id"]}}
        }))
        .expect("subset");
        let err = node
            .validate(&json!({"list": [{"id": 1}, {"n": "x"}]}), 8)
            .unwrap_err();
        assert!(
            err.contains("/list/1: \"id\" is a required property"),
            "{err}"
        );
        assert!(
            err.contains("/list/1/n: \"x\" is not of type integer"),
            "{err}"
        );
        assert!(!err.contains("/list/0"), "{err}");
    }

    #[test]
    fn applicator_messages() {
        let check = |schema: Value, instance: Value, expected: &str| {
            let node = Node::build(&schema).expect("subset");
            let err = node.validate(&instance, 8).unwrap_err();
            assert_eq!(err, expected, "{schema} {instance}");
        };
        check(
            json!({"properties": {"v": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}),
            json!({"v": 1}),
            "/v: 1 is not valid under any of the schemas listed in 'anyOf'",
        );
        check(
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            json!(1),
            "1 is not valid under any of the schemas listed in 'oneOf'",
        );
        check(
            json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
            json!(1),
            "1 is valid under more than one of the schemas listed in 'oneOf'",
        );
        check(
            json!({"not": {"type": "string"}}),
            json!("s"),
            "\"s\" must not be valid under the schema in 'not'",
        );
        check(
            json!({"allOf": [{"minimum": 2}, {"maximum": 0}]}),
            json!(1),
            "1 is less than the minimum of 2; 1 is greater than the maximum of 0",
        );
        check(
            json!({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}}),
            json!("a"),
            "\"a\" is shorter than 2 characters",
        );
        check(
            json!({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}}),
            json!(1.5),
            "1.5 is not of type integer",
        );
        // The limit caps the problems described, never the verdict.
        let node =
            Node::build(&json!({"allOf": [{"minimum": 2}, {"maximum": 0}]})).expect("subset");
        assert_eq!(
            node.validate(&json!(1), 1).unwrap_err(),
            "1 is less than the minimum of 2"
        );
        assert_eq!(node.validate(&json!(1), 0), Err(String::new()));
    }

    #[test]
    fn reference_fan_out_is_capped() {
        // Each definition refers twice to the next: 2^40 nodes if inlined in full.
        let mut defs = Map::new();
        for i in 0..40 {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("d40".into(), json!({"type": "string"}));
        let schema = json!({"$ref": "#/$defs/d0", "$defs": defs});
        let start = Instant::now();
        assert!(Node::build(&schema).is_none());
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );

        // A fan-out that fits stays on the fast path.
        let mut defs = Map::new();
        for i in 0..8 {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("d8".into(), json!({"type": "string"}));
        let node = Node::build(&json!({"$ref": "#/$defs/d0", "$defs": defs})).expect("subset");
        assert!(node.is_valid(&json!("s")));
        assert!(!node.is_valid(&json!(1)));
    }

    #[test]
    fn copies_through_references_are_capped() {
        // 256 copies of a 30 kB `enum`, in well under `NODE_LIMIT` nodes.
        let fanned = |values: usize| {
            let mut defs = Map::new();
            for i in 0..8 {
                let next = format!("#/$defs/d{}", i + 1);
                defs.insert(
                    format!("d{i}"),
                    json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
                );
            }
            let list: Vec<Value> = (0..values)
                .map(|i| json!(format!("value-{i:08}")))
                .collect();
            defs.insert("d8".into(), json!({"enum": list}));
            json!({"$ref": "#/$defs/d0", "$defs": defs})
        };
        assert!(Node::build(&fanned(2000)).is_none());
        let node = Node::build(&fanned(20)).expect("subset");
        assert!(node.is_valid(&json!("value-00000003")));
        assert!(!node.is_valid(&json!("value-3")));
    }

    #[test]
    fn long_reference_chains_are_capped() {
        let mut defs = Map::new();
        for i in 0..1000 {
            defs.insert(
                format!("d{i}"),
                json!({"$ref": format!("#/$defs/d{}", i + 1)}),
            );
        }
        defs.insert("d1000".into(), json!(true));
        assert!(Node::build(&json!({"$ref": "#/$defs/d0", "$defs": defs})).is_none());
    }
}
