//! `ferry login` and `ferry logout` against a real authorization server
//! (`oidc-provider`, `ferry_testkit::authorization_server`) protecting ferry-everything,
//! with the sign-in and consent pages clicked through in headless Chromium.
//!
//! Before signing in, a command without a terminal is refused with the `ferry login`
//! line to run, and on a terminal it asks before opening the sign-in page. `ferry login
//! --no-browser --scope files:read` registers ferry with the authorization server, prints
//! the sign-in page and waits for the browser to come back to 127.0.0.1; the tokens are
//! kept in an owner-only file and later commands use them. The scope-guarded
//! `confirm_delete` then meets a 403 `insufficient_scope` and steps up (the browser
//! consents to `files:delete`), a `requestState` minted for alice is refused for bob, and
//! `ferry logout` forgets the sign-in. A script signs in with the client credentials
//! grant (`--client-id`/`--client-secret`) and no browser.

mod support;

use std::future::IntoFuture;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ferry_everything::app;
use ferry_everything::sandbox::Sandbox;
use ferry_http::HttpConfig;
use ferry_testkit::authorization_server::AuthorizationServer;
use ferry_testkit::browser::Browser;
use support::{expect, ferry, finish, run, send, stderr, stdout};

/// ferry-everything requiring tokens from `issuer`, served from its own runtime.
struct Protected {
    url: String,
    _runtime: tokio::runtime::Runtime,
}

fn protected_server(issuer: &str, sandbox: &std::path::Path) -> Protected {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let issuer = issuer.to_owned();
    let sandbox = Sandbox::open(sandbox).expect("the sandbox folder");
    let url = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let protected = app::protected(
            listener,
            &issuer,
            HttpConfig::default(),
            Some(Arc::new(sandbox)),
        )
        .expect("the protected server builds");
        tokio::spawn(protected.serve.into_future());
        protected.resource
    });
    Protected {
        url,
        _runtime: runtime,
    }
}

fn ferry_with(tokens: &std::path::Path, url: &str, args: &[&str]) -> std::process::Command {
    let mut cmd = ferry();
    cmd.env("FERRY_TOKEN_DIR", tokens)
        .arg("--url")
        .arg(url)
        .args(args);
    cmd
}

