//! What the gateway serves and where it forwards: the settings of `ferry gateway`, from
//! flags or a TOML file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::error::ConfigError;

/// The longest upstream name, in characters.
pub const MAX_UPSTREAM_NAME: usize = 32;

/// The default cap on rounds (round trips) of one logical call.
pub const DEFAULT_MAX_ROUNDS: u32 = 8;

/// The default number of items in one page of a merged list.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// The default cap on calls held open on 2025-11-25 upstreams while their clients answer.
pub const DEFAULT_MAX_HELD_CALLS: usize = 1024;

/// The gateway's settings.
///
/// ```
/// use ferry_gateway::GatewayConfig;
///
/// let config = GatewayConfig::from_toml(r#"
///     listen = "127.0.0.1:8080"
///     max_rounds = 4
///     [[upstream]]
///     name = "files"
///     url = "http://127.0.0.1:9000/mcp"
///     bearer_env = "FILES_TOKEN"
///     deny = ["wipe_disk"]
///     [[upstream]]
///     name = "local"
///     command = "python3 server.py stdio"
/// "#).unwrap();
/// assert_eq!(config.upstreams.len(), 2);
/// assert_eq!(config.max_rounds, 4);
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// The address to listen on (`ferry gateway --listen`).
    #[serde(default = "default_listen")]
    pub listen: String,
    /// The servers behind the gateway, at least one.
    #[serde(rename = "upstream", default)]
    pub upstreams: Vec<UpstreamConfig>,
    /// The most rounds one logical call may take before the gateway ends it.
    #[serde(default = "default_max_rounds")]
    pub max_rounds: u32,
    /// The most items one page of a merged list holds (`tools/list` and the others);
    /// a longer list ends its page with a `nextCursor`.
    #[serde(default = "default_page_size")]
    pub page_size: usize,
    /// The most calls held open on 2025-11-25 upstreams at once, each waiting for its
    /// client's answer to a question the upstream asked in the middle of the call; a call
    /// asking beyond it is ended with an error.
    #[serde(default = "default_max_held_calls")]
    pub max_held_calls: usize,
    /// This instance's address as the other instances reach it (`http://10.0.0.5:8080`).
    /// With it, a call held here for a 2025-11-25 upstream can be continued through any
    /// instance with the same state keys: the others pass the answer on to this one.
    #[serde(default)]
    pub advertise_url: Option<String>,
    /// Append a JSON line per round trip to this file.
    #[serde(default)]
    pub usage_log: Option<PathBuf>,
    /// Redeem the gateway's states in this Redis (shared by every instance), not in
    /// memory, and count the rate limits there.
    #[serde(default)]
    pub redis: Option<String>,
    /// How long a state the gateway hands out stays valid, in seconds.
    #[serde(default = "default_state_ttl")]
    pub state_ttl_secs: u64,
    /// The name of the environment variable holding the gateway's state keys
    /// (`id:base64,...`, newest first). Without it a random per-process key is used.
    #[serde(default)]
    pub state_keys_env: Option<String>,
    /// Development tokens (`NAME=TOKEN`) accepted as `Authorization: Bearer TOKEN`; with
    /// any, requests without a valid token are refused.
    #[serde(default)]
    pub dev_tokens: Vec<String>,
    /// Requests a second each principal may send (bursts of as many); 0 for no limit.
    ///
    /// A request over it is refused with HTTP 429, `Retry-After` (whole seconds) and the
    /// JSON-RPC error [`RATE_LIMITED`](crate::RATE_LIMITED) (-32000, `data.retryAfterMs`).
    /// Counted in memory per instance, or, with [`redis`](GatewayConfig::redis), in
    /// Redis: one budget across every instance on it. While Redis cannot be reached,
    /// requests are refused with 503 rather than admitted unchecked.
    #[serde(default)]
    pub rate_limit: u32,
    /// New calls a second each principal may start of any one tool (bursts of as many);
    /// 0 for no limit. The later rounds of a call (retries with a `requestState`) are not
    /// counted, so a call under way is never cut short. Refused and counted like
    /// [`rate_limit`](GatewayConfig::rate_limit) (429, in Redis when configured, 503
    /// while Redis cannot be reached).
    #[serde(default)]
    pub tool_rate_limit: u32,
    /// The gateway's MCP endpoint as its clients name it (`https://mcp.example.com/mcp`):
    /// the audience its access tokens must name. Default `http://LISTEN/mcp`.
    #[serde(default)]
    pub resource: Option<String>,
    /// Accept JWT access tokens (RFC 9068) issued by this authorization server for
    /// [`resource`](GatewayConfig::resource); every MCP request then needs a token (a dev
    /// token, or one of the issuer's).
    #[serde(default)]
    pub auth_issuer: Option<String>,
    /// The scopes the gateway's Protected Resource Metadata lists (`scopes_supported`),
    /// which clients ask their authorization server for.
    #[serde(default)]
    pub scopes_supported: Vec<String>,
}

