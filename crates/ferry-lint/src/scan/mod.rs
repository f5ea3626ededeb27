//! One walk over a syntax tree: every node is read once, the shapes of [`crate::tables`]
//! are matched against it, and what matches becomes a [`Hit`]. Imports and FastMCP
//! contexts and receivers are read in [`imports`], string literals and their positions in [`strings`].

mod imports;
mod strings;

use std::collections::HashMap;
use std::sync::OnceLock;

use tree_sitter::{Node, Point, Tree};

use crate::language::{Family, Language};
use crate::rule::RuleId;
use crate::syntax::{self, text};
use crate::tables::{
    self, CALLS, CAPABILITIES, CallShape, DEFINITIONS, HANDLER_METHODS, KEYS, KeyShape, MEMBERS,
    NAMES, NameShape, Value,
};

/// A match, before the file-level conditions are applied.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub rule: RuleId,
    pub start_byte: usize,
    pub end_byte: usize,
    pub start: Point,
    pub end: Point,
    pub message: String,
}

#[derive(Debug)]
struct Pending {
    hit: Hit,
    /// Fires only in files that import an MCP library.
    needs_mcp: bool,
    /// Fires only in files that also route `/sse`.
    needs_sse_route: bool,
}

/// Finds every hit in a parsed file, in source order, one per rule and line.
pub(crate) fn scan(tree: &Tree, src: &str, language: Language) -> Vec<Hit> {
    let mut scanner = Scanner {
        src,
        fam: language.family(),
        mcp_import: false,
        sse_route: false,
        context_types: Vec::new(),
        go_packages: Vec::new(),
        scopes: vec![Scope {
            end: usize::MAX,
            names: Vec::new(),
        }],
        pending: Vec::new(),
    };
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        let descend = scanner.visit(node);
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return scanner.finish();
            }
        }
    }
}

/// Names bound to a FastMCP `Context` within a function (or the module).
struct Scope<'s> {
    end: usize,
    names: Vec<&'s str>,
}

struct Scanner<'s> {
    src: &'s str,
    fam: Family,
    mcp_import: bool,
    sse_route: bool,
    /// Python: names imported from an MCP library that end in `Context`.
    context_types: Vec<&'s str>,
    /// Go: the names MCP packages are imported under.
    go_packages: Vec<&'s str>,
    scopes: Vec<Scope<'s>>,
    pending: Vec<Pending>,
}

fn calls_by_name() -> &'static HashMap<&'static str, Vec<&'static CallShape>> {
    static MAP: OnceLock<HashMap<&'static str, Vec<&'static CallShape>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: HashMap<&str, Vec<&CallShape>> = HashMap::new();
        for shape in CALLS {
            for name in shape.names {
                map.entry(name).or_default().push(shape);
            }
        }
        map
    })
}

fn names_by_name() -> &'static HashMap<&'static str, &'static NameShape> {
    static MAP: OnceLock<HashMap<&'static str, &'static NameShape>> = OnceLock::new();
    MAP.get_or_init(|| {
        NAMES
            .iter()
            .flat_map(|shape| shape.names.iter().map(move |n| (*n, shape)))
            .collect()
    })
}

fn keys_by_name() -> &'static HashMap<&'static str, Vec<&'static KeyShape>> {
    static MAP: OnceLock<HashMap<&'static str, Vec<&'static KeyShape>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: HashMap<&str, Vec<&KeyShape>> = HashMap::new();
        for shape in KEYS {
            for name in shape.names {
                map.entry(name).or_default().push(shape);
            }
        }
        map
    })
}

/// Does a module or package path segment name an MCP library (`mcp`, `fastmcp`, `rmcp`,
/// `mcp-go`, `@modelcontextprotocol`, `langchain_mcp_adapters`)?
fn names_mcp(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    let lower = lower.trim_start_matches('@');
    matches!(lower, "mcp" | "fastmcp" | "rmcp")
        || lower.contains("modelcontextprotocol")
        || lower.split(['_', '-', '.']).any(|piece| piece == "mcp")
}

