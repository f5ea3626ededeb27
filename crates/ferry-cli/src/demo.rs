//! `ferry demo`: the example server (ferry-everything) runs in this process on a loopback
//! port, and a client talks to it while ferry prints each round trip.
//!
//! The requests shown are the bytes the client really sent, recorded on their way into
//! the server; the answers are the results the client received. The tool call is driven
//! round by round with the client's manual-round API (`call_tool_round`, `answer`), so
//! the `InputRequiredResult`, the answers and the echoed `requestState` on screen are the
//! real ones.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use console::style;
use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::ferry_protocol::mrtr::{InputRequest, InputRequiredResult, MrtrResult};
use ferry_client::ferry_protocol::tools::CallToolResult;
use ferry_client::handler::BoxFuture;
use ferry_client::{
    AskOrigin, CallOptions, Client, EraCache, FormRequest, HandlerCapabilities, InputHandler, Retry,
};
use ferry_everything::app::{PageState, StaticTokens, router};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use crate::arguments::UsageError;
use crate::cli::DemoArgs;
use crate::commands::{self, Outcome};
use crate::handler::CliHandler;
use crate::output;
use crate::progress::ProgressUi;

/// The largest request body the demo server accepts.
const MAX_RECORDED: usize = 16 << 20;

/// One request as the server received it.
#[derive(Debug, Clone)]
struct Recorded {
    headers: Vec<(String, String)>,
    body: Value,
}

/// The requests the client sent, in order.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Recorded>>>);

impl Recorder {
    fn take(&self) -> Vec<Recorded> {
        self.0
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }

    async fn layer(self, req: Request, next: Next) -> Response {
        let (parts, body) = req.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, MAX_RECORDED).await else {
            return axum::http::StatusCode::PAYLOAD_TOO_LARGE.into_response();
        };
        if parts.method == axum::http::Method::POST
            && let Ok(body) = serde_json::from_slice::<Value>(&bytes)
        {
            let headers = parts
                .headers
                .iter()
                .filter(|(name, _)| name.as_str().starts_with("mcp-"))
                .map(|(name, v)| {
                    (
                        header_name(name.as_str()),
                        v.to_str().unwrap_or("?").to_owned(),
                    )
                })
                .collect();
            if let Ok(mut log) = self.0.lock() {
                log.push(Recorded { headers, body });
            }
        }
        next.run(Request::from_parts(parts, Body::from(bytes)))
            .await
    }
}

/// `mcp-method` → `Mcp-Method`, `mcp-protocol-version` → `MCP-Protocol-Version` (as the
/// spec writes them).
fn header_name(lower: &str) -> String {
    if lower == "mcp-protocol-version" {
        return "MCP-Protocol-Version".into();
    }
    lower
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// The example server, serving on 127.0.0.1 until dropped.
struct DemoServer {
    url: String,
    /// The folder the server's `confirm_delete` deletes files in (removed with the server).
    sandbox: std::path::PathBuf,
    recorder: Recorder,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl DemoServer {
    async fn start() -> anyhow::Result<DemoServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("could not bind a loopback port for the demo server")?;
        let addr = listener.local_addr()?;
        let everything = build(Options {
            public_url: format!("http://{addr}"),
            ..Options::default()
        })
        .context("could not build the example server")?;
        let server = everything.server.clone();
        let sandbox = everything.sandbox.root().to_path_buf();
        let state = Arc::new(PageState {
            connections: everything.connections.clone(),
            links: everything.links.clone(),
            tokens: StaticTokens::new(),
        });
        let recorder = Recorder::default();
        let tap = recorder.clone();
        let app = router(everything.server, HttpConfig::default(), state, false)
            .map_err(|e| anyhow::anyhow!("could not set up the example server: {e}"))?
            .layer(axum::middleware::from_fn(
                move |req: Request, next: Next| tap.clone().layer(req, next),
            ));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
                server.shutdown();
            };
            if let Err(e) = axum::serve(listener, app.into_make_service())
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::warn!(error = %e, "the demo server stopped");
            }
        });
        Ok(DemoServer {
            url: format!("http://{addr}/mcp"),
            sandbox,
            recorder,
            stop: Some(stop),
            task: Some(task),
        })
    }

    async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), t).await;
        }
    }
}

