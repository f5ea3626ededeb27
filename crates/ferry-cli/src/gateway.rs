//! `ferry gateway`: serve one MCP endpoint in front of other MCP servers (ferry-gateway).

use std::path::PathBuf;

use clap::Args;
use ferry_gateway::{Gateway, GatewayConfig, UpstreamConfig};

use crate::arguments::UsageError;
use crate::commands::Outcome;

/// `ferry gateway`.
#[derive(Args, Debug)]
pub struct GatewayArgs {
    /// The address to listen on (default 127.0.0.1:8080, or the configuration's).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// An upstream server: URL, NAME=URL, or NAME=cmd:'COMMAND' for a server on stdio
    /// (repeatable; with several, names are prefixed NAME.).
    #[arg(long = "upstream", value_name = "[NAME=]URL")]
    pub upstreams: Vec<String>,

    /// A TOML file with the same settings (flags given too win).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The most round trips one logical call may take.
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,

    /// The most items in one page of a merged list (default 100).
    #[arg(long, value_name = "N")]
    pub page_size: Option<usize>,

    /// Append one JSON line per round trip to this file.
    #[arg(long, value_name = "FILE")]
    pub usage_log: Option<PathBuf>,

    /// Redeem the gateway's requestStates and count its rate limits in this Redis (shared
    /// by instances).
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,

    /// This instance's address as the other instances reach it: they pass on to it the
    /// answers for calls it holds on 2025-11-25 upstreams.
    #[arg(long, value_name = "URL")]
    pub advertise_url: Option<String>,

    /// Accept `Authorization: Bearer TOKEN` as principal NAME (repeatable); with any,
    /// requests need a token.
    #[arg(long = "dev-token", value_name = "NAME=TOKEN")]
    pub dev_tokens: Vec<String>,

    /// Requests a second each principal may send (bursts of as many); over it, HTTP 429
    /// with Retry-After. Counted in --redis when given, across instances.
    #[arg(long, value_name = "N")]
    pub rate_limit: Option<u32>,

    /// New calls a second each principal may start of any one tool (bursts of as many;
    /// the later rounds of a call are not counted).
    #[arg(long, value_name = "N")]
    pub tool_rate_limit: Option<u32>,

    /// Accept JWT access tokens from this OAuth authorization server; every request then
    /// needs a token.
    #[arg(long, value_name = "URL")]
    pub auth_issuer: Option<String>,

    /// The gateway's endpoint as clients name it, the audience of their tokens (default
    /// http://LISTEN/mcp).
    #[arg(long, value_name = "URL")]
    pub resource: Option<String>,

    /// A scope the gateway's resource metadata lists (repeatable).
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
}

impl GatewayArgs {
    fn config(&self) -> anyhow::Result<GatewayConfig> {
        let mut config = match &self.config {
            Some(path) => GatewayConfig::from_file(path)?,
            None => GatewayConfig::default(),
        };
        if !self.upstreams.is_empty() {
            config.upstreams = self
                .upstreams
                .iter()
                .map(|u| UpstreamConfig::parse_flag(u))
                .collect::<Result<_, _>>()?;
        }
        if let Some(listen) = &self.listen {
            config.listen = listen.clone();
        }
        if let Some(n) = self.max_rounds {
            config.max_rounds = n;
        }
        if let Some(n) = self.page_size {
            config.page_size = n;
        }
        if let Some(path) = &self.usage_log {
            config.usage_log = Some(path.clone());
        }
        if let Some(url) = &self.redis {
            config.redis = Some(url.clone());
        }
        if let Some(url) = &self.advertise_url {
            config.advertise_url = Some(url.clone());
        }
        if let Some(n) = self.rate_limit {
            config.rate_limit = n;
        }
        if let Some(n) = self.tool_rate_limit {
            config.tool_rate_limit = n;
        }
        if let Some(issuer) = &self.auth_issuer {
            config.auth_issuer = Some(issuer.clone());
        }
        if let Some(resource) = &self.resource {
            config.resource = Some(resource.clone());
        }
        if !self.scopes.is_empty() {
            config.scopes_supported = self.scopes.clone();
        }
        config.dev_tokens.extend(self.dev_tokens.iter().cloned());
        config.check()?;
        Ok(config)
    }
}

/// Runs the gateway until Ctrl-C or SIGTERM.
pub async fn run(args: &GatewayArgs) -> anyhow::Result<Outcome> {
    let config = args.config().map_err(|e| UsageError::new(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind(&config.listen).await?;
    let addr = listener.local_addr()?;
    let gateway = Gateway::builder(config).build().await?;
    let names: Vec<&str> = gateway.upstreams().iter().map(|u| u.name()).collect();
    eprintln!(
        "ferry gateway: http://{addr}/mcp in front of {} (metrics at http://{addr}/metrics)",
        names.join(", ")
    );
    gateway
        .serve(listener, ferry_http::shutdown_signal())
        .await?;
    Ok(Outcome::Success)
}
