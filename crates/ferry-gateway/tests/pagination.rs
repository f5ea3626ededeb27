//! The gateway pages its merged lists: two ferry-everything upstreams behind a gateway
//! with three items a page. Following `nextCursor` yields the whole merged list once, in
//! order; a cursor that is not the gateway's is -32602; Ferry's client lists everything.

mod support;

use ferry_client::Client;
use ferry_gateway::{Gateway, GatewayConfig, UpstreamConfig};
use serde_json::{Value, json};
use support::{everything_upstream, post};

async fn gateway(upstreams: &[(&str, &str)], page_size: usize) -> String {
    let mut config = GatewayConfig::default();
    config.upstreams = upstreams
        .iter()
        .map(|&(name, url)| UpstreamConfig::http(name, url))
        .collect();
    config.page_size = page_size;
    let gateway = Gateway::builder(config).build().await.expect("starts");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    url
}

fn names(result: &Value, member: &str, key: &str) -> Vec<String> {
    result[member]
        .as_array()
        .unwrap_or_else(|| panic!("no {member} in {result}"))
        .iter()
        .map(|t| t[key].as_str().expect("a name").to_owned())
        .collect()
}

/// Every page of `method`, following the gateway's cursors; the items' `key`s and the
/// number of pages.
async fn every_page(url: &str, method: &str, member: &str, key: &str) -> (Vec<String>, usize) {
    let (mut all, mut pages) = (Vec::new(), 0);
    let mut params = json!({});
    loop {
        let r = post(url, None, pages as u64 + 1, method, params.clone()).await;
        let result = &r["result"];
        assert_eq!(result["resultType"], "complete", "{r}");
        let page = names(result, member, key);
        assert!(
            page.len() <= 3,
            "a page holds at most page_size items: {page:?}"
        );
        all.extend(page);
        pages += 1;
        match result["nextCursor"].as_str() {
            Some(c) => params = json!({"cursor": c}),
            None => return (all, pages),
        }
        assert!(pages < 100, "the cursors end");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_lists_are_paged_by_the_gateways_cursors() {
    let (a, b) = (everything_upstream().await, everything_upstream().await);
    let upstreams = [("a", a.as_str()), ("b", b.as_str())];
    let paged = gateway(&upstreams, 3).await;
    let whole = gateway(&upstreams, 10_000).await;

    for (method, member, key) in [
        ("tools/list", "tools", "name"),
        ("prompts/list", "prompts", "name"),
        ("resources/list", "resources", "uri"),
    ] {
        let one = post(&whole, None, 1, method, json!({})).await;
        assert!(one["result"].get("nextCursor").is_none(), "{one}");
        let expected = names(&one["result"], member, key);
        let (all, pages) = every_page(&paged, method, member, key).await;
        assert_eq!(all, expected, "{method}: every item once, in order");
        assert_eq!(pages, expected.len().div_ceil(3).max(1), "{method}");
    }
    let tools = names(
        &post(&whole, None, 1, "tools/list", json!({})).await["result"],
        "tools",
        "name",
    );
    assert!(tools.len() > 6, "both upstreams' tools: {tools:?}");
    assert!(tools.iter().any(|t| t == "a.echo") && tools.iter().any(|t| t == "b.echo"));

    // Not base64, another server's cursor (`after:x`), and no string at all.
    for cursor in [json!("not-a-cursor"), json!("YWZ0ZXI6eA"), json!(7)] {
        let r = post(&paged, None, 9, "tools/list", json!({"cursor": cursor})).await;
        assert_eq!(r["error"]["code"], -32602, "{cursor}: {r}");
        if cursor.is_string() {
            assert_eq!(r["error"]["message"], "Invalid cursor", "{r}");
        }
    }

    let client = Client::builder()
        .http(paged)
        .build()
        .await
        .expect("connect");
    let listed: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, tools, "the client follows the gateway's cursors");
}