/// Answers the demo's forms by itself, and says what it answered.
struct AutoAnswer;

/// A plausible answer to any form: its defaults, and for required fields without one,
/// `true`, the first option, the minimum or a placeholder.
fn auto_content(form: &FormRequest) -> BTreeMap<String, ElicitValue> {
    let mut content = form.defaults();
    for f in form.fields().filter(|f| f.required) {
        if content.contains_key(f.name) {
            continue;
        }
        let first = f
            .schema
            .allowed_values()
            .and_then(|v| v.first().map(|s| (*s).to_owned()));
        let value = match f.schema.type_name() {
            "boolean" => ElicitValue::Bool(true),
            "number" | "integer" => ElicitValue::from(1),
            "array" => ElicitValue::StringArray(first.into_iter().collect()),
            _ => ElicitValue::String(first.unwrap_or_else(|| "demo".into())),
        };
        content.insert(f.name.to_owned(), value);
    }
    content
}

impl InputHandler for AutoAnswer {
    fn capabilities(&self) -> HandlerCapabilities {
        HandlerCapabilities::none().elicitation_form()
    }

    fn elicit_form<'a>(&'a self, form: &'a FormRequest) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async move {
            let content = auto_content(form);
            let shown = serde_json::to_string(&content).unwrap_or_default();
            println!(
                "   {} {} asks: {:?}",
                style("?").yellow().bold(),
                form.context.server.display_name(),
                form.message
            );
            println!(
                "   {} the demo answers for you: accept {}   {}",
                style("✔").green(),
                style(shown).cyan(),
                style("(run `ferry demo --interactive` to answer yourself)").dim()
            );
            ElicitResult::accept(content)
        })
    }
}

fn explain(text: &str) {
    for line in text.lines() {
        println!("   {}", style(line).dim());
    }
}

/// Shortens what would drown the point: the sealed `requestState` (its start, its end and
/// its length) and other long strings such as image data. With `abridge_meta`, `_meta`
/// (the same in every message) is left out.
fn shorten(value: &Value, abridge_meta: bool) -> Value {
    match value {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("requestState", Value::String(s)) => Value::String(short_state(s)),
                        ("_meta", _) if abridge_meta => Value::String("… (as before)".into()),
                        _ => shorten(v, abridge_meta),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| shorten(v, abridge_meta)).collect()),
        Value::String(s) if s.chars().count() > 96 => {
            let head: String = s.chars().take(48).collect();
            Value::String(format!("{head}… ({} characters)", s.chars().count()))
        }
        other => other.clone(),
    }
}

/// `"AbCdEfGhIjKl…uVwXyZ (412 characters, sealed by the server)"`.
pub fn short_state(state: &str) -> String {
    let chars: Vec<char> = state.chars().collect();
    if chars.len() <= 24 {
        return state.to_owned();
    }
    let head: String = chars[..12].iter().collect();
    let tail: String = chars[chars.len() - 6..].iter().collect();
    format!(
        "{head}…{tail} ({} characters, sealed by the server)",
        chars.len()
    )
}

/// The narrator: numbers the steps, prints the recorded requests and the results, and
/// shows `_meta` in full only the first time.
struct Tour<'a> {
    recorder: &'a Recorder,
    step: u32,
    request_meta_shown: bool,
    result_meta_shown: bool,
}

impl<'a> Tour<'a> {
    fn new(recorder: &'a Recorder) -> Self {
        Tour {
            recorder,
            step: 0,
            request_meta_shown: false,
            result_meta_shown: false,
        }
    }

    fn heading(&mut self, title: &str) {
        self.step += 1;
        println!();
        println!(
            "{}",
            style(format!("━━ {}. {title} ", self.step)).cyan().bold()
        );
    }

    /// Prints the requests recorded since the last call for `method` (others, such as a
    /// tools/list the client sends on its own, are only mentioned); returns the last one.
    fn requests(&mut self, method: &str) -> Option<Value> {
        let mut last = None;
        for r in self.recorder.take() {
            let m = r.body.get("method").and_then(Value::as_str).unwrap_or("?");
            if m != method {
                println!("   {} (the client also sent {m})", style("→").dim());
                continue;
            }
            let headers: Vec<String> = r.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            println!(
                "   {} client → server   POST /mcp   {}",
                style("→").green().bold(),
                style(headers.join("   ")).dim()
            );
            show_json(&r.body, self.request_meta_shown);
            self.request_meta_shown |= has_meta(&r.body);
            last = Some(r.body);
        }
        last
    }