/// Clicks through oidc-provider's pages at `page`: the sign-in (as `login`, when the
/// browser has no session there yet) and the consent; returns the text of the page the
/// browser lands on (ferry's loopback page).
async fn sign_in(browser: &Browser, page: &str, login: &str) -> String {
    browser.open(page).await;
    if browser.text("h1").await.contains("Sign-in") {
        browser.type_into("input[name=login]", login).await;
        browser
            .type_into("input[name=password]", "any password")
            .await;
        browser.click("button[type=submit]").await;
        // Wait for the consent page: until it has loaded, the sign-in page's own button
        // matches the selector below, and a click on it would be lost.
        for _ in 0..100 {
            if !browser.text("h1").await.contains("Sign-in") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // The consent page: one "Continue" button.
    browser.click("button[type=submit]").await;
    for _ in 0..100 {
        if browser.current_url().await.contains("/callback") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    browser.text("body").await
}

/// `ferry login URL --no-browser ARGS` signing in through `browser` as `login`.
fn login_as(
    runtime: &tokio::runtime::Runtime,
    browser: &Browser,
    tokens: &std::path::Path,
    server: &Protected,
    issuer: &str,
    login: &str,
    args: &[&str],
) {
    let mut cmd = ferry();
    cmd.env("FERRY_TOKEN_DIR", tokens)
        .args(["login", &server.url, "--no-browser"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("ferry login starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let page = loop {
        let line = lines
            .next()
            .expect("ferry login prints the sign-in page")
            .expect("stderr");
        if let Some(page) = line.strip_prefix("Sign in at: ") {
            break page.to_owned();
        }
    };
    assert!(
        page.starts_with(issuer),
        "the authorization server's page: {page}"
    );
    assert!(page.contains("code_challenge_method=S256"), "{page}");
    assert!(
        page.contains(&format!("resource={}", url_encode(&server.url))),
        "RFC 8707 resource: {page}"
    );
    let landed = runtime.block_on(sign_in(browser, &page, login));
    assert!(landed.contains("Signed in"), "the loopback page: {landed}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("ferry login ends");
    assert!(status.success(), "ferry login failed: {rest:?}");
    assert!(
        rest.iter().any(|l| l.starts_with("Signed in to")),
        "{rest:?}"
    );
}

/// A library client using the sign-in kept in `tokens` (no browser).
async fn client_of(tokens: &std::path::Path, url: &str) -> ferry_client::Client {
    use ferry_client::ferry_oauth::{FileTokenStore, LoopbackRedirect, OAuthAuthorizer};
    let oauth = OAuthAuthorizer::builder()
        .redirect_handler(LoopbackRedirect::bind().expect("bind").on_open(|_| {
            Err(ferry_client::ferry_oauth::AuthError::Redirect(
                "no browser in this test".into(),
            ))
        }))
        .store(Arc::new(FileTokenStore::new(tokens).expect("store")))
        .build()
        .expect("authorizer");
    ferry_client::Client::builder()
        .http(url)
        .tasks(false)
        .input_handler(ferry_client::handler::FnHandler::new().on_form(|_| async {
            ferry_client::ferry_protocol::elicitation::ElicitResult::decline()
        }))
        .authorizer(oauth)
        .build()
        .await
        .expect("connects with the kept sign-in")
}

#[test]
fn login_keeps_a_sign_in_that_later_commands_use_and_logout_forgets_it() {
    let Some(authorization) = AuthorizationServer::start_with_clients(
        &["files:read", "files:delete"],
        &[("ferry-ci", "ci-secret-5d1f")],
    ) else {
        return;
    };
    if !ferry_testkit::browser::available() {
        return;
    }
    let tokens = tempfile::tempdir().expect("token dir");
    let sandbox = tempfile::tempdir().expect("a sandbox folder");
    let file = sandbox.path().join("report.txt");
    std::fs::write(&file, "x").expect("write");
    let server = protected_server(authorization.issuer(), sandbox.path());
    let target = "report.txt";

    // Not signed in, no terminal: refused, naming the command to run.
    let out = run(ferry_with(tokens.path(), &server.url, &["tools"]));
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("ferry login {}", server.url)),
        "{err}"
    );

    // On a terminal, it asks before opening the sign-in page; "n" leaves it.
    let mut session = {
        let mut cmd = ferry_with(tokens.path(), &server.url, &["tools"]);
        cmd.env("BROWSER", "false");
        let mut session =
            expectrl::session::OsSession::spawn(cmd).expect("ferry in a pseudo-terminal");
        session.set_expect_timeout(Some(support::WAIT));
        session
    };
    expect(&mut session, "Open the sign-in page in your browser? [Y/n]");
    send(&mut session, "n\r");
    expect(&mut session, "not signed in");
    assert_ne!(finish(session), 0);

    // ferry login --no-browser --scope files:read prints the page and waits for the
    // browser.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let browser = runtime
        .block_on(Browser::start())
        .expect("the browser starts");
    login_as(
        &runtime,
        &browser,
        tokens.path(),
        &server,
        authorization.issuer(),
        "alice",
        &["--scope", "files:read"],
    );

    // The sign-in is kept, readable by the owner only.
    let files: Vec<_> = std::fs::read_dir(tokens.path())
        .expect("token dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "one record for the one issuer: {files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&files[0])
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "owner-only: {mode:o}");
    }

    // Later commands use it without a terminal.
    let out = run(ferry_with(
        tokens.path(),
        &server.url,
        &["call", "echo", "text=signed in"],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "signed in");

    // confirm_delete needs files:delete: the 403 asks for a step-up, which needs the
    // browser; without a terminal that is refused with the login line.
    let delete = [
        "call",
        "confirm_delete",
        &format!("path={target}"),
        "--answers",
        r#"{"confirm": true}"#,
    ];
    let out = run(ferry_with(tokens.path(), &server.url, &delete));
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("ferry login"), "{}", stderr(&out));

    // On a terminal it asks, opens the page ($BROWSER records it here), and the browser
    // consents to the wider scope; the call then completes.
    let opened = tokens.path().join("opened-url");
    let script = sandbox.path().join("browser.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > {}.tmp && mv {0}.tmp {0}\n",
            opened.display()
        ),
    )
    .expect("write the browser script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let mut cmd = ferry_with(tokens.path(), &server.url, &delete);
    cmd.env("BROWSER", &script);
    let mut session = expectrl::session::OsSession::spawn(cmd).expect("ferry in a pseudo-terminal");
    session.set_expect_timeout(Some(support::WAIT));
    expect(&mut session, "Open the sign-in page in your browser? [Y/n]");
    send(&mut session, "y\r");
    let mut page = None;
    for _ in 0..200 {
        if let Ok(url) = std::fs::read_to_string(&opened) {
            page = Some(url);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let page = page.expect("the step-up page was opened");
    assert!(
        page.contains("files%3Adelete"),
        "the step-up asks for files:delete: {page}"
    );
    let landed = runtime.block_on(sign_in(&browser, &page, "alice"));
    assert!(landed.contains("Signed in"), "{landed}");
    expect(&mut session, "Deleted report.txt (1 byte) from ");
    assert_eq!(finish(session), 0);
    assert!(!file.exists(), "the file is gone");

    // bob signs in (his own browser session); a requestState minted for alice is refused
    // for him.
    let bob_tokens = tempfile::tempdir().expect("bob's token dir");
    let bob_browser = runtime
        .block_on(Browser::start())
        .expect("bob's browser starts");
    login_as(
        &runtime,
        &bob_browser,
        bob_tokens.path(),
        &server,
        authorization.issuer(),
        "bob",
        &[],
    );
    runtime.block_on(async {
        use ferry_client::ferry_protocol::MrtrResult;
        use ferry_client::{CallOptions, Retry};
        let alice = client_of(tokens.path(), &server.url).await;
        let bob = client_of(bob_tokens.path(), &server.url).await;
        let args = serde_json::json!({"path": "not-bobs.txt"});
        let first = alice
            .call_tool_round(
                "confirm_delete",
                args.clone(),
                &Retry::first(),
                &CallOptions::default(),
            )
            .await
            .expect("round 1");
        let MrtrResult::InputRequired(asked) = first else {
            panic!("confirm_delete asks first");
        };
        let answers = [(
            "confirm".to_owned(),
            serde_json::json!({"action": "accept", "content": {"confirm": true}}),
        )]
        .into_iter()
        .collect();
        let stolen = bob
            .call_tool_round(
                "confirm_delete",
                args,
                &Retry::after(&asked, answers),
                &CallOptions::default(),
            )
            .await;
        let err = stolen.expect_err("alice's state is refused for bob");
        let rpc = err
            .rpc()
            .unwrap_or_else(|| panic!("a JSON-RPC error: {err}"));
        assert_eq!(rpc.code.0, -32602, "{rpc:?}");
    });

    // logout forgets it; the next command is refused again.
    let out = run(ferry_with(tokens.path(), &server.url, &["logout"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("Signed out of"), "{}", stderr(&out));
    let out = run(ferry_with(tokens.path(), &server.url, &["logout"]));
    assert!(stderr(&out).contains("Not signed in"), "{}", stderr(&out));
    let out = run(ferry_with(tokens.path(), &server.url, &["tools"]));
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("login"), "{}", stderr(&out));

    // A script signs in as a registered client (the client credentials grant): no
    // browser, no login step; a wrong secret is refused by the authorization server.
    let script_tokens = tempfile::tempdir().expect("the script's token dir");
    let as_script = |secret: &str| {
        let mut cmd = ferry_with(
            script_tokens.path(),
            &server.url,
            &["call", "echo", "text=from a script"],
        );
        cmd.env("FERRY_CLIENT_ID", "ferry-ci")
            .env("FERRY_CLIENT_SECRET", secret);
        run(cmd)
    };
    let out = as_script("ci-secret-5d1f");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "from a script");
    let wrong = tempfile::tempdir().expect("another token dir");
    let mut cmd = ferry_with(wrong.path(), &server.url, &["tools"]);
    cmd.env("FERRY_CLIENT_ID", "ferry-ci")
        .env("FERRY_CLIENT_SECRET", "not-the-secret");
    let out = run(cmd);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("invalid_client"), "{}", stderr(&out));
}

fn url_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
