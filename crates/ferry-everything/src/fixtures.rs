//! The fixtures the official MCP conformance suite calls, with the exact names, inputs
//! and outputs it checks.

#![allow(deprecated)] // The suite exercises sampling, roots and logging on purpose.

use std::time::Duration;

use ferry_form::FormSchema;
use ferry_protocol::content::ContentBlock;
use ferry_protocol::logging::LoggingLevel;
use ferry_protocol::prompts::{GetPromptResult, PromptMessage};
use ferry_protocol::resources::TextResourceContents;
use ferry_protocol::sampling::{CreateMessageRequestParams, SamplingMessage};
use ferry_protocol::tools::CallToolResult;
use ferry_server::{
    Context, Elicitation, Error, Form, PromptArguments, ResourceRequest, Result, ServerBuilder,
    complete_from, prompt, resource, resource_template, tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A 1x1 PNG.
pub const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny 8 kHz 16-bit mono WAV.
pub const WAV_B64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Deserialize, Form)]
struct Name {
    name: String,
}

#[derive(Deserialize, Form)]
struct Ok {
    ok: bool,
}

#[derive(Deserialize, Form)]
struct Color {
    color: String,
}

#[derive(Deserialize, Form)]
struct PromptContext {
    context: String,
}

#[derive(Deserialize, Form)]
struct UserInfo {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

#[derive(Deserialize, JsonSchema)]
struct PromptArg {
    prompt: String,
}

#[derive(Deserialize, JsonSchema)]
struct MessageArg {
    message: String,
}

/// Registers every conformance fixture on `builder`.
pub fn register(builder: ServerBuilder) -> ServerBuilder {
    let builder = content_tools(builder);
    let builder = mrtr_tools(builder);
    let builder = legacy_ask_tools(builder);
    let builder = resources(builder);
    prompts(builder)
}

fn sampling(text: &str, max_tokens: u64) -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![SamplingMessage::user_text(text)], max_tokens)
}

