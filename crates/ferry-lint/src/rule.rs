//! The rules: one per deprecated or removed MCP feature, with the spec's own migration text.
//!
//! The deprecated features, their migrations and earliest removals come from the
//! specification's deprecation registry (2026-07-28, deprecated.mdx, "Deprecated"); the
//! removed features from its changelog (changelog.mdx, "Major changes" 1, 5 and 7, "Minor
//! changes" 11) and the Multi Round-Trip Requests page (basic/patterns/mrtr.mdx).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// Where a feature stands in revision 2026-07-28.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "status"
)]
pub enum Lifecycle {
    /// Still in the specification, scheduled for removal (deprecated.mdx, "Deprecated").
    Deprecated {
        /// The revision that deprecated it, e.g. `2026-07-28`.
        since: &'static str,
        /// The deprecation record: a SEP or pull request.
        record: &'static str,
        /// The earliest removal as a date, where the registry gives one.
        earliest_removal: Option<&'static str>,
        /// The registry's "Earliest removal" column, word for word.
        removal_note: &'static str,
    },
    /// Gone from revision 2026-07-28 (changelog.mdx).
    Removed {
        /// The revision without it.
        removed_in: &'static str,
        /// The change that removed it: a SEP, or the changelog entry.
        record: &'static str,
    },
}

impl Lifecycle {
    /// The earliest removal date, for deprecated features whose registry row names one.
    pub fn earliest_removal(&self) -> Option<&'static str> {
        match self {
            Lifecycle::Deprecated {
                earliest_removal, ..
            } => *earliest_removal,
            Lifecycle::Removed { .. } => None,
        }
    }

    /// `deprecated` or `removed`.
    pub fn status(&self) -> &'static str {
        match self {
            Lifecycle::Deprecated { .. } => "deprecated",
            Lifecycle::Removed { .. } => "removed",
        }
    }

    /// One line for people: "deprecated since 2026-07-28 (SEP-2577); earliest removal: ...".
    pub fn describe(&self) -> String {
        match self {
            Lifecycle::Deprecated {
                since,
                record,
                removal_note,
                ..
            } => format!("deprecated since {since} ({record}); earliest removal: {removal_note}"),
            Lifecycle::Removed { removed_in, record } => {
                format!("removed in {removed_in} ({record})")
            }
        }
    }
}

/// A rule's stable identifier, e.g. `mcp-sampling`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "&'static str")]
pub enum RuleId {
    /// Sampling (`sampling/createMessage` and the SDKs' sampling calls).
    Sampling,
    /// `includeContext` values other than `"none"`.
    IncludeContext,
    /// Roots (`roots/list`, roots capabilities and handlers).
    Roots,
    /// Protocol logging (`notifications/message`, `logging/setLevel`, `ctx.info` and kin).
    Logging,
    /// `ping` requests.
    Ping,
    /// `elicitationId` and `notifications/elicitation/complete`.
    ElicitationId,
    /// Sessions and the `Mcp-Session-Id` header.
    SessionId,
    /// Dynamic client registration.
    Dcr,
    /// The HTTP+SSE transport of 2024-11-05.
    HttpSseTransport,
    /// Server-to-client requests sent outside Multi Round-Trip Requests.
    ServerRequestOutsideMrtr,
}

impl RuleId {
    /// Every rule, in the order reports list them.
    pub const ALL: [RuleId; 10] = [
        RuleId::Sampling,
        RuleId::IncludeContext,
        RuleId::Roots,
        RuleId::Logging,
        RuleId::Ping,
        RuleId::ElicitationId,
        RuleId::SessionId,
        RuleId::Dcr,
        RuleId::HttpSseTransport,
        RuleId::ServerRequestOutsideMrtr,
    ];

    /// The stable identifier, e.g. `mcp-sampling`.
    pub fn as_str(self) -> &'static str {
        self.rule().id
    }

    /// The rule's description.
    pub fn rule(self) -> &'static Rule {
        &RULES[self as usize]
    }
}