fn default_listen() -> String {
    "127.0.0.1:8080".into()
}
fn default_max_rounds() -> u32 {
    DEFAULT_MAX_ROUNDS
}
fn default_page_size() -> usize {
    DEFAULT_PAGE_SIZE
}
fn default_max_held_calls() -> usize {
    DEFAULT_MAX_HELD_CALLS
}
fn default_state_ttl() -> u64 {
    300
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            listen: default_listen(),
            upstreams: Vec::new(),
            max_rounds: DEFAULT_MAX_ROUNDS,
            page_size: DEFAULT_PAGE_SIZE,
            max_held_calls: DEFAULT_MAX_HELD_CALLS,
            advertise_url: None,
            usage_log: None,
            redis: None,
            state_ttl_secs: default_state_ttl(),
            state_keys_env: None,
            dev_tokens: Vec::new(),
            rate_limit: 0,
            tool_rate_limit: 0,
            resource: None,
            auth_issuer: None,
            scopes_supported: Vec::new(),
        }
    }
}

impl GatewayConfig {
    /// Reads and checks a TOML configuration.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let config: GatewayConfig =
            toml::from_str(text).map_err(|e| ConfigError::Toml(e.to_string()))?;
        config.check()?;
        Ok(config)
    }

    /// Reads and checks a TOML configuration file.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::Read(path.display().to_string(), e.to_string()))?;
        Self::from_toml(&text)
    }

    /// How long a state the gateway hands out stays valid.
    pub fn state_ttl(&self) -> Duration {
        Duration::from_secs(self.state_ttl_secs.max(1))
    }

    /// Checks the settings fit together: at least one upstream, unique valid names, a
    /// round cap of at least one, URLs where URLs are due.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.upstreams.is_empty() {
            return Err(ConfigError::NoUpstream);
        }
        if let Some(issuer) = &self.auth_issuer {
            check_http_url("auth_issuer", issuer)?;
        }
        if let Some(resource) = &self.resource {
            check_http_url("resource", resource)?;
        }
        if let Some(url) = &self.advertise_url {
            check_http_url("advertise_url", url)?;
        }
        if self.max_rounds == 0 {
            return Err(ConfigError::Invalid("max_rounds must be at least 1".into()));
        }
        if self.page_size == 0 {
            return Err(ConfigError::Invalid("page_size must be at least 1".into()));
        }
        let mut seen = BTreeSet::new();
        for u in &self.upstreams {
            u.check()?;
            if !seen.insert(u.name.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "two upstreams are named {:?}",
                    u.name
                )));
            }
        }
        Ok(())
    }
}