fn content_tools(b: ServerBuilder) -> ServerBuilder {
    b.tool(
        tool("test_simple_text")
            .description("Returns a simple text response")
            .handler(|_: Context, _: NoArgs| async { Ok("This is a simple text response for testing.") }),
    )
    .tool(
        tool("test_image_content")
            .description("Returns an image")
            .handler(|_: Context, _: NoArgs| async { Ok(ContentBlock::image(PNG_B64, "image/png")) }),
    )
    .tool(
        tool("test_audio_content")
            .description("Returns audio")
            .handler(|_: Context, _: NoArgs| async { Ok(ContentBlock::audio(WAV_B64, "audio/wav")) }),
    )
    .tool(
        tool("test_embedded_resource")
            .description("Returns an embedded resource")
            .handler(|_: Context, _: NoArgs| async {
                Ok(ContentBlock::embedded(
                    TextResourceContents::new("test://embedded-resource", "This is an embedded resource content.")
                        .with_mime_type("text/plain"),
                ))
            }),
    )
    .tool(
        tool("test_multiple_content_types")
            .description("Returns text, an image and a resource")
            .handler(|_: Context, _: NoArgs| async {
                Ok(vec![
                    ContentBlock::text("Multiple content types test:"),
                    ContentBlock::image(PNG_B64, "image/png"),
                    ContentBlock::embedded(
                        TextResourceContents::new("test://mixed-content-resource", r#"{"test":"data","value":123}"#)
                            .with_mime_type("application/json"),
                    ),
                ])
            }),
    )
    .tool(
        tool("test_error_handling")
            .description("Always fails, as a tool execution error")
            .handler(|_: Context, _: NoArgs| async {
                Err::<String, _>(Error::execution("This tool intentionally returns an error for testing"))
            }),
    )
    .tool(
        tool("test_tool_with_progress")
            .description("Reports progress 0, 50 and 100 of 100")
            .handler(|ctx: Context, _: NoArgs| async move {
                for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    ctx.progress(p, Some(100.0), None).await;
                }
                Ok("Progress test completed")
            }),
    )
    .tool(
        tool("test_tool_with_logging")
            .description("Logs three messages while it runs")
            .handler(|ctx: Context, _: NoArgs| async move {
                for (i, m) in ["Tool execution started", "Tool processing data", "Tool execution completed"]
                    .into_iter()
                    .enumerate()
                {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    ctx.log(LoggingLevel::Info, None, json!(m)).await;
                }
                Ok("Tool with logging executed successfully")
            }),
    )
    .tool(
        tool("test_logging_tool")
            .description("Logs at info level; sends nothing unless the request asks for a log level")
            .handler(|ctx: Context, _: NoArgs| async move {
                ctx.log(LoggingLevel::Info, Some("test"), json!("logging tool ran")).await;
                Ok("Logging tool completed")
            }),
    )
    .tool(
        tool("test_missing_capability")
            .description("Needs the client's sampling capability")
            .handler(|ctx: Context, _: NoArgs| async move {
                let answer = ctx.sample(sampling("Say hello", 20)).key("hello").await?;
                Ok(format!("Sampled: {}", answer.content.text()))
            }),
    )
    .tool(
        tool("json_schema_2020_12_tool")
            .description("A tool whose input schema uses JSON Schema 2020-12 features")
            .input_schema(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {
                        "$anchor": "addressDef",
                        "type": "object",
                        "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                        "required": ["street", "city"]
                    }
                },
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string", "format": "email"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }))
            .json_handler(|_: Context, args: Value| async move { Ok(format!("Received: {args}")) }),
    )
    .tool(
        tool("test_x_mcp_header")
            .description("Mirrors its region argument into the Mcp-Param-Region header (x-mcp-header)")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"},
                    "priority": {"type": "integer", "description": "How urgent", "x-mcp-header": "Priority"},
                    "query": {"type": "string", "description": "What to run"}
                },
                "required": ["region"]
            }))
            .json_handler(|_: Context, args: Value| async move {
                Ok(format!("Ran in {}", args["region"].as_str().unwrap_or_default()))
            }),
    )
    .tool(
        tool("test_trigger_tool_change")
            .description("Adds or removes the tool test_dynamic_tool, so listeners see tools/list_changed")
            .handler(|ctx: Context, _: NoArgs| async move {
                let server = ctx.server();
                if !server.remove_tool("test_dynamic_tool") {
                    server
                        .add_tool(
                            tool("test_dynamic_tool")
                                .description("Appears and disappears")
                                .handler(|_: Context, _: NoArgs| async { Ok("dynamic") }),
                        )
                        .map_err(|e| Error::execution(e.to_string()))?;
                }
                Ok("Tool list changed")
            }),
    )
    .tool(
        tool("test_trigger_prompt_change")
            .description("Adds or removes the prompt test_dynamic_prompt, so listeners see prompts/list_changed")
            .handler(|ctx: Context, _: NoArgs| async move {
                let server = ctx.server();
                if !server.remove_prompt("test_dynamic_prompt") {
                    server
                        .add_prompt(
                            prompt("test_dynamic_prompt")
                                .description("Appears and disappears")
                                .handler(|_: Context, _: PromptArguments| async {
                                    Ok(PromptMessage::user_text("dynamic"))
                                }),
                        )
                        .map_err(|e| Error::execution(e.to_string()))?;
                }
                Ok("Prompt list changed")
            }),
    )
    .tool(
        tool("test_trigger_resource_update")
            .description("Tells subscribers that test://watched-resource changed")
            .handler(|ctx: Context, _: NoArgs| async move {
                ctx.server().notify_resource_updated("test://watched-resource");
                Ok("Resource updated")
            }),
    )
}

