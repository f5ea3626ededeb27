//! Logging: `notifications/message` and its levels (server/utilities/logging.mdx). Deprecated in
//! 2026-07-28, where a client opts in per request with
//! `_meta["io.modelcontextprotocol/logLevel"]`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::meta::Meta;

/// A log severity (RFC 5424), ordered from least to most severe: `Debug < Info < ... <
/// Emergency`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug detail.
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }

    /// Reads a wire name; `None` for anything else (which a server should refuse with
    /// -32602).
    pub fn parse(s: &str) -> Option<LoggingLevel> {
        LoggingLevel::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// Whether a message at `self` passes a client threshold of `threshold`.
    pub fn passes(self, threshold: LoggingLevel) -> bool {
        self >= threshold
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown level name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown logging level `{0}`")]
pub struct UnknownLoggingLevel(pub String);

impl FromStr for LoggingLevel {
    type Err = UnknownLoggingLevel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LoggingLevel::parse(s).ok_or_else(|| UnknownLoggingLevel(s.to_owned()))
    }
}

/// The params of `notifications/message` (schema.ts `LoggingMessageNotificationParams`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Severity.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message or structured data. Must not hold secrets or personal data.
    pub data: Value,
}

impl LoggingMessageNotificationParams {
    /// A log message.
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        LoggingMessageNotificationParams {
            meta: None,
            level,
            logger: None,
            data: data.into(),
        }
    }

    /// Sets the logger name.
    pub fn with_logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }
}
