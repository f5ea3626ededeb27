//! `ferry login` and `ferry logout` against a real authorization server
//! (`oidc-provider`, `ferry_testkit::authorization_server`) protecting ferry-everything,
//! with the sign-in and consent pages clicked through in headless Chromium.
//!
//! Before signing in, a command without a terminal is refused with the `ferry login`
//! line to run, and on a terminal it asks before opening the sign-in page. `ferry login
//! --no-browser` registers ferry with the authorization server, prints the sign-in page
//! and waits for the browser to come back to 127.0.0.1; the tokens are kept in an
//! owner-only file, and later commands use them (a single-use, scope-guarded
//! `confirm_delete` included). `ferry logout` forgets them.

mod support;

use std::future::IntoFuture;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ferry_everything::app::{AuthOptions, PageState, auth_layer, resource_uri, site};
use ferry_everything::{Options, build};
use ferry_http::{HttpConfig, McpService};
use ferry_testkit::authorization_server::AuthorizationServer;
use ferry_testkit::browser::Browser;
use support::{expect, ferry, finish, run, send, stderr, stdout};

/// ferry-everything requiring tokens from `issuer`, served from its own runtime.
struct Protected {
    url: String,
    _runtime: tokio::runtime::Runtime,
}

fn protected_server(issuer: &str) -> Protected {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let issuer = issuer.to_owned();
    let url = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let public_url = format!("http://{addr}");
        let everything = build(Options {
            public_url: public_url.clone(),
            require_scopes: true,
            ..Options::default()
        })
        .expect("the server builds");
        let auth = AuthOptions {
            issuer: Some(issuer),
            require_auth: true,
            ..AuthOptions::default()
        };
        let resource = resource_uri(&public_url, "/mcp");
        let layer = auth_layer(&auth, &resource).expect("the authorization layer builds");
        let state = Arc::new(PageState {
            connections: everything.connections.clone(),
            links: everything.links.clone(),
            tokens: auth.dev_tokens,
        });
        let serve = ferry_http::serve(
            listener,
            McpService::new(everything.server, HttpConfig::default()),
        )
        .app(site(state, layer.as_ref()))
        .layer(tower::util::option_layer(layer));
        tokio::spawn(serve.into_future());
        resource
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

/// Clicks through oidc-provider's sign-in and consent pages as `login`; returns the
/// text of the page the browser lands on (ferry's loopback page).
async fn sign_in(browser: &Browser, page: &str, login: &str) -> String {
    browser.open(page).await;
    if browser.find("input[name=login]").await.is_none() {
        panic!(
            "no sign-in form at {}: {}",
            browser.current_url().await,
            browser.text("body").await
        );
    }
    browser.type_into("input[name=login]", login).await;
    browser
        .type_into("input[name=password]", "any password")
        .await;
    browser.click("button[type=submit]").await;
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

#[test]
fn login_keeps_a_sign_in_that_later_commands_use_and_logout_forgets_it() {
    let Some(authorization) = AuthorizationServer::start(&["files:read", "files:delete"]) else {
        return;
    };
    if !ferry_testkit::browser::available() {
        return;
    }
    let server = protected_server(authorization.issuer());
    let tokens = tempfile::tempdir().expect("token dir");
    let sandbox = tempfile::tempdir().expect("a file to delete");
    let target = sandbox.path().join("report.txt");
    std::fs::write(&target, "x").expect("write");
    let target = target.display().to_string();

    // Not signed in, no terminal: refused, naming the command to run.
    let out = run(ferry_with(tokens.path(), &server.url, &["tools"]));
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("ferry --url {} login", server.url)),
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

    // ferry login --no-browser prints the page and waits for the browser.
    let mut login = ferry_with(tokens.path(), &server.url, &["login", "--no-browser"]);
    login
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = login.spawn().expect("ferry login starts");
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
        page.starts_with(authorization.issuer()),
        "the page is the authorization server's: {page}"
    );
    assert!(page.contains("code_challenge_method=S256"), "{page}");
    assert!(
        page.contains(&format!("resource={}", url_encode(&server.url))),
        "RFC 8707 resource: {page}"
    );
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let landed = runtime.block_on(async {
        let browser = Browser::start().await.expect("the browser starts");
        sign_in(&browser, &page, "alice").await
    });
    assert!(landed.contains("Signed in"), "the loopback page: {landed}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("ferry login ends");
    assert!(status.success(), "ferry login failed: {rest:?}");
    assert!(
        rest.iter().any(|l| l.starts_with("Signed in to")),
        "{rest:?}"
    );

    // The sign-in is kept, readable by the owner only, and holds no plain secret in a
    // name.
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

    // Later commands use it, without a terminal: a scope-guarded, single-use tool that
    // asks.
    let out = run(ferry_with(
        tokens.path(),
        &server.url,
        &[
            "call",
            "confirm_delete",
            &format!("path={target}"),
            "--answers",
            r#"{"confirm": true}"#,
        ],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), format!("Deleted {target}"));

    // logout forgets it; the next command is refused again.
    let out = run(ferry_with(tokens.path(), &server.url, &["logout"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("Signed out of"), "{}", stderr(&out));
    let out = run(ferry_with(tokens.path(), &server.url, &["logout"]));
    assert!(stderr(&out).contains("Not signed in"), "{}", stderr(&out));
    let out = run(ferry_with(tokens.path(), &server.url, &["tools"]));
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("login"), "{}", stderr(&out));
}

fn url_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
