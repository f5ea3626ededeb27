//! String literals: which protocol string a literal spells, and whether it stands where
//! that string means something (a method, a route, a sent request).

use tree_sitter::Node;

use super::{Scanner, short};
use crate::language::Family;
use crate::syntax::{self, text};
use crate::tables::{self, REQUEST_SENDERS, ROUTE_KEYS, ROUTERS, STRINGS, StrRole};

/// The longest literal worth reading: the longest protocol string (34 bytes) with room for
/// quotes, prefixes and escapes.
const MAX_LITERAL_BYTES: usize = 64;

impl<'s> Scanner<'s> {
    pub(super) fn string(&mut self, node: Node<'_>) {
        let src = self.src;
        // No protocol string is longer than this with its quotes and prefix.
        if node.byte_range().len() > MAX_LITERAL_BYTES {
            return;
        }
        let Some(value) = syntax::string_value(node, src, self.fam) else {
            return;
        };
        let entry = STRINGS.iter().find(|(v, ..)| {
            if *v == "mcp-session-id" {
                value.eq_ignore_ascii_case(v)
            } else {
                value == *v
            }
        });
        let Some((_, role, rule, needs_mcp, what)) = entry else {
            return;
        };
        if self.is_message(node) {
            return;
        }
        let fits = match role {
            StrRole::Anywhere => true,
            StrRole::Method => self.in_method_position(node),
            StrRole::Route | StrRole::RouteBesideSse => self.in_route_position(node),
            StrRole::SentRequest => self.in_sent_request(node),
        };
        if !fits {
            return;
        }
        if matches!(role, StrRole::Route) {
            self.sse_route = true;
        }
        let message = format!("{} {what}", short(text(node, src)));
        self.push_full(
            *rule,
            node,
            message,
            *needs_mcp,
            matches!(role, StrRole::RouteBesideSse),
        );
    }

    /// Docstrings, bare string statements and arguments of print and log calls.
    pub(super) fn is_message(&self, node: Node<'_>) -> bool {
        let Some(parent) = node.parent() else {
            return false;
        };
        if parent.kind() == "expression_statement" {
            return true;
        }
        if syntax::is_argument_list(parent)
            && let Some(call) = parent.parent().and_then(|c| syntax::call(c, self.fam))
        {
            let receiver = call.receiver.and_then(|r| syntax::tail(r, self.src));
            return tables::is_output_call(
                self.fam,
                receiver.as_deref(),
                text(call.name, self.src),
            );
        }
        false
    }

    /// The value of a `method` key, the first argument of a request-sending call, a side of
    /// a comparison with a `method` expression, or a case of a switch on one.
    pub(super) fn in_method_position(&self, node: Node<'_>) -> bool {
        let src = self.src;
        let fam = self.fam;
        if let Some(key) = self.key_of_value(node) {
            return key.eq_ignore_ascii_case("method");
        }
        let Some(parent) = syntax::logical_parent(node) else {
            return false;
        };
        if syntax::is_argument_list(parent) {
            return syntax::argument_index(parent, node) == Some(0)
                && parent
                    .parent()
                    .and_then(|c| syntax::call(c, fam))
                    .is_some_and(|c| REQUEST_SENDERS.contains(&text(c.name, src)));
        }
        match parent.kind() {
            "comparison_operator" | "binary_expression" => {
                let mut cursor = parent.walk();
                let ops: Vec<&str> = parent
                    .children(&mut cursor)
                    .filter(|c| !c.is_named())
                    .map(|c| c.kind())
                    .collect();
                if !ops
                    .iter()
                    .all(|op| matches!(*op, "==" | "===" | "!=" | "!=="))
                {
                    return false;
                }
                let mut cursor = parent.walk();
                parent
                    .named_children(&mut cursor)
                    .filter(|c| c.id() != node.id())
                    .any(|c| self.names_method(c))
            }
            // JavaScript `case "ping":`.
            "switch_case" => parent
                .parent()
                .and_then(|body| body.parent())
                .and_then(|sw| sw.child_by_field_name("value"))
                .is_some_and(|v| self.names_method(v)),
            // Go `case "ping":`.
            "expression_case" => parent
                .parent()
                .and_then(|sw| sw.child_by_field_name("value"))
                .is_some_and(|v| self.names_method(v)),
            // Rust `"ping" => ...`.
            "match_pattern" => parent
                .parent()
                .and_then(|arm| arm.parent())
                .and_then(|block| block.parent())
                .and_then(|m| m.child_by_field_name("value"))
                .is_some_and(|v| self.names_method(v)),
            // Python `case "ping":`.
            "case_pattern" => parent
                .parent()
                .and_then(|clause| clause.parent())
                .and_then(|block| block.parent())
                .and_then(|m| m.child_by_field_name("subject"))
                .is_some_and(|v| self.names_method(v)),
            _ => false,
        }
    }

