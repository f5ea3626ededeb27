//! The subcommands that talk to a server.

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context as _;
use ferry_client::ferry_protocol::subscriptions::SubscriptionFilter;
use ferry_client::{CallOptions, Client, Error};
use serde_json::json;

use crate::answers::Answers;
use crate::arguments::{self, UsageError};
use crate::cli::{CallArgs, Cli, Command, ListenArgs, PromptArgs, ReadArgs, TaskCommand};
use crate::connect::connect;
use crate::handler::CliHandler;
use crate::output;
use crate::progress::ProgressUi;

/// How a command ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// All went well.
    Success,
    /// The tool or prompt answered with an error result (exit code 1).
    ToolError,
}

/// Whether a person can be asked: stdin and stderr are terminals and `--no-input` is off.
pub fn interactive(no_input: bool) -> bool {
    !no_input && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Reads `--answers`.
pub fn load_answers(option: Option<&str>) -> Result<Option<Answers>, UsageError> {
    option
        .map(|text| Answers::from_value(arguments::load_json("--answers", text)?))
        .transpose()
}

/// Runs a command against the server the options name.
pub async fn run(cli: &Cli) -> anyhow::Result<Outcome> {
    let answers = load_answers(cli.io.answers.as_deref())?;
    let interactive = interactive(cli.io.no_input);
    let progress = ProgressUi::default();
    let handler = Arc::new(CliHandler::new(answers, interactive, progress.clone()));
    // Check the arguments before connecting.
    let prompt_args = match &cli.command {
        Command::Prompt(p) => Some(arguments::prompt_arguments(&p.arguments)?),
        _ => None,
    };
    let args_json = match &cli.command {
        Command::Call(c) => c
            .args_json
            .as_deref()
            .map(|t| arguments::load_json("--args", t))
            .transpose()?,
        _ => None,
    };
    if let Command::Call(c) = &cli.command {
        for p in &c.arguments {
            arguments::split_pair(p)?;
        }
    }
    let connection = connect(&cli.server, handler.clone(), interactive).await?;
    let client = &connection.client;
    let json = cli.io.json;
    let result = match &cli.command {
        Command::Discover => discover(client, json).await,
        Command::Tools => tools(client, json).await,
        Command::Call(c) => call(client, c, args_json, &progress, json, &handler).await,
        Command::Task(t) => task(client, t, json).await,
        Command::Prompts => prompts(client, json).await,
        Command::Prompt(p) => prompt(client, p, prompt_args.unwrap_or_default(), json).await,
        Command::Resources => resources(client, json).await,
        Command::Read(r) => read(client, r, json).await,
        Command::Listen(l) => listen(client, l, json).await,
        Command::Demo(_) => Err(UsageError::new("the demo runs its own server").into()),
        Command::Audit(_) => Err(UsageError::new("the audit sends its own requests").into()),
        Command::Lint(_) => Err(UsageError::new("lint reads source files, not a server").into()),
        Command::Login(_) | Command::Logout(_) => {
            Err(UsageError::new("login and logout talk to the authorization server").into())
        }
        Command::Gateway(_) => {
            Err(UsageError::new("the gateway serves, it is not a client").into())
        }
    };
    progress.finish();
    let result = match handler.take_problem() {
        // The answers did not fit a question: that is the failure, whatever the server
        // made of the cancelled question.
        Some(problem) => Err(UsageError::new(problem).into()),
        None => result,
    };
    if let Err(e) = client.close().await {
        tracing::debug!(error = %e, "closing the connection failed");
    }
    let tail = connection.stderr.lines();
    if let Err(e) = &result
        && !tail.is_empty()
        && exits_early(e)
    {
        eprintln!(
            "ferry: the server's last lines on stderr:\n  {}",
            tail.join("\n  ")
        );
    }
    result
}

/// Whether the failure looks like the server going away (worth showing its stderr).
fn exits_early(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<Error>())
        .any(|c| matches!(c, Error::Transport { .. } | Error::Closed))
}

async fn discover(client: &Client, json: bool) -> anyhow::Result<Outcome> {
    let d = client.discover().await.context("server/discover failed")?;
    if json {
        output::json(&d)?;
    } else {
        output::print(&output::discover(
            &d,
            client.server_info().as_ref(),
            &client.protocol_version(),
        ))?;
    }
    Ok(Outcome::Success)
}

