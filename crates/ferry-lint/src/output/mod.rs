//! Reports for people and for tools: compiler-style [`text`], [`json`] and [`sarif`] 2.1.0.

pub mod json;
pub mod sarif;
pub mod text;

use crate::rule::{Lifecycle, Rule};

/// The name tools report under.
pub const TOOL_NAME: &str = "ferry-lint";

/// This crate's version.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the tool is described.
pub const TOOL_URI: &str = "https://github.com/ferry-mcp/ferry/tree/main/crates/ferry-lint";

/// The severity of a rule's findings: `error` for features 2026-07-28 has removed,
/// `warning` for deprecated ones.
pub fn severity(rule: &Rule) -> &'static str {
    match rule.lifecycle {
        Lifecycle::Deprecated { .. } => "warning",
        Lifecycle::Removed { .. } => "error",
    }
}
