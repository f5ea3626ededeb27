//! [`UsageLedger`]: tokens, calls and errors per principal and per tool.

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::provider::SampleContext;

/// How many distinct (principal, tool) pairs a ledger keeps by default. Calls for pairs past
/// the limit are added to one overflow entry, so the ledger stays bounded whatever principals
/// callers invent.
pub const DEFAULT_MAX_ENTRIES: usize = 10_000;

/// The name overflowing entries are counted under.
pub const OVERFLOW: &str = "(overflow)";

/// Counters for one principal, tool, or pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Calls made (each `create_message`, whatever its retries and fallbacks).
    pub calls: u64,
    /// Calls that ended with an error.
    pub errors: u64,
    /// Prompt tokens the provider reported.
    pub prompt_tokens: u64,
    /// Completion tokens the provider reported.
    pub completion_tokens: u64,
    /// Successful calls whose answer reported no usage (their tokens are not counted).
    pub unreported: u64,
}

impl Usage {
    /// Prompt plus completion tokens.
    pub fn total_tokens(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    fn add(&mut self, other: &Usage) {
        self.calls = self.calls.saturating_add(other.calls);
        self.errors = self.errors.saturating_add(other.errors);
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.unreported = self.unreported.saturating_add(other.unreported);
    }
}

/// Token counts one answer reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// Prompt tokens.
    pub prompt: u64,
    /// Completion tokens.
    pub completion: u64,
}

/// One row of [`UsageLedger::entries`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageEntry {
    /// The principal, `None` for calls without one.
    pub principal: Option<String>,
    /// The tool, `None` for calls without one.
    pub tool: Option<String>,
    /// The counters.
    pub usage: Usage,
}

type Key = (Option<String>, Option<String>);

/// Usage per (principal, tool), in memory, bounded. Share one between providers with `Arc`.
///
/// ```
/// use ferry_llm::{SampleContext, TokenCounts, UsageLedger};
///
/// let ledger = UsageLedger::default();
/// let ctx = SampleContext::new().with_principal("alice").with_tool("summarize");
/// ledger.record_success(&ctx, Some(TokenCounts { prompt: 12, completion: 30 }));
/// ledger.record_error(&ctx);
/// let alice = ledger.principal("alice");
/// assert_eq!((alice.calls, alice.errors, alice.total_tokens()), (2, 1, 42));
/// ```
#[derive(Debug)]
pub struct UsageLedger {
    max_entries: usize,
    entries: Mutex<HashMap<Key, Usage>>,
}

impl Default for UsageLedger {
    fn default() -> Self {
        UsageLedger::with_capacity(DEFAULT_MAX_ENTRIES)
    }
}

impl UsageLedger {
    /// A ledger keeping at most `max_entries` pairs (at least 1) before overflowing.
    pub fn with_capacity(max_entries: usize) -> Self {
        UsageLedger {
            max_entries: max_entries.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a successful call and the tokens its answer reported.
    pub fn record_success(&self, ctx: &SampleContext, tokens: Option<TokenCounts>) {
        let delta = match tokens {
            Some(t) => Usage {
                calls: 1,
                prompt_tokens: t.prompt,
                completion_tokens: t.completion,
                ..Usage::default()
            },
            None => Usage {
                calls: 1,
                unreported: 1,
                ..Usage::default()
            },
        };
        self.add(ctx, &delta);
    }

    /// Counts a failed call.
    pub fn record_error(&self, ctx: &SampleContext) {
        self.add(
            ctx,
            &Usage {
                calls: 1,
                errors: 1,
                ..Usage::default()
            },
        );
    }

    fn add(&self, ctx: &SampleContext, delta: &Usage) {
        let mut entries = self.entries.lock();
        let key = (ctx.principal.clone(), ctx.tool.clone());
        if let Some(usage) = entries.get_mut(&key) {
            usage.add(delta);
            return;
        }
        let key = if entries.len() + 1 >= self.max_entries {
            (Some(OVERFLOW.to_owned()), Some(OVERFLOW.to_owned()))
        } else {
            key
        };
        entries.entry(key).or_default().add(delta);
    }

    /// The counters of one (principal, tool) pair.
    pub fn get(&self, principal: Option<&str>, tool: Option<&str>) -> Usage {
        self.sum(|p, t| p == principal && t == tool)
    }

    /// The counters of a principal, over all tools.
    pub fn principal(&self, principal: &str) -> Usage {
        self.sum(|p, _| p == Some(principal))
    }

    /// The counters of a tool, over all principals.
    pub fn tool(&self, tool: &str) -> Usage {
        self.sum(|_, t| t == Some(tool))
    }

    /// The counters of every call.
    pub fn total(&self) -> Usage {
        self.sum(|_, _| true)
    }

    /// Every (principal, tool) pair with its counters, for a metrics exporter.
    pub fn entries(&self) -> Vec<UsageEntry> {
        let entries = self.entries.lock();
        let mut rows: Vec<UsageEntry> = entries
            .iter()
            .map(|((principal, tool), usage)| UsageEntry {
                principal: principal.clone(),
                tool: tool.clone(),
                usage: *usage,
            })
            .collect();
        rows.sort_by(|a, b| (&a.principal, &a.tool).cmp(&(&b.principal, &b.tool)));
        rows
    }

    fn sum(&self, keep: impl Fn(Option<&str>, Option<&str>) -> bool) -> Usage {
        let entries = self.entries.lock();
        let mut total = Usage::default();
        for ((p, t), usage) in entries.iter() {
            if keep(p.as_deref(), t.as_deref()) {
                total.add(usage);
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_principal_and_tool() {
        let ledger = UsageLedger::default();
        let a = SampleContext::new().with_principal("a").with_tool("x");
        let b = SampleContext::new().with_principal("b").with_tool("x");
        ledger.record_success(
            &a,
            Some(TokenCounts {
                prompt: 1,
                completion: 2,
            }),
        );
        ledger.record_success(
            &b,
            Some(TokenCounts {
                prompt: 10,
                completion: 20,
            }),
        );
        ledger.record_success(&b, None);
        ledger.record_error(&SampleContext::new());
        assert_eq!(ledger.tool("x").total_tokens(), 33);
        assert_eq!(ledger.principal("b").unreported, 1);
        assert_eq!(ledger.get(None, None).errors, 1);
        assert_eq!(ledger.total().calls, 4);
        assert_eq!(ledger.entries().len(), 3);
    }

    #[test]
    fn bounded() {
        let ledger = UsageLedger::with_capacity(3);
        for i in 0..10 {
            ledger.record_error(&SampleContext::new().with_principal(format!("p{i}")));
        }
        assert_eq!(ledger.entries().len(), 3);
        assert_eq!(ledger.principal(OVERFLOW).calls, 8);
        assert_eq!(ledger.total().calls, 10);
    }
}
