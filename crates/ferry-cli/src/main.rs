//! `ferry`: a command-line client for the Model Context Protocol.
//!
//! ```text
//! ferry demo
//! ferry --url http://127.0.0.1:3000/mcp tools
//! ferry --stdio "ferry-everything --stdio" call confirm_delete path=notes.txt
//! ```
//!
//! The modules, from the command line inwards:
//!
//! - [`cli`]: options and subcommands;
//! - [`arguments`]: `KEY=VALUE` tool arguments typed by the tool's input schema;
//! - [`connect`]: `--url` or `--stdio`, token and timeout;
//! - [`commands`]: the subcommands; [`output`]: how results are printed;
//! - [`handler`]: answering the server's questions, from [`answers`] (`--answers`) or
//!   in the terminal: [`form`] (elicitation forms), [`url_consent`] (URL mode),
//!   [`deprecated`] (sampling and roots), all drawn by [`term`]; [`progress`] shows
//!   progress notifications;
//! - [`demo`]: the example server in-process and a guided tour of the protocol;
//! - [`audit`]: `ferry audit`, the front of the `ferry-audit` library.
//! - [`lint`]: deprecated MCP features in source code (ferry-lint).
//! - [`login`]: `ferry login` and `ferry logout`, and the OAuth sign-in every `--url`
//!   command carries.
#![forbid(unsafe_code)]

/// The gateway allocates and frees many short-lived buffers of every size per request;
/// mimalloc serves them from thread-local pages, where the system allocator spends a
/// fifth of the gateway's time (`bench/gateway.sh`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod answers;
mod arguments;
mod audit;
mod cli;
mod commands;
mod connect;
mod demo;
mod deprecated;
mod diagnose;
mod form;
mod gateway;
mod handler;
mod lint;
mod login;
mod output;
mod progress;
mod term;
mod url_consent;

use std::process::ExitCode;

use clap::Parser;
use console::style;
use ferry_client::Error as ClientError;

use crate::arguments::UsageError;
use crate::cli::{Cli, Command};
use crate::commands::Outcome;

/// Exit codes (also listed in `ferry --help`).
mod exit {
    /// The tool or prompt reported an error result.
    pub const TOOL_ERROR: u8 = 1;
    /// Bad command line, arguments or answers.
    pub const USAGE: u8 = 2;
    /// The server answered with a JSON-RPC error.
    pub const SERVER_ERROR: u8 = 3;
    /// The server could not be reached or broke the protocol.
    pub const CONNECTION: u8 = 4;
    /// A request timed out.
    pub const TIMEOUT: u8 = 5;
    /// Ctrl-C.
    pub const INTERRUPTED: u8 = 130;
}

/// Logging, and OpenTelemetry when `OTEL_EXPORTER_OTLP_ENDPOINT` is set or the call is
/// traced (`ferry call --trace`). The guard flushes the exporters when dropped.
fn init_telemetry(cli: &Cli) -> Option<ferry_otel::TelemetryGuard> {
    let traced = matches!(&cli.command, Command::Call(c) if c.trace);
    let export = match ferry_otel::ExportConfig::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ferry: {e}; not exporting");
            init_logging(cli.verbose);
            return None;
        }
    };
    if !export.enabled && !traced {
        init_logging(cli.verbose);
        return None;
    }
    let filter = match cli.verbose {
        0 => std::env::var("FERRY_LOG")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "off".to_owned()),
        1 => "warn,ferry=info,ferry_client=info".to_owned(),
        2 => "info,ferry=debug,ferry_client=debug".to_owned(),
        _ => "debug,ferry=trace,ferry_client=trace".to_owned(),
    };
    match ferry_otel::Telemetry::new("ferry")
        .export(export)
        .log_filter(filter)
        .always_trace(traced)
        .init()
    {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("ferry: telemetry is off: {e}");
            None
        }
    }
}

fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let filter = match verbose {
        0 => match std::env::var("FERRY_LOG") {
            Ok(spec) if !spec.is_empty() => {
                EnvFilter::try_new(spec).unwrap_or_else(|_| EnvFilter::new("off"))
            }
            _ => return,
        },
        1 => EnvFilter::new("warn,ferry=info,ferry_client=info"),
        2 => EnvFilter::new("info,ferry=debug,ferry_client=debug"),
        _ => EnvFilter::new("debug,ferry=trace,ferry_client=trace"),
    };
    // Colours only on a terminal: logs redirected to a file stay plain text.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(console::colors_enabled_stderr())
        .with_env_filter(filter)
        .try_init();
}

/// The exit code for a failure, from the first error in the chain that says.
fn exit_code(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if cause.downcast_ref::<UsageError>().is_some() {
            return exit::USAGE;
        }
        if let Some(e) = cause.downcast_ref::<ClientError>() {
            return match e {
                ClientError::Rpc(_) | ClientError::ResourceNotFound { .. } => exit::SERVER_ERROR,
                ClientError::Timeout { .. } => exit::TIMEOUT,
                ClientError::InvalidInput(_) => exit::USAGE,
                _ => exit::CONNECTION,
            };
        }
    }
    exit::CONNECTION
}