/// Is this the last segment of a session (`session`, `ctx.session`, `req.Session`, `ss`)?
fn is_session(tail: &str) -> bool {
    let t = tail.trim_end_matches("()").to_ascii_lowercase();
    t.ends_with("session") || matches!(t.as_str(), "ss" | "cs" | "sess")
}

/// Is this the last segment of an MCP session, server, client or peer?
fn is_mcp_object(tail: &str) -> bool {
    let t = tail.trim_end_matches("()").to_ascii_lowercase();
    is_session(&t) || t.ends_with("server") || t.ends_with("client") || t.ends_with("peer")
}

impl<'s> Scanner<'s> {
    fn finish(self) -> Vec<Hit> {
        let (mcp, sse) = (self.mcp_import, self.sse_route);
        let mut hits: Vec<Hit> = self
            .pending
            .into_iter()
            .filter(|p| (mcp || !p.needs_mcp) && (sse || !p.needs_sse_route))
            .map(|p| p.hit)
            .collect();
        hits.sort_by_key(|h| (h.start_byte, h.rule));
        let mut seen: Vec<(RuleId, usize)> = Vec::new();
        hits.retain(|h| {
            let key = (h.rule, h.start.row);
            if seen.contains(&key) {
                false
            } else {
                seen.push(key);
                true
            }
        });
        hits
    }

    fn push(&mut self, rule: RuleId, at: Node<'_>, message: String, needs_mcp: bool) {
        self.push_full(rule, at, message, needs_mcp, false);
    }

    fn push_full(
        &mut self,
        rule: RuleId,
        at: Node<'_>,
        message: String,
        needs_mcp: bool,
        needs_sse_route: bool,
    ) {
        self.pending.push(Pending {
            hit: Hit {
                rule,
                start_byte: at.start_byte(),
                end_byte: at.end_byte(),
                start: at.start_position(),
                end: at.end_position(),
                message,
            },
            needs_mcp,
            needs_sse_route,
        });
    }

    /// Reads one node; returns whether to read its children.
    fn visit(&mut self, node: Node<'_>) -> bool {
        let kind = node.kind();
        if kind.contains("comment") {
            return false;
        }
        if self.is_import(node, kind) {
            self.read_import(node);
            return false;
        }
        while self
            .scopes
            .last()
            .is_some_and(|s| s.end <= node.start_byte())
        {
            self.scopes.pop();
        }
        match (self.fam, kind) {
            (Family::Python, "function_definition") => {
                self.python_function(node);
                self.definition(node);
            }
            (Family::Python, "assignment") => self.python_assignment(node),
            (Family::Rust, "macro_invocation") => return self.rust_macro(node),
            (Family::Rust, "scoped_identifier" | "scoped_type_identifier")
                if node
                    .child_by_field_name("path")
                    .is_some_and(|p| p.kind() == "identifier" && text(p, self.src) == "rmcp") =>
            {
                self.mcp_import = true;
            }
            (
                _,
                "function_declaration"
                | "method_definition"
                | "function_item"
                | "method_declaration",
            ) => self.definition(node),
            _ => {}
        }
        // `node.kind()` costs a C string conversion, so each shape is tried only on the
        // kinds it can have.
        match kind {
            "identifier" | "type_identifier" | "property_identifier" | "field_identifier" => {
                self.name(node);
            }
            "call" | "call_expression" | "new_expression" => {
                if let Some(call) = syntax::call(node, self.fam) {
                    self.call(call);
                }
            }
            "keyword_argument"
            | "pair"
            | "field_initializer"
            | "shorthand_field_initializer"
            | "keyed_element" => {
                if let Some(pair) = syntax::pair(node, self.fam) {
                    self.pair(node, pair);
                }
            }
            "shorthand_property_identifier" => {
                if let Some(pair) = syntax::pair(node, self.fam) {
                    self.pair(node, pair);
                }
                self.name(node);
            }
            "attribute" | "member_expression" | "field_expression" | "selector_expression" => {
                self.member(node);
            }
            _ if syntax::is_string_kind(kind, self.fam) => self.string(node),
            _ => {}
        }
        true
    }

    // ----- shapes -----

