//! The fixtures of the conformance suite's `tasks-*` scenarios (Tasks extension): a
//! plain tool, tools that run as tasks, one that fails as a tool and one as a protocol
//! error, one that asks two questions at once inside its task, and one that asks
//! through MRTR before it turns into a task.

use std::time::Duration;

use ferry_protocol::ErrorObject;
use ferry_server::{
    Context, Elicitation, Error, Form, Result, ServerBuilder, TaskMode, TaskOptions, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::fixtures::NoArgs;

/// The longest `slow_compute` sleeps, in seconds.
const MAX_SECONDS: f64 = 600.0;

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct ComputeArgs {
    /// How long the computation takes, in seconds (0 to 600).
    #[serde(default)]
    seconds: f64,
    /// A label, echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize, Form)]
struct UserName {
    /// Your name.
    name: String,
}

#[derive(Deserialize, Form)]
struct Confirmation {
    /// Go ahead?
    confirm: bool,
}

/// Registers the tasks fixtures.
pub fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool("greet")
                .description("Greets by name (never a task)")
                .handler(|_: Context, args: GreetArgs| async move {
                    Ok(format!("Hello, {}!", args.name))
                }),
        )
        .tool(
            tool("slow_compute")
                .description("Sleeps for `seconds`, reporting progress every second, then returns; a task when the client supports tasks")
                .task(TaskMode::Optional)
                .handler(|ctx: Context, args: ComputeArgs| async move { compute(ctx, args).await }),
        )
        .tool(
            tool("failing_job")
                .description("Runs only as a task, and fails as a tool (isError) after about a second")
                .task(TaskMode::Required)
                .handler(|_: Context, _: NoArgs| async move {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Err::<String, _>(Error::execution("The job failed: the input could not be processed"))
                }),
        )
        .tool(
            tool("protocol_error_job")
                .description("Runs as a task and ends with a JSON-RPC error (a protocol-level failure)")
                .task(TaskMode::Optional)
                .handler(|_: Context, _: NoArgs| async move {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    Err::<String, _>(Error::protocol(ErrorObject::internal(
                        "Internal error: the job's worker crashed",
                    )))
                }),
        )
        .tool(
            tool("multi_input")
                .description("Asks for a name and a confirmation at once (inside its task, both are pending together)")
                .task(TaskMode::Optional)
                .handler(|ctx: Context, _: NoArgs| async move {
                    let (name, confirm) = ctx
                        .ask_all((
                            ctx.elicit::<UserName>("What is your name?").key("name"),
                            ctx.elicit::<Confirmation>("Go ahead?").key("confirm"),
                        ))
                        .await?;
                    let name = name.accepted().map_or_else(|| "nobody".to_owned(), |n| n.name);
                    let go = matches!(confirm, Elicitation::Accept(Confirmation { confirm: true }));
                    Ok(format!("Hello, {name}! Confirmed: {go}"))
                }),
        )
        .tool(
            tool("test_tool_with_task")
                .description("Asks for your name through MRTR, then goes on as a task and greets you")
                .task_when_ready(TaskMode::Required)
                .handler(|ctx: Context, _: NoArgs| async move {
                    let name = match ctx.elicit::<UserName>("What is your name?").key("user_name").await? {
                        Elicitation::Accept(n) => n.name,
                        _ => return Ok("No name given".to_owned()),
                    };
                    ctx.into_task(TaskOptions::new().status_message(format!("Preparing a greeting for {name}")))
                        .await?;
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    Ok(format!("Hello, {name}!"))
                }),
        )
}

async fn compute(ctx: Context, args: ComputeArgs) -> Result<String> {
    if !args.seconds.is_finite() || !(0.0..=MAX_SECONDS).contains(&args.seconds) {
        return Err(Error::execution(format!(
            "seconds must be between 0 and {MAX_SECONDS}"
        )));
    }
    let label = args.label.unwrap_or_else(|| "computation".to_owned());
    let total = args.seconds;
    let mut done = 0.0;
    while done < total {
        let step = (total - done).min(1.0);
        tokio::time::sleep(Duration::from_secs_f64(step)).await;
        done += step;
        ctx.progress(done, Some(total), Some(&label)).await;
    }
    Ok(format!("Computed {label} in {total} s"))
}
