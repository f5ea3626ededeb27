//! The gateway's errors.

/// A configuration the gateway cannot run with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No upstream was given.
    #[error(
        "no upstream: give at least one with --upstream NAME=URL or [[upstream]] in the configuration"
    )]
    NoUpstream,
    /// The configuration file could not be read.
    #[error("cannot read {0}: {1}")]
    Read(String, String),
    /// The configuration file is not valid TOML of the expected shape.
    #[error("invalid configuration: {0}")]
    Toml(String),
    /// A setting is out of range or settings contradict each other.
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The configuration is wrong.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An upstream could not be reached or refused the connection.
    #[error("upstream {name}: {source}")]
    Upstream {
        /// The upstream's name.
        name: String,
        /// What went wrong.
        #[source]
        source: ferry_client::Error,
    },
    /// The environment variable an upstream's credential is read from is not set.
    #[error("upstream {name}: the environment variable {var} (its credential) is not set")]
    MissingCredential {
        /// The upstream's name.
        name: String,
        /// The variable.
        var: String,
    },
    /// The state keys could not be read.
    #[error("state keys: {0}")]
    StateKeys(String),
    /// The usage log could not be opened.
    #[error("usage log {path}: {source}")]
    UsageLog {
        /// The file.
        path: String,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// Redis could not be reached.
    #[error("redis: {0}")]
    Redis(String),
    /// The gateway's own server could not be built.
    #[error("server: {0}")]
    Server(String),
    /// Authorization could not be set up.
    #[error("authorization: {0}")]
    Auth(String),
}
