//! What the audit will send, said before it sends anything.

use std::fmt;

use crate::config::AuditConfig;

/// The audit's plan: the server, the tool, and the kinds of requests.
#[derive(Debug, Clone)]
pub struct Plan<'c> {
    config: &'c AuditConfig,
}

impl<'c> Plan<'c> {
    /// The plan for `config`.
    pub fn new(config: &'c AuditConfig) -> Self {
        Plan { config }
    }
}

impl fmt::Display for Plan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.config;
        let args = serde_json::Value::Object(c.args.clone()).to_string();
        writeln!(f, "ferry audit of {}", c.url)?;
        writeln!(
            f,
            "  tool: {} with arguments {}",
            c.tool,
            crate::rpc::short(&args)
        )?;
        let answers = if c.answers.is_empty() {
            "accepting every form (booleans true, defaults filled)".to_owned()
        } else {
            "from --answers, the rest accepted".to_owned()
        };
        writeln!(f, "  answers: {answers}")?;
        writeln!(f, "It will send:")?;
        writeln!(
            f,
            "  - server/discover, tools/list, and initialize (2025-11-25; a session it opens is closed with DELETE)"
        )?;
        writeln!(
            f,
            "  - tools/call of {} only, never of another tool{}",
            c.tool,
            match &c.other_tool {
                Some(o) => format!(
                    " except {o} (--other-tool), once with its own arguments and once with {}'s state",
                    c.tool
                ),
                None => String::new(),
            }
        )?;
        writeln!(
            f,
            "  - requests with missing or mismatched MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers, and one from Origin {}",
            c.foreign_origin
        )?;
        writeln!(
            f,
            "  - retries with tampered, truncated, random, forged, replayed and garbage requestState, with changed arguments, and without the answers"
        )?;
        let users = match (&c.token, &c.token_b) {
            (Some(_), Some(_)) => {
                "as user A (--token), and as user B (--token-b) presenting A's state"
            }
            (Some(_), None) => "as user A (--token)",
            _ => "without a bearer token",
        };
        writeln!(f, "  - {users}")?;
        if let Some(ttl) = c.ttl {
            writeln!(
                f,
                "  - one state kept past its {} s lifetime (the audit waits that long)",
                ttl.as_secs_f64()
            )?;
        }
        writeln!(
            f,
            "On a server that passes, {} runs to completion once (plus once if it completes without capabilities); each attack the server lets through runs it once more.",
            c.tool
        )
    }
}