/// One server behind the gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct UpstreamConfig {
    /// The prefix of its tools, prompts and resource templates when there are several
    /// upstreams: ASCII letters, digits, `_` and `-`.
    pub name: String,
    /// Its Streamable HTTP endpoint.
    #[serde(default)]
    pub url: Option<String>,
    /// Or a command that serves it over stdio (split like a shell would).
    #[serde(default)]
    pub command: Option<String>,
    /// The environment variable holding the bearer token sent to this upstream.
    #[serde(default)]
    pub bearer_env: Option<String>,
    /// Or OAuth 2.1 client credentials: the gateway obtains (and renews) its own access
    /// token for this upstream from the upstream's authorization server.
    #[serde(default)]
    pub client_credentials: Option<ClientCredentials>,
    /// Only these tools are offered (all when empty).
    #[serde(default)]
    pub allow: Vec<String>,
    /// These tools are never offered nor called.
    #[serde(default)]
    pub deny: Vec<String>,
    /// The protocol era spoken to it: `auto` (the default: 2026-07-28 if it speaks it,
    /// else 2025-11-25), `2026-07-28` or `2025-11-25`.
    #[serde(default)]
    pub era: UpstreamEra,
}

/// The protocol era the gateway speaks to an upstream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub enum UpstreamEra {
    /// 2026-07-28 if the upstream speaks it, else 2025-11-25 (detected on connecting).
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// 2026-07-28 only: the gateway does not start if the upstream does not speak it.
    #[serde(rename = "2026-07-28")]
    Modern,
    /// 2025-11-25, after `initialize`, even if the upstream also speaks 2026-07-28.
    #[serde(rename = "2025-11-25")]
    Legacy,
}

/// Where an upstream is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamTarget {
    /// A Streamable HTTP endpoint.
    Http(String),
    /// A program serving MCP on its stdin and stdout: the program and its arguments.
    Stdio(Vec<String>),
}

impl UpstreamConfig {
    /// An upstream at `url` named `name`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        UpstreamConfig {
            name: name.into(),
            url: Some(url.into()),
            command: None,
            bearer_env: None,
            client_credentials: None,
            allow: Vec::new(),
            deny: Vec::new(),
            era: UpstreamEra::Auto,
        }
    }

    /// An upstream started as `command` (shell words) named `name`.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> Self {
        UpstreamConfig {
            command: Some(command.into()),
            url: None,
            ..UpstreamConfig::http(name, "")
        }
    }

    /// The same upstream, authenticating with the token in the environment variable
    /// `var`.
    pub fn with_bearer_env(mut self, var: impl Into<String>) -> Self {
        self.bearer_env = Some(var.into());
        self
    }

    /// The same upstream, authenticating with OAuth client credentials.
    pub fn with_client_credentials(mut self, credentials: ClientCredentials) -> Self {
        self.client_credentials = Some(credentials);
        self
    }

    /// The same upstream, spoken to in `era`.
    pub fn with_era(mut self, era: UpstreamEra) -> Self {
        self.era = era;
        self
    }

    /// The same upstream, offering only `tools`.
    pub fn with_allow<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.allow = tools.into_iter().map(Into::into).collect();
        self
    }

    /// The same upstream, never offering `tools`.
    pub fn with_deny<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.deny = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Parses a `--upstream` flag: `URL`, `NAME=URL` or `NAME=cmd:COMMAND`. A bare URL
    /// is named `default`.
    pub fn parse_flag(flag: &str) -> Result<Self, ConfigError> {
        let (name, rest) = match flag.split_once('=') {
            Some((n, r)) if is_valid_name(n) => (n, r),
            _ => ("default", flag),
        };
        let config = match rest.strip_prefix("cmd:") {
            Some(cmd) => UpstreamConfig::stdio(name, cmd),
            None => UpstreamConfig::http(name, rest),
        };
        config.check()?;
        Ok(config)
    }

    /// Where this upstream is reached.
    pub fn target(&self) -> Result<UpstreamTarget, ConfigError> {
        match (&self.url, &self.command) {
            (Some(url), None) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(UpstreamTarget::Http(url.clone()))
            }
            (Some(url), None) => Err(ConfigError::Invalid(format!(
                "upstream {:?}: {url:?} is not an http:// or https:// URL",
                self.name
            ))),
            (None, Some(cmd)) => match shlex::split(cmd) {
                Some(words) if !words.is_empty() => Ok(UpstreamTarget::Stdio(words)),
                _ => Err(ConfigError::Invalid(format!(
                    "upstream {:?}: the command {cmd:?} cannot be split into words",
                    self.name
                ))),
            },
            _ => Err(ConfigError::Invalid(format!(
                "upstream {:?} needs exactly one of url or command",
                self.name
            ))),
        }
    }

    /// Whether the edge policy lets clients see and call `tool`.
    pub fn allows_tool(&self, tool: &str) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|t| t == tool))
            && !self.deny.iter().any(|t| t == tool)
    }

    fn check(&self) -> Result<(), ConfigError> {
        if !is_valid_name(&self.name) {
            return Err(ConfigError::Invalid(format!(
                "upstream name {:?}: use 1 to {MAX_UPSTREAM_NAME} ASCII letters, digits, '_' or '-'",
                self.name
            )));
        }
        let target = self.target()?;
        if let Some(cc) = &self.client_credentials {
            if self.bearer_env.is_some() {
                return Err(ConfigError::Invalid(format!(
                    "upstream {:?}: give bearer_env or client_credentials, not both",
                    self.name
                )));
            }
            if matches!(target, UpstreamTarget::Stdio(_)) {
                return Err(ConfigError::Invalid(format!(
                    "upstream {:?}: client_credentials are for HTTP upstreams",
                    self.name
                )));
            }
            if cc.client_id.is_empty() {
                return Err(ConfigError::Invalid(format!(
                    "upstream {:?}: client_credentials need a client_id",
                    self.name
                )));
            }
            check_http_url("client_credentials.issuer", &cc.issuer)?;
        }
        Ok(())
    }
}

