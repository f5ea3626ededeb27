//! `ferry-conformance-client`: the client the official MCP conformance suite launches.
//!
//! The suite runs `ferry-conformance-client <server URL>` with the scenario in
//! `MCP_CONFORMANCE_SCENARIO` (and `MCP_CONFORMANCE_PROTOCOL_VERSION`,
//! `MCP_CONFORMANCE_CONTEXT`). Everything protocol-related happens in `ferry-client`; this
//! program only picks which requests to make, and answers forms like a user who accepts
//! the defaults.
//!
//! ```text
//! bash shared/tools/conformance.sh client --command target/debug/ferry-conformance-client
//! ```

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue, PropertyKind};
use ferry_client::{Client, FnHandler, FormRequest};
use serde_json::{Value, json};

mod auth;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!(
            "usage: ferry-conformance-client <server URL> (scenario in MCP_CONFORMANCE_SCENARIO)"
        );
        return ExitCode::from(2);
    };
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferry-conformance-client: scenario {scenario:?}: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(scenario: &str, url: &str) -> Result<(), BoxError> {
    let mut builder = Client::builder();
    if scenario.starts_with("auth/") {
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(c) => serde_json::from_str(&c)?,
            Err(_) => json!({}),
        };
        builder = builder.authorizer(auth::authorizer(scenario, &context)?);
    }
    let client = builder
        .http(url)
        .client_info("ferry-conformance-client", env!("CARGO_PKG_VERSION"))
        .timeout(Duration::from_secs(10))
        .probe_timeout(Duration::from_secs(5))
        .input_handler(FnHandler::new().on_form(|form| {
            let answer = fill(form);
            async move { ElicitResult::accept(answer) }
        }))
        .build()
        .await?;
    let tools = client.list_tools().await?;
    match scenario {
        "tools_call" => {
            client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await?;
        }
        "sep-2322-client-request-state" => {
            for tool in &tools {
                client.call_tool(&tool.name, json!({})).await?;
            }
        }
        "http-standard-headers" => {
            for tool in &tools {
                client.call_tool(&tool.name, json!({})).await?;
            }
            for resource in client.list_resources().await? {
                client.read_resource(&resource.uri).await?;
            }
            for prompt in client.list_prompts().await? {
                client.get_prompt(&prompt.name, BTreeMap::new()).await?;
            }
        }
        "http-custom-headers" => {
            for (name, arguments) in context_tool_calls()? {
                client.call_tool(&name, arguments).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // Only the valid tool is still listed; the invalid ones were dropped.
            for tool in &tools {
                client
                    .call_tool(&tool.name, json!({"region": "us-west1"}))
                    .await?;
            }
        }
        "elicitation-sep1034-client-defaults" => {
            client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
        }
        "sse-retry" => {
            client.call_tool("test_reconnection", json!({})).await?;
        }
        "json-schema-2020-12-preservation" => {
            // Send the rich schema back through the echo tool, as received.
            if let Some(focal) = tools.iter().find(|t| t.name != "json_schema_echo") {
                let schema = focal.input_schema.clone();
                client
                    .call_tool("json_schema_echo", json!({"schema": schema}))
                    .await?;
            }
        }
        s if s.starts_with("auth/") => {
            // Authorized requests: the listing above, and a call of each tool (some
            // scenarios ask for more scopes on tools/call).
            for tool in &tools {
                client.call_tool(&tool.name, json!({})).await?;
            }
        }
        // initialize, request-metadata, json-schema-ref-no-deref, and anything new:
        // connecting and listing the tools is the exercise.
        _ => {}
    }
    client.close().await?;
    Ok(())
}

/// The `toolCalls` of `MCP_CONFORMANCE_CONTEXT`.
fn context_tool_calls() -> Result<Vec<(String, Value)>, BoxError> {
    let context: Value = serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT")?)?;
    let calls = context
        .get("toolCalls")
        .and_then(Value::as_array)
        .ok_or("MCP_CONFORMANCE_CONTEXT has no toolCalls")?;
    Ok(calls
        .iter()
        .filter_map(|c| {
            let name = c.get("name")?.as_str()?.to_owned();
            Some((
                name,
                c.get("arguments").cloned().unwrap_or_else(|| json!({})),
            ))
        })
        .collect())
}

/// Answers a form the way a user who accepts what is offered would: the defaults, and
/// for fields without one, `true`, the first choice, the minimum or a placeholder.
fn fill(form: &FormRequest) -> BTreeMap<String, ElicitValue> {
    let mut answer = form.defaults();
    for field in form.fields() {
        if answer.contains_key(field.name) {
            continue;
        }
        let first = field
            .schema
            .options()
            .and_then(|o| o.first())
            .map(|o| o.value().to_owned());
        let value = match field.kind() {
            PropertyKind::Boolean => ElicitValue::Bool(true),
            PropertyKind::Number {
                integer, minimum, ..
            } => match minimum {
                // The smallest whole number the bound allows.
                Some(n) if *integer => ElicitValue::Number(
                    n.as_i64()
                        .or_else(|| n.as_f64().map(|f| f.ceil() as i64))
                        .unwrap_or(0)
                        .into(),
                ),
                Some(n) => ElicitValue::Number(n.clone()),
                None => ElicitValue::Number(0.into()),
            },
            PropertyKind::MultiSelect { .. } => {
                ElicitValue::StringArray(first.into_iter().collect())
            }
            _ => ElicitValue::String(first.unwrap_or_else(|| "conformance".into())),
        };
        answer.insert(field.name.to_owned(), value);
    }
    answer
}
