//! The same handlers on both protocol eras and both transports: `confirm_delete`,
//! `generate_image` and `connect_account`, driven by Ferry's client with one input
//! handler, against a 2026-07-28 client (MRTR rounds) and a 2025-11-25 session (live
//! requests on the back-channel), over Streamable HTTP and stdio.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use ferry_client::ferry_protocol::elicitation::{ElicitResult, ElicitValue};
use ferry_client::{Client, EraMode, FnHandler};
use ferry_everything::app::{StaticTokens, app};
use ferry_everything::{Options, build};
use ferry_http::HttpConfig;
use ferry_testkit::process::ephemeral_port;
use ferry_testkit::serve::Background;
use serde_json::json;

/// Answers like a user would: confirms, picks the square ratio, goes ahead, and for URL
/// mode "opens" the page and submits its form before saying it is done.
fn user(http: reqwest::Client) -> FnHandler {
    FnHandler::new()
        .on_form(|req| {
            let mut content = BTreeMap::new();
            for field in req.fields() {
                let value = match field.name {
                    "confirm" | "go_ahead" => ElicitValue::Bool(true),
                    "aspect_ratio" => ElicitValue::String("1:1".into()),
                    _ => continue,
                };
                content.insert(field.name.to_owned(), value);
            }
            std::future::ready(ElicitResult::accept(content))
        })
        .on_url(move |req| {
            let http = http.clone();
            let url = req.url.clone();
            async move {
                let (base, query) = url.split_once("?t=").expect("a connect link");
                let page = base.to_owned();
                let res = http
                    .post(page)
                    .form(&[("t", query), ("token", "")])
                    .send()
                    .await
                    .expect("the page answers");
                assert!(res.status().is_success(), "page refused: {}", res.status());
                ElicitResult::accept_without_content()
            }
        })
}

async fn http_server() -> SocketAddr {
    Background::start("/mcp", |addr| {
        let everything = build(Options {
            public_url: format!("http://{addr}"),
            ..Options::default()
        })
        .expect("server builds");
        app(
            everything,
            HttpConfig::default(),
            StaticTokens::new(),
            false,
        )
        .expect("the application builds")
    })
    .await
    .detach()
}

async fn exercise(client: &Client, era: &str) {
    let deleted = client
        .call_tool("confirm_delete", json!({"path": "a.txt"}))
        .await
        .unwrap_or_else(|e| panic!("{era}: confirm_delete: {e}"));
    let text = deleted.content[0].as_text().unwrap_or_default();
    assert!(
        text.starts_with("Nothing deleted: a.txt does not exist in "),
        "{era}: {text}"
    );

    let image = client
        .call_tool("generate_image", json!({"prompt": "a calm sea"}))
        .await
        .unwrap_or_else(|e| panic!("{era}: generate_image: {e}"));
    assert_eq!(image.content[0].type_name(), "image", "{era}: {image:?}");
    assert!(
        image.content[1]
            .as_text()
            .is_some_and(|t| t.contains("1:1")),
        "{era}: {image:?}"
    );

    let connected = client
        .call_tool("connect_account", json!({"service": "github"}))
        .await
        .unwrap_or_else(|e| panic!("{era}: connect_account: {e}"));
    assert_eq!(
        connected.content[0].as_text(),
        Some("Connected github"),
        "{era}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_tools_on_both_eras_over_http() {
    let addr = http_server().await;
    for (mode, era) in [
        (EraMode::Modern, "2026-07-28"),
        (EraMode::Legacy, "2025-11-25"),
    ] {
        let client = Client::builder()
            .http(format!("http://{addr}/mcp"))
            .era(mode)
            .input_handler(user(reqwest::Client::new()))
            .build()
            .await
            .expect("connects");
        assert_eq!(client.protocol_version().as_str(), era);
        exercise(&client, era).await;
        client.close().await.expect("closes cleanly");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_tools_on_both_eras_over_stdio() {
    // The process serves MCP on stdio and its connect page over HTTP on a free port.
    let port = ephemeral_port();
    for (mode, era) in [
        (EraMode::Modern, "2026-07-28"),
        (EraMode::Legacy, "2025-11-25"),
    ] {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ferry-everything"));
        cmd.args(["--stdio", "--http", &format!("127.0.0.1:{port}")]);
        let client = Client::builder()
            .stdio(cmd)
            .era(mode)
            .input_handler(user(reqwest::Client::new()))
            .build()
            .await
            .expect("spawns");
        assert_eq!(client.protocol_version().as_str(), era);
        exercise(&client, era).await;
        client.close().await.expect("closes cleanly");
    }
}
