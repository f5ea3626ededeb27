//! `ferry-echo`: the benchmark's tools on Ferry, set up as Ferry's documentation shows, so
//! that `bench/run.sh` can put a small Ferry server beside `rmcp-echo` (the same tools on
//! the official Rust SDK) as well as the full `ferry-everything`. Its tools take derived
//! schemas, so it depends on `ferry` without the general JSON Schema engine (the
//! `json-schema` feature), as the README shows for such a server; its arguments are
//! validated all the same.
//!
//! - `echo {text}` returns its text as one text block;
//! - `confirm_delete {path}` asks the boolean `confirm` through a multi round-trip request,
//!   with a sealed, bound and single-use `requestState` (Ferry's defaults: a per-process
//!   random key, the in-memory ledger); every round looks the path up in a fresh folder,
//!   and, as a benchmark server, it never deletes anything;
//! - `subscriptions/listen` is Ferry's own, held open until the client leaves.
//!
//! ```text
//! ferry-echo --http 127.0.0.1:PORT    # http://127.0.0.1:PORT/mcp
//! ferry-echo --stdio
//! ```

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use ferry::Form;
use ferry::http::{HttpConfig, McpService};
use ferry::server::{Context, Elicitation, Error, Server, tool};
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
    /// The path to delete, relative to the server's folder.
    path: String,
}

/// The question `confirm_delete` asks.
#[derive(Deserialize, Form)]
struct Confirm {
    /// Yes, delete it.
    confirm: bool,
}

/// The folder `confirm_delete` looks in, made fresh for the process as the benchmark's
/// other servers make theirs.
fn sandbox() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ferry-bench-echo-{}", std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("ferry-echo: cannot make {}: {e}", dir.display());
        }
        dir
    })
}

/// The benchmark's tools.
fn server() -> Server {
    Server::builder("ferry-echo", env!("CARGO_PKG_VERSION"))
        .tool(
            tool("echo")
                .description("Returns its text as one text block")
                .handler(|args: EchoArgs| async move { Ok(args.text) }),
        )
        .tool(
            tool("confirm_delete")
                .description("Deletes a path after the user confirms")
                .single_use()
                .handler(|ctx: Context, args: DeleteArgs| async move {
                    confirm_delete(ctx, args).await
                }),
        )
        .build()
        .expect("the benchmark's tool definitions are valid")
}

/// Looks the path up, asks, and answers what it would have done.
async fn confirm_delete(ctx: Context, args: DeleteArgs) -> ferry::server::Result<String> {
    let relative = Path::new(&args.path);
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(Error::execution(
            "give a path inside the folder, without `..`",
        ));
    }
    let dir = sandbox();
    let found = std::fs::symlink_metadata(dir.join(relative)).is_ok();
    let answer = ctx
        .elicit::<Confirm>(format!("Delete {} from {}?", args.path, dir.display()))
        .key("confirm")
        .await?;
    Ok(match (answer, found) {
        (Elicitation::Accept(Confirm { confirm: true }), false) => format!(
            "Nothing deleted: {} does not exist in {}",
            args.path,
            dir.display()
        ),
        (Elicitation::Accept(Confirm { confirm: true }), true) => format!(
            "Nothing deleted: {} is kept (this benchmark server deletes nothing)",
            args.path
        ),
        (Elicitation::Cancel, _) => "Cancelled: nothing deleted".to_owned(),
        _ => format!("Kept {}: nothing deleted", args.path),
    })
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    sandbox();
    let served = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["--stdio"] => ferry::stdio::serve_stdio(server()).await,
        ["--http", addr] => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "ferry-echo: serving MCP at http://{}/mcp",
                listener.local_addr()?
            );
            // Alone on its port, with no load balancer to tell, it stops at once on
            // SIGTERM (the default grace of a few seconds is for load balancers).
            let config = HttpConfig::builder()
                .drain_grace(Duration::ZERO)
                .build()
                .map_err(std::io::Error::other)?;
            ferry::http::serve(listener, McpService::new(server(), config))
                .with_graceful_shutdown(ferry::http::shutdown_signal())
                .await
        }
        _ => {
            eprintln!("usage: ferry-echo --http ADDR | --stdio");
            std::process::exit(2);
        }
    };
    let _ = std::fs::remove_dir(sandbox());
    served
}
