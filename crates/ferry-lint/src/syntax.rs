//! The few syntax shapes the rules look at, read the same way in every grammar: string
//! literals (their whole constant value), calls (callee name and receiver), key/value pairs
//! (object properties, keyword arguments, struct and composite-literal fields) and member
//! accesses.

use std::borrow::Cow;

use tree_sitter::Node;

use crate::language::Family;

/// The source text of a node (empty when the range is not valid UTF-8 boundaries, which
/// tree-sitter never produces for UTF-8 input).
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// Is this node a string literal of the language?
pub(crate) fn is_string(node: Node<'_>, fam: Family) -> bool {
    is_string_kind(node.kind(), fam)
}

/// Is this node kind a string literal of the language?
pub(crate) fn is_string_kind(kind: &str, fam: Family) -> bool {
    matches!(
        (fam, kind),
        (Family::Python, "string")
            | (Family::Js, "string" | "template_string")
            | (Family::Rust, "string_literal" | "raw_string_literal")
            | (
                Family::Go,
                "interpreted_string_literal" | "raw_string_literal"
            )
    )
}

/// The constant value of a string literal: `None` for a literal with interpolation
/// (f-strings, template literals with `${}`), or for a node that is no string.
pub(crate) fn string_value<'s>(node: Node<'_>, src: &'s str, fam: Family) -> Option<Cow<'s, str>> {
    if !is_string(node, fam) {
        return None;
    }
    let mut parts: Vec<Cow<'s, str>> = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "string_content"
            | "string_fragment"
            | "interpreted_string_literal_content"
            | "raw_string_literal_content" => parts.push(Cow::Borrowed(text(child, src))),
            "escape_sequence" => parts.push(unescape(text(child, src))),
            "interpolation" | "template_substitution" => return None,
            _ => {}
        }
    }
    Some(match parts.len() {
        0 => Cow::Borrowed(""),
        1 => parts.pop().unwrap_or_default(),
        _ => Cow::Owned(parts.concat()),
    })
}

/// The character an escape sequence stands for (common forms; others stay as written).
fn unescape(escape: &str) -> Cow<'_, str> {
    let body = escape.strip_prefix('\\').unwrap_or(escape);
    let simple = match body {
        "n" => "\n",
        "t" => "\t",
        "r" => "\r",
        "0" => "\0",
        "\\" => "\\",
        "\"" => "\"",
        "'" => "'",
        "/" => "/",
        "`" => "`",
        _ => "",
    };
    if !simple.is_empty() {
        return Cow::Borrowed(simple);
    }
    let hex = body
        .strip_prefix("u{")
        .and_then(|h| h.strip_suffix('}'))
        .or_else(|| body.strip_prefix('u'))
        .or_else(|| body.strip_prefix('x'));
    match hex
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .and_then(char::from_u32)
    {
        Some(c) => Cow::Owned(c.to_string()),
        None => Cow::Borrowed(escape),
    }
}

/// A call: what is called and on what.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Call<'t> {
    /// The callee's own name: `create_message` in `ctx.session.create_message(...)`.
    pub name: Node<'t>,
    /// The whole callee expression.
    pub callee: Node<'t>,
    /// The receiver, for method calls and path calls (`a::b()`).
    pub receiver: Option<Node<'t>>,
    /// The argument list.
    pub arguments: Option<Node<'t>>,
}

