//! Every check the audit runs: its stable id, what it asks of the server, and the
//! sections of the specification it derives from.

use serde::Serialize;

/// A section of the MCP specification: revision, page and heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Citation {
    /// The revision, e.g. `2026-07-28`.
    pub revision: &'static str,
    /// The page, relative to the revision's `docs/`, e.g. `basic/patterns/mrtr.mdx`.
    pub page: &'static str,
    /// The heading on that page.
    pub heading: &'static str,
}

impl std::fmt::Display for Citation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}, {}", self.revision, self.page, self.heading)
    }
}

/// One check of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckInfo {
    /// The stable id, e.g. `state.replay`.
    pub id: &'static str,
    /// What the server must do, in one line.
    pub title: &'static str,
    /// Where the rule comes from.
    pub cites: &'static [Citation],
}

const fn modern(page: &'static str, heading: &'static str) -> Citation {
    Citation {
        revision: "2026-07-28",
        page,
        heading,
    }
}

const MRTR: &str = "basic/patterns/mrtr.mdx";
const HTTP: &str = "basic/transports/streamable-http.mdx";
const SERVER_REQS: Citation = modern(MRTR, "Server Requirements (Basic Workflow)");
const SECURITY: Citation = modern(MRTR, "Security Considerations");
const SERVER_VALIDATION: Citation = modern(HTTP, "Server Validation");

macro_rules! checks {
    ($( $konst:ident = $id:literal, $title:literal, [$($cite:expr),+ $(,)?]; )+) => {
        $(
            #[doc = concat!("`", $id, "`: ", $title)]
            pub const $konst: CheckInfo = CheckInfo { id: $id, title: $title, cites: &[$($cite),+] };
        )+
        /// Every check, in the order the audit reports them.
        pub const ALL: &[CheckInfo] = &[$($konst),+];
    };
}

