//! What the `ferry` binary tests share: ferry-everything served in-process over HTTP on
//! 127.0.0.1, the `ferry` binary in a pseudo-terminal (expectrl) or with pipes, and the
//! example server on stdio (`ferry demo --serve-stdio`).
//!
//! Every wait has a deadline. The child's environment is cleaned: no DISPLAY, BROWSER
//! or token from the developer's session, and no colours.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession;
use expectrl::{Eof, Expect};
use ferry_everything::app::{StaticTokens, app};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use tokio::sync::oneshot;

/// How long any one wait may take.
pub const WAIT: Duration = Duration::from_secs(30);

/// Arrow down.
pub const DOWN: &str = "\x1b[B";
/// Enter.
pub const ENTER: &str = "\r";
/// Escape.
pub const ESC: &str = "\x1b";
/// Ctrl-C.
pub const CTRL_C: &str = "\x03";

/// ferry-everything serving HTTP on 127.0.0.1 from its own runtime; stops when dropped.
pub struct Everything {
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    stop: Option<oneshot::Sender<()>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Everything {
    /// Starts the server.
    pub fn start() -> Everything {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the test server");
        let (stop, stopped) = oneshot::channel::<()>();
        let addr = runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind 127.0.0.1:0");
            let addr = listener.local_addr().expect("local address");
            let everything = build(Options {
                public_url: format!("http://{addr}"),
                ..Options::default()
            })
            .expect("ferry-everything builds");
            let server = everything.server.clone();
            let app = app(
                everything,
                HttpConfig::default(),
                StaticTokens::new(),
                false,
            )
            .expect("the application builds");
            tokio::spawn(async move {
                let _ = axum::serve(listener, app.into_make_service())
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                        server.shutdown();
                    })
                    .await;
            });
            addr
        });
        Everything {
            url: format!("http://{addr}/mcp"),
            addr: addr.to_string(),
            stop: Some(stop),
            runtime: Some(runtime),
        }
    }

    /// Submits the connect page for the link token `t` (what the user's browser would do).
    pub fn finish_connect_page(&self, t: &str) -> String {
        let body = format!("t={t}");
        let mut stream = TcpStream::connect(&self.addr).expect("connect to the test server");
        stream.set_read_timeout(Some(WAIT)).expect("read timeout");
        write!(
            stream,
            "POST /connect HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .expect("send the form");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("read the page");
        response
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

/// `ferry` with a clean environment.
pub fn ferry() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferry"));
    for var in [
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "BROWSER",
        "FERRY_TOKEN",
        "FERRY_CLIENT_ID",
        "FERRY_CLIENT_SECRET",
        "FERRY_LOG",
        "RUST_LOG",
        "CLICOLOR_FORCE",
    ] {
        cmd.env_remove(var);
    }
    // Sign-ins go to a directory of the test run, never to the developer's own.
    let tokens = std::env::temp_dir().join(format!("ferry-test-tokens-{}", std::process::id()));
    cmd.env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .env("FERRY_TOKEN_DIR", tokens);
    cmd
}

/// `ferry ARGS` in a pseudo-terminal.
pub fn pty(args: &[&str]) -> OsSession {
    let mut cmd = ferry();
    cmd.args(args);
    let mut session = OsSession::spawn(cmd).expect("start ferry in a pseudo-terminal");
    session.set_expect_timeout(Some(WAIT));
    session
}

/// Waits for `text` on the terminal.
pub fn expect(session: &mut OsSession, text: &str) -> String {
    match session.expect(text) {
        Ok(found) => String::from_utf8_lossy(found.before()).into_owned(),
        Err(e) => panic!("waiting for {text:?}: {e}"),
    }
}

/// Waits for a regular expression; returns its first group.
pub fn expect_regex(session: &mut OsSession, re: &str) -> String {
    match session.expect(expectrl::Regex(re)) {
        Ok(found) => {
            String::from_utf8_lossy(found.get(1).or(found.get(0)).unwrap_or_default()).into_owned()
        }
        Err(e) => panic!("waiting for /{re}/: {e}"),
    }
}

/// Types `keys`.
pub fn send(session: &mut OsSession, keys: &str) {
    session.send(keys).expect("type into the terminal");
}

/// Waits for the end of the output and the exit; returns the exit code.
pub fn finish(mut session: OsSession) -> i32 {
    if let Err(e) = session.expect(Eof) {
        panic!("waiting for ferry to finish: {e}");
    }
    let deadline = Instant::now() + WAIT;
    loop {
        match session.get_process().status() {
            Ok(WaitStatus::Exited(_, code)) => return code,
            Ok(WaitStatus::Signaled(_, signal, _)) => panic!("ferry was killed by {signal:?}"),
            Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            other => panic!("ferry did not exit in time: {other:?}"),
        }
    }
}

/// Runs `cmd` without a terminal (stdin closed) and returns its output; fails after
/// [`WAIT`].
pub fn run(mut cmd: Command) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start ferry");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll ferry") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ferry did not finish within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `--stdio` command line starting the example server: `ferry demo --serve-stdio`,
/// from the binary this package builds (no nested cargo build).
pub fn everything_stdio() -> String {
    let bin = env!("CARGO_BIN_EXE_ferry");
    let quoted = shlex::try_quote(bin).expect("quotable path");
    format!("{quoted} demo --serve-stdio")
}
