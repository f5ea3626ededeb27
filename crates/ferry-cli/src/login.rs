//! Signing in to servers that use OAuth: `ferry login`, `ferry logout`, and the
//! authorizer every `--url` command carries, so a stored sign-in is used (and refreshed)
//! without asking, and a server that asks for one on a terminal gets it.
//!
//! Tokens and client registrations are kept per authorization server in
//! `$FERRY_TOKEN_DIR`, else `$XDG_CONFIG_HOME/ferry/tokens`, else
//! `~/.config/ferry/tokens` (owner-only files; see `ferry_oauth::FileTokenStore`).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use ferry_client::ferry_oauth::{
    AuthError, FileTokenStore, LoopbackRedirect, OAuthAuthorizer, StaticClient,
};
use url::Url;

use crate::arguments::UsageError;
use crate::cli::{Secret, ServerArgs};
use crate::commands::Outcome;

/// `ferry login`.
#[derive(Args, Debug, Clone, Default)]
pub struct LoginArgs {
    /// Print the sign-in page's address instead of opening a browser.
    #[arg(long)]
    pub no_browser: bool,

    /// A client id registered with the authorization server beforehand (otherwise
    /// ferry registers itself, when the server allows it).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,

    /// The secret of --client-id, for a confidential client. Never printed or logged.
    #[arg(
        long,
        value_name = "SECRET",
        env = "FERRY_CLIENT_SECRET",
        hide_env_values = true,
        requires = "client_id"
    )]
    pub client_secret: Option<Secret>,
}

/// Where sign-ins are kept.
pub fn token_dir() -> anyhow::Result<PathBuf> {
    let from = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    if let Some(dir) = from("FERRY_TOKEN_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(config) = from("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(config).join("ferry").join("tokens"));
    }
    match from("HOME") {
        Some(home) => Ok(PathBuf::from(home)
            .join(".config")
            .join("ferry")
            .join("tokens")),
        None => Err(UsageError::new(
            "no place for sign-ins: set FERRY_TOKEN_DIR (or HOME or XDG_CONFIG_HOME)",
        )
        .into()),
    }
}

/// How the authorization page reaches the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignIn {
    /// `ferry login`: print the address, and open a browser unless `--no-browser`.
    Login {
        /// Open a browser (after asking, on a terminal).
        open_browser: bool,
    },
    /// Another command on a terminal: ask before signing in.
    Ask,
    /// No one to ask: refuse, naming `ferry login`.
    Refuse,
}

/// An authorizer with ferry's token store, for the server at `url`.
pub fn authorizer(
    url: &str,
    mode: SignIn,
    client: Option<StaticClient>,
) -> anyhow::Result<OAuthAuthorizer> {
    let dir = token_dir()?;
    let store = FileTokenStore::new(&dir)
        .with_context(|| format!("opening the sign-in store {}", dir.display()))?;
    let login_hint = format!("ferry --url {url} login");
    let redirect =
        LoopbackRedirect::bind()?.on_open(move |page| open_page(page, mode, &login_hint));
    let mut builder = OAuthAuthorizer::builder()
        .client_name("ferry")
        .redirect_handler(redirect)
        .store(Arc::new(store));
    if let Some(client) = client {
        builder = builder.static_client(client);
    }
    Ok(builder.build()?)
}

/// Shows the authorization page as `mode` says.
fn open_page(page: &Url, mode: SignIn, login_hint: &str) -> Result<(), AuthError> {
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let open_browser = match mode {
        SignIn::Refuse => {
            return Err(AuthError::Redirect(format!(
                "the server needs you to sign in: run `{login_hint}` first"
            )));
        }
        SignIn::Ask => {
            if !confirm("The server needs you to sign in. Open the sign-in page in your browser?") {
                return Err(AuthError::Redirect(format!(
                    "not signed in (run `{login_hint}` to sign in later)"
                )));
            }
            true
        }
        SignIn::Login { open_browser } => {
            open_browser && (!terminal || confirm("Open the sign-in page in your browser?"))
        }
    };
    eprintln!("Sign in at: {page}");
    if open_browser && let Err(e) = webbrowser::open(page.as_str()) {
        eprintln!("(could not open a browser: {e}; open the address above yourself)");
    }
    eprintln!("Waiting for the browser to come back...");
    Ok(())
}

/// Asks a yes/no question on the terminal; yes unless the answer starts with n.
fn confirm(question: &str) -> bool {
    eprint!("{question} [Y/n] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    !line.trim().to_ascii_lowercase().starts_with('n')
}

fn server_url(server: &ServerArgs, command: &str) -> anyhow::Result<Url> {
    if server.stdio.is_some() {
        return Err(UsageError::new(format!(
            "{command} is for servers over HTTP (--url); a stdio server has no sign-in"
        ))
        .into());
    }
    let url = server.url.as_deref().ok_or_else(|| {
        UsageError::new(format!(
            "which server? ferry --url https://example.com/mcp {command}"
        ))
    })?;
    Url::parse(url).map_err(|e| UsageError::new(format!("--url {url:?}: {e}")).into())
}

/// `ferry login`: signs in to the server's authorization server and keeps the tokens.
pub async fn login(server: &ServerArgs, args: &LoginArgs) -> anyhow::Result<Outcome> {
    let url = server_url(server, "login")?;
    let client = args.client_id.as_ref().map(|id| {
        let client = StaticClient::new(id.clone());
        match &args.client_secret {
            Some(secret) => client.secret(secret.expose()),
            None => client,
        }
    });
    let oauth = authorizer(
        url.as_str(),
        SignIn::Login {
            open_browser: !args.no_browser,
        },
        client,
    )?;
    tokio::time::timeout(
        server.timeout.max(std::time::Duration::from_secs(300)),
        oauth.authorize(&url),
    )
    .await
    .map_err(|_| anyhow::anyhow!("signing in took too long"))?
    .with_context(|| format!("signing in to {url}"))?;
    eprintln!(
        "Signed in to {url}. The sign-in is kept in {}.",
        token_dir()?.display()
    );
    Ok(Outcome::Success)
}

/// `ferry logout`: forgets the tokens kept for the server.
pub async fn logout(server: &ServerArgs) -> anyhow::Result<Outcome> {
    let url = server_url(server, "logout")?;
    let oauth = authorizer(url.as_str(), SignIn::Refuse, None)?;
    let held = oauth
        .sign_out(&url)
        .await
        .with_context(|| format!("signing out of {url}"))?;
    if held {
        eprintln!("Signed out of {url}.");
    } else {
        eprintln!("Not signed in to {url}; nothing to forget.");
    }
    Ok(Outcome::Success)
}
