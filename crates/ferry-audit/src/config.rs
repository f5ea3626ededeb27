//! What to audit and how: the endpoint, the one tool to call, its arguments and answers,
//! the users' tokens, and the limits on every wait and response.

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};
use url::Url;

/// A bearer token. Its `Debug` and `Display` forms never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a token.
    pub fn new(token: impl Into<String>) -> Self {
        Token(token.into())
    }

    /// The token itself, for the `Authorization` header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Why an audit could not be set up or run at all (a check that fails is not an error:
/// it is a verdict in the report).
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The endpoint is not an `http` or `https` URL.
    #[error("{0:?} is not an http:// or https:// URL")]
    InvalidUrl(String),
    /// An option is out of range or inconsistent.
    #[error("{0}")]
    InvalidOption(String),
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    /// Nothing answered at the endpoint.
    #[error("the server at {url} could not be reached: {reason}")]
    Unreachable {
        /// The endpoint.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The server wants a bearer token the audit does not have (or refused the one given).
    #[error("the server refused the request with HTTP {status}: give a valid --token")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
    },
}

/// The longest `ttl` the audit will wait past.
pub const MAX_TTL: Duration = Duration::from_secs(3600);

/// What to audit.
///
/// ```
/// use ferry_audit::{AuditConfig, Token};
/// use serde_json::json;
///
/// let config = AuditConfig::new("http://127.0.0.1:3000/mcp", "confirm_delete")?
///     .args(json!({"path": "notes.txt"}))?
///     .token(Token::new("alice-token"))
///     .token_b(Token::new("bob-token"));
/// assert_eq!(config.tool(), "confirm_delete");
/// assert!(!format!("{config:?}").contains("alice-token"));
/// # Ok::<(), ferry_audit::AuditError>(())
/// ```
#[derive(Debug, Clone)]
pub struct AuditConfig {
    pub(crate) url: Url,
    pub(crate) tool: String,
    pub(crate) args: Map<String, Value>,
    pub(crate) answers: Map<String, Value>,
    pub(crate) token: Option<Token>,
    pub(crate) token_b: Option<Token>,
    pub(crate) ttl: Option<Duration>,
    pub(crate) other_tool: Option<String>,
    pub(crate) other_args: Map<String, Value>,
    pub(crate) changed_args: Option<Map<String, Value>>,
    pub(crate) request_timeout: Duration,
    pub(crate) latency_bound: Duration,
    pub(crate) max_response_bytes: usize,
    pub(crate) foreign_origin: String,
}

fn object(option: &str, value: Value) -> Result<Map<String, Value>, AuditError> {
    match value {
        Value::Object(m) => Ok(m),
        _ => Err(AuditError::InvalidOption(format!(
            "{option} must be a JSON object"
        ))),
    }
}

impl AuditConfig {
    /// Audits `tool` at the Streamable HTTP endpoint `url`, with no arguments, answering
    /// forms by accepting (every boolean true, defaults filled).
    pub fn new(url: &str, tool: impl Into<String>) -> Result<Self, AuditError> {
        let parsed = Url::parse(url).map_err(|_| AuditError::InvalidUrl(url.to_owned()))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(AuditError::InvalidUrl(url.to_owned()));
        }
        let tool = tool.into();
        if tool.is_empty() {
            return Err(AuditError::InvalidOption("the tool name is empty".into()));
        }
        Ok(AuditConfig {
            url: parsed,
            tool,
            args: Map::new(),
            answers: Map::new(),
            token: None,
            token_b: None,
            ttl: None,
            other_tool: None,
            other_args: Map::new(),
            changed_args: None,
            request_timeout: Duration::from_secs(30),
            latency_bound: Duration::from_secs(2),
            max_response_bytes: 4 * 1024 * 1024,
            foreign_origin: "https://ferry-audit.invalid".into(),
        })
    }

    /// The tool's arguments (a JSON object).
    pub fn args(mut self, args: Value) -> Result<Self, AuditError> {
        self.args = object("the arguments", args)?;
        Ok(self)
    }

    /// Answers to the tool's questions: a JSON object keyed by input request key (an
    /// `ElicitResult`, or a form's content) or by form field name (the field's value).
    pub fn answers(mut self, answers: Value) -> Result<Self, AuditError> {
        self.answers = object("the answers", answers)?;
        Ok(self)
    }

    /// The bearer token of user A (every request but the principal check's).
    pub fn token(mut self, token: Token) -> Self {
        self.token = Some(token);
        self
    }

    /// The bearer token of user B, who presents user A's state.
    pub fn token_b(mut self, token: Token) -> Self {
        self.token_b = Some(token);
        self
    }

    /// The lifetime of the server's `requestState`: the expiry check waits past it.
    pub fn ttl(mut self, ttl: Duration) -> Result<Self, AuditError> {
        if ttl.is_zero() || ttl > MAX_TTL {
            return Err(AuditError::InvalidOption(format!(
                "the ttl must be between 1 second and {} seconds",
                MAX_TTL.as_secs()
            )));
        }
        self.ttl = Some(ttl);
        Ok(self)
    }

    /// A second tool, safe to call, to present the first tool's state to, with its
    /// arguments.
    pub fn other_tool(mut self, name: impl Into<String>, args: Value) -> Result<Self, AuditError> {
        let name = name.into();
        if name == self.tool {
            return Err(AuditError::InvalidOption(
                "the other tool must not be the audited tool itself".into(),
            ));
        }
        if name.is_empty() {
            return Err(AuditError::InvalidOption(
                "the other tool's name is empty".into(),
            ));
        }
        self.other_tool = Some(name);
        self.other_args = object("the other tool's arguments", args)?;
        Ok(self)
    }

    /// The arguments the argument-binding check presents the state with (by default the
    /// arguments with one value changed).
    pub fn changed_args(mut self, args: Value) -> Result<Self, AuditError> {
        let args = object("the changed arguments", args)?;
        if args == self.args {
            return Err(AuditError::InvalidOption(
                "the changed arguments are the same as the arguments".into(),
            ));
        }
        self.changed_args = Some(args);
        Ok(self)
    }

    /// How long one request may take (default 30 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout.max(Duration::from_millis(100));
        self
    }

    /// How quickly garbage states must be refused (default 2 s).
    pub fn latency_bound(mut self, bound: Duration) -> Self {
        self.latency_bound = bound.max(Duration::from_millis(10));
        self
    }

    /// The largest response body read (default 4 MiB).
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes.max(1024);
        self
    }

    /// The endpoint.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The tool.
    pub fn tool(&self) -> &str {
        &self.tool
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_are_checked() {
        assert!(matches!(
            AuditConfig::new("ftp://x/mcp", "t"),
            Err(AuditError::InvalidUrl(_))
        ));
        assert!(AuditConfig::new("not a url", "t").is_err());
        assert!(AuditConfig::new("http://127.0.0.1/mcp", "").is_err());
        let c = AuditConfig::new("http://127.0.0.1/mcp", "t").unwrap();
        assert!(c.clone().args(json!([1])).is_err());
        assert!(c.clone().ttl(Duration::ZERO).is_err());
        assert!(c.clone().ttl(Duration::from_secs(7200)).is_err());
        assert!(c.clone().other_tool("t", json!({})).is_err());
        assert!(c.clone().changed_args(json!({})).is_err());
        let c = c.args(json!({"a": 1})).unwrap();
        assert!(c.changed_args(json!({"a": 2})).is_ok());
    }
}
