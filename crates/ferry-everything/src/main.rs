//! `ferry-everything`: serve Ferry's example MCP server over Streamable HTTP or stdio.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use ferry_everything::app::{
    AuthOptions, DELETE_SCOPE, PageState, StaticTokens, auth_layer, resource_uri, site,
};
use ferry_everything::sandbox::{Sandbox, TEMPORARY_PREFIX};
use ferry_everything::{Options, build};
use ferry_http::{HttpConfig, McpService};
use ferry_redis::{Redis, RedisConfig};
use ferry_server::TaskStore;
use ferry_state::{KeyRing, MemoryLedger, RedbLedger, ReplayLedger};
use ferry_tasks::RedbTaskStore;

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
    /// Accept `Authorization: Bearer TOKEN` as user NAME, with every scope the server
    /// uses (repeatable; for development).
    #[arg(long = "dev-token", value_name = "NAME=TOKEN")]
    dev_tokens: Vec<String>,
    /// Refuse requests without a valid token (default with dev tokens only: they run
    /// anonymously; always so with --auth-issuer).
    #[arg(long)]
    require_auth: bool,
    /// Accept JWT access tokens from this authorization server (keys from its metadata)
    /// and serve Protected Resource Metadata naming it.
    #[arg(long, value_name = "URL")]
    auth_issuer: Option<String>,
    /// The canonical URI of this MCP endpoint, the audience tokens must name (default:
    /// the public URL followed by /mcp).
    #[arg(long, value_name = "URL")]
    resource: Option<String>,
    /// Seconds to keep accepting connections after SIGTERM or Ctrl-C, with /readyz
    /// already 503, before the listener closes.
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    drain_grace: u64,
    /// Seconds to wait for calls in flight once the listener has closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    drain_timeout: u64,
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
    /// How many single-use redemptions the in-memory ledger holds (about 40 bytes each).
    /// A steady rate of redemptions needs rate × (--state-ttl + 60 s); past that, retries
    /// of single-use calls are refused until records expire.
    #[arg(
        long,
        value_name = "RECORDS",
        default_value_t = ferry_state::DEFAULT_MEMORY_CAPACITY,
        conflicts_with_all = ["ledger", "redis"]
    )]
    ledger_capacity: usize,
    /// The public base URL of this server, for links it hands out (default: http://ADDR).
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Items per list page.
    #[arg(long, default_value_t = 100)]
    page_size: usize,
    /// An OpenAI-compatible LLM API that answers `summarize` for clients without
    /// sampling, e.g. https://api.openai.com/v1 (key from FERRY_LLM_API_KEY).
    #[arg(long, value_name = "URL")]
    llm_base_url: Option<String>,
    /// The model `summarize` asks first.
    #[arg(long, value_name = "NAME", default_value = "gpt-4o-mini")]
    llm_model: String,
    /// A model tried when the first one fails.
    #[arg(long, value_name = "NAME")]
    llm_fallback_model: Option<String>,
    /// Keep tasks in this redb file, across restarts (default: in memory). Tasks left
    /// unfinished by a previous run are marked failed on start.
    #[arg(long, value_name = "PATH")]
    task_store: Option<PathBuf>,
    /// Keep single-use redemptions, tasks, notes, change events and 2025-11-25 sessions in Redis at this URL
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
    /// Serve Prometheus text of the MCP metrics at `GET /metrics` (HTTP only).
    #[arg(long)]
    metrics: bool,
    /// The folder `confirm_delete` deletes files in (made if missing; the demo files are
    /// added where missing). Default: a fresh folder under the system's temporary
    /// directory, removed on exit.
    #[arg(long, value_name = "DIR")]
    sandbox: Option<PathBuf>,
    /// Log JSON lines on stderr instead of text.
    #[arg(long)]
    log_json: bool,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    // Logs on stderr, filtered by `RUST_LOG` (`target=level` directives, default `info`;
    // a plain target filter, so no regex engine is compiled at start-up); spans and
    // metrics exported over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
    let telemetry = match ferry_otel::Telemetry::new("ferry-everything")
        .json_logs(args.log_json)
        .prometheus(args.metrics)
        .init()
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ferry-everything: {e}");
            std::process::exit(2);
        }
    };
    let result = run(args, telemetry.metrics_router()).await;
    drop(telemetry);
    if let Err(e) = result {
        eprintln!("ferry-everything: {e}");
        std::process::exit(1);
    }
}