async fn tools(client: &Client, json: bool) -> anyhow::Result<Outcome> {
    let tools = client.list_tools().await.context("tools/list failed")?;
    if json {
        output::json(&json!({ "tools": tools }))?;
    } else {
        output::print(&output::tools(&tools))?;
    }
    Ok(Outcome::Success)
}

async fn call(
    client: &Client,
    args: &CallArgs,
    base: Option<serde_json::Value>,
    progress: &ProgressUi,
    json: bool,
    handler: &CliHandler,
) -> anyhow::Result<Outcome> {
    let schema = if arguments::needs_schema(&args.arguments) {
        match client.list_tools().await {
            Ok(tools) => match tools.into_iter().find(|t| t.name == args.tool) {
                Some(t) => Some(t.input_schema),
                None => {
                    tracing::warn!(tool = %args.tool, "the tool is not in tools/list; sending KEY=VALUE arguments as strings");
                    None
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "tools/list failed; sending KEY=VALUE arguments as strings");
                None
            }
        }
    } else {
        None
    };
    let arguments = arguments::tool_arguments(base, &args.arguments, schema.as_ref())?;
    let ui = progress.clone();
    let status = progress.clone();
    let options = CallOptions::new()
        .on_progress(move |p| ui.report(p))
        .on_task_status(move |t| status.task_status(t));
    let span = if args.trace {
        tracing::info_span!(
            "ferry call",
            otel.name = format!("ferry call {}", args.tool)
        )
    } else {
        tracing::Span::none()
    };
    let traced = tracing::Instrument::instrument(
        client.call_tool_with(&args.tool, serde_json::Value::Object(arguments), &options),
        span.clone(),
    )
    .await;
    if args.trace {
        match ferry_protocol::trace::context_of(&span)
            .as_ref()
            .and_then(|cx| cx.trace_id().map(str::to_owned))
        {
            Some(id) => eprintln!("trace id: {id}"),
            None => eprintln!("trace id: none (tracing is off)"),
        }
    }
    let result = match traced {
        Ok(result) => result,
        Err(e) => {
            let hint = match e.rpc() {
                // The server does not know the tool: name the one meant, if one is close.
                Some(rpc) if rpc.code.0 == -32602 && rpc.message.contains(args.tool.as_str()) => {
                    unknown_tool_hint(client, &args.tool).await
                }
                _ => None,
            };
            let context = match hint {
                Some(hint) => format!("calling tool {} failed ({hint})", args.tool),
                None => format!("calling tool {} failed", args.tool),
            };
            return Err(anyhow::Error::new(e).context(context));
        }
    };
    progress.finish();
    if handler.has_problem() {
        // The call went on without an answer it needed; the caller reports why.
        return Ok(Outcome::Success);
    }
    let failed = result.is_error == Some(true);
    if json {
        output::json(&result)?;
    } else if failed {
        let text = output::call_result(&result);
        eprint!(
            "{}",
            if text.is_empty() {
                "the tool reported an error\n".into()
            } else {
                text
            }
        );
    } else {
        output::print(&output::call_result(&result))?;
    }
    Ok(if failed {
        Outcome::ToolError
    } else {
        Outcome::Success
    })
}

