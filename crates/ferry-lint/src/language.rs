//! The languages ferry-lint reads, by file extension.

use std::path::Path;

use serde::Serialize;

/// A source language with a grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Python (`.py`, `.pyi`).
    Python,
    /// JavaScript (`.js`, `.jsx`, `.mjs`, `.cjs`).
    JavaScript,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// Rust (`.rs`).
    Rust,
    /// Go (`.go`).
    Go,
}

/// Languages that share one set of syntax shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Python,
    Js,
    Rust,
    Go,
}

impl Language {
    /// The language of a file, from its extension; `None` for files ferry-lint does not read.
    ///
    /// ```
    /// use ferry_lint::Language;
    /// assert_eq!(Language::from_path("src/server.tsx".as_ref()), Some(Language::Tsx));
    /// assert_eq!(Language::from_path("README.md".as_ref()), None);
    /// ```
    pub fn from_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?;
        Some(match ext {
            "py" | "pyi" => Language::Python,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "rs" => Language::Rust,
            "go" => Language::Go,
            _ => return None,
        })
    }

    /// The language's name, e.g. `typescript`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Rust => "rust",
            Language::Go => "go",
        }
    }

    pub(crate) fn family(self) -> Family {
        match self {
            Language::Python => Family::Python,
            Language::JavaScript | Language::TypeScript | Language::Tsx => Family::Js,
            Language::Rust => Family::Rust,
            Language::Go => Family::Go,
        }
    }

    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            // The JavaScript grammar parses JSX as well.
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// Every language, for building parsers up front.
    pub const ALL: [Language; 6] = [
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Rust,
        Language::Go,
    ];
}