    fn call(&mut self, call: syntax::Call<'_>) {
        let src = self.src;
        let name = text(call.name, src);
        if self.fam == Family::Js
            && call.receiver.is_none()
            && matches!(name, "require" | "import")
            && let Some(first) = call.arguments.and_then(|a| a.named_child(0))
        {
            self.js_module(first);
        }
        let Some(shapes) = calls_by_name().get(name) else {
            return;
        };
        for shape in shapes {
            if shape.family.is_some_and(|f| f != self.fam) {
                continue;
            }
            if !self.receiver_fits(shape.recv, call.receiver) {
                continue;
            }
            let callee = short(text(call.callee, src));
            let message = format!("`{callee}(…)` {}", shape.what);
            self.push(shape.rule, call.name, message, true);
            return;
        }
    }

    fn name(&mut self, node: Node<'_>) {
        let src = self.src;
        let name = text(node, src);
        let Some(shape) = names_by_name().get(name) else {
            return;
        };
        let Some(parent) = node.parent() else {
            return;
        };
        // A definition of the name is not a use of it.
        if parent
            .child_by_field_name("name")
            .is_some_and(|n| n.id() == node.id())
            && !matches!(
                parent.kind(),
                "attribute"
                    | "member_expression"
                    | "field_expression"
                    | "selector_expression"
                    | "scoped_identifier"
                    | "scoped_type_identifier"
                    | "qualified_type"
                    | "generic_type"
                    | "struct_expression"
            )
        {
            return;
        }
        if shape.rule == RuleId::IncludeContext
            && !text(parent, src).starts_with("ContextInclusion")
        {
            return;
        }
        let message = format!("`{name}` {}", shape.what);
        self.push(shape.rule, node, message, true);
    }

    fn pair(&mut self, node: Node<'_>, pair: syntax::Pair<'_>) {
        let src = self.src;
        let fam = self.fam;
        let Some(key) = syntax::key_name(pair.key, src, fam) else {
            return;
        };
        if let Some(shapes) = keys_by_name().get(key.as_ref()) {
            for shape in shapes {
                let value = syntax::string_value(pair.value, src, fam);
                let fits = match shape.value {
                    Value::Present => syntax::is_present(pair.value, src),
                    Value::True => syntax::is_true(pair.value, src),
                    Value::False => syntax::is_false(pair.value, src),
                    Value::Str(s) => value.as_deref() == Some(s),
                    Value::StrOtherThan(s) => value.as_deref().is_some_and(|v| v != s),
                };
                if !fits {
                    continue;
                }
                let (at, message) = match shape.value {
                    Value::Str(_) | Value::StrOtherThan(_) => (
                        pair.value,
                        format!("`{}` {}", short(text(node, src)), shape.what),
                    ),
                    _ => (pair.key, format!("`{key}` {}", shape.what)),
                };
                self.push(shape.rule, at, message, !shape.protocol);
                break;
            }
        }
        if let Some((_, rule)) = CAPABILITIES.iter().find(|(name, _)| *name == key.as_ref())
            && syntax::is_present(pair.value, src)
            && self.in_capabilities(node)
        {
            let message = format!(
                "`{key}` capability declared: {}",
                rule.rule().summary.trim_end_matches('.')
            );
            self.push(*rule, pair.key, message, true);
        }
    }

