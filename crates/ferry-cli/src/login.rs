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
use console::style;
use ferry_client::ferry_oauth::{
    AuthError, FileTokenStore, Grant, LoopbackRedirect, OAuthAuthorizer, StaticClient,
};
use url::Url;

use crate::arguments::UsageError;
use crate::cli::ServerArgs;
use crate::commands::Outcome;

/// `ferry login`.
#[derive(Args, Debug, Clone, Default)]
pub struct LoginArgs {
    /// The server's Streamable HTTP endpoint (or give --url).
    #[arg(value_name = "URL")]
    pub server: Option<String>,

    /// Print the sign-in page's address instead of opening a browser.
    #[arg(long)]
    pub no_browser: bool,

    /// Ask for this scope (repeatable) instead of every scope the server lists.
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
}

/// `ferry logout`.
#[derive(Args, Debug, Clone, Default)]
pub struct LogoutArgs {
    /// The server's Streamable HTTP endpoint (or give --url).
    #[arg(value_name = "URL")]
    pub server: Option<String>,
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

/// An authorizer with ferry's token store, for the server at `url`: the client
/// credentials grant when `server` has a client id and secret, the authorization code
/// flow (with a pre-registered client id, if given) otherwise.
pub fn authorizer(url: &str, mode: SignIn, server: &ServerArgs) -> anyhow::Result<OAuthAuthorizer> {
    let dir = token_dir()?;
    let store = FileTokenStore::new(&dir)
        .with_context(|| format!("opening the sign-in store {}", dir.display()))?;
    let login_hint = format!("ferry login {url}");
    let redirect =
        LoopbackRedirect::bind()?.on_open(move |page| open_page(page, mode, &login_hint));
    let mut builder = OAuthAuthorizer::builder()
        .client_name("ferry")
        .redirect_handler(redirect)
        .store(Arc::new(store));
    match (&server.client_id, &server.client_secret) {
        (Some(id), Some(secret)) => {
            builder = builder
                .grant(Grant::ClientCredentials)
                .static_client(StaticClient::new(id.clone()).secret(secret.expose()));
        }
        (Some(id), None) => builder = builder.static_client(StaticClient::new(id.clone())),
        (None, Some(_)) => {
            return Err(UsageError::new("--client-secret needs --client-id").into());
        }
        (None, None) => {}
    }
    Ok(builder.build()?)
}

/// Shows the authorization page as `mode` says, its host in bold on a terminal so the
/// user sees where they are about to sign in.
fn open_page(page: &Url, mode: SignIn, login_hint: &str) -> Result<(), AuthError> {
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let host = page.host_str().unwrap_or_default().to_owned();
    let shown_host = style(&host).for_stderr().bold().to_string();
    let open_browser = match mode {
        SignIn::Refuse => {
            return Err(AuthError::Redirect(format!(
                "the server needs you to sign in: run `{login_hint}` first"
            )));
        }
        SignIn::Ask => {
            if !confirm(&format!(
                "The server needs you to sign in at {shown_host}. Open the sign-in page in your browser?"
            )) {
                return Err(AuthError::Redirect(format!(
                    "not signed in (run `{login_hint}` to sign in later)"
                )));
            }
            true
        }
        SignIn::Login { open_browser } => {
            open_browser
                && (!terminal
                    || confirm(&format!(
                        "Open the sign-in page at {shown_host} in your browser?"
                    )))
        }
    };
    let shown = page.as_str().replacen(&host, &shown_host, 1);
    eprintln!("Sign in at: {shown}");
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

/// The server a login or logout is for: the positional URL, else `--url`.
fn server_url(server: &ServerArgs, positional: Option<&str>, command: &str) -> anyhow::Result<Url> {
    if server.stdio.is_some() {
        return Err(UsageError::new(format!(
            "{command} is for servers over HTTP; a stdio server has no sign-in"
        ))
        .into());
    }
    let url = match (positional, server.url.as_deref()) {
        (Some(a), Some(b)) if a != b => {
            return Err(UsageError::new(format!(
                "two servers given ({a} and --url {b}); give one"
            ))
            .into());
        }
        (Some(url), _) | (None, Some(url)) => url,
        (None, None) => {
            return Err(UsageError::new(format!(
                "which server? ferry {command} https://example.com/mcp"
            ))
            .into());
        }
    };
    Url::parse(url).map_err(|e| UsageError::new(format!("{url:?}: {e}")).into())
}

/// `ferry login`: signs in to the server's authorization server and keeps the tokens.
pub async fn login(server: &ServerArgs, args: &LoginArgs) -> anyhow::Result<Outcome> {
    let url = server_url(server, args.server.as_deref(), "login")?;
    let oauth = authorizer(
        url.as_str(),
        SignIn::Login {
            open_browser: !args.no_browser,
        },
        server,
    )?;
    let signing_in = async {
        if args.scopes.is_empty() {
            oauth.authorize(&url).await
        } else {
            oauth.authorize_with_scopes(&url, args.scopes.clone()).await
        }
    };
    tokio::time::timeout(
        server.timeout.max(std::time::Duration::from_secs(300)),
        signing_in,
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
pub async fn logout(server: &ServerArgs, args: &LogoutArgs) -> anyhow::Result<Outcome> {
    let url = server_url(server, args.server.as_deref(), "logout")?;
    let oauth = authorizer(url.as_str(), SignIn::Refuse, server)?;
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