impl From<RuleId> for &'static str {
    fn from(id: RuleId) -> Self {
        id.as_str()
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An identifier that names no rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule {0:?} (known: {known})", known = RuleId::ALL.map(RuleId::as_str).join(", "))]
pub struct UnknownRule(pub String);

impl FromStr for RuleId {
    type Err = UnknownRule;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        RuleId::ALL
            .into_iter()
            .find(|id| id.as_str() == wanted || id.as_str().strip_prefix("mcp-") == Some(wanted))
            .ok_or_else(|| UnknownRule(s.to_owned()))
    }
}

/// A rule: the feature it finds, why it matters and what to do instead.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Stable identifier, e.g. `mcp-sampling`.
    pub id: &'static str,
    /// A name in UpperCamelCase (SARIF `reportingDescriptor.name`).
    pub name: &'static str,
    /// The feature, as the specification names it.
    pub feature: &'static str,
    /// One sentence on what the rule finds.
    pub summary: &'static str,
    /// Deprecated or removed, since when, and until when.
    pub lifecycle: Lifecycle,
    /// The migration path, in the specification's words.
    pub migration: &'static str,
    /// The specification page that describes the change.
    pub help_uri: &'static str,
}

const SEP_2577: &str = "SEP-2577";
const REMOVAL_2027: &str = "First revision released on or after 2027-07-28";

macro_rules! spec_page {
    ($page:literal) => {
        concat!(
            "https://modelcontextprotocol.io/specification/2026-07-28",
            $page
        )
    };
}