checks! {
    ERA_DISCOVER = "era.discover",
        "server/discover answers a 2026-07-28 request with the supported versions",
        [modern("basic/versioning.mdx", "Protocol Version Negotiation"), modern("server/discover.mdx", "Response")];
    ERA_LEGACY = "era.legacy",
        "initialize is answered (2025-11-25), or refused naming the versions served",
        [Citation { revision: "2025-11-25", page: "basic/lifecycle.mdx", heading: "Initialization" },
         modern("basic/versioning.mdx", "Backward Compatibility with Initialization-Based Versions")];
    ERA_META_REQUIRED = "era.meta.required",
        "a request without the per-request _meta is refused with -32602 and HTTP 400",
        [modern("basic/index.mdx", "`_meta`")];
    ERA_VERSION_UNSUPPORTED = "era.version.unsupported",
        "an unknown protocol version is refused with -32022, HTTP 400 and the supported list",
        [modern("basic/versioning.mdx", "Protocol Version Negotiation"), modern(HTTP, "Protocol Version Header")];
    HEADER_VERSION_MISSING = "http.header.version_missing",
        "a request without MCP-Protocol-Version is refused with HTTP 400",
        [modern(HTTP, "Protocol Version Header"), SERVER_VALIDATION];
    HEADER_VERSION_MISMATCH = "http.header.version_mismatch",
        "an MCP-Protocol-Version header that differs from _meta is refused with -32020 and HTTP 400",
        [modern(HTTP, "Protocol Version Header"), SERVER_VALIDATION];
    HEADER_METHOD_MISSING = "http.header.method_missing",
        "a request without Mcp-Method is refused with -32020 and HTTP 400",
        [modern(HTTP, "Standard Request Headers"), SERVER_VALIDATION];
    HEADER_METHOD_MISMATCH = "http.header.method_mismatch",
        "an Mcp-Method header that differs from the body is refused with -32020 and HTTP 400",
        [SERVER_VALIDATION];
    HEADER_NAME_MISSING = "http.header.name_missing",
        "a tools/call without Mcp-Name is refused with -32020 and HTTP 400",
        [modern(HTTP, "Standard Request Headers"), SERVER_VALIDATION];
    HEADER_NAME_MISMATCH = "http.header.name_mismatch",
        "an Mcp-Name header that differs from the body is refused with -32020 and HTTP 400",
        [SERVER_VALIDATION];
    HEADER_PARAM_MISMATCH = "http.header.param_mismatch",
        "an Mcp-Param-* header that differs from the argument is refused with -32020 and HTTP 400",
        [modern(HTTP, "Server Behavior for Custom Headers"), SERVER_VALIDATION];
    HTTP_ORIGIN = "http.origin",
        "a request from a foreign Origin is refused with HTTP 403",
        [modern(HTTP, "Security & Endpoint")];
    MRTR_ROUNDTRIP = "mrtr.roundtrip",
        "the tool asks for input, and the retry with the answers and the echoed state completes",
        [modern(MRTR, "Basic Workflow"), modern("server/tools.mdx", "Input Required Tool Results")];
    MRTR_INPUT_REQUIRED = "mrtr.input_required",
        "the InputRequiredResult is well formed (resultType, inputRequests or requestState, known request kinds)",
        [modern(MRTR, "InputRequiredResult"), SERVER_REQS];
    MRTR_CAPABILITIES = "mrtr.capabilities",
        "a client that declares no capabilities is not sent input requests it cannot answer",
        [SERVER_REQS, modern("basic/index.mdx", "`_meta`")];
    STATE_REQUIRED = "state.required",
        "answers sent without the requestState do not complete the call",
        [SERVER_REQS, modern(MRTR, "Error Handling")];
    STATE_REPLAY = "state.replay",
        "redeeming the same requestState and answers a second time is refused",
        [SERVER_REQS, modern("server/tools.mdx", "Tool")];
    STATE_INTEGRITY_BITFLIP = "state.integrity.bitflip",
        "a requestState with one byte changed (at several positions) is refused",
        [SERVER_REQS, SECURITY];
    STATE_INTEGRITY_TRUNCATE = "state.integrity.truncate",
        "a truncated requestState is refused",
        [SERVER_REQS, SECURITY];
    STATE_INTEGRITY_RANDOM = "state.integrity.random",
        "a random requestState of the same shape is refused",
        [SERVER_REQS, SECURITY];
    STATE_INTEGRITY_FORGE = "state.integrity.forge",
        "a readable requestState edited (a field added, the expiry moved) is refused",
        [SERVER_REQS, SECURITY];
    STATE_BIND_ARGS = "state.bind.args",
        "the requestState presented with changed arguments is refused",
        [SERVER_REQS];
    STATE_BIND_TOOL = "state.bind.tool",
        "the requestState presented to another tool is refused",
        [SERVER_REQS];
    STATE_BIND_PRINCIPAL = "state.bind.principal",
        "the requestState of user A presented by user B is refused",
        [SERVER_REQS];
    STATE_CONFIDENTIALITY = "state.confidentiality",
        "the arguments cannot be read out of the requestState",
        [SECURITY, modern(MRTR, "InputRequiredResult")];
    STATE_MISSING_ANSWER = "state.missing_answer",
        "the requestState sent without its answers is asked again, not completed",
        [modern(MRTR, "Error Handling")];
    STATE_GARBAGE = "state.garbage",
        "garbage requestState values are refused quickly, and the server keeps serving",
        [SERVER_REQS, modern(MRTR, "Error Handling")];
    STATE_EXPIRY = "state.expiry",
        "the requestState presented after its lifetime is refused",
        [SERVER_REQS];
}

/// The check with this id.
pub fn find(id: &str) -> Option<&'static CheckInfo> {
    ALL.iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_check_cites_the_spec() {
        let mut seen = std::collections::HashSet::new();
        for c in ALL {
            assert!(seen.insert(c.id), "{} twice", c.id);
            assert!(!c.cites.is_empty(), "{} cites nothing", c.id);
            for cite in c.cites {
                assert!(cite.page.ends_with(".mdx"));
            }
        }
        assert_eq!(find("state.replay"), Some(&STATE_REPLAY));
        assert_eq!(find("nope"), None);
    }

    #[test]
    fn every_cited_heading_exists_in_the_spec() {
        // The spec's pages sit beside the workspace (`../shared/spec`), or where
        // FERRY_SPEC_DIR says.
        let root = std::env::var_os("FERRY_SPEC_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/spec")
            });
        if !root.join("2026-07-28/docs").is_dir() {
            eprintln!("no spec pages at {}; skipped", root.display());
            return;
        }
        for c in ALL {
            for cite in c.cites {
                let page = root.join(cite.revision).join("docs").join(cite.page);
                let text = std::fs::read_to_string(&page)
                    .unwrap_or_else(|e| panic!("{}: {}: {e}", c.id, page.display()));
                let found = text.lines().any(|l| {
                    l.starts_with('#') && l.trim_start_matches('#').trim() == cite.heading
                });
                assert!(
                    found,
                    "{}: no heading {:?} in {}",
                    c.id, cite.heading, cite.page
                );
            }
        }
    }
}