    fn result(&mut self, label: &str, value: &Value) {
        println!("   {} server → client   {label}", style("←").blue().bold());
        show_json(value, self.result_meta_shown);
        self.result_meta_shown |= has_meta(value);
    }

    /// One tool call, round by round. Returns the final result.
    async fn call(
        &mut self,
        client: &Client,
        tool: &str,
        arguments: Value,
    ) -> anyhow::Result<CallToolResult> {
        let options = CallOptions::new();
        let origin = AskOrigin {
            method: "tools/call".into(),
            target: tool.into(),
        };
        let mut retry = Retry::first();
        let mut previous_state: Option<String> = None;
        for round in 1..=8 {
            if round == 1 {
                self.heading(&format!("tools/call {tool}, round 1"));
                explain("The client calls the tool like any other.");
            } else {
                self.heading(&format!("tools/call {tool}, round {round}: the retry"));
                explain(
                    "The client sends the same request again with a new id, adding its answers\n\
                     (inputResponses, under the server's keys) and the requestState exactly as received.",
                );
            }
            let outcome = client
                .call_tool_round(tool, arguments.clone(), &retry, &options)
                .await;
            let sent = self.requests("tools/call");
            if let (Some(expected), Some(body)) = (&previous_state, &sent) {
                let echoed = state_of(body) == Some(expected.as_str());
                println!(
                    "   {} requestState echoed byte for byte: {}",
                    if echoed {
                        style("✔").green()
                    } else {
                        style("✘").red()
                    },
                    if echoed { "yes" } else { "NO" }
                );
            }
            match outcome.with_context(|| format!("tools/call {tool} failed"))? {
                MrtrResult::Complete(result) => {
                    self.result(
                        "CallToolResult (resultType \"complete\"): the answer",
                        &serde_json::to_value(&result)?,
                    );
                    println!("   {}", style("Printed as ferry would print it:").dim());
                    for line in output::call_result(&result).lines() {
                        println!("     {}", style(line).bold());
                    }
                    return Ok(result);
                }
                MrtrResult::InputRequired(ir) => {
                    self.result(
                        "InputRequiredResult (resultType \"input_required\"): the server needs input first",
                        &serde_json::to_value(&ir)?,
                    );
                    describe_requests(&ir);
                    if ir.request_state.is_some() {
                        explain(
                            "requestState is the server's own memory of this call, sealed (encrypted and\n\
                             authenticated) so that the server keeps nothing between rounds. The client\n\
                             cannot read it and must send it back unchanged.",
                        );
                    }
                    println!();
                    retry = client.answer(&ir, Some(origin.clone())).await;
                    previous_state = ir.request_state.clone();
                }
            }
        }
        anyhow::bail!("the server kept asking for input")
    }
}

/// Whether a message carries `_meta` (at its top or in its params).
fn has_meta(message: &Value) -> bool {
    message.get("_meta").is_some() || message.get("params").and_then(|p| p.get("_meta")).is_some()
}

/// Pretty JSON, indented for the narrative; `_meta` left out when `abridge_meta`.
fn show_json(value: &Value, abridge_meta: bool) {
    let text = serde_json::to_string_pretty(&shorten(value, abridge_meta)).unwrap_or_default();
    for line in text.lines() {
        println!("     {line}");
    }
}

fn state_of(body: &Value) -> Option<&str> {
    body.get("params")?.get("requestState")?.as_str()
}

fn describe_requests(ir: &InputRequiredResult) {
    for (key, request) in ir.input_requests.iter().flatten() {
        let what = match request {
            InputRequest::Elicit(e) => {
                format!("a form (elicitation/create): {:?}", e.params.message())
            }
            InputRequest::CreateMessage(_) => "a model reply (sampling/createMessage)".to_owned(),
            InputRequest::ListRoots(_) => "the client's roots (roots/list)".to_owned(),
        };
        explain(&format!("inputRequests[{key:?}] asks for {what}"));
    }
}