    /// Is this pair a member of a capabilities object?
    fn in_capabilities(&self, pair: Node<'_>) -> bool {
        let src = self.src;
        let fam = self.fam;
        let Some(container) = pair.parent() else {
            return false;
        };
        let Some(outer) = syntax::logical_parent(container) else {
            return false;
        };
        let ends_capabilities = |n: Node<'_>| {
            syntax::tail(n, src).is_some_and(|t| t.trim_end_matches("()").ends_with("Capabilities"))
                || text(n, src).ends_with("Capabilities")
        };
        match container.kind() {
            "object" | "dictionary" => {
                if let Some(p) = syntax::pair(outer, fam)
                    && p.value.id() == container.id()
                {
                    return syntax::key_name(p.key, src, fam)
                        .is_some_and(|k| k.eq_ignore_ascii_case("capabilities"));
                }
                if syntax::is_argument_list(outer) {
                    return outer
                        .parent()
                        .and_then(|c| syntax::call(c, fam))
                        .is_some_and(|c| ends_capabilities(c.name));
                }
                false
            }
            "argument_list" => syntax::call(outer, fam).is_some_and(|c| ends_capabilities(c.name)),
            "field_initializer_list" => {
                outer.kind() == "struct_expression"
                    && outer
                        .child_by_field_name("name")
                        .is_some_and(ends_capabilities)
            }
            "literal_value" => {
                outer.kind() == "composite_literal"
                    && outer
                        .child_by_field_name("type")
                        .is_some_and(ends_capabilities)
            }
            _ => false,
        }
    }

    fn member(&mut self, node: Node<'_>) {
        let src = self.src;
        let Some((object, property)) = syntax::member_fields(node) else {
            return;
        };
        let name = text(property, src);
        let Some((_, recv, rule, what)) = MEMBERS.iter().find(|(names, ..)| names.contains(&name))
        else {
            return;
        };
        // Calls are read as calls.
        if let Some(parent) = node.parent()
            && syntax::call(parent, self.fam).is_some_and(|c| c.callee.id() == node.id())
        {
            return;
        }
        if self.receiver_fits(*recv, Some(object)) {
            let message = format!("`{}` {what}", short(text(node, src)));
            self.push(*rule, property, message, true);
        }
    }

    fn definition(&mut self, node: Node<'_>) {
        let src = self.src;
        let Some(name_node) = node.child_by_field_name("name") else {
            return;
        };
        let name = text(name_node, src);
        if node.kind() == "function_item"
            && let Some((_, rule, what)) = HANDLER_METHODS.iter().find(|(n, ..)| *n == name)
            && let Some(handler) = self.rust_handler_trait(node)
        {
            let message = format!("`{name}` in `impl {handler}` {what}");
            self.push(*rule, name_node, message, true);
            return;
        }
        if let Some((_, rule, what)) = DEFINITIONS.iter().find(|(n, ..)| *n == name) {
            let message = format!("`{name}` {what}");
            self.push(*rule, name_node, message, true);
        }
    }

    /// The handler trait (`ServerHandler`, `ClientHandler`) a Rust method is defined in.
    fn rust_handler_trait(&self, function: Node<'_>) -> Option<&'s str> {
        let list = function.parent()?;
        let imp = list.parent()?;
        if list.kind() != "declaration_list" || imp.kind() != "impl_item" {
            return None;
        }
        let name = text(imp.child_by_field_name("trait")?, self.src);
        let last = name.rsplit("::").next().unwrap_or(name);
        last.ends_with("Handler").then_some(last)
    }

    /// Strings in print and log macros are messages; `json!` and other macros are read.
    fn rust_macro(&mut self, node: Node<'_>) -> bool {
        let Some(mac) = node.child_by_field_name("macro") else {
            return true;
        };
        let name = syntax::tail(mac, self.src).unwrap_or_default();
        !tables::is_output_macro(&name)
    }
}

/// A code fragment for a message: one line, at most 60 characters.
fn short(code: &str) -> String {
    let one_line: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= 60 {
        one_line
    } else {
        let cut: String = one_line.chars().take(57).collect();
        format!("{cut}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_module_names() {
        for yes in [
            "mcp",
            "fastmcp",
            "rmcp",
            "@modelcontextprotocol",
            "mcp-go",
            "langchain_mcp_adapters",
        ] {
            assert!(names_mcp(yes), "{yes}");
        }
        for no in ["mcpi", "requests", "campcp", "express", "os"] {
            assert!(!names_mcp(no), "{no}");
        }
    }

    #[test]
    fn receivers() {
        assert!(is_session("session"));
        assert!(is_session("Session"));
        assert!(is_session("ss"));
        assert!(!is_session("sessions_store"));
        assert!(is_mcp_object("mcpServer"));
        assert!(is_mcp_object("peer()"));
        assert!(!is_mcp_object("logger"));
    }

    #[test]
    fn short_fragments() {
        assert_eq!(short("a\n   .b()"), "a .b()");
        assert_eq!(short(&"x".repeat(80)).chars().count(), 60);
    }
}
