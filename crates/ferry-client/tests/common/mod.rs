//! Servers for the integration tests: ferry-everything in-process over HTTP (127.0.0.1
//! only), and the built `ferry-everything` binary over stdio.
//!
//! The stdio tests need the binary. They look for it next to the test executable
//! (`target/<profile>/ferry-everything`, which `cargo test --workspace` builds) and run
//! `cargo build -p ferry-everything` for that profile first, so `cargo test -p
//! ferry-client` works on its own too. `FERRY_EVERYTHING_BIN` overrides the path.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use ferry_client::{Client, EraCache};
use ferry_everything::app::{PageState, router};
use ferry_everything::{Options, build};
use ferry_http::{HttpConfig, StaticTokens};
use tokio::sync::oneshot;

/// A server running in this process; stops when dropped.
pub struct TestServer {
    /// The MCP endpoint.
    pub url: String,
    /// The `Mcp-Method` header (or `-` when absent) of every POST, in order.
    pub methods: Arc<Mutex<Vec<String>>>,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

impl TestServer {
    /// How many POSTs carried `Mcp-Method: method`.
    pub fn count(&self, method: &str) -> usize {
        self.methods
            .lock()
            .unwrap()
            .iter()
            .filter(|m| *m == method)
            .count()
    }

    /// A client for this server with its own era cache.
    pub async fn client(&self) -> Client {
        Client::builder()
            .http(&self.url)
            .era_cache(Arc::new(EraCache::new()))
            // These exercise plain MRTR rounds; calls that become tasks are covered by
            // ferry-everything's tasks_client tests.
            .tasks(false)
            .build()
            .await
            .expect("connect")
    }
}

/// Serves `app` at 127.0.0.1 on a free port, recording the methods of POSTs.
pub async fn serve(app: Router) -> TestServer {
    let methods = Arc::new(Mutex::new(Vec::new()));
    let seen = methods.clone();
    let app = app.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| {
            let seen = seen.clone();
            async move {
                if req.method() == axum::http::Method::POST {
                    let m = req
                        .headers()
                        .get("mcp-method")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-")
                        .to_owned();
                    seen.lock().unwrap().push(m);
                }
                let r: Response = next.run(req).await;
                r
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr: SocketAddr = listener.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app.into_make_service())
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    TestServer {
        url: format!("http://{addr}/mcp"),
        methods,
        stop: Some(stop),
    }
}

/// ferry-everything over HTTP, with `page_size` items per list page.
pub async fn everything(page_size: usize) -> TestServer {
    let e = build(Options {
        page_size,
        ..Options::default()
    })
    .expect("build ferry-everything");
    let state = Arc::new(PageState {
        connections: e.connections.clone(),
        links: e.links.clone(),
        tokens: StaticTokens::new(),
    });
    serve(router(e.server, HttpConfig::default(), state, false)).await
}

/// A plain ferry-server served over HTTP at `/mcp`.
pub async fn custom(server: ferry_server::Server) -> TestServer {
    let app = Router::new().route_service(
        "/mcp",
        ferry_http::McpService::new(server, HttpConfig::default()),
    );
    serve(app).await
}

/// The path of the `ferry-everything` binary, built for this test's profile.
pub fn everything_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("FERRY_EVERYTHING_BIN") {
            return PathBuf::from(p);
        }
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("target/<profile>/deps")
            .to_path_buf();
        let profile = profile_dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("debug")
            .to_owned();
        let target_dir = profile_dir.parent().expect("target dir").to_path_buf();
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "ferry-everything",
            "--bin",
            "ferry-everything",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir);
        match profile.as_str() {
            "debug" => {}
            "release" => {
                cmd.arg("--release");
            }
            other => {
                cmd.args(["--profile", other]);
            }
        }
        let status = cmd.status().expect("run cargo build -p ferry-everything");
        assert!(status.success(), "cargo build -p ferry-everything failed");
        let bin = profile_dir.join(format!("ferry-everything{}", std::env::consts::EXE_SUFFIX));
        assert!(bin.exists(), "{} is missing", bin.display());
        bin
    })
    .clone()
}

/// The command starting ferry-everything over stdio, its logs silenced.
pub fn everything_stdio(extra: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(everything_bin());
    cmd.arg("--stdio").args(extra).env("RUST_LOG", "error");
    cmd.stderr(std::process::Stdio::null());
    cmd
}

/// The text of a tool result's first text block.
pub fn text(result: &ferry_client::ferry_protocol::tools::CallToolResult) -> String {
    use ferry_client::ferry_protocol::content::ContentBlock;
    result
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}