    /// Does an expression name a JSON-RPC method (`method`, `req.method`,
    /// `request.method.as_str()`, `r.Method`)?
    pub(super) fn names_method(&self, node: Node<'_>) -> bool {
        let src = self.src;
        let mut node = node;
        loop {
            let node_kind = node.kind();
            if node_kind == "parenthesized_expression" {
                match node.named_child(0) {
                    Some(inner) => node = inner,
                    None => return false,
                }
                continue;
            }
            // Peel conversions: `method.as_str()`, `method.toLowerCase()`.
            if let Some(call) = syntax::call(node, self.fam)
                && let Some(receiver) = call.receiver
                && matches!(
                    text(call.name, src),
                    "as_str" | "as_ref" | "to_string" | "toLowerCase" | "lower" | "String"
                )
            {
                node = receiver;
                continue;
            }
            break;
        }
        syntax::tail(node, src).is_some_and(|t| t.to_ascii_lowercase().ends_with("method"))
    }

    /// The key a value is given under (object property, keyword argument, struct field,
    /// keyed element, or a `"key": value` pair in a Rust macro such as `json!`).
    pub(super) fn key_of_value(&self, node: Node<'_>) -> Option<String> {
        let src = self.src;
        let fam = self.fam;
        let parent = syntax::logical_parent(node)?;
        if let Some(pair) = syntax::pair(parent, fam) {
            if pair.value.id() == node.id()
                || (pair.value.start_byte() <= node.start_byte()
                    && node.end_byte() <= pair.value.end_byte()
                    && pair.value.kind() == "literal_element")
            {
                return syntax::key_name(pair.key, src, fam).map(|k| k.into_owned());
            }
            return None;
        }
        if fam == Family::Rust && parent.kind() == "token_tree" {
            let colon = node.prev_sibling()?;
            let key = colon.prev_sibling()?;
            if colon.kind() == ":" {
                return syntax::string_value(key, src, fam).map(|k| k.into_owned());
            }
        }
        None
    }

    /// The first argument of a routing call, or the value of a `path` key.
    pub(super) fn in_route_position(&self, node: Node<'_>) -> bool {
        let src = self.src;
        if let Some(key) = self.key_of_value(node) {
            return ROUTE_KEYS.contains(&key.as_str());
        }
        let Some(parent) = syntax::logical_parent(node) else {
            return false;
        };
        syntax::is_argument_list(parent)
            && syntax::argument_index(parent, node) == Some(0)
            && parent
                .parent()
                .and_then(|c| syntax::call(c, self.fam))
                .is_some_and(|c| ROUTERS.contains(&text(c.name, src)))
    }

    /// A method sent as a request: the first argument of a request-sending call, or the
    /// `method` of a request object passed (directly or wrapped) to one. A method inside
    /// an `inputRequests` map is an MRTR ask, not a sent request.
    pub(super) fn in_sent_request(&self, node: Node<'_>) -> bool {
        let src = self.src;
        let fam = self.fam;
        let Some(parent) = syntax::logical_parent(node) else {
            return false;
        };
        let sends = |call: Node<'_>| {
            syntax::call(call, fam).is_some_and(|c| REQUEST_SENDERS.contains(&text(c.name, src)))
        };
        if syntax::is_argument_list(parent)
            && syntax::argument_index(parent, node) == Some(0)
            && parent.parent().is_some_and(sends)
        {
            return true;
        }
        if !self
            .key_of_value(node)
            .is_some_and(|k| k.eq_ignore_ascii_case("method"))
        {
            return false;
        }
        let mut current = parent;
        for _ in 0..12 {
            let Some(up) = current.parent() else {
                return false;
            };
            if let Some(pair) = syntax::pair(up, fam)
                && syntax::key_name(pair.key, src, fam).is_some_and(|k| {
                    let k = k.to_ascii_lowercase();
                    k == "inputrequests" || k == "input_requests"
                })
            {
                return false;
            }
            if sends(up) {
                return true;
            }
            if up.kind().ends_with("statement")
                || up.kind().ends_with("declaration")
                || up.kind() == "block"
            {
                return false;
            }
            current = up;
        }
        false
    }
}