/// Reads a call expression (or a `new` expression in JavaScript).
pub(crate) fn call(node: Node<'_>, fam: Family) -> Option<Call<'_>> {
    let (callee, arguments) = match (fam, node.kind()) {
        (Family::Python, "call")
        | (Family::Js, "call_expression")
        | (Family::Rust, "call_expression")
        | (Family::Go, "call_expression") => (
            node.child_by_field_name("function")?,
            node.child_by_field_name("arguments"),
        ),
        (Family::Js, "new_expression") => (
            node.child_by_field_name("constructor")?,
            node.child_by_field_name("arguments"),
        ),
        _ => return None,
    };
    let (name, receiver) = split_callee(callee)?;
    Some(Call {
        name,
        callee,
        receiver,
        arguments,
    })
}

/// The name and receiver of a callee expression.
/// (A loop, not recursion, through wrappers: a file of deeply nested parentheses cannot
/// exhaust the stack.)
fn split_callee(callee: Node<'_>) -> Option<(Node<'_>, Option<Node<'_>>)> {
    let mut callee = callee;
    loop {
        callee = match callee.kind() {
            "identifier" | "property_identifier" | "field_identifier" | "type_identifier" => {
                return Some((callee, None));
            }
            "attribute"
            | "member_expression"
            | "field_expression"
            | "selector_expression"
            | "scoped_identifier" => {
                let (object, property) = member_fields(callee)?;
                return Some((property, Some(object)));
            }
            // Rust `f::<T>()`, TypeScript `f<T>()` (instantiation), Go `F[T]()`.
            "generic_function" | "instantiation_expression" | "generic_type" => callee
                .child_by_field_name("function")
                .or(callee.named_child(0))?,
            "parenthesized_expression" | "non_null_expression" | "await" | "await_expression" => {
                callee.named_child(0)?
            }
            _ => return None,
        };
    }
}

/// The object and property of a member access in any grammar.
pub(crate) fn member_fields(node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    let (object, property) = match node.kind() {
        "attribute" => ("object", "attribute"),
        "member_expression" => ("object", "property"),
        "field_expression" => ("value", "field"),
        "selector_expression" => ("operand", "field"),
        "scoped_identifier" | "scoped_type_identifier" => ("path", "name"),
        _ => return None,
    };
    Some((
        node.child_by_field_name(object)?,
        node.child_by_field_name(property)?,
    ))
}

/// The last segment of an expression that names an object: `session` for `ctx.session`,
/// `peer()` for `client.peer()`, `this` for `this`; `None` for other expressions.
pub(crate) fn tail<'s>(node: Node<'_>, src: &'s str) -> Option<Cow<'s, str>> {
    let mut node = node;
    loop {
        node = match node.kind() {
            "identifier"
            | "this"
            | "self"
            | "type_identifier"
            | "property_identifier"
            | "field_identifier"
            | "package_identifier" => return Some(Cow::Borrowed(text(node, src))),
            "attribute"
            | "member_expression"
            | "field_expression"
            | "selector_expression"
            | "scoped_identifier" => {
                let (_, property) = member_fields(node)?;
                return Some(Cow::Borrowed(text(property, src)));
            }
            "call" | "call_expression" => {
                let callee = node.child_by_field_name("function")?;
                let (name, _) = split_callee(callee)?;
                return Some(Cow::Owned(format!("{}()", text(name, src))));
            }
            "parenthesized_expression"
            | "non_null_expression"
            | "await"
            | "await_expression"
            | "try_expression"
            | "reference_expression"
            | "unary_expression" => node.named_child(0)?,
            _ => return None,
        };
    }
}

/// A key/value pair: an object property, a dictionary entry with a string key, a keyword
/// argument, a struct field initializer or a keyed composite-literal element.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pair<'t> {
    /// The key node.
    pub key: Node<'t>,
    /// The value node (for shorthand forms, the same as the key).
    pub value: Node<'t>,
}