fn mrtr_tools(b: ServerBuilder) -> ServerBuilder {
    b.tool(
        tool("test_input_required_result_elicitation")
            .description("Asks for the user's name (MRTR, elicitation)")
            .stateless_answers()
            .handler(|ctx: Context, _: NoArgs| async move {
                Ok(
                    match ctx
                        .elicit::<Name>("What is your name?")
                        .key("user_name")
                        .await?
                    {
                        Elicitation::Accept(n) => format!("Hello, {}!", n.name),
                        Elicitation::Decline => "The user declined to give a name.".to_owned(),
                        Elicitation::Cancel => "The user cancelled.".to_owned(),
                    },
                )
            }),
    )
    .tool(
        tool("test_input_required_result_sampling")
            .description("Asks the client's model a question (MRTR, sampling)")
            .handler(|ctx: Context, _: NoArgs| async move {
                let answer = ctx
                    .sample(sampling("What is the capital of France?", 100))
                    .key("capital_question")
                    .await?;
                Ok(format!("The model said: {}", answer.content.text()))
            }),
    )
    .tool(
        tool("test_input_required_result_list_roots")
            .description("Asks the client for its roots (MRTR, roots)")
            .handler(|ctx: Context, _: NoArgs| async move {
                let roots = ctx.roots().key("client_roots").await?;
                let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
                Ok(format!("Roots: {}", uris.join(", ")))
            }),
    )
    .tool(
        tool("test_input_required_result_request_state")
            .description(
                "Asks for a confirmation; the answer must come back with the sealed requestState",
            )
            .handler(|ctx: Context, _: NoArgs| async move {
                Ok(
                    match ctx.elicit::<Ok>("Please confirm").key("confirm").await? {
                        Elicitation::Accept(Ok { ok }) => format!("state-ok: confirmed={ok}"),
                        _ => "state-ok: not confirmed".to_owned(),
                    },
                )
            }),
    )
    .tool(
        tool("test_input_required_result_multiple_inputs")
            .description("Asks for a form, a sampling and roots in one round")
            .handler(|ctx: Context, _: NoArgs| async move {
                let (name, greeting, roots) = ctx
                    .ask_all((
                        ctx.elicit::<Name>("What is your name?").key("user_name"),
                        ctx.sample(sampling("Generate a greeting", 50))
                            .key("greeting"),
                        ctx.roots().key("client_roots"),
                    ))
                    .await?;
                let name = name
                    .accepted()
                    .map(|n| n.name)
                    .unwrap_or_else(|| "(no name)".into());
                Ok(format!(
                    "name={name}; greeting={}; roots={}",
                    greeting.content.text(),
                    roots.len()
                ))
            }),
    )
    .tool(
        tool("test_input_required_result_multi_round")
            .description("Asks two questions in two rounds")
            .handler(|ctx: Context, _: NoArgs| async move {
                let name = ctx
                    .elicit::<Name>("Step 1: What is your name?")
                    .key("step1")
                    .await?;
                let color = ctx
                    .elicit::<Color>("Step 2: What is your favorite color?")
                    .key("step2")
                    .await?;
                let name = name.accepted().map(|n| n.name).unwrap_or_default();
                let color = color.accepted().map(|c| c.color).unwrap_or_default();
                Ok(format!("{name} likes {color}"))
            }),
    )
    .tool(
        tool("test_input_required_result_tampered_state")
            .description(
                "Asks for a confirmation bound to a sealed requestState; tampering is refused",
            )
            .handler(|ctx: Context, _: NoArgs| async move {
                Ok(
                    match ctx.elicit::<Ok>("Please confirm").key("confirm").await? {
                        Elicitation::Accept(Ok { ok }) => format!("confirmed={ok}"),
                        _ => "not confirmed".to_owned(),
                    },
                )
            }),
    )
    .tool(
        tool("test_input_required_result_capabilities")
            .description("Asks only for what this request's client capabilities allow")
            .handler(|ctx: Context, _: NoArgs| async move {
                let caps = ctx.client_capabilities().clone();
                let mut parts = Vec::new();
                if caps.supports_elicitation_form() {
                    let n = ctx
                        .elicit::<Name>("What is your name?")
                        .key("user_name")
                        .await?;
                    parts.push(format!(
                        "name={}",
                        n.accepted().map(|n| n.name).unwrap_or_default()
                    ));
                }
                if caps.supports_sampling() {
                    let s = ctx
                        .sample(sampling("Say hello", 20))
                        .key("greeting")
                        .await?;
                    parts.push(format!("greeting={}", s.content.text()));
                }
                if caps.supports_roots() {
                    let r = ctx.roots().key("client_roots").await?;
                    parts.push(format!("roots={}", r.len()));
                }
                if parts.is_empty() {
                    return Err(Error::protocol(
                        ferry_protocol::ErrorObject::missing_capability(
                            "Server requires elicitation, sampling or roots for this request",
                            json!({"elicitation": {}}),
                        ),
                    ));
                }
                Ok(parts.join("; "))
            }),
    )
    .tool(
        tool("test_streaming_elicitation")
            .description("Asks for input through MRTR, never on the response stream")
            .handler(|ctx: Context, _: NoArgs| async move {
                Ok(
                    match ctx
                        .elicit::<Name>("What is your name?")
                        .key("user_name")
                        .await?
                    {
                        Elicitation::Accept(n) => format!("Hello, {}!", n.name),
                        _ => "No name given".to_owned(),
                    },
                )
            }),
    )
}

