//! Connecting to the server: Streamable HTTP (`--url`) or a child process on stdio
//! (`--stdio "COMMAND"`), with the bearer token and the timeout.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use ferry_client::{Client, InputHandler};

use crate::arguments::UsageError;
use crate::cli::ServerArgs;
use crate::login::SignIn;

/// How many of the server's last stderr lines are kept, to explain a failed start.
const STDERR_TAIL: usize = 20;

/// Splits a `--stdio` command line like a POSIX shell would (quotes, backslashes), without
/// running a shell.
pub fn split_command(line: &str) -> Result<Vec<String>, UsageError> {
    let words = shlex::split(line).ok_or_else(|| {
        UsageError::new(format!(
            "--stdio {line:?}: unbalanced quotes or a trailing backslash"
        ))
    })?;
    if words.is_empty() {
        return Err(UsageError::new(
            "--stdio needs a command, e.g. --stdio \"ferry-everything --stdio\"",
        ));
    }
    Ok(words)
}

/// The last lines a stdio server wrote to its stderr.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == STDERR_TAIL {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// A connected client, and for stdio, the server's stderr.
pub struct Connection {
    /// The client.
    pub client: Client,
    /// The stdio server's last stderr lines (empty for HTTP).
    pub stderr: StderrTail,
}

/// Connects to the server the options name, with `handler` answering its questions.
///
/// Over HTTP without `--token`, the client carries ferry's OAuth sign-in: a kept
/// sign-in is used (and refreshed); a server that asks for one gets it after asking the
/// user when `interactive`, and is told to run `ferry login` otherwise.
pub async fn connect(
    server: &ServerArgs,
    handler: Arc<dyn InputHandler>,
    interactive: bool,
) -> anyhow::Result<Connection> {
    let mut builder = Client::builder()
        .client_info("ferry", env!("CARGO_PKG_VERSION"))
        .timeout(server.timeout)
        .probe_timeout(server.timeout.min(Duration::from_secs(10)))
        .shared_input_handler(handler);
    let stderr = StderrTail::default();
    let target;
    match (&server.url, &server.stdio) {
        (Some(url), None) => {
            builder = builder.http(url.clone());
            if let Some(token) = &server.token {
                builder = builder.bearer_token(token.expose());
            } else {
                let mode = if interactive {
                    SignIn::Ask
                } else {
                    SignIn::Refuse
                };
                match crate::login::authorizer(url, mode, server) {
                    Ok(oauth) => builder = builder.authorizer(oauth),
                    Err(e) => tracing::warn!(error = %e, "signing in is not possible"),
                }
            }
            target = url.clone();
        }
        (None, Some(line)) => {
            let words = split_command(line)?;
            if server.token.is_some() {
                tracing::debug!("--token is not used with --stdio");
            }
            let mut command = tokio::process::Command::new(&words[0]);
            command.args(&words[1..]);
            command.stderr(capture_stderr(stderr.clone())?);
            builder = builder.stdio(command);
            target = words[0].clone();
        }
        (None, None) => {
            return Err(UsageError::new(
                "which server? Give --url URL (Streamable HTTP) or --stdio \"COMMAND\"; or try `ferry demo`",
            )
            .into());
        }
        (Some(_), Some(_)) => {
            return Err(UsageError::new("give either --url or --stdio, not both").into());
        }
    }
    match builder.build().await {
        Ok(client) => {
            tracing::info!(server = %target, era = ?client.era(), version = %client.protocol_version(), "connected");
            Ok(Connection { client, stderr })
        }
        Err(e) => {
            // Give the process a moment to write why it failed.
            if server.stdio.is_some() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let tail = stderr.lines();
            let context = if tail.is_empty() {
                format!("could not connect to {target}")
            } else {
                format!(
                    "could not connect to {target} (its last lines on stderr:\n  {})",
                    tail.join("\n  ")
                )
            };
            Err(anyhow::Error::new(e).context(context))
        }
    }
}

/// A pipe for the child's stderr: its lines are logged (shown with `-v`) and the last few
/// kept.
fn capture_stderr(tail: StderrTail) -> anyhow::Result<std::process::Stdio> {
    let (reader, writer) =
        std::io::pipe().context("could not create a pipe for the server's stderr")?;
    std::thread::Builder::new()
        .name("server-stderr".into())
        .spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                tracing::info!(target: "ferry::server", "{line}");
                tail.push(line);
            }
        })
        .context("could not start the stderr reader")?;
    Ok(writer.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split_command("ferry-everything --stdio").unwrap(),
            ["ferry-everything", "--stdio"]
        );
        assert_eq!(
            split_command(r#"python3 -m "my server" --name='a b' c\ d"#).unwrap(),
            ["python3", "-m", "my server", "--name=a b", "c d"]
        );
        assert_eq!(
            split_command("  spaced   out  ").unwrap(),
            ["spaced", "out"]
        );
    }

    #[test]
    fn refuses_broken_command_lines() {
        assert!(split_command("").unwrap_err().0.contains("needs a command"));
        assert!(split_command("   ").is_err());
        assert!(
            split_command("server \"unclosed")
                .unwrap_err()
                .0
                .contains("unbalanced")
        );
    }

    #[test]
    fn the_tail_keeps_the_last_lines() {
        let t = StderrTail::default();
        for i in 0..25 {
            t.push(format!("line {i}"));
        }
        let lines = t.lines();
        assert_eq!(lines.len(), STDERR_TAIL);
        assert_eq!(lines[0], "line 5");
        assert_eq!(lines[19], "line 24");
    }
}
