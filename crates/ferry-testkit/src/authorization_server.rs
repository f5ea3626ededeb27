//! A real OAuth 2.1 authorization server for tests: `oidc-provider` (npm) run by Node.js
//! from `tools/oidc-provider/` on a free loopback port, with dynamic client
//! registration, PKCE, resource indicators issuing JWT access tokens, and its
//! development sign-in and consent pages (any login and password sign in).
//!
//! `npm ci --prefix tools/oidc-provider` installs it (`.ci/run` does). When Node.js or
//! the package is missing, [`AuthorizationServer::start`] returns `None`, except under
//! `FERRY_CI`, where it fails the test.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// A running authorization server; stopped when dropped.
pub struct AuthorizationServer {
    child: Child,
    _stdin: ChildStdin,
    issuer: String,
}

fn directory() -> PathBuf {
    match std::env::var_os("FERRY_OIDC_PROVIDER_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tools/oidc-provider"),
    }
}

impl AuthorizationServer {
    /// Starts the server, offering `scopes` (granted to every resource), or `None` when
    /// Node.js or the package is not installed (outside CI).
    pub fn start(scopes: &[&str]) -> Option<AuthorizationServer> {
        Self::start_with_clients(scopes, &[])
    }

    /// [`start`](AuthorizationServer::start) with pre-registered confidential clients
    /// (`(client_id, client_secret)`) allowed the client credentials grant.
    pub fn start_with_clients(
        scopes: &[&str],
        clients: &[(&str, &str)],
    ) -> Option<AuthorizationServer> {
        let dir = directory();
        let installed = dir.join("node_modules/oidc-provider").is_dir();
        let node = Command::new("node")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !(installed && node) {
            let why = format!(
                "the authorization server needs Node.js and `npm ci --prefix {}`",
                dir.display()
            );
            if std::env::var_os("FERRY_CI").is_some() {
                panic!("{why}");
            }
            eprintln!("skipped: {why}");
            return None;
        }
        let mut command = Command::new("node");
        command.arg(dir.join("server.mjs"));
        for scope in scopes {
            command.arg("--scope").arg(scope);
        }
        for (id, secret) in clients {
            command.arg("--client").arg(format!("{id}:{secret}"));
        }
        let mut child = command
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(issuer) = line.strip_prefix("issuer ") {
                    let _ = tx.send(issuer.to_owned());
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let issuer = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("the authorization server did not start within 30 s")
            });
        Some(AuthorizationServer {
            child,
            _stdin: stdin,
            issuer,
        })
    }

    /// The issuer identifier, `http://127.0.0.1:PORT`.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