fn legacy_ask_tools(b: ServerBuilder) -> ServerBuilder {
    b.tool(
        tool("test_sampling")
            .description("Asks the client's model to answer a prompt")
            .handler(|ctx: Context, args: PromptArg| async move {
                let answer = ctx.sample(sampling(&args.prompt, 100)).key("sampling").await?;
                Ok(format!("LLM response: {}", answer.content.text()))
            }),
    )
    .tool(
        tool("test_elicitation")
            .description("Asks the user for a username and email")
            .handler(|ctx: Context, args: MessageArg| async move {
                Ok(match ctx.elicit::<UserInfo>(args.message).key("user_info").await? {
                    Elicitation::Accept(u) => format!(
                        "User response: action=accept, content={}",
                        json!({"username": u.username, "email": u.email})
                    ),
                    Elicitation::Decline => "User response: action=decline".to_owned(),
                    Elicitation::Cancel => "User response: action=cancel".to_owned(),
                })
            }),
    )
    .tool(
        tool("test_elicitation_sep1034_defaults")
            .description("Asks for a form whose every field has a default")
            .handler(|ctx: Context, _: NoArgs| async move {
                let schema = form(json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "description": "Verification status", "default": true}
                    },
                    "required": []
                }))?;
                let answer = ctx
                    .elicit_with("Please review and update the form fields with defaults", schema)
                    .key("defaults")
                    .await?;
                Ok(describe(answer))
            }),
    )
    .tool(
        tool("test_elicitation_sep1330_enums")
            .description("Asks for a form with every kind of enum")
            .handler(|ctx: Context, _: NoArgs| async move {
                let schema = form(json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "description": "Choose an option", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "description": "Choose a titled option", "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}]},
                        "legacyEnum": {"type": "string", "description": "Choose a legacy option", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "description": "Choose options", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "description": "Choose titled options", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}]}}
                    },
                    "required": []
                }))?;
                let answer = ctx.elicit_with("Please choose", schema).key("enums").await?;
                Ok(describe(answer))
            }),
    )
}

fn form(value: Value) -> Result<FormSchema> {
    FormSchema::from_value(value).map_err(|e| Error::execution(e.to_string()))
}

fn describe(answer: Elicitation<ferry_server::FormAnswers>) -> String {
    match answer {
        Elicitation::Accept(a) => format!(
            "Elicitation completed: action=accept, content={}",
            Value::Object(a.0)
        ),
        Elicitation::Decline => "Elicitation completed: action=decline".to_owned(),
        Elicitation::Cancel => "Elicitation completed: action=cancel".to_owned(),
    }
}