/// OAuth 2.1 client credentials (the `client_credentials` grant) the gateway uses for one
/// upstream. The gateway discovers the token endpoint from the upstream's Protected
/// Resource Metadata, asks for a token for the upstream's resource (RFC 8707), sends it
/// instead of the client's, and obtains a new one when it expires or is refused.
///
/// ```
/// use ferry_gateway::GatewayConfig;
///
/// let config = GatewayConfig::from_toml(r#"
///     [[upstream]]
///     name = "files"
///     url = "https://files.internal/mcp"
///     [upstream.client_credentials]
///     issuer = "https://auth.example.com"
///     client_id = "ferry-gateway"
///     client_secret_env = "FILES_CLIENT_SECRET"
///     scopes = ["files:read"]
/// "#).unwrap();
/// let cc = config.upstreams[0].client_credentials.as_ref().unwrap();
/// assert_eq!(cc.client_id, "ferry-gateway");
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ClientCredentials {
    /// The only authorization server the client secret is sent to: an upstream naming
    /// another one is refused, so a compromised upstream cannot collect the secret.
    pub issuer: String,
    /// The gateway's client id at that authorization server.
    pub client_id: String,
    /// The environment variable holding the client secret (or give the secret with
    /// [`GatewayBuilder::client_secret`](crate::GatewayBuilder::client_secret)).
    #[serde(default)]
    pub client_secret_env: Option<String>,
    /// The scopes to ask for; by default those the upstream asks for.
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl ClientCredentials {
    /// Client credentials for `client_id` at `issuer`, the secret in the environment
    /// variable `secret_env`.
    pub fn new(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        secret_env: impl Into<String>,
    ) -> Self {
        ClientCredentials {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret_env: Some(secret_env.into()),
            scopes: Vec::new(),
        }
    }

    /// The same credentials, asking for exactly `scopes`.
    pub fn with_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

/// Refuses a setting that is not an absolute `http://` or `https://` URL.
fn check_http_url(setting: &str, url: &str) -> Result<(), ConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(ConfigError::Invalid(format!(
            "{setting}: {url:?} is not an http:// or https:// URL"
        )))
    }
}

