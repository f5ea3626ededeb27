//! The errors a [`Provider`](crate::Provider) call ends with, and the errors of building one.

use std::fmt;
use std::time::Duration;

/// The longest provider message an error keeps, in bytes; longer ones are cut.
pub const MAX_ERROR_MESSAGE: usize = 512;

/// Who refused a call for its rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateLimitScope {
    /// This process's own limits (requests or tokens per minute) would be exceeded before the
    /// call's deadline or the longest wait allowed.
    Client,
    /// The provider answered HTTP 429 on every attempt.
    Provider,
}

impl fmt::Display for RateLimitScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RateLimitScope::Client => "client-side limit",
            RateLimitScope::Provider => "provider",
        })
    }
}

/// Why a sampling call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// Too many requests or tokens, after the retries allowed.
    #[error("rate limited ({scope}){}", retry_hint(.retry_after))]
    RateLimited {
        /// Who refused.
        scope: RateLimitScope,
        /// When to try again, if known.
        retry_after: Option<Duration>,
    },
    /// The call's deadline passed, or every attempt ran past the per-call timeout.
    #[error("timed out after {elapsed:?}")]
    Timeout {
        /// How long the call had run when it gave up.
        elapsed: Duration,
    },
    /// The provider answered with an error status. `message` is the provider's own text,
    /// cut to [`MAX_ERROR_MESSAGE`] bytes.
    #[error("provider answered HTTP {status}: {message}")]
    Provider {
        /// The HTTP status.
        status: u16,
        /// The provider's error code (`error.code`, e.g. `model_not_found`), if any.
        code: Option<String>,
        /// The provider's message, bounded.
        message: String,
    },
    /// The sampling request cannot be sent as it is: content the provider API cannot carry,
    /// or a conversation that breaks the spec's rules (sampling.mdx, "Message Content
    /// Constraints"). Nothing was sent.
    #[error("invalid sampling request: {0}")]
    InvalidRequest(String),
    /// Every model of the fallback chain failed; each failure is listed in order.
    #[error("no model could answer: {}", summary(.attempts))]
    Unavailable {
        /// One entry per model tried.
        attempts: Vec<ModelFailure>,
    },
    /// The provider's answer could not be read: not the chat-completions shape, too large,
    /// a stream cut short, tool-call arguments that are not a JSON object.
    #[error("unreadable provider answer: {0}")]
    InvalidResponse(String),
    /// No answer could be had from the endpoint: connection refused, reset, TLS failure.
    #[error("cannot reach the provider: {0}")]
    Connection(String),
}

impl LlmError {
    /// Whether trying the same call again later may succeed (rate limits, timeouts, server
    /// errors, lost connections), as opposed to a request that will fail the same way.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. }
            | LlmError::Timeout { .. }
            | LlmError::Connection(_)
            | LlmError::InvalidResponse(_) => true,
            LlmError::Provider { status, .. } => matches!(*status, 408 | 409) || *status >= 500,
            LlmError::InvalidRequest(_) => false,
            LlmError::Unavailable { attempts } => attempts.iter().any(|a| a.error.is_retryable()),
        }
    }

    /// Whether the provider said the model does not exist (HTTP 404, or `model_not_found`).
    pub fn is_model_not_found(&self) -> bool {
        match self {
            LlmError::Provider { status, code, .. } => {
                *status == 404 || code.as_deref() == Some("model_not_found")
            }
            _ => false,
        }
    }

    pub(crate) fn provider(status: u16, code: Option<String>, message: &str) -> Self {
        LlmError::Provider {
            status,
            code: code.map(|c| bounded(&c, 64)),
            message: bounded(message, MAX_ERROR_MESSAGE),
        }
    }
}

/// One model's failure inside [`LlmError::Unavailable`].
#[derive(Debug)]
pub struct ModelFailure {
    /// The model name sent.
    pub model: String,
    /// How its last attempt failed.
    pub error: Box<LlmError>,
}

fn retry_hint(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!("; retry after {d:?}"),
        None => String::new(),
    }
}

fn summary(attempts: &[ModelFailure]) -> String {
    attempts
        .iter()
        .map(|a| format!("{}: {}", a.model, a.error))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `text` cut to at most `max` bytes on a character boundary, with a trailing `…` when cut.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A provider configuration that cannot work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The base URL does not parse, or is not `http`/`https`.
    #[error("invalid base URL {url:?}: {reason}")]
    BaseUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No model to call: neither a default model nor a model table entry.
    #[error("no model configured: set a default model")]
    NoModel,
    /// A limit set to zero, or another value out of range.
    #[error("invalid setting {name}: {reason}")]
    Setting {
        /// The setting.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The API key holds characters an HTTP header cannot carry.
    #[error("the API key cannot be sent in an HTTP header")]
    ApiKey,
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Http(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_cuts_on_char_boundary() {
        assert_eq!(bounded("abc", 5), "abc");
        assert_eq!(bounded("héllo", 2), "h…");
        assert_eq!(
            bounded(&"x".repeat(600), MAX_ERROR_MESSAGE).len(),
            512 + '…'.len_utf8()
        );
    }

    #[test]
    fn classification() {
        let nf = LlmError::provider(404, None, "no such model");
        assert!(nf.is_model_not_found() && !nf.is_retryable());
        let code = LlmError::provider(400, Some("model_not_found".into()), "x");
        assert!(code.is_model_not_found());
        assert!(LlmError::provider(503, None, "busy").is_retryable());
        assert!(!LlmError::InvalidRequest("x".into()).is_retryable());
        let all = LlmError::Unavailable {
            attempts: vec![ModelFailure {
                model: "m".into(),
                error: Box::new(nf),
            }],
        };
        assert_eq!(
            all.to_string(),
            "no model could answer: m: provider answered HTTP 404: no such model"
        );
    }
}
