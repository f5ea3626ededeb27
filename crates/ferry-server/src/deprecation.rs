//! One runtime warning per process and deprecated feature (deprecated.mdx).

use std::sync::atomic::{AtomicBool, Ordering};

/// A deprecated MCP feature Ferry still serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Sampling (SEP-2577).
    Sampling,
    /// Roots (SEP-2577).
    Roots,
    /// Logging (SEP-2577).
    Logging,
    /// `includeContext` other than `"none"` (SEP-2596).
    IncludeContext,
}

impl Feature {
    /// The migration the spec's deprecation registry names.
    pub fn migration(self) -> &'static str {
        match self {
            Feature::Sampling => "call LLM provider APIs directly",
            Feature::Roots => {
                "pass directories and files via tool parameters, resource URIs or server configuration"
            }
            Feature::Logging => "log to stderr (stdio) or OpenTelemetry",
            Feature::IncludeContext => "omit includeContext or use \"none\"",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Feature::Sampling => "sampling",
            Feature::Roots => "roots",
            Feature::Logging => "logging",
            Feature::IncludeContext => "includeContext",
        }
    }
}

static WARNED: [AtomicBool; 4] = [
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
];

/// Logs a warning the first time `feature` is used in this process.
pub fn warn_once(feature: Feature) {
    if !WARNED[feature as usize].swap(true, Ordering::Relaxed) {
        tracing::warn!(
            feature = feature.name(),
            "MCP {} is deprecated since 2026-07-28 and may be removed in a revision on or after 2027-07-28; migration: {}",
            feature.name(),
            feature.migration()
        );
    }
}
