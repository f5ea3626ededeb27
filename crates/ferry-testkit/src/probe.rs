//! Probe tools built on ferry-server, for transport tests: tools that echo, block until
//! released, hang, count their calls, name their caller or panic, and a [`Probe`] that
//! lets a test watch and steer them.
//!
//! Only with the `server` feature. ferry-server's own tests (and the crates below it)
//! use the rest of the testkit without it, so that no crate depends on itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ferry_server::{Context, ToolBuilder, tool};
use serde_json::Value;
use tokio::sync::watch;

use crate::rpc;

/// What the probe tools let a test observe and control.
#[derive(Clone)]
pub struct Probe {
    /// Set when `hang` starts.
    pub started: Arc<AtomicBool>,
    /// Set when `hang`'s future is dropped.
    pub dropped: Arc<AtomicBool>,
    /// Set when a `gate` call starts waiting.
    pub waiting: Arc<AtomicBool>,
    /// How many times `count` ran.
    pub counted: Arc<AtomicUsize>,
    gate: Arc<watch::Sender<bool>>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe::new()
    }
}

impl Probe {
    /// A probe with every flag clear and the gate closed.
    pub fn new() -> Probe {
        let (gate, _) = watch::channel(false);
        Probe {
            started: Arc::default(),
            dropped: Arc::default(),
            waiting: Arc::default(),
            counted: Arc::default(),
            gate: Arc::new(gate),
        }
    }

    /// Whether `hang` started.
    pub fn started(&self) -> bool {
        self.started.load(Ordering::SeqCst)
    }

    /// Whether `hang`'s future was dropped.
    pub fn dropped(&self) -> bool {
        self.dropped.load(Ordering::SeqCst)
    }

    /// Whether a `gate` call is waiting.
    pub fn waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst)
    }

    /// How many times `count` ran.
    pub fn counted(&self) -> usize {
        self.counted.load(Ordering::SeqCst)
    }

    /// Lets `gate` calls through, as `release` does.
    pub fn open_gate(&self) {
        self.gate.send_replace(true);
    }
}

/// Sets a flag when dropped: proves a handler's future was dropped.
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The arguments of `echo`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// `echo`: answers its `text` argument.
pub fn echo() -> ToolBuilder {
    tool("echo")
        .description("Echoes")
        .handler(|_: Context, a: Text| async move { Ok(a.text) })
}

/// `gate`: sets [`Probe::waiting`], then waits until `release` (or [`Probe::open_gate`])
/// opens the gate; answers `passed`.
pub fn gate(probe: &Probe) -> ToolBuilder {
    let (gate, waiting) = (probe.gate.clone(), probe.waiting.clone());
    tool("gate")
        .description("Waits for release")
        .json_handler(move |_: Context, _: Value| {
            let mut open = gate.subscribe();
            waiting.store(true, Ordering::SeqCst);
            async move {
                let _ = open.wait_for(|o| *o).await;
                Ok("passed")
            }
        })
}

/// `release`: opens the gate of `probe`; answers `released`.
pub fn release(probe: &Probe) -> ToolBuilder {
    let gate = probe.gate.clone();
    tool("release")
        .description("Opens the gate")
        .json_handler(move |_: Context, _: Value| {
            gate.send_replace(true);
            async move { Ok("released") }
        })
}

/// `hang`: sets [`Probe::started`] and never ends; [`Probe::dropped`] is set when its
/// future is dropped. With `report_progress`, it first reports progress once (message
/// `started`) when the request asked for progress.
pub fn hang(probe: &Probe, report_progress: bool) -> ToolBuilder {
    let (started, dropped) = (probe.started.clone(), probe.dropped.clone());
    tool("hang")
        .description("Never ends")
        .json_handler(move |ctx: Context, _: Value| {
            let (started, dropped) = (started.clone(), dropped.clone());
            async move {
                let _guard = DropFlag(dropped);
                if report_progress {
                    ctx.progress(1.0, None, Some("started")).await;
                }
                started.store(true, Ordering::SeqCst);
                std::future::pending::<()>().await;
                Ok("unreachable")
            }
        })
}

/// `count`: adds one to [`Probe::counted`] and answers `len` bytes of text.
pub fn count(probe: &Probe, len: usize) -> ToolBuilder {
    let counted = probe.counted.clone();
    tool("count")
        .description("Counts")
        .json_handler(move |_: Context, _: Value| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok("c".repeat(len)) }
        })
}

/// `whoami`: answers the principal's id, or `anonymous`.
pub fn whoami() -> ToolBuilder {
    tool("whoami")
        .description("Names the principal")
        .json_handler(|ctx: Context, _: Value| async move {
            Ok(ctx
                .principal()
                .map_or("anonymous".to_owned(), |p| p.id().to_owned()))
        })
}

/// A secret in [`panicking`]'s panic message, which no answer may repeat.
pub const PANIC_SECRET: &str = "sk-secret";

/// `ok`: answers `fine`, the good call between panicking ones.
pub fn fine() -> ToolBuilder {
    tool("ok")
        .description("Fine")
        .handler(|| async { Ok("fine") })
}

/// A tool named `name` whose handler panics with a message holding [`PANIC_SECRET`].
pub fn panicking(name: &str) -> ToolBuilder {
    tool(name)
        .description("Panics")
        .json_handler(|_: Context, _: Value| async move {
            if std::hint::black_box(true) {
                panic!("the key is {PANIC_SECRET}");
            }
            Ok("unreachable")
        })
}

/// The answer to a call of the [`panicking`] tool `name`: `-32603`, a message naming the
/// tool and nothing of the panic's message.
pub fn assert_panicked(r: &Value, name: &str) {
    assert_eq!(rpc::error_code(r), -32603, "{r}");
    assert_eq!(
        r["error"]["message"].as_str(),
        Some(format!("Internal error in handler for tools/call \"{name}\"").as_str()),
        "{r}"
    );
    assert!(!r.to_string().contains(PANIC_SECRET), "{r}");
}
