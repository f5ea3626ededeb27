//! Imports (is an MCP library imported? under which names?), the variables bound to a
//! FastMCP `Context`, and what a call's receiver is.

use tree_sitter::Node;

use super::{Scanner, Scope, is_mcp_object, is_session, names_mcp};
use crate::language::Family;
use crate::syntax::{self, text};
use crate::tables::Recv;

impl<'s> Scanner<'s> {
    pub(super) fn is_import(&self, node: Node<'_>, kind: &str) -> bool {
        match (self.fam, kind) {
            (Family::Python, "import_statement" | "import_from_statement") => true,
            (Family::Js, "import_statement") => true,
            (Family::Js, "export_statement") => node.child_by_field_name("source").is_some(),
            (Family::Rust, "use_declaration" | "extern_crate_declaration") => true,
            (Family::Go, "import_declaration") => true,
            _ => false,
        }
    }

    pub(super) fn read_import(&mut self, node: Node<'_>) {
        let src = self.src;
        match self.fam {
            Family::Python => self.python_import(node),
            Family::Js => {
                if let Some(source) = node.child_by_field_name("source") {
                    self.js_module(source);
                }
            }
            Family::Rust => {
                let path = text(node, src)
                    .trim_start_matches("pub")
                    .trim_start()
                    .trim_start_matches("use")
                    .trim_start_matches("extern crate")
                    .trim_start()
                    .trim_start_matches("::");
                let root = path
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("");
                if names_mcp(root) {
                    self.mcp_import = true;
                }
            }
            Family::Go => {
                let mut stack = vec![node];
                while let Some(n) = stack.pop() {
                    if n.kind() == "import_spec" {
                        self.go_import(n);
                        continue;
                    }
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
            }
        }
    }

    pub(super) fn js_module(&mut self, source: Node<'_>) {
        if let Some(path) = syntax::string_value(source, self.src, self.fam)
            && path.split('/').any(names_mcp)
        {
            self.mcp_import = true;
        }
    }

    pub(super) fn python_import(&mut self, node: Node<'_>) {
        let src = self.src;
        let is_mcp = |n: Node<'_>| text(n, src).split('.').any(names_mcp);
        if node.kind() == "import_statement" {
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                let module = if name.kind() == "aliased_import" {
                    name.child_by_field_name("name").unwrap_or(name)
                } else {
                    name
                };
                if is_mcp(module) {
                    self.mcp_import = true;
                }
            }
            return;
        }
        let Some(module) = node.child_by_field_name("module_name") else {
            return;
        };
        if !is_mcp(module) {
            return;
        }
        self.mcp_import = true;
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let bound = match name.kind() {
                "aliased_import" => name.child_by_field_name("alias"),
                _ => Some(name),
            };
            let imported = match name.kind() {
                "aliased_import" => name.child_by_field_name("name"),
                _ => Some(name),
            };
            if let (Some(bound), Some(imported)) = (bound, imported)
                && text(imported, src).ends_with("Context")
            {
                self.context_types.push(text(bound, src));
            }
        }
    }

    pub(super) fn go_import(&mut self, spec: Node<'_>) {
        let src = self.src;
        let Some(path) = spec
            .child_by_field_name("path")
            .and_then(|p| syntax::string_value(p, src, Family::Go))
        else {
            return;
        };
        if !path.split('/').any(names_mcp) {
            return;
        }
        self.mcp_import = true;
        let alias = match spec.child_by_field_name("name") {
            Some(name) => text(name, src),
            None => {
                // The package name is the last segment (mcp-go's packages are `server`,
                // `client`, `mcp`).
                let start = spec
                    .child_by_field_name("path")
                    .map(|p| p.start_byte() + 1)
                    .unwrap_or(0);
                let end = spec
                    .child_by_field_name("path")
                    .map(|p| p.end_byte().saturating_sub(1))
                    .unwrap_or(0);
                let full = src.get(start..end).unwrap_or("");
                full.rsplit('/').next().unwrap_or("")
            }
        };
        if !alias.is_empty() && alias != "_" && alias != "." {
            self.go_packages.push(alias);
        }
    }

    pub(super) fn python_function(&mut self, node: Node<'_>) {
        let src = self.src;
        let mut names = Vec::new();
        if let Some(params) = node.child_by_field_name("parameters") {
            let mut cursor = params.walk();
            for param in params.named_children(&mut cursor) {
                let (name, ty) = match param.kind() {
                    "typed_parameter" => (param.named_child(0), param.child_by_field_name("type")),
                    "typed_default_parameter" => (
                        param.child_by_field_name("name"),
                        param.child_by_field_name("type"),
                    ),
                    _ => continue,
                };
                if let (Some(name), Some(ty)) = (name, ty)
                    && name.kind() == "identifier"
                    && self.is_context_type(ty)
                {
                    names.push(text(name, src));
                }
            }
        }
        self.scopes.push(Scope {
            end: node.end_byte(),
            names,
        });
    }

    /// Is this annotation an MCP `Context` (`Context`, `Context[S, L]`, `fastmcp.Context`)?
    pub(super) fn is_context_type(&self, ty: Node<'_>) -> bool {
        let src = self.src;
        let mut node = ty;
        loop {
            match node.kind() {
                "type" | "generic_type" => match node.named_child(0) {
                    Some(inner) => node = inner,
                    None => return false,
                },
                "subscript" => match node.child_by_field_name("value") {
                    Some(inner) => node = inner,
                    None => return false,
                },
                "identifier" => return self.context_types.contains(&text(node, src)),
                "attribute" => {
                    let full = text(node, src);
                    return full.ends_with(".Context") && full.split('.').any(names_mcp);
                }
                _ => return false,
            }
        }
    }

    /// `ctx = mcp.get_context()` binds `ctx` to a FastMCP `Context`.
    pub(super) fn python_assignment(&mut self, node: Node<'_>) {
        let src = self.src;
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return;
        };
        if left.kind() == "identifier"
            && right.kind() == "call"
            && syntax::tail(right, src).as_deref() == Some("get_context()")
            && let Some(scope) = self.scopes.last_mut()
        {
            scope.names.push(text(left, src));
        }
    }

    pub(super) fn is_py_context(&self, receiver: Node<'_>) -> bool {
        if self.fam != Family::Python {
            return false;
        }
        if receiver.kind() == "identifier" {
            let name = text(receiver, self.src);
            return self.scopes.iter().any(|s| s.names.contains(&name));
        }
        syntax::tail(receiver, self.src).as_deref() == Some("get_context()")
    }

    pub(super) fn receiver_fits(&self, recv: Recv, receiver: Option<Node<'_>>) -> bool {
        let src = self.src;
        let tail = receiver.and_then(|r| syntax::tail(r, src));
        match recv {
            Recv::Any => true,
            Recv::Method => receiver.is_some(),
            Recv::Session => tail.is_some_and(|t| is_session(&t)),
            Recv::Mcp => {
                tail.is_some_and(|t| is_mcp_object(&t))
                    || receiver.is_some_and(|r| self.is_py_context(r))
            }
            Recv::PyContext => receiver.is_some_and(|r| self.is_py_context(r)),
            Recv::McpPackage => receiver.is_some_and(|r| {
                r.kind() == "identifier" && self.go_packages.contains(&text(r, src))
            }),
            Recv::Transport => {
                tail.is_some_and(|t| {
                    let t = t.to_ascii_lowercase();
                    t.ends_with("transport") || t == "extra" || t.ends_with("request_context")
                }) || receiver.is_some_and(|r| self.is_py_context(r))
            }
        }
    }
}