async fn run(args: Args, metrics: Option<axum::Router>) -> Result<(), Box<dyn std::error::Error>> {
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
        tokens = tokens.with_scoped(name, token, [DELETE_SCOPE]);
    }
    let auth = AuthOptions {
        dev_tokens: tokens,
        issuer: args.auth_issuer.clone(),
        require_auth: args.require_auth,
    };
    let state_keys = match &args.state_keys {
        Some(text) => Some(KeyRing::parse(text).map_err(|e| format!("--state-keys: {e}"))?),
        None => None,
    };
    let ledger: Option<Arc<dyn ReplayLedger>> = match &args.ledger {
        Some(path) => Some(Arc::new(RedbLedger::open(path)?)),
        // With --redis, the ledger is Redis's (set below).
        None if args.redis.is_none() => Some(Arc::new(MemoryLedger::new(args.ledger_capacity))),
        None => None,
    };
    let task_store: Option<Arc<dyn TaskStore>> = match &args.task_store {
        Some(path) => {
            let store = RedbTaskStore::open(path).map_err(|e| format!("--task-store: {e}"))?;
            Some(Arc::new(store))
        }
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
        public_url: public_url.clone(),
        page_size: args.page_size,
        sampling: ferry_everything::llm::LlmOptions {
            base_url: args.llm_base_url.clone(),
            model: args.llm_model.clone(),
            fallback_model: args.llm_fallback_model.clone(),
        }
        .policy()
        .map_err(|e| format!("--llm-base-url: {e}"))?,
        require_scopes: auth.is_on(),
        task_store,
        ..Options::default()
    };
    // A temporary sandbox is owned here, so it is removed when `run` returns, however the
    // server ends (stdin closed, SIGTERM or Ctrl-C drained, or an error).
    let (sandbox, _temporary) = match &args.sandbox {
        Some(dir) => (
            Sandbox::open(dir).map_err(|e| format!("--sandbox {}: {e}", dir.display()))?,
            None,
        ),
        None => {
            let dir = tempfile::Builder::new()
                .prefix(TEMPORARY_PREFIX)
                .tempdir()
                .map_err(|e| format!("could not make a sandbox folder: {e}"))?;
            (Sandbox::open(dir.path())?, Some(dir))
        }
    };
    sandbox
        .seed_demo_files()
        .map_err(|e| format!("could not write the demo files: {e}"))?;
    let removed = if _temporary.is_some() {
        " (removed on exit)"
    } else {
        ""
    };
    tracing::info!(sandbox = %sandbox.root().display(), "confirm_delete deletes files in the sandbox folder{removed}");
    eprintln!(
        "ferry-everything: confirm_delete works in the sandbox folder {}{removed}",
        sandbox.root().display()
    );
    options.sandbox = Some(Arc::new(sandbox));
    let mut readiness = None;
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
        readiness = Some(redis.readiness_probe());
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
    let resource = args
        .resource
        .clone()
        .unwrap_or_else(|| resource_uri(&public_url, "/mcp"));
    let layer = auth_layer(&auth, &resource).map_err(|e| format!("authorization: {e}"))?;
    if layer.is_some() {
        tracing::info!(%resource, issuer = ?auth.issuer, "authorization on");
    }
    let state = Arc::new(PageState {
        connections: everything.connections.clone(),
        links: everything.links.clone(),
        tokens: auth.dev_tokens,
    });
    let config = HttpConfig::builder()
        .drain_grace(Duration::from_secs(args.drain_grace))
        .drain_timeout(Duration::from_secs(args.drain_timeout))
        .build()?;
    let mcp = McpService::new(everything.server, config);
    tracing::info!("serving MCP at http://{local}/mcp");
    // On SIGTERM or Ctrl-C the server drains: /readyz turns 503, connections are still
    // accepted for the grace period, then calls in flight finish and listen streams end
    // with their completion result.
    let mut serve = ferry_http::serve(listener, mcp)
        .app(match metrics {
            Some(m) => site(state, layer.as_ref()).merge(m),
            None => site(state, layer.as_ref()),
        })
        .layer(tower::util::option_layer(layer));
    if let Some(probe) = readiness {
        // /readyz follows Redis: 503 while it is unreachable.
        serve = serve.readiness(move || probe());
    }
    let serve = serve
        .with_graceful_shutdown(ferry_http::shutdown_signal())
        .into_future();
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
