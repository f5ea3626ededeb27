//! `ferry audit`: the command-line front of `ferry-audit`.

use std::time::Duration;

use clap::{Args, ValueEnum};
use console::style;
use ferry_audit::{AuditConfig, AuditError, Plan, Progress, Token, Verdict};

use crate::arguments::{UsageError, load_json};
use crate::cli::{Cli, Secret, parse_duration};
use crate::commands::Outcome;
use crate::output;

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable text, each check as it finishes.
    Text,
    /// The report as JSON on stdout (shape `ferry-audit/1`), and nothing else there.
    Json,
}

/// `ferry audit`.
#[derive(Args, Debug)]
#[command(after_help = "\
Calls only the tool named with --tool (and --other-tool, if given). On a server that passes,
the tool runs to completion once; each attack the server lets through runs it once more, so
audit a tool whose effect you can afford, on a server you may test.

  ferry audit http://127.0.0.1:3000/mcp --tool confirm_delete --args '{\"path\": \"notes.txt\"}'
  ferry audit URL --tool t --token A --token-b B --ttl 300 --format json

Exit codes: 0 no check failed, 1 a check failed, 2 bad command line, 4 the server could not
be reached.")]
pub struct AuditArgs {
    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp (or --url).
    #[arg(value_name = "URL")]
    pub url: Option<String>,

    /// The tool to call: one that asks for input (an elicitation, sampling or roots).
    #[arg(long, value_name = "NAME")]
    pub tool: String,

    /// The tool's arguments as one JSON object (or @FILE, @- for stdin).
    #[arg(long = "args", value_name = "JSON")]
    pub args_json: Option<String>,

    /// The bearer token of a second user, who presents the first user's (--token) state.
    /// Never printed or logged.
    #[arg(
        long = "token-b",
        value_name = "TOKEN",
        env = "FERRY_TOKEN_B",
        hide_env_values = true
    )]
    pub token_b: Option<Secret>,

    /// The server's requestState lifetime: the audit keeps one state past it and checks it
    /// is refused (e.g. 300, 5m). Without it, the expiry check is skipped.
    #[arg(long, value_name = "SECONDS", value_parser = parse_duration)]
    pub ttl: Option<Duration>,

    /// A second tool, safe to call, to present the first tool's state to.
    #[arg(long = "other-tool", value_name = "NAME")]
    pub other_tool: Option<String>,

    /// The second tool's arguments as one JSON object (default {}).
    #[arg(long = "other-args", value_name = "JSON", requires = "other_tool")]
    pub other_args: Option<String>,

    /// The arguments the argument-binding check presents the state with (default: the
    /// arguments with one value changed). The tool may run with them on a weak server.
    #[arg(long = "changed-args", value_name = "JSON")]
    pub changed_args: Option<String>,

    /// How to print the report.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn usage(e: AuditError) -> anyhow::Error {
    match e {
        AuditError::InvalidUrl(_)
        | AuditError::InvalidOption(_)
        | AuditError::Unauthorized { .. } => UsageError::new(e.to_string()).into(),
        other => other.into(),
    }
}

fn config(cli: &Cli, args: &AuditArgs) -> anyhow::Result<AuditConfig> {
    if cli.server.stdio.is_some() {
        return Err(UsageError::new(
            "ferry audit speaks Streamable HTTP only: give a URL, not --stdio",
        )
        .into());
    }
    let url = match (&args.url, &cli.server.url) {
        (Some(a), Some(b)) if a != b => {
            return Err(UsageError::new("two different URLs: give the endpoint once").into());
        }
        (Some(u), _) | (None, Some(u)) => u.clone(),
        (None, None) => {
            return Err(
                UsageError::new("give the server's URL: ferry audit URL --tool NAME").into(),
            );
        }
    };
    let mut c = AuditConfig::new(&url, args.tool.clone())
        .map_err(usage)?
        .request_timeout(cli.server.timeout);
    if let Some(a) = &args.args_json {
        c = c.args(load_json("--args", a)?).map_err(usage)?;
    }
    if let Some(a) = &cli.io.answers {
        c = c.answers(load_json("--answers", a)?).map_err(usage)?;
    }
    if let Some(t) = &cli.server.token {
        c = c.token(Token::new(t.expose()));
    }
    if let Some(t) = &args.token_b {
        if cli.server.token.is_none() {
            return Err(
                UsageError::new("--token-b needs --token: user B presents user A's state").into(),
            );
        }
        c = c.token_b(Token::new(t.expose()));
    }
    if let Some(ttl) = args.ttl {
        c = c.ttl(ttl).map_err(usage)?;
    }
    if let Some(other) = &args.other_tool {
        let other_args = match &args.other_args {
            Some(a) => load_json("--other-args", a)?,
            None => serde_json::json!({}),
        };
        c = c.other_tool(other.clone(), other_args).map_err(usage)?;
    }
    if let Some(a) = &args.changed_args {
        c = c
            .changed_args(load_json("--changed-args", a)?)
            .map_err(usage)?;
    }
    Ok(c)
}

fn label(v: Verdict) -> String {
    let text = format!("{:<5}", v.label());
    match v {
        Verdict::Pass => style(text).green().to_string(),
        Verdict::Warn => style(text).yellow().to_string(),
        Verdict::Fail => style(text).red().bold().to_string(),
        Verdict::Skip => style(text).dim().to_string(),
    }
}

/// Runs `ferry audit`.
pub async fn run(cli: &Cli, args: &AuditArgs) -> anyhow::Result<Outcome> {
    let json = args.format == Format::Json || cli.io.json;
    let config = config(cli, args)?;
    let plan = Plan::new(&config).to_string();
    if json {
        eprint!("{plan}");
    } else {
        output::print(&format!("{plan}\n"))?;
    }
    let report = ferry_audit::run_with(&config, |event| match event {
        Progress::Check(c) if !json => {
            let text = ferry_audit::render_check(c);
            let rest = text.split_once('\n').map_or("", |(_, r)| r);
            let _ = output::print(&format!("{} {}\n{rest}", label(c.verdict), c.id));
        }
        Progress::Waiting(d) => {
            eprintln!(
                "ferry audit: waiting {:.0} s for a requestState to pass its lifetime",
                d.as_secs_f64().ceil()
            );
        }
        Progress::Check(_) => {}
    })
    .await
    .map_err(usage)?;
    if json {
        output::print(&format!("{}\n", report.to_json()))?;
    } else {
        output::print(&report.text_summary())?;
    }
    Ok(if report.failed() {
        Outcome::ToolError
    } else {
        Outcome::Success
    })
}