fn resources(b: ServerBuilder) -> ServerBuilder {
    b.resource(
        resource("test://static-text", "static-text")
            .description("A static text resource")
            .mime_type("text/plain")
            .text("This is the content of the static text resource."),
    )
    .resource(
        resource("test://static-binary", "static-binary")
            .description("A static binary resource (a PNG image)")
            .mime_type("image/png")
            .blob(&base64_decode(PNG_B64)),
    )
    .resource(
        resource("test://watched-resource", "watched-resource")
            .description("A resource whose updates subscribers hear about")
            .mime_type("text/plain")
            .text("Watched resource content"),
    )
    .resource(
        resource("test://stateless-static-text", "stateless-static-text")
            .description("A static text resource served without any per-connection state")
            .mime_type("text/plain")
            .text("This is the content of the stateless static text resource."),
    )
    .resource_template(
        resource_template("test://template/{id}/data", "template-data")
            .description("JSON data for an id")
            .mime_type("application/json")
            .complete("id", |_: Context, req| async move {
                Ok(complete_from(["1", "2", "3", "123"], &req.value))
            })
            .handler(|_: Context, req: ResourceRequest| async move {
                let id = req.param("id").unwrap_or_default().to_owned();
                let text =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                        .to_string();
                Ok(TextResourceContents::new(req.uri, text).with_mime_type("application/json"))
            }),
    )
}

fn prompts(b: ServerBuilder) -> ServerBuilder {
    b.prompt(
        prompt("test_simple_prompt")
            .description("A prompt without arguments")
            .handler(|_: Context, _: PromptArguments| async {
                Ok(PromptMessage::user_text(
                    "This is a simple prompt for testing.",
                ))
            }),
    )
    .prompt(
        prompt("test_prompt_with_arguments")
            .description("A prompt with two required arguments")
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true)
            .complete("arg1", |_: Context, req| async move {
                Ok(complete_from(
                    ["test", "testValue1", "testing", "other"],
                    &req.value,
                ))
            })
            .handler(|_: Context, args: PromptArguments| async move {
                Ok(PromptMessage::user_text(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args.get("arg1").map(String::as_str).unwrap_or_default(),
                    args.get("arg2").map(String::as_str).unwrap_or_default()
                )))
            }),
    )
    .prompt(
        prompt("test_prompt_with_embedded_resource")
            .description("A prompt that embeds a resource")
            .argument("resourceUri", "The URI of the resource to embed", true)
            .handler(|_: Context, args: PromptArguments| async move {
                let uri = args.get("resourceUri").cloned().unwrap_or_default();
                Ok(vec![
                    PromptMessage::user(ContentBlock::embedded(
                        TextResourceContents::new(uri, "Embedded resource content for testing.")
                            .with_mime_type("text/plain"),
                    )),
                    PromptMessage::user_text("Please process the embedded resource above."),
                ])
            }),
    )
    .prompt(
        prompt("test_prompt_with_image")
            .description("A prompt with an image")
            .handler(|_: Context, _: PromptArguments| async {
                Ok(vec![
                    PromptMessage::user(ContentBlock::image(PNG_B64, "image/png")),
                    PromptMessage::user_text("Please analyze the image above."),
                ])
            }),
    )
    .prompt(
        prompt("test_input_required_result_prompt")
            .description("A prompt that asks the user for context first (MRTR on prompts/get)")
            .handler(|ctx: Context, _: PromptArguments| async move {
                let context = ctx
                    .elicit::<PromptContext>("What context should the prompt use?")
                    .key("user_context")
                    .await?;
                let context = context.accepted().map(|c| c.context).unwrap_or_default();
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                    "Use this context: {context}"
                ))])
                .with_description("A prompt built from the user's context"))
            }),
    )
}

/// Decodes base64 fixtures known to be valid.
pub fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .unwrap_or_default()
}

/// The `echo` tool: returns its text as one text block (the benchmarks call it).
pub fn echo(b: ServerBuilder) -> ServerBuilder {
    #[derive(Deserialize, JsonSchema)]
    struct EchoArgs {
        /// The text to return.
        text: String,
    }
    b.tool(
        tool("echo")
            .description("Returns its text as one text block")
            .handler(|_: Context, a: EchoArgs| async move { Ok(CallToolResult::text(a.text)) }),
    )
}