/// Runs the demo.
pub async fn run(args: &DemoArgs) -> anyhow::Result<Outcome> {
    if args.serve_stdio {
        let everything = build(Options::default()).context("could not build the example server")?;
        // stdout carries MCP: say where the files are on stderr.
        eprintln!(
            "ferry demo: confirm_delete works in the sandbox folder {} ({}; removed on exit)",
            everything.sandbox.root().display(),
            demo_files()
        );
        ferry_stdio::serve_stdio(everything.server)
            .await
            .context("serving on stdio")?;
        return Ok(Outcome::Success);
    }
    let interactive = commands::interactive(false);
    if args.interactive && !interactive {
        return Err(UsageError::new("--interactive needs a terminal (stdin and stderr)").into());
    }
    let server = DemoServer::start().await?;
    let result = tour(args, &server).await;
    server.stop().await;
    result
}

/// The demo files a sandbox starts with, for people: `notes.txt, draft.md, old/report.csv`.
fn demo_files() -> String {
    ferry_everything::sandbox::DEMO_FILES
        .iter()
        .map(|(path, _)| *path)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Commands to try next, spelled with this binary's own path (relative to the current
/// directory when it is under it), so they work as typed right after `cargo run`.
fn next_steps() -> String {
    let exe = std::env::current_exe().ok();
    let cwd = std::env::current_dir().ok();
    let ferry = match (&exe, &cwd) {
        (Some(exe), Some(cwd)) => match exe.strip_prefix(cwd) {
            Ok(rel) => rel.display().to_string(),
            Err(_) => exe.display().to_string(),
        },
        (Some(exe), None) => exe.display().to_string(),
        _ => "ferry".to_owned(),
    };
    let on_path = exe
        .as_ref()
        .and_then(|e| e.file_name())
        .zip(std::env::var_os("PATH"))
        .is_some_and(|(name, path)| {
            std::env::split_paths(&path)
                .any(|dir| dir.join(name) == exe.clone().unwrap_or_default())
        });
    let ferry = if on_path {
        "ferry".to_owned()
    } else {
        shlex::try_quote(&ferry)
            .map(|q| q.into_owned())
            .unwrap_or(ferry)
    };
    let mut text = format!(
        "Try it yourself: the same example server, started on stdio by the client:\n\
         {ferry} --stdio \"{ferry} demo --serve-stdio\" tools\n\
         {ferry} --stdio \"{ferry} demo --serve-stdio\" call confirm_delete path=notes.txt\n\
         or a server over HTTP: {ferry} --url http://HOST:PORT/mcp tools"
    );
    if !on_path {
        text.push_str("\nTo have `ferry` on your PATH: cargo install --path crates/ferry-cli");
    }
    text
}

async fn tour(args: &DemoArgs, server: &DemoServer) -> anyhow::Result<Outcome> {
    println!(
        "{}",
        style("ferry demo: the Model Context Protocol (2026-07-28), one round trip at a time")
            .bold()
    );
    explain(&format!(
        "MCP lets an AI application (the client) use the tools, prompts and data a server offers.\n\
         What follows is one such conversation, including a tool that stops to ask the user a\n\
         question and then picks up where it left off (a multi round-trip request).\n\
         The example server ferry-everything runs inside this process at {}.\n\
         A ferry client talks to it over Streamable HTTP: each request is a JSON-RPC message in an HTTP POST.\n\
         Its confirm_delete tool really deletes files, but only in its own sandbox folder\n\
         {} ({}; removed when the demo ends).",
        server.url,
        server.sandbox.display(),
        demo_files()
    ));
    let mut builder = Client::builder()
        .http(server.url.clone())
        .client_info("ferry-demo", env!("CARGO_PKG_VERSION"))
        .era_cache(Arc::new(EraCache::new()))
        .timeout(Duration::from_secs(10))
        // The tour shows MRTR rounds; a task would hide them behind polling.
        .tasks(false);
    builder = if args.interactive {
        builder.input_handler(CliHandler::new(None, true, ProgressUi::default()))
    } else {
        builder.input_handler(AutoAnswer)
    };
    let client = builder
        .build()
        .await
        .context("the demo client could not connect")?;
    let mut tour = Tour::new(&server.recorder);

    tour.heading("server/discover: who are you, and what can you do?");
    explain(
        "The client starts without a handshake: it asks the server to describe itself. Every request\n\
         carries the protocol version and the client's capabilities in _meta, so no session is needed.",
    );
    tour.requests("server/discover");
    let discover = client.discover().await.context("server/discover failed")?;
    let mut summary = Map::new();
    summary.insert(
        "supportedVersions".into(),
        json!(discover.supported_versions),
    );
    summary.insert(
        "capabilities".into(),
        serde_json::to_value(&discover.capabilities)?,
    );
    if let Some(info) = client.server_info() {
        summary.insert("serverInfo".into(), serde_json::to_value(info)?);
    }
    tour.result("DiscoverResult (abridged)", &Value::Object(summary));

    tour.heading("tools/list: which tools are there?");
    let tools = client.list_tools().await.context("tools/list failed")?;
    tour.requests("tools/list");
    let confirm = tools
        .iter()
        .find(|t| t.name == "confirm_delete")
        .context("the example server has no confirm_delete tool")?;
    tour.result(
        &format!(
            "ListToolsResult: {} tools; the one we will call:",
            tools.len()
        ),
        &serde_json::to_value(confirm)?,
    );
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut list = names.iter().take(8).copied().collect::<Vec<_>>().join(", ");
    if names.len() > 8 {
        list.push_str(&format!(
            " and {} more (`ferry tools` lists them)",
            names.len() - 8
        ));
    }
    explain(&format!("Among them: {list}"));

    println!();
    explain(
        "confirm_delete needs the user's confirmation before it acts. In 2026-07-28 the server does\n\
         not call the client back: it answers the call with an InputRequiredResult, and the client\n\
         retries the call with the answers. This is a multi round-trip request (MRTR).",
    );
    tour.call(&client, "confirm_delete", json!({"path": "notes.txt"}))
        .await?;

    if !args.short {
        println!();
        explain(
            "generate_image asks two questions in one round: both forms come in the same\n\
             InputRequiredResult under different keys, and one retry answers both.",
        );
        tour.call(
            &client,
            "generate_image",
            json!({"prompt": "a lighthouse at dusk"}),
        )
        .await?;
    }

    println!();
    println!("{}", style("Done.").bold());
    explain(&next_steps());
    if let Err(e) = client.close().await {
        tracing::debug!(error = %e, "closing the demo client failed");
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_shortened_but_recognisable() {
        let state = "A".repeat(10) + &"b".repeat(300) + "XYZxyz";
        let s = short_state(&state);
        assert!(s.starts_with("AAAAAAAAAAbb…XYZxyz (316 characters"), "{s}");
        assert_eq!(short_state("short"), "short");
        let v = shorten(
            &json!({"params": {"requestState": state, "n": 1, "data": "x".repeat(200)}, "_meta": {"a": 1}}),
            true,
        );
        assert_eq!(v["_meta"], "… (as before)");
        assert!(
            v["params"]["requestState"]
                .as_str()
                .unwrap()
                .contains("sealed")
        );
        assert!(
            v["params"]["data"]
                .as_str()
                .unwrap()
                .ends_with("(200 characters)")
        );
        assert_eq!(v["params"]["n"], 1);
    }

    #[test]
    fn header_names_are_capitalised() {
        assert_eq!(header_name("mcp-method"), "Mcp-Method");
        assert_eq!(header_name("mcp-protocol-version"), "MCP-Protocol-Version");
        assert_eq!(header_name("mcp-param-region"), "Mcp-Param-Region");
    }

    #[test]
    fn auto_answers_fill_required_fields() {
        let form = FormRequest {
            context: ferry_client::AskContext {
                server: ferry_client::AskingServer {
                    name: "s".into(),
                    title: None,
                    version: None,
                },
                origin: None,
                key: None,
            },
            message: "m".into(),
            schema: serde_json::from_value(json!({"type": "object", "properties": {
                "confirm": {"type": "boolean"},
                "ratio": {"type": "string", "oneOf": [{"const": "16:9", "title": "Wide"}]},
                "n": {"type": "integer", "default": 4},
                "free": {"type": "string"}
            }, "required": ["confirm", "ratio", "n"]}))
            .unwrap(),
        };
        assert_eq!(
            serde_json::to_value(auto_content(&form)).unwrap(),
            json!({"confirm": true, "n": 4, "ratio": "16:9"})
        );
    }
}
