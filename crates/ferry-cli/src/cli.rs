//! The command line: options, subcommands and their help texts (clap derive).

use std::fmt;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

/// What `ferry` prints after `--help`: examples and exit codes.
const AFTER_HELP: &str = "\
Examples:
  ferry demo                                   watch a client and a server talk, step by step
  ferry --url http://127.0.0.1:3000/mcp tools
  ferry --url http://127.0.0.1:3000/mcp call confirm_delete path=notes.txt
  ferry --stdio \"ferry-everything --stdio\" call echo text='hello there'
  ferry --url URL call confirm_delete path=notes.txt --json --answers '{\"confirm\": true}'
  ferry lint src                               find deprecated MCP features in source code

Exit codes:
  0  success
  1  the tool (or prompt) reported an error result (isError); for audit, a check failed
  2  bad command line, arguments or answers
  3  the server answered with a JSON-RPC error
  4  the server could not be reached, or broke the protocol
  5  a request timed out
  130  interrupted (Ctrl-C)";

/// A command-line client for the Model Context Protocol.
///
/// Talks to an MCP server over Streamable HTTP (`--url`) or stdio (`--stdio`), speaking
/// protocol 2026-07-28 (and 2025-11-25 with older servers). When the server needs input
/// while answering (an elicitation form, a URL to open, a sampling or roots request),
/// ferry asks you in the terminal, or answers from `--answers`.
#[derive(Parser, Debug)]
#[command(name = "ferry", version, after_long_help = AFTER_HELP)]
pub struct Cli {
    /// Where the server is and how to reach it.
    #[command(flatten)]
    pub server: ServerArgs,

    /// How results are printed and how the server's questions are answered.
    #[command(flatten)]
    pub io: IoArgs,

    /// More log output on stderr (-v: info, -vv: debug, -vvv: trace). Logs are off by
    /// default; FERRY_LOG (e.g. "ferry_client=debug") is used when -v is not given.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The server to talk to.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Server")]
pub struct ServerArgs {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp.
    #[arg(long, value_name = "URL", global = true, conflicts_with = "stdio")]
    pub url: Option<String>,

    /// Start the server with this command line and talk over its stdin and stdout, e.g.
    /// "ferry-everything --stdio". Split like a shell does (quotes and backslashes work);
    /// no shell runs it. The server's stderr is shown with -v.
    #[arg(long, value_name = "COMMAND", global = true)]
    pub stdio: Option<String>,

    /// A bearer token sent as `Authorization: Bearer …` on every HTTP request. Never
    /// printed or logged.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "FERRY_TOKEN",
        hide_env_values = true,
        global = true
    )]
    pub token: Option<Secret>,

    /// An OAuth client id registered with the server's authorization server beforehand.
    /// With --client-secret, ferry signs in as that client itself (the client credentials
    /// grant, for scripts: no browser); alone, `ferry login` uses it instead of
    /// registering.
    #[arg(long, value_name = "ID", env = "FERRY_CLIENT_ID", global = true)]
    pub client_id: Option<String>,

    /// The secret of --client-id. Never printed or logged.
    #[arg(
        long,
        value_name = "SECRET",
        env = "FERRY_CLIENT_SECRET",
        hide_env_values = true,
        global = true
    )]
    pub client_secret: Option<Secret>,

    /// How long each request may take, e.g. 30, 30s, 500ms, 2m. Time spent answering a
    /// form is not counted.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, global = true)]
    pub timeout: Duration,
}

/// Output and input options.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Output and answers")]
pub struct IoArgs {
    /// Print the raw result as JSON on stdout, and nothing else there (for scripts).
    #[arg(long, global = true)]
    pub json: bool,

    /// Answer the server's questions without a terminal. A JSON object keyed by the
    /// question's key, e.g. '{"confirm": {"confirm": true}}' or '{"confirm":
    /// {"action": "decline"}}', or by form field names, e.g. '{"confirm": true}'. Also
    /// @FILE, or @- for stdin.
    #[arg(long, value_name = "JSON|@FILE", global = true)]
    pub answers: Option<String>,

    /// Never ask in the terminal: questions that --answers does not cover are declined.
    #[arg(long, global = true)]
    pub no_input: bool,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show who the server is and what it offers (server/discover).
    Discover,

    /// List the server's tools and their arguments (tools/list).
    Tools,

    /// Call a tool (tools/call), answering its questions along the way.
    #[command(after_help = "\
Arguments are KEY=VALUE pairs. A value is sent as JSON when the tool's input schema says
the property is a number, integer, boolean, array or object (ferry reads tools/list to
know), and as a string otherwise. KEY:=JSON always sends JSON. --args '{...}' gives all
arguments as one JSON object; KEY=VALUE pairs are added to it.

  ferry call confirm_delete path=notes.txt
  ferry call add a=1 b=2
  ferry call tag 'labels:=[\"a\",\"b\"]'
  ferry call echo --args '{\"text\": \"hi\"}'")]
    Call(CallArgs),