/// Reads a pair.
pub(crate) fn pair(node: Node<'_>, fam: Family) -> Option<Pair<'_>> {
    let (key, value) = match (fam, node.kind()) {
        (Family::Python, "keyword_argument") => (
            node.child_by_field_name("name")?,
            node.child_by_field_name("value")?,
        ),
        (Family::Python | Family::Js, "pair") => (
            node.child_by_field_name("key")?,
            node.child_by_field_name("value")?,
        ),
        (Family::Js, "shorthand_property_identifier") => (node, node),
        (Family::Rust, "field_initializer") => (
            node.child_by_field_name("field")?,
            node.child_by_field_name("value")?,
        ),
        (Family::Rust, "shorthand_field_initializer") => {
            let ident = node.named_child(0)?;
            (ident, ident)
        }
        (Family::Go, "keyed_element") => {
            let key = node.child_by_field_name("key").or(node.named_child(0))?;
            let value = node.child_by_field_name("value").or(node.named_child(1))?;
            (unwrap_literal_element(key), unwrap_literal_element(value))
        }
        _ => return None,
    };
    Some(Pair { key, value })
}

/// Go wraps composite-literal keys and values in `literal_element`.
fn unwrap_literal_element(node: Node<'_>) -> Node<'_> {
    if node.kind() == "literal_element" {
        node.named_child(0).unwrap_or(node)
    } else {
        node
    }
}

/// The name a pair's key spells: an identifier, or a string key's value.
pub(crate) fn key_name<'s>(key: Node<'_>, src: &'s str, fam: Family) -> Option<Cow<'s, str>> {
    match key.kind() {
        "identifier"
        | "property_identifier"
        | "field_identifier"
        | "shorthand_property_identifier" => Some(Cow::Borrowed(text(key, src))),
        _ => string_value(key, src, fam),
    }
}

/// Does the node stand for "nothing" (`None`, `null`, `undefined`, `nil`)?
pub(crate) fn is_nothing(node: Node<'_>, src: &str) -> bool {
    matches!(node.kind(), "none" | "null" | "undefined" | "nil")
        || (node.kind() == "identifier" && matches!(text(node, src), "None" | "undefined"))
}

/// Is the node the literal `true` (Python's `True`)?
pub(crate) fn is_true(node: Node<'_>, src: &str) -> bool {
    node.kind() == "true" || (node.kind() == "boolean_literal" && text(node, src) == "true")
}

/// Is the node the literal `false` (Python's `False`)?
pub(crate) fn is_false(node: Node<'_>, src: &str) -> bool {
    node.kind() == "false" || (node.kind() == "boolean_literal" && text(node, src) == "false")
}

/// Does the value turn something on: anything but nothing and `false` (`{}`,
/// `RootsCapability(...)`, a handler function)?
pub(crate) fn is_present(node: Node<'_>, src: &str) -> bool {
    !is_nothing(node, src) && !is_false(node, src)
}

/// The parent, skipping wrappers that do not change what a value is (parentheses, `await`,
/// TypeScript `as`/`!`, Go `&`).
pub(crate) fn logical_parent(node: Node<'_>) -> Option<Node<'_>> {
    let mut parent = node.parent()?;
    while matches!(
        parent.kind(),
        "parenthesized_expression"
            | "await"
            | "await_expression"
            | "as_expression"
            | "satisfies_expression"
            | "non_null_expression"
            | "unary_expression"
            | "literal_element"
            | "expression_list"
    ) {
        parent = parent.parent()?;
    }
    Some(parent)
}

/// Is `arguments` an argument list?
pub(crate) fn is_argument_list(node: Node<'_>) -> bool {
    matches!(node.kind(), "argument_list" | "arguments")
}

/// The index of `child` among the named children of `parent` that are not comments.
pub(crate) fn argument_index(parent: Node<'_>, child: Node<'_>) -> Option<usize> {
    let mut cursor = parent.walk();
    parent
        .named_children(&mut cursor)
        .filter(|c| !c.kind().contains("comment"))
        .position(|c| c.id() == child.id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(unescape("\\n"), "\n");
        assert_eq!(unescape("\\u0041"), "A");
        assert_eq!(unescape("\\u{1F600}"), "\u{1F600}");
        assert_eq!(unescape("\\x41"), "A");
        assert_eq!(unescape("\\q"), "\\q");
    }
}