/// The message for a failure: the context, then the cause, with the server's JSON-RPC
/// error spelled out.
fn describe(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = match cause.downcast_ref::<ClientError>() {
            Some(e) => match e.rpc() {
                Some(rpc) => {
                    let mut s = format!(
                        "the server answered with JSON-RPC error {}: {}",
                        rpc.code,
                        term::sanitize(&rpc.message, false)
                    );
                    if let Some(status) = rpc.http_status.filter(|s| *s != 200) {
                        s.push_str(&format!(" (HTTP {status})"));
                    }
                    if let Some(data) = &rpc.data {
                        s.push_str(&format!(
                            "\n  data: {}",
                            term::sanitize(&data.to_string(), false)
                        ));
                    }
                    s
                }
                None => match e {
                    ClientError::HttpStatus { status, body } => format!(
                        "HTTP {status}: {}",
                        term::sanitize(&diagnose::summarize_body(body), false)
                    ),
                    ClientError::TooManyRounds { .. } => format!(
                        "{e} (it may keep asking for something that was refused or declined)"
                    ),
                    _ => e.to_string(),
                },
            },
            None => cause.to_string(),
        };
        if parts.last().is_none_or(|p| !p.contains(&text)) {
            parts.push(text);
        }
        if cause.downcast_ref::<ClientError>().is_some() {
            break;
        }
    }
    parts.join(": ")
}

async fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match &cli.command {
        Command::Demo(args) => {
            if cli.io.json {
                return Err(UsageError::new(
                    "the demo is a guided tour for people; for JSON, call a server yourself, e.g. \
                     ferry --stdio \"ferry demo --serve-stdio\" call echo text=hi --json",
                )
                .into());
            }
            if cli.server.url.is_some() || cli.server.stdio.is_some() {
                return Err(UsageError::new(
                    "the demo starts its own server: leave out --url and --stdio",
                )
                .into());
            }
            demo::run(args).await
        }
        Command::Audit(args) => audit::run(&cli, args).await,
        Command::Login(args) => login::login(&cli.server, args).await,
        Command::Logout(args) => login::logout(&cli.server, args).await,
        Command::Gateway(args) => {
            if cli.server.url.is_some() || cli.server.stdio.is_some() {
                return Err(UsageError::new(
                    "the gateway's servers are given with --upstream: leave out --url and --stdio",
                )
                .into());
            }
            gateway::run(args).await
        }
        _ => commands::run(&cli).await,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let _telemetry = init_telemetry(&cli);
    if let Command::Lint(args) = &cli.command {
        if cli.server.url.is_some() || cli.server.stdio.is_some() {
            eprintln!("ferry: error: lint reads source files: leave out --url and --stdio");
            return ExitCode::from(exit::USAGE);
        }
        return ExitCode::from(lint::run(args, cli.io.json));
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ferry: error: cannot start the runtime: {e}");
            return ExitCode::from(exit::CONNECTION);
        }
    };
    let server = cli.server.clone();
    let verbose = cli.verbose;
    let outcome = runtime.block_on(async {
        tokio::select! {
            r = run(cli) => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    let code = match outcome {
        None => {
            let _ = console::Term::stderr().show_cursor();
            eprintln!("\nferry: interrupted");
            exit::INTERRUPTED
        }
        Some(Ok(Outcome::Success)) => 0,
        Some(Ok(Outcome::ToolError)) => exit::TOOL_ERROR,
        Some(Err(e)) => {
            eprintln!(
                "{} {}",
                style("ferry: error:").for_stderr().red().bold(),
                describe(&e)
            );
            if let Some(hint) = diagnose::hint(&e, &server) {
                eprintln!("  {} {hint}", style("hint:").for_stderr().bold());
            }
            if verbose > 0 {
                for (i, cause) in e.chain().enumerate() {
                    eprintln!("  {i}: {}", term::sanitize(&cause.to_string(), false));
                }
            } else if e.chain().nth(1).is_some() {
                eprintln!("  (-v shows every cause)");
            }
            exit_code(&e)
        }
    };
    // Do not wait for blocking threads (a prompt, a stderr reader) to finish.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_client::RpcError;
    use ferry_client::ferry_protocol::{ErrorCode, ErrorObject};

    #[test]
    fn exit_codes_follow_the_cause() {
        let rpc = ClientError::from(RpcError::new(
            ErrorObject::new(ErrorCode(-32602), "Unknown tool: nope"),
            Some(400),
        ));
        let err = anyhow::Error::new(rpc).context("calling tool nope failed");
        assert_eq!(exit_code(&err), exit::SERVER_ERROR);
        assert_eq!(
            describe(&err),
            "calling tool nope failed: the server answered with JSON-RPC error -32602: Unknown tool: nope (HTTP 400)"
        );
        let err = anyhow::Error::new(UsageError::new("bad"));
        assert_eq!(exit_code(&err), exit::USAGE);
        let err = anyhow::Error::new(ClientError::Timeout {
            method: "tools/call".into(),
            after: std::time::Duration::from_secs(1),
        });
        assert_eq!(exit_code(&err), exit::TIMEOUT);
        let err = anyhow::Error::new(ClientError::Closed).context("x");
        assert_eq!(exit_code(&err), exit::CONNECTION);
    }

    #[test]
    fn rpc_errors_show_their_data() {
        let rpc = ClientError::from(RpcError::new(
            ErrorObject::new(ErrorCode(-32602), "bad\u{1b}[31m")
                .with_data(serde_json::json!({"field": "x"})),
            None,
        ));
        let text = describe(&anyhow::Error::new(rpc));
        assert_eq!(
            text,
            "the server answered with JSON-RPC error -32602: bad\\u{1b}[31m\n  data: {\"field\":\"x\"}"
        );
    }
}