    /// Look at or cancel a task the server runs (tasks/get, tasks/cancel), e.g. one a
    /// `ferry call` left behind.
    #[command(subcommand)]
    Task(TaskCommand),

    /// List the server's prompts (prompts/list).
    Prompts,

    /// Get a prompt with its arguments (prompts/get).
    Prompt(PromptArgs),

    /// List the server's resources and resource templates (resources/list).
    Resources,

    /// Read a resource (resources/read).
    Read(ReadArgs),

    /// Print the server's change notifications as they arrive (subscriptions/listen).
    ///
    /// Without a filter, listens for tool, prompt and resource list changes. Ctrl-C stops.
    Listen(ListenArgs),

    /// Watch a client and a server talk, one round trip at a time.
    ///
    /// Runs the example server (ferry-everything) in this process on 127.0.0.1, then
    /// shows a client discovering it, listing its tools and calling one that asks the user
    /// for a confirmation: the requests, the InputRequiredResult, the retry with the
    /// answers and the echoed requestState, and the result.
    Demo(DemoArgs),

    /// Audit a server's MRTR and requestState defences, header rules and Origin check,
    /// by calling one tool that asks for input and attacking its round trip.
    Audit(crate::audit::AuditArgs),
    /// Find deprecated and removed MCP features in source code (Python, TypeScript,
    /// JavaScript, Rust, Go).
    ///
    /// Reads files by syntax tree and reports each use with the specification's migration
    /// and earliest removal. Exit codes: 0 nothing found (or --warn), 1 findings, 2 a path
    /// that cannot be read or a bad command line.
    #[command(after_help = "\
  ferry lint                            search the current directory
  ferry lint src tests --format sarif > lint.sarif
  ferry lint --rule mcp-sampling,mcp-roots --warn
  ferry lint --list-rules")]
    Lint(crate::lint::LintArgs),

    /// Sign in to a server that uses OAuth, and keep the sign-in for later commands.
    ///
    /// Finds the server's authorization server, registers ferry with it if needed, and
    /// opens the sign-in page in your browser (asking first on a terminal; --no-browser
    /// prints the address instead). The browser comes back to ferry on 127.0.0.1. Other
    /// commands then use the kept sign-in, and refresh it when they can.
    #[command(after_help = "\
  ferry login https://mcp.example.com/mcp
  ferry login https://mcp.example.com/mcp --no-browser --scope files:read
  ferry login https://mcp.example.com/mcp --client-id my-registered-client
  ferry --url https://mcp.example.com/mcp --client-id svc --client-secret \"$SECRET\" call echo

With --client-id and --client-secret, every command signs in as that client (the client
credentials grant) without a login step.

Sign-ins are kept in $FERRY_TOKEN_DIR, else $XDG_CONFIG_HOME/ferry/tokens, else
~/.config/ferry/tokens, readable by you only.")]
    Login(crate::login::LoginArgs),

    /// Forget the sign-in kept for a server (the registration with its authorization
    /// server is kept).
    Logout(crate::login::LogoutArgs),

    /// Serve one MCP endpoint in front of other MCP servers: lists merged (names
    /// prefixed NAME. with several upstreams), requestState sealed and single-use at the
    /// gateway, every round trip metered, Prometheus text at /metrics.
    #[command(after_help = "\
  ferry gateway --upstream http://127.0.0.1:9000/mcp
  ferry gateway --listen 127.0.0.1:8080 --upstream files=http://127.0.0.1:9000/mcp \\
      --upstream demo=cmd:'ferry-everything --stdio' --usage-log usage.jsonl
  ferry gateway --upstream http://127.0.0.1:9000/mcp --auth-issuer https://auth.example.com \
      --resource https://mcp.example.com/mcp
  ferry gateway --config gateway.toml   # per-upstream client credentials are set here")]
    Gateway(crate::gateway::GatewayArgs),
}

/// `ferry call`.
#[derive(Args, Debug)]
pub struct CallArgs {
    /// The tool's name.
    #[arg(value_name = "TOOL")]
    pub tool: String,

    /// The arguments, as KEY=VALUE or KEY:=JSON.
    #[arg(value_name = "KEY=VALUE")]
    pub arguments: Vec<String>,

    /// All arguments as one JSON object (or @FILE, @- for stdin).
    #[arg(long = "args", value_name = "JSON")]
    pub args_json: Option<String>,

    /// Trace the call (OpenTelemetry) and print its trace id on stderr; the spans are
    /// exported when OTEL_EXPORTER_OTLP_ENDPOINT is set.
    #[arg(long)]
    pub trace: bool,
}

/// `ferry prompt`.
#[derive(Args, Debug)]
pub struct PromptArgs {
    /// The prompt's name.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The prompt's arguments, as KEY=VALUE (prompt arguments are strings).
    #[arg(value_name = "KEY=VALUE")]
    pub arguments: Vec<String>,
}