/// Whether `name` may name an upstream (it then never contains the namespace separator).
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_UPSTREAM_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_name_urls_and_commands() {
        let u = UpstreamConfig::parse_flag("http://127.0.0.1:1/mcp").unwrap();
        assert_eq!(u.name, "default");
        let u = UpstreamConfig::parse_flag("py=cmd:python3 'my server.py' stdio").unwrap();
        assert_eq!(u.name, "py");
        assert_eq!(
            u.target().unwrap(),
            UpstreamTarget::Stdio(vec![
                "python3".into(),
                "my server.py".into(),
                "stdio".into()
            ])
        );
        assert!(UpstreamConfig::parse_flag("a=ftp://x").is_err());
        assert!(UpstreamConfig::parse_flag("bad.name=http://x").is_err());
    }

    #[test]
    fn config_refuses_duplicates_and_unknown_keys() {
        let dup = "[[upstream]]\nname='a'\nurl='http://x'\n[[upstream]]\nname='a'\nurl='http://y'";
        assert!(GatewayConfig::from_toml(dup).is_err());
        assert!(GatewayConfig::from_toml("listen='x'\nbogus=1").is_err());
        assert!(matches!(
            GatewayConfig::from_toml(""),
            Err(ConfigError::NoUpstream)
        ));
    }

    #[test]
    fn credentials_and_authorization_settings_are_checked() {
        let ok = "auth_issuer = 'https://auth.example.com'\nresource = 'https://gw.example.com/mcp'\n\
                  [[upstream]]\nname = 'a'\nurl = 'https://a/mcp'\n\
                  [upstream.client_credentials]\nissuer = 'https://auth.example.com'\n\
                  client_id = 'gw'\nclient_secret_env = 'A_SECRET'";
        let config = GatewayConfig::from_toml(ok).unwrap();
        assert_eq!(
            config.auth_issuer.as_deref(),
            Some("https://auth.example.com")
        );
        assert!(config.upstreams[0].client_credentials.is_some());
        let both = ok.replace(
            "url = 'https://a/mcp'",
            "url = 'https://a/mcp'\nbearer_env = 'T'",
        );
        assert!(
            GatewayConfig::from_toml(&both).is_err(),
            "bearer and client credentials"
        );
        let stdio = ok.replace("url = 'https://a/mcp'", "command = 'server --stdio'");
        assert!(
            GatewayConfig::from_toml(&stdio).is_err(),
            "credentials on stdio"
        );
        let no_issuer = ok.replace("]\nissuer = 'https://auth.example.com'\n", "]\n");
        assert!(
            GatewayConfig::from_toml(&no_issuer).is_err(),
            "the issuer is required"
        );
        let bad = ok.replace("auth_issuer = 'https://", "auth_issuer = 'ftp://");
        assert!(
            GatewayConfig::from_toml(&bad).is_err(),
            "an issuer that is no URL"
        );
    }

    #[test]
    fn upstream_eras_and_held_calls() {
        let text = "max_held_calls = 7\n[[upstream]]\nname = 'a'\nurl = 'http://a/mcp'\n\
                    era = '2025-11-25'\n[[upstream]]\nname = 'b'\nurl = 'http://b/mcp'";
        let config = GatewayConfig::from_toml(text).unwrap();
        assert_eq!(config.max_held_calls, 7);
        assert_eq!(config.upstreams[0].era, UpstreamEra::Legacy);
        assert_eq!(config.upstreams[1].era, UpstreamEra::Auto);
        assert_eq!(
            GatewayConfig::default().max_held_calls,
            DEFAULT_MAX_HELD_CALLS
        );
        let modern = "[[upstream]]\nname = 'a'\nurl = 'http://a/mcp'\nera = '2026-07-28'";
        let modern = GatewayConfig::from_toml(modern).unwrap();
        assert_eq!(modern.upstreams[0].era, UpstreamEra::Modern);
        let bogus = "[[upstream]]\nname = 'a'\nurl = 'http://a/mcp'\nera = 'legacy'";
        let err = GatewayConfig::from_toml(bogus).unwrap_err().to_string();
        assert!(err.contains("2025-11-25"), "{err}");
    }

    #[test]
    fn allow_and_deny() {
        let u = UpstreamConfig::http("a", "http://x")
            .with_allow(["x", "y"])
            .with_deny(["y"]);
        assert!(u.allows_tool("x"));
        assert!(!u.allows_tool("y"));
        assert!(!u.allows_tool("z"));
    }
}