/// The rules, indexed by [`RuleId`].
pub static RULES: [Rule; 10] = [
    Rule {
        id: "mcp-sampling",
        name: "Sampling",
        feature: "Sampling",
        summary: "Sampling (`sampling/createMessage`) is deprecated.",
        lifecycle: Lifecycle::Deprecated {
            since: "2026-07-28",
            record: SEP_2577,
            earliest_removal: Some("2027-07-28"),
            removal_note: REMOVAL_2027,
        },
        migration: "Integrate directly with LLM provider APIs",
        help_uri: spec_page!("/client/sampling"),
    },
    Rule {
        id: "mcp-include-context",
        name: "IncludeContext",
        feature: "includeContext: \"thisServer\" / \"allServers\" (Sampling)",
        summary: "`includeContext` values other than \"none\" are deprecated.",
        lifecycle: Lifecycle::Deprecated {
            since: "2025-11-25",
            record: "SEP-2596",
            earliest_removal: Some("2027-07-28"),
            removal_note: "Follows Sampling (SEP-2577): no later than Sampling itself, first revision released on or after 2027-07-28",
        },
        migration: "Omit the field or use \"none\"",
        help_uri: spec_page!("/client/sampling#capabilities"),
    },
    Rule {
        id: "mcp-roots",
        name: "Roots",
        feature: "Roots",
        summary: "Roots (`roots/list`, the roots capability and its handlers) are deprecated.",
        lifecycle: Lifecycle::Deprecated {
            since: "2026-07-28",
            record: SEP_2577,
            earliest_removal: Some("2027-07-28"),
            removal_note: REMOVAL_2027,
        },
        migration: "Pass directories or files via tool parameters, resource URIs, or server configuration",
        help_uri: spec_page!("/client/roots"),
    },
    Rule {
        id: "mcp-logging",
        name: "Logging",
        feature: "Logging",
        summary: "Protocol logging (`notifications/message`, `logging/setLevel`) is deprecated.",
        lifecycle: Lifecycle::Deprecated {
            since: "2026-07-28",
            record: SEP_2577,
            earliest_removal: Some("2027-07-28"),
            removal_note: REMOVAL_2027,
        },
        migration: "Log to `stderr` for stdio transports; use OpenTelemetry for observability",
        help_uri: spec_page!("/server/utilities/logging"),
    },
    Rule {
        id: "mcp-ping",
        name: "Ping",
        feature: "ping",
        summary: "`ping` is removed in 2026-07-28.",
        lifecycle: Lifecycle::Removed {
            removed_in: "2026-07-28",
            record: "SEP-2575",
        },
        migration: "Remove the ping: 2026-07-28 is stateless, there is no connection to keep alive; an ordinary request (e.g. `server/discover`) shows whether a server answers",
        help_uri: spec_page!("/changelog"),
    },
    Rule {
        id: "mcp-elicitation-id",
        name: "ElicitationId",
        feature: "elicitationId and notifications/elicitation/complete",
        summary: "URL elicitation's `elicitationId` and `notifications/elicitation/complete` are removed in 2026-07-28.",
        lifecycle: Lifecycle::Removed {
            removed_in: "2026-07-28",
            record: "changelog, minor change 11",
        },
        migration: "The client learns the outcome of an out-of-band interaction by retrying the original request (Multi Round-Trip Requests); servers needing to correlate an elicitation across retries encode their own identifier in `requestState`",
        help_uri: spec_page!("/basic/patterns/mrtr"),
    },
    Rule {
        id: "mcp-session-id",
        name: "SessionId",
        feature: "Protocol-level sessions and the Mcp-Session-Id header",
        summary: "Sessions and the `Mcp-Session-Id` header are removed in 2026-07-28.",
        lifecycle: Lifecycle::Removed {
            removed_in: "2026-07-28",
            record: "SEP-2567",
        },
        migration: "Servers that need cross-call state use explicit, server-minted handles passed as ordinary tool arguments",
        help_uri: spec_page!("/basic/transports/streamable-http"),
    },
    Rule {
        id: "mcp-dcr",
        name: "DynamicClientRegistration",
        feature: "Dynamic Client Registration",
        summary: "OAuth Dynamic Client Registration (RFC 7591) is deprecated as a client registration mechanism.",
        lifecycle: Lifecycle::Deprecated {
            since: "2026-07-28",
            record: "PR #2858",
            earliest_removal: Some("2027-07-28"),
            removal_note: REMOVAL_2027,
        },
        migration: "Client ID Metadata Documents",
        help_uri: spec_page!(
            "/basic/authorization/client-registration#client-id-metadata-documents"
        ),
    },
    Rule {
        id: "mcp-http-sse-transport",
        name: "HttpSseTransport",
        feature: "HTTP+SSE transport",
        summary: "The HTTP+SSE transport (2024-11-05) is deprecated.",
        lifecycle: Lifecycle::Deprecated {
            since: "2025-03-26",
            record: "SEP-2596",
            earliest_removal: None,
            removal_note: "Three months after SEP-2596 reaches Final",
        },
        migration: "Streamable HTTP",
        help_uri: spec_page!("/basic/transports/streamable-http"),
    },
    Rule {
        id: "mcp-server-request-outside-mrtr",
        name: "ServerRequestOutsideMrtr",
        feature: "Server-initiated requests (elicitation/create) outside Multi Round-Trip Requests",
        summary: "Servers MUST send server-to-client requests such as `elicitation/create` using the Multi Round-Trip Requests pattern; the previous pattern of server-initiated requests is no longer supported.",
        lifecycle: Lifecycle::Removed {
            removed_in: "2026-07-28",
            record: "SEP-2322",
        },
        migration: "Return an `InputRequiredResult` (`resultType: \"input_required\"`) whose `inputRequests` carries the `elicitation/create` request; the client retries the original request with `inputResponses` (and the `requestState` you returned)",
        help_uri: spec_page!("/basic/patterns/mrtr"),
    },
];

/// The specification's deprecation registry, for links.
pub const REGISTRY_URI: &str =
    "https://modelcontextprotocol.io/specification/2026-07-28/deprecated";

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "https://modelcontextprotocol.io/specification/2026-07-28";

    #[test]
    fn ids_index_their_rules() {
        for id in RuleId::ALL {
            assert_eq!(id.rule().id, id.as_str());
            assert_eq!(id.as_str().parse::<RuleId>(), Ok(id));
            assert!(id.rule().help_uri.starts_with(SPEC));
        }
        assert_eq!("sampling".parse::<RuleId>(), Ok(RuleId::Sampling));
        let err = "mcp-nope".parse::<RuleId>().unwrap_err();
        assert!(err.to_string().contains("mcp-sampling"), "{err}");
    }

    #[test]
    fn the_registry_dates_are_kept() {
        assert_eq!(
            RuleId::Sampling.rule().lifecycle.earliest_removal(),
            Some("2027-07-28")
        );
        assert_eq!(
            RuleId::HttpSseTransport.rule().lifecycle.earliest_removal(),
            None
        );
        assert_eq!(RuleId::Ping.rule().lifecycle.status(), "removed");
    }
}
