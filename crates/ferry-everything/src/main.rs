//! `ferry-everything`: serve Ferry's example MCP server over Streamable HTTP or stdio.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use ferry_everything::app::{PageState, endpoint, pages};
use ferry_everything::{Options, build};
use ferry_http::{HttpConfig, StaticTokens};
use ferry_redis::{Redis, RedisConfig};
use ferry_state::{KeyRing, RedbLedger, ReplayLedger};

/// An MCP server with every feature of Ferry: the conformance suite's fixtures and real
/// multi-round flows.
#[derive(Parser, Debug)]
#[command(name = "ferry-everything", version, about)]
struct Args {
    /// Serve Streamable HTTP at this address (endpoint /mcp), e.g. 127.0.0.1:3000. With
    /// --stdio too, HTTP serves the same server and its connect page alongside stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Serve on stdin and stdout (until stdin ends).
    #[arg(long)]
    stdio: bool,
    /// Accept `Authorization: Bearer TOKEN` as user NAME (repeatable; for development).
    #[arg(long = "dev-token", value_name = "NAME=TOKEN")]
    dev_tokens: Vec<String>,
    /// Refuse requests without a valid dev token (default: they run anonymously).
    #[arg(long)]
    require_auth: bool,
    /// How long a requestState stays valid, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    state_ttl: u64,
    /// requestState keys as "kid:base64key,..." (the first seals); also FERRY_STATE_KEYS.
    #[arg(
        long,
        env = "FERRY_STATE_KEYS",
        value_name = "KEYS",
        hide_env_values = true
    )]
    state_keys: Option<String>,
    /// Keep single-use redemptions in this file (default: in memory).
    #[arg(long, value_name = "PATH")]
    ledger: Option<PathBuf>,
    /// The public base URL of this server, for links it hands out (default: http://ADDR).
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Items per list page.
    #[arg(long, default_value_t = 100)]
    page_size: usize,
    /// Keep single-use redemptions, tasks, notes and change events in Redis at this URL
    /// (redis://[USER:PASSWORD@]HOST:PORT[/DB], rediss:// for TLS), shared by every
    /// instance behind a load balancer; also FERRY_REDIS_URL. Give every instance the same
    /// --state-keys.
    #[arg(
        long,
        env = "FERRY_REDIS_URL",
        value_name = "URL",
        hide_env_values = true,
        conflicts_with = "ledger"
    )]
    redis: Option<String>,
    /// The prefix of every Redis key and channel (instances of one deployment share it).
    #[arg(long, value_name = "PREFIX", default_value = ferry_redis::DEFAULT_PREFIX)]
    redis_prefix: String,
}

#[tokio::main]
async fn main() {
    init_logging();
    if let Err(e) = run(Args::parse()).await {
        eprintln!("ferry-everything: {e}");
        std::process::exit(1);
    }
}

/// Logs to stderr, filtered by `RUST_LOG` as `target=level` directives (default `info`).
///
/// A plain target filter: no regex engine is compiled at start-up, which keeps the idle
/// server's resident memory low.
fn init_logging() {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let default = || Targets::new().with_default(tracing::Level::INFO);
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => spec.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("ferry-everything: RUST_LOG ignored ({e}); logging at info");
            default()
        }),
        _ => default(),
    };
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter)
        .init();
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut tokens = StaticTokens::new();
    for spec in &args.dev_tokens {
        let (name, token) = spec
            .split_once('=')
            .filter(|(n, t)| !n.is_empty() && !t.is_empty())
            .ok_or_else(|| {
                format!(
                    "--dev-token expects NAME=TOKEN, got {:?}",
                    spec.split('=').next().unwrap_or("")
                )
            })?;
        tokens = tokens.with(name, token);
    }
    let state_keys = match &args.state_keys {
        Some(text) => Some(KeyRing::parse(text).map_err(|e| format!("--state-keys: {e}"))?),
        None => None,
    };
    let ledger: Option<Arc<dyn ReplayLedger>> = match &args.ledger {
        Some(path) => Some(Arc::new(RedbLedger::open(path)?)),
        None => None,
    };
    let public_url = args
        .public_url
        .clone()
        .or_else(|| args.http.map(|a| format!("http://{a}")))
        .unwrap_or_else(|| "http://127.0.0.1:3000".into());
    let mut options = Options {
        state_keys,
        state_ttl: Duration::from_secs(args.state_ttl),
        ledger,
        public_url,
        page_size: args.page_size,
        ..Options::default()
    };
    if let Some(url) = &args.redis {
        let config = RedisConfig::new(url.as_str()).key_prefix(args.redis_prefix.as_str());
        let redis = Redis::connect(config)
            .await
            .map_err(|e| format!("--redis: {e}"))?;
        if options.state_keys.is_none() {
            tracing::warn!(
                "--redis without --state-keys: each instance seals requestState with its own random key, so a retry landing on another instance is refused"
            );
        }
        options = options.on_redis(&redis).await;
    }
    let everything = build(options)?;
    if args.stdio && args.http.is_none() {
        ferry_stdio::serve_stdio(everything.server).await?;
        return Ok(());
    }
    let addr = args.http.ok_or("give --http ADDR or --stdio")?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let everything_server_for_stdio = everything.server.clone();
    let state = Arc::new(PageState {
        connections: everything.connections.clone(),
        links: everything.links.clone(),
        tokens,
    });
    let server = everything.server.clone();
    let mcp = endpoint(
        everything.server,
        HttpConfig::default(),
        &state.tokens,
        args.require_auth,
    );
    let app = pages(state);
    tracing::info!("serving MCP at http://{local}/mcp");
    let shutdown_server = server.clone();
    let serve = async move {
        let options = ferry_http::ServeOptions::default();
        ferry_http::serve_app(listener, &server, mcp, Some(app), &options, async move {
            ferry_http::shutdown_signal().await;
            shutdown_server.shutdown();
        })
        .await
    };
    if args.stdio {
        // Both: the page (and MCP) over HTTP in the background, MCP on stdio until stdin
        // ends, which ends the process.
        let stdio_server = everything_server_for_stdio;
        tokio::spawn(async move {
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "HTTP server stopped");
            }
        });
        ferry_stdio::serve_stdio(stdio_server).await?;
        return Ok(());
    }
    serve.await?;
    Ok(())
}