/// "did you mean …?" for a tool name the server does not have, or the list of its tools.
async fn unknown_tool_hint(client: &Client, name: &str) -> Option<String> {
    let tools = client.list_tools().await.ok()?;
    if tools.iter().any(|t| t.name == name) {
        return None;
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    match crate::answers::closest(name, names.iter().copied()) {
        Some(close) => Some(format!("no tool named {name:?}; did you mean {close:?}?")),
        None if names.len() <= 12 => Some(format!(
            "no tool named {name:?}; the server has {}",
            names.join(", ")
        )),
        None => Some(format!(
            "no tool named {name:?}; `ferry tools` lists the server's {} tools",
            names.len()
        )),
    }
}

async fn task(client: &Client, command: &TaskCommand, json: bool) -> anyhow::Result<Outcome> {
    match command {
        TaskCommand::Get { id } => {
            let task = client
                .task(id.as_str())
                .get()
                .await
                .with_context(|| format!("tasks/get {id} failed"))?;
            if json {
                output::json(&task)?;
            } else {
                output::print(&output::task(&task))?;
            }
            let failed = task.error.is_some()
                || task
                    .result
                    .as_ref()
                    .is_some_and(|r| r.get("isError") == Some(&serde_json::Value::Bool(true)));
            Ok(if failed {
                Outcome::ToolError
            } else {
                Outcome::Success
            })
        }
        TaskCommand::Cancel { id } => {
            client
                .task(id.as_str())
                .cancel()
                .await
                .with_context(|| format!("tasks/cancel {id} failed"))?;
            if json {
                output::json(&json!({"taskId": id, "cancelled": true}))?;
            } else {
                output::print(&format!("cancellation of task {id} requested\n"))?;
            }
            Ok(Outcome::Success)
        }
    }
}

async fn prompts(client: &Client, json: bool) -> anyhow::Result<Outcome> {
    let prompts = client.list_prompts().await.context("prompts/list failed")?;
    if json {
        output::json(&json!({ "prompts": prompts }))?;
    } else {
        output::print(&output::prompts(&prompts))?;
    }
    Ok(Outcome::Success)
}

async fn prompt(
    client: &Client,
    args: &PromptArgs,
    arguments: std::collections::BTreeMap<String, String>,
    json: bool,
) -> anyhow::Result<Outcome> {
    let r = client
        .get_prompt(&args.name, arguments)
        .await
        .with_context(|| format!("getting prompt {} failed", args.name))?;
    if json {
        output::json(&r)?;
    } else {
        output::print(&output::prompt_result(&r))?;
    }
    Ok(Outcome::Success)
}

async fn resources(client: &Client, json: bool) -> anyhow::Result<Outcome> {
    let resources = client
        .list_resources()
        .await
        .context("resources/list failed")?;
    let templates = match client.list_resource_templates().await {
        Ok(t) => t,
        Err(e) if e.is_from_server() => {
            tracing::debug!(error = %e, "resources/templates/list failed");
            Vec::new()
        }
        Err(e) => return Err(anyhow::Error::new(e).context("resources/templates/list failed")),
    };
    if json {
        output::json(&json!({ "resources": resources, "resourceTemplates": templates }))?;
    } else {
        output::print(&output::resources(&resources, &templates))?;
    }
    Ok(Outcome::Success)
}

async fn read(client: &Client, args: &ReadArgs, json: bool) -> anyhow::Result<Outcome> {
    let r = client
        .read_resource(&args.uri)
        .await
        .with_context(|| format!("reading {} failed", args.uri))?;
    if json {
        output::json(&r)?;
    } else {
        output::print(&output::read_result(&r.contents))?;
    }
    Ok(Outcome::Success)
}

async fn listen(client: &Client, args: &ListenArgs, json: bool) -> anyhow::Result<Outcome> {
    let mut filter = SubscriptionFilter::new();
    let none = !(args.tools || args.prompts || args.resources) && args.uris.is_empty();
    if args.tools || none {
        filter = filter.with_tools_list_changed();
    }
    if args.prompts || none {
        filter = filter.with_prompts_list_changed();
    }
    if args.resources || none {
        filter = filter.with_resources_list_changed();
    }
    for uri in &args.uris {
        filter = filter.with_resource(uri.clone());
    }
    let mut subscription = client
        .listen(filter)
        .await
        .context("subscriptions/listen failed")?;
    let granted = subscription.granted().clone();
    if granted.is_empty() {
        anyhow::bail!(Error::Unsupported(
            "the server agreed to send none of the asked notifications".into()
        ));
    }
    if !json {
        eprintln!(
            "Listening for {} (Ctrl-C stops).",
            describe_filter(&granted)
        );
    }
    let mut seen = 0u64;
    while let Some(item) = subscription.recv().await {
        let n = item.context("the subscription failed")?;
        if json {
            output::print(&format!("{}\n", output::notification_json(&n)))?;
        } else {
            output::print(&format!("{}\n", output::notification(&n)))?;
        }
        seen += 1;
        if args.count.is_some_and(|c| seen >= c) {
            break;
        }
    }
    Ok(Outcome::Success)
}

fn describe_filter(f: &SubscriptionFilter) -> String {
    let mut parts = Vec::new();
    if f.wants_tools_list_changed() {
        parts.push("tool list changes".to_owned());
    }
    if f.wants_prompts_list_changed() {
        parts.push("prompt list changes".to_owned());
    }
    if f.wants_resources_list_changed() {
        parts.push("resource list changes".to_owned());
    }
    for u in f.resource_subscriptions.iter().flatten() {
        parts.push(format!("updates of {}", crate::term::sanitize(u, false)));
    }
    parts.join(", ")
}