/// `ferry read`.
#[derive(Args, Debug)]
pub struct ReadArgs {
    /// The resource's URI, e.g. test://static-text.
    #[arg(value_name = "URI")]
    pub uri: String,
}

/// `ferry task`.
#[derive(Subcommand, Debug)]
pub enum TaskCommand {
    /// Show a task's status, message and, once it ended, its result or error.
    Get {
        /// The task id (it may begin with `-`: ids are base64url).
        #[arg(value_name = "ID", allow_hyphen_values = true)]
        id: String,
    },
    /// Ask the server to cancel a task.
    Cancel {
        /// The task id (it may begin with `-`: ids are base64url).
        #[arg(value_name = "ID", allow_hyphen_values = true)]
        id: String,
    },
}

/// `ferry listen`.
#[derive(Args, Debug)]
pub struct ListenArgs {
    /// Tool list changes.
    #[arg(long)]
    pub tools: bool,

    /// Prompt list changes.
    #[arg(long)]
    pub prompts: bool,

    /// Resource list changes.
    #[arg(long)]
    pub resources: bool,

    /// Updates of this resource (or the resources under it); repeatable.
    #[arg(long = "uri", value_name = "URI")]
    pub uris: Vec<String>,

    /// Stop after this many notifications.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
}

/// `ferry demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Answer the server's forms yourself instead of letting the demo answer them.
    #[arg(long)]
    pub interactive: bool,

    /// Leave out the second example (generate_image, two questions in one round).
    #[arg(long)]
    pub short: bool,

    /// Instead of the tour, serve the demo's example server on stdin and stdout until
    /// stdin ends, to try other commands on: `ferry --stdio "ferry demo --serve-stdio" tools`.
    #[arg(long, conflicts_with_all = ["interactive", "short"])]
    pub serve_stdio: bool,
}

/// A secret (the bearer token): its `Debug` form never shows it.
#[derive(Clone, Default)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, to hand to the HTTP client.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Secret(s)
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_owned()))
    }
}

/// Parses a duration: a number of seconds (`30`, `1.5`) or a number with a unit (`500ms`,
/// `30s`, `2m`, `1h`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (try 30s, 500ms or 2m)"))?;
    let seconds = match unit.trim() {
        "" | "s" | "sec" | "secs" => value,
        "ms" => value / 1000.0,
        "m" | "min" | "mins" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (use ms, s, m or h)"
            ));
        }
    };
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 365.0 * 24.0 * 3600.0 {
        return Err(format!("{text:?} is not a usable duration"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration(" 10s "), Ok(Duration::from_secs(10)));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("3 weeks").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn options_go_before_or_after_the_subcommand() {
        let cli = Cli::try_parse_from([
            "ferry",
            "call",
            "echo",
            "text=hi",
            "--url",
            "http://127.0.0.1:1/mcp",
            "--json",
            "--timeout",
            "5s",
        ])
        .unwrap();
        assert_eq!(cli.server.url.as_deref(), Some("http://127.0.0.1:1/mcp"));
        assert!(cli.io.json);
        assert_eq!(cli.server.timeout, Duration::from_secs(5));
        let Command::Call(call) = cli.command else {
            panic!("not a call")
        };
        assert_eq!(call.tool, "echo");
        assert_eq!(call.arguments, ["text=hi"]);
    }

    #[test]
    fn url_and_stdio_conflict() {
        let err = Cli::try_parse_from(["ferry", "--url", "http://x", "--stdio", "srv", "tools"])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
    }

    #[test]
    fn the_token_never_shows_in_debug_output() {
        let cli = Cli::try_parse_from(["ferry", "--token", "s3cr3t", "tools"]).unwrap();
        assert_eq!(
            cli.server.token.as_ref().map(Secret::expose),
            Some("s3cr3t")
        );
        assert!(!format!("{cli:?}").contains("s3cr3t"));
    }

    #[test]
    fn a_task_id_may_begin_with_a_hyphen() {
        for args in [
            ["ferry", "task", "get", "-_x4Ab", "--json"],
            ["ferry", "--json", "task", "get", "-_x4Ab"],
        ] {
            let cli = Cli::try_parse_from(args).unwrap();
            assert!(cli.io.json);
            let Command::Task(TaskCommand::Get { id }) = cli.command else {
                panic!("not task get")
            };
            assert_eq!(id, "-_x4Ab");
        }
        let cli = Cli::try_parse_from(["ferry", "task", "cancel", "-abc"]).unwrap();
        assert!(matches!(cli.command, Command::Task(TaskCommand::Cancel { id }) if id == "-abc"));
    }

    #[test]
    fn verbosity_counts() {
        let cli = Cli::try_parse_from(["ferry", "-vv", "demo"]).unwrap();
        assert_eq!(cli.verbose, 2);
    }
}
