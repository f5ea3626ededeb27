//! `rmcp-echo`: the benchmark's tools served by rmcp 3.x, the official Rust SDK, as its
//! documentation sets it up: a `#[tool_router]` handler, the stateless Streamable HTTP
//! service in JSON-response mode (behind axum), or the stdio transport.
//!
//! - `echo {text}` returns its text as one text block;
//! - `confirm_delete {path}` asks the boolean `confirm` through a multi round-trip request,
//!   with a `requestState` sealed by rmcp's `RequestStateCodec` (HMAC-SHA256, bound to the
//!   tool and path, five-minute expiry; rmcp has no single-use ledger, Ferry's tool has one);
//! - `subscriptions/listen` is accepted for `toolsListChanged` and held open.
//!
//! ```text
//! rmcp-echo --http 127.0.0.1:PORT    # http://127.0.0.1:PORT/mcp
//! rmcp-echo --stdio
//! ```

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    InputRequest, InputRequests, InputRequiredResult, ProtocolVersion, RequestStateCodec,
    SealOptions, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::SubscriptionContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to return.
    text: String,
}

/// Arguments of `confirm_delete`.
#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The path to delete.
    path: String,
}

/// The server: the tool router and the codec that seals `requestState`.
#[derive(Clone)]
struct Bench {
    tool_router: ToolRouter<Self>,
    codec: Arc<RequestStateCodec>,
}

impl Bench {
    fn new() -> Self {
        // A per-process random key, as Ferry's example server uses without --state-keys.
        let key: Vec<u8> = (0..32).map(|_| rand_byte()).collect();
        Self {
            tool_router: Self::tool_router(),
            codec: Arc::new(RequestStateCodec::try_new(key).expect("a 32-byte key")),
        }
    }
}

/// A byte from the standard library's randomly keyed hasher (enough for a bench key).
fn rand_byte() -> u8 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    hasher.finish() as u8
}

/// The folder `confirm_delete` looks in, made fresh for the process as ferry-everything's
/// sandbox is: a lookup costs the kernel what ferry-everything's does (a name not seen
/// before in an existing folder).
fn sandbox() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ferry-bench-rmcp-{}", std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("rmcp-echo: cannot make {}: {e}", dir.display());
        }
        dir
    })
}

/// Removes the sandbox folder on SIGTERM or SIGINT, and exits.
async fn remove_sandbox_when_stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    let _ = std::fs::remove_dir(sandbox());
    std::process::exit(0);
}

#[tool_router]
impl Bench {
    /// Returns its text as one text block.
    #[tool(description = "Returns its text as one text block")]
    async fn echo(
        &self,
        Parameters(args): Parameters<EchoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text(args.text)]))
    }

    /// Deletes a path after the user confirms (asks once).
    #[tool(description = "Deletes a path after the user confirms")]
    async fn confirm_delete(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let bound = format!("tools/call:confirm_delete:{}", args.path);
        // ferry-everything's shape: every round looks in a folder (one `symlink_metadata`)
        // and, as a benchmark server, it never deletes anything.
        let dir = sandbox();
        let found = std::fs::symlink_metadata(dir.join(&args.path)).is_ok();
        let Some(state) = state else {
            let schema = serde_json::from_value(serde_json::json!({
                "type": "object",
                "properties": { "confirm": { "type": "boolean", "title": "Confirm" } },
                "required": ["confirm"]
            }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            let mut requests = InputRequests::new();
            requests.insert(
                "confirm".to_owned(),
                InputRequest::Elicitation(ElicitRequest::new(
                    ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: format!("Delete {} from {}?", args.path, dir.display()),
                        requested_schema: schema,
                    },
                )),
            );
            let options = SealOptions::new()
                .associated_data(bound.as_bytes())
                .ttl(Duration::from_secs(300));
            let sealed = self.codec.seal_with(b"confirm", &options);
            return Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into());
        };
        self.codec
            .open_with(&state, bound.as_bytes())
            .map_err(|e| ErrorData::invalid_params(format!("requestState: {e}"), None))?;
        let answer = responses.as_ref().and_then(|r| r.get("confirm"));
        let confirmed =
            answer.is_some_and(|a| a["action"] == "accept" && a["content"]["confirm"] == true);
        let text = match (confirmed, found) {
            (false, _) => format!("Kept {}: nothing deleted", args.path),
            (true, false) => format!(
                "Nothing deleted: {} does not exist in {}",
                args.path,
                dir.display()
            ),
            (true, true) => format!(
                "Nothing deleted: {} is kept (this benchmark server deletes nothing)",
                args.path
            ),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

// The router is built once and kept in the server value (the macro's default would build
// a new router for every call).
#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&[ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25])
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        context.cancelled().await;
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    sandbox();
    tokio::spawn(remove_sandbox_when_stopped());
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["--stdio"] => {
            let service = Bench::new().serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
            let _ = std::fs::remove_dir(sandbox());
        }
        ["--http", addr] => {
            let addr: SocketAddr = addr.parse()?;
            let server = Bench::new();
            let service: StreamableHttpService<Bench, LocalSessionManager> =
                StreamableHttpService::new(
                    move || Ok(server.clone()),
                    Default::default(),
                    StreamableHttpServerConfig::default()
                        .with_legacy_session_mode(false)
                        .with_json_response(true),
                );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "rmcp-echo: serving MCP at http://{}/mcp",
                listener.local_addr()?
            );
            use axum::serve::ListenerExt;
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, router).await?;
        }
        _ => {
            eprintln!("usage: rmcp-echo --http ADDR | --stdio");
            std::process::exit(2);
        }
    }
    Ok(())
}
