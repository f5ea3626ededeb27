//! Protocol revisions and eras (versioning.mdx).

use std::fmt;

/// The current revision: the first modern (stateless) one.
pub const LATEST: &str = "2026-07-28";
/// The last legacy (initialize-handshake) revision.
pub const LATEST_LEGACY: &str = "2025-11-25";

/// A protocol revision Ferry knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// 2024-11-05 (legacy, HTTP+SSE era).
    V2024_11_05,
    /// 2025-03-26 (legacy).
    V2025_03_26,
    /// 2025-06-18 (legacy).
    V2025_06_18,
    /// 2025-11-25 (legacy, the last with `initialize`).
    V2025_11_25,
    /// 2026-07-28 (modern, stateless).
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every known revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// Parses a `YYYY-MM-DD` revision string Ferry knows.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Some(match s {
            "2024-11-05" => ProtocolVersion::V2024_11_05,
            "2025-03-26" => ProtocolVersion::V2025_03_26,
            "2025-06-18" => ProtocolVersion::V2025_06_18,
            "2025-11-25" => ProtocolVersion::V2025_11_25,
            "2026-07-28" => ProtocolVersion::V2026_07_28,
            _ => return None,
        })
    }

    /// The revision string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Modern revisions carry version and capabilities on every request.
    pub fn is_modern(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// Legacy revisions use the `initialize` handshake.
    pub fn is_legacy(self) -> bool {
        !self.is_modern()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
