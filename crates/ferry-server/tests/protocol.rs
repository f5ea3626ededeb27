//! The per-request protocol rules of 2026-07-28, checked through `Server::handle` as a
//! transport calls it: `_meta`, versions, methods, tools, resources, prompts, completion,
//! pagination, caching hints and statelessness.

mod support;

use ferry_protocol::prompts::PromptMessage;
use ferry_protocol::resources::{ResourceContents, TextResourceContents};
use ferry_protocol::result::CacheScope;
use ferry_protocol::tools::CallToolResult;
use ferry_server::{
    CacheHint, Context, Elicitation, Handled, Json, PromptArguments, RequestEnv, ResourceRequest,
    Server, not_found, prompt, resource, resource_template, tool,
};
use ferry_testkit::rpc::{
    self, CLIENT_CAPABILITIES, PROTOCOL_VERSION, SERVER_INFO, VERSION, call, request,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::{Out, send};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct Stats {
    count: u32,
}

#[derive(Deserialize, ferry_form::Form)]
struct Confirm {
    confirm: bool,
}

fn list_cache() -> CacheHint {
    CacheHint::new(1_234, CacheScope::Public)
}

/// A server with one of everything, and hints that differ from the defaults so tests can
/// tell they are used.
fn server() -> Server {
    Server::builder("protocol-test", "1.2.3")
        .list_cache(list_cache())
        .discover_cache(CacheHint::new(4_321, CacheScope::Public))
        .read_cache(CacheHint::new(99, CacheScope::Private))
        .tool(tool("echo").description("Echoes").handler(|_: Context, a: EchoArgs| async move { Ok(a.text) }))
        .tool(
            tool("stats")
                .description("Structured output that matches its schema")
                .output::<Stats>()
                .json_handler(|_: Context, _: Value| async move { Ok(Json(Stats { count: 3 })) }),
        )
        .tool(
            tool("bad_stats")
                .description("Structured output that does not match its schema")
                .output_schema(json!({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}))
                .json_handler(|_: Context, _: Value| async move { Ok(CallToolResult::structured(json!({"count": "three"}))) }),
        )
        .tool(
            tool("no_stats")
                .description("Declares an output schema but returns text only")
                .output_schema(json!({"type": "object"}))
                .json_handler(|_: Context, _: Value| async move { Ok("plain") }),
        )
        .tool(
            tool("failing_stats")
                .description("A tool error is never checked against the output schema")
                .output_schema(json!({"type": "object", "required": ["count"]}))
                .json_handler(|_: Context, _: Value| async move { Err::<String, _>(ferry_server::fail("disk full")) }),
        )
        .tool(
            tool("ask_name")
                .description("Elicits a confirmation")
                .json_handler(|ctx: Context, _: Value| async move {
                    Ok(match ctx.elicit::<Confirm>("Sure?").key("confirm").await? {
                        Elicitation::Accept(c) => format!("confirm={}", c.confirm),
                        _ => "no".to_owned(),
                    })
                }),
        )
        .tool(
            tool("progress")
                .description("Reports progress twice")
                .json_handler(|ctx: Context, _: Value| async move {
                    ctx.progress(1.0, Some(2.0), None).await;
                    ctx.progress(2.0, Some(2.0), Some("done")).await;
                    Ok("ok")
                }),
        )
        .resource(resource("test://fixed", "fixed").mime_type("text/plain").text("fixed text"))
        .resource(
            resource("test://cached", "cached")
                .cache(CacheHint::new(5_000, CacheScope::Public))
                .text("cached text"),
        )
        .resource(
            resource("test://empty", "empty")
                .handler(|_: Context, _: ResourceRequest| async move { Ok(Vec::<ResourceContents>::new()) }),
        )
        .resource_template(
            resource_template("test://items/{id}", "items")
                .complete("id", |_: Context, req| async move {
                    Ok((0..150).map(|i| format!("{}{i}", req.value)).collect())
                })
                .handler(|_: Context, req: ResourceRequest| async move {
                    match req.param("id") {
                        Some("missing") => Err(not_found(&req.uri)),
                        Some(id) => Ok(TextResourceContents::new(req.uri.clone(), format!("item {id}"))),
                        None => Err(not_found(&req.uri)),
                    }
                }),
        )
        .prompt(
            prompt("greet")
                .description("Greets")
                .argument("name", "Who", true)
                .argument("mood", "How", false)
                .complete("name", |_: Context, _| async move { Ok(vec!["ada".into(), "alan".into(), "grace".into()]) })
                .handler(|_: Context, a: PromptArguments| async move {
                    Ok(PromptMessage::user_text(format!("Hello {}", a["name"])))
                }),
        )
        .build()
        .expect("server builds")
}

async fn list_tools(server: &Server, id: i64) -> Out {
    send(server, &request(id, "tools/list", json!({}))).await
}

/// A request missing `_meta` or one of its two required keys is malformed: -32602, HTTP
/// 400 (basic/index.mdx). On a dual-era server a request says it is modern with
/// its `MCP-Protocol-Version` header (HTTP); a modern-only server needs no hint.
#[tokio::test]
async fn requests_without_required_meta_are_invalid_params_with_400() {
    let dual = server();
    let modern = Server::builder("modern", "1")
        .modern_only()
        .tool(tool("echo").handler(|_: Context, a: EchoArgs| async move { Ok(a.text) }))
        .build()
        .unwrap();
    let cases = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {CLIENT_CAPABILITIES: {}}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {PROTOCOL_VERSION: VERSION}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}),
    ];
    for msg in cases {
        let out = send(&modern, &msg).await;
        assert_eq!(
            (out.code(), out.status),
            (-32602, 400),
            "modern-only: {msg} -> {}",
            out.msg
        );
        let mut env = support::http_env(&msg);
        let headers = env.headers_mut().unwrap();
        headers.insert(
            "mcp-protocol-version",
            http::HeaderValue::from_static(VERSION),
        );
        let out = support::send_env(&dual, &msg, env).await;
        assert_eq!(
            (out.code(), out.status),
            (-32602, 400),
            "dual-era over HTTP: {msg} -> {}",
            out.msg
        );
    }
}

/// A modern-only server refuses `initialize` with an error naming the versions it
/// supports.
#[tokio::test]
async fn modern_only_servers_refuse_initialize_naming_their_versions() {
    let modern = Server::builder("modern", "1")
        .modern_only()
        .enable_tools()
        .build()
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}});
    let out = send(&modern, &init).await;
    let message = out.msg["error"]["message"].as_str().expect("an error");
    assert!(message.contains(VERSION), "{message}");
    assert_eq!(out.status, 400);
}

/// An unsupported version gets -32022 naming what is supported and what was asked, HTTP
/// 400 (basic/index.mdx).
#[tokio::test]
async fn unsupported_version_names_supported_and_requested() {
    let s = server();
    for requested in ["1900-01-01", "2099-01-01", "v999.0.0", ""] {
        let mut msg = request(1, "tools/list", json!({}));
        msg["params"]["_meta"][PROTOCOL_VERSION] = json!(requested);
        let out = send(&s, &msg).await;
        assert_eq!(out.code(), -32022, "{requested}");
        assert_eq!(out.status, 400);
        let data = &out.msg["error"]["data"];
        assert_eq!(data["requested"], requested);
        let supported = data["supported"].as_array().expect("supported is an array");
        assert!(supported.contains(&json!(VERSION)), "{data}");
    }
}

/// Methods removed in 2026-07-28, unknown methods and methods of capabilities the server
/// does not advertise get -32601, HTTP 404 (basic/index.mdx, changelog.mdx).
#[tokio::test]
async fn removed_unknown_and_unadvertised_methods_are_not_found_with_404() {
    let s = server();
    let initialize = json!({"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
    let cases = [
        ("initialize", initialize),
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "test://fixed"})),
        ("resources/unsubscribe", json!({"uri": "test://fixed"})),
        ("tasks/list", json!({})),
        ("tools/frobnicate", json!({})),
    ];
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let out = send(&s, &request(i as i64, method, params)).await;
        assert_eq!(out.code(), -32601, "{method}: {}", out.msg);
        assert_eq!(out.status, 404, "{method}");
    }
    let tools_only = Server::builder("t", "1")
        .tool(tool("echo").handler(|_: Context, a: EchoArgs| async move { Ok(a.text) }))
        .build()
        .unwrap();
    for method in [
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/read",
        "completion/complete",
    ] {
        let out = send(
            &tools_only,
            &request(1, method, json!({"name": "x", "uri": "test://x"})),
        )
        .await;
        assert_eq!(
            (out.code(), out.status),
            (-32601, 404),
            "{method} without the capability"
        );
    }
}

/// Notifications are never answered (basic/index.mdx).
#[tokio::test]
async fn notifications_are_never_answered() {
    let s = server();
    for note in [
        rpc::notification("notifications/initialized", json!({})),
        rpc::notification("notifications/whatever", json!({})),
        rpc::notification(
            "notifications/progress",
            json!({"progressToken": 1, "progress": 1}),
        ),
    ] {
        let bytes = serde_json::to_vec(&note).unwrap();
        assert!(
            matches!(s.handle(&bytes, RequestEnv::stdio()), Handled::Accepted),
            "{note}"
        );
    }
    let bytes = serde_json::to_vec(&rpc::cancel(7)).unwrap();
    assert!(matches!(
        s.handle(&bytes, RequestEnv::stdio()),
        Handled::Cancel(_)
    ));
}

/// Error responses echo the request id, string or integer; an unreadable message gets an
/// error without id (basic/index.mdx).
#[tokio::test]
async fn errors_echo_the_request_id() {
    let s = server();
    for id in [
        json!("abc"),
        json!(0),
        json!(-5),
        json!(9_007_199_254_740_991i64),
    ] {
        let out = send(&s, &request(id.clone(), "nope", json!({}))).await;
        assert_eq!(out.msg["id"], id);
    }
    let Handled::Reply(r) = s.handle(b"{not json", RequestEnv::stdio()) else {
        panic!("a parse error is answered at once");
    };
    let v = support::parse(&r.body);
    ferry_testkit::check::received(&v, None);
    assert_eq!(rpc::error_code(&v), -32700);
    assert!(v.get("id").is_none(), "{v}");
}

/// `server/discover` describes the server, with caching hints and serverInfo (versioning.mdx).
#[tokio::test]
async fn discover_describes_versions_capabilities_and_caching() {
    let s = server();
    let out = send(&s, &request(1, "server/discover", json!({}))).await;
    let r = out.result();
    assert_eq!(r["supportedVersions"], json!([VERSION]));
    for cap in ["tools", "prompts", "resources", "completions"] {
        assert!(r["capabilities"].get(cap).is_some(), "{cap} in {r}");
    }
    assert_eq!(
        (r["ttlMs"].clone(), r["cacheScope"].clone()),
        (json!(4_321), json!("public"))
    );
    assert_eq!(
        r["_meta"][SERVER_INFO],
        json!({"name": "protocol-test", "version": "1.2.3"})
    );
}

/// An unknown tool is a protocol error (-32602); arguments that fail the input schema are
/// a tool execution error the model can see (tools.mdx).
#[tokio::test]
async fn unknown_tools_are_invalid_params_and_bad_arguments_are_tool_errors() {
    let s = server();
    let out = send(&s, &call(1, "no_such_tool", json!({}), json!({}))).await;
    assert_eq!((out.code(), out.status), (-32602, 200));
    for (i, args) in [json!({"text": 5}), json!({}), json!({"text": null})]
        .into_iter()
        .enumerate()
    {
        let out = send(&s, &call(i as i64, "echo", args.clone(), json!({}))).await;
        assert_eq!(out.result()["isError"], true, "{args} -> {}", out.msg);
        assert_eq!(out.result()["resultType"], "complete");
        let text = out.result()["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("Invalid arguments"), "{text}");
    }
    let out = send(&s, &call(9, "echo", json!("not an object"), json!({}))).await;
    assert_eq!(out.code(), -32602, "arguments must be an object");
    let ok = send(&s, &call(10, "echo", json!({"text": "hi"}), json!({}))).await;
    assert_eq!(rpc::text(&ok.msg), "hi");
}

/// With an `outputSchema`, `structuredContent` must conform; a result that does not is
/// never sent (tools.mdx).
#[tokio::test]
async fn output_schema_is_enforced_on_structured_content() {
    let s = server();
    let good = send(&s, &call(1, "stats", json!({}), json!({}))).await;
    assert_eq!(good.result()["structuredContent"], json!({"count": 3}));
    assert_eq!(
        serde_json::from_str::<Value>(rpc::text(&good.msg)).unwrap(),
        json!({"count": 3}),
        "structured output is mirrored in a text block"
    );
    for (i, name) in ["bad_stats", "no_stats"].into_iter().enumerate() {
        let out = send(&s, &call(i as i64, name, json!({}), json!({}))).await;
        assert_eq!(out.code(), -32603, "{name}: {}", out.msg);
    }
    let failed = send(&s, &call(5, "failing_stats", json!({}), json!({}))).await;
    assert_eq!(failed.result()["isError"], true);
    assert_eq!(rpc::text(&failed.msg), "disk full");
}

/// A missing resource is -32602 with the URI in `data`, never empty contents
/// (resources.mdx).
#[tokio::test]
async fn missing_resources_are_invalid_params_with_the_uri() {
    let s = server();
    for (i, uri) in [
        "test://nowhere",
        "test://items/missing",
        "test://empty",
        "other://fixed",
    ]
    .into_iter()
    .enumerate()
    {
        let out = send(
            &s,
            &request(i as i64, "resources/read", json!({"uri": uri})),
        )
        .await;
        assert_eq!(
            (out.code(), out.status),
            (-32602, 200),
            "{uri}: {}",
            out.msg
        );
        assert_eq!(out.msg["error"]["data"]["uri"], uri);
    }
    let out = send(&s, &request(9, "resources/read", json!({}))).await;
    assert_eq!(out.code(), -32602, "uri is required");
    let ok = send(
        &s,
        &request(10, "resources/read", json!({"uri": "test://items/42"})),
    )
    .await;
    assert_eq!(ok.result()["contents"][0]["text"], "item 42");
}

/// Prompts: unknown name, missing required argument and non-string arguments are -32602
/// (prompts.mdx).
#[tokio::test]
async fn prompt_argument_errors_are_invalid_params() {
    let s = server();
    let cases = [
        json!({"name": "nope"}),
        json!({"name": "greet"}),
        json!({"name": "greet", "arguments": {"mood": "happy"}}),
        json!({"name": "greet", "arguments": {"name": 3}}),
        json!({}),
    ];
    for (i, params) in cases.into_iter().enumerate() {
        let out = send(&s, &request(i as i64, "prompts/get", params.clone())).await;
        assert_eq!((out.code(), out.status), (-32602, 200), "{params}");
    }
    let ok = send(
        &s,
        &request(
            9,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        ),
    )
    .await;
    assert_eq!(ok.result()["messages"][0]["content"]["text"], "Hello Ada");
}

/// Completion returns at most 100 values and says when there are more (completion.mdx).
#[tokio::test]
async fn completion_returns_at_most_100_values() {
    let s = server();
    let many = send(
        &s,
        &request(1, "completion/complete", json!({"ref": {"type": "ref/resource", "uri": "test://items/{id}"}, "argument": {"name": "id", "value": "x"}})),
    )
    .await;
    let c = &many.result()["completion"];
    assert_eq!(c["values"].as_array().unwrap().len(), 100);
    assert_eq!(
        (c["hasMore"].clone(), c["total"].clone()),
        (json!(true), json!(150))
    );
    assert_eq!(c["values"][0], "x0");
    let few = send(
        &s,
        &request(2, "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}})),
    )
    .await;
    assert_eq!(
        few.result()["completion"]["values"],
        json!(["ada", "alan", "grace"])
    );
    assert_eq!(few.result()["completion"]["hasMore"], false);
    let unknown = send(
        &s,
        &request(3, "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}})),
    )
    .await;
    assert_eq!(unknown.code(), -32602);
}

fn many_tools(n: usize, page_size: usize) -> Server {
    let mut b = Server::builder("paged", "1")
        .page_size(page_size)
        .list_cache(list_cache());
    // Registered out of order: the listing order must not depend on it.
    for i in (0..n).rev() {
        b = b.tool(
            tool(format!("tool_{i:02}"))
                .description("t")
                .handler(|_: Context, a: EchoArgs| async move { Ok(a.text) }),
        );
    }
    b.build().unwrap()
}

async fn walk_pages(s: &Server) -> (Vec<String>, usize) {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let out = send(s, &request(pages, "tools/list", params)).await;
        let r = out.result();
        assert_eq!(
            (r["ttlMs"].clone(), r["cacheScope"].clone()),
            (json!(1_234), json!("public")),
            "every page has the same hints"
        );
        names.extend(
            r["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned()),
        );
        pages += 1;
        match r.get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().expect("a cursor is a string").to_owned()),
            None => return (names, pages),
        }
    }
}

/// Pagination is deterministic: the same pages in the same order every time, each item
/// once, and the end marked by the absence of `nextCursor` (pagination.mdx).
#[tokio::test]
async fn pagination_is_deterministic_across_pages() {
    let s = many_tools(25, 7);
    let (first, pages) = walk_pages(&s).await;
    assert_eq!(pages, 4);
    let expected: Vec<String> = (0..25).map(|i| format!("tool_{i:02}")).collect();
    assert_eq!(first, expected);
    let (again, _) = walk_pages(&s).await;
    assert_eq!(again, first);
    let single = send(&many_tools(3, 7), &request(1, "tools/list", json!({}))).await;
    assert!(single.result().get("nextCursor").is_none());
}

/// Invalid cursors, the empty string included (Ferry never issues it), are -32602
/// (pagination.mdx).
#[tokio::test]
async fn invalid_cursors_are_invalid_params() {
    let s = many_tools(10, 3);
    for (i, cursor) in [json!("garbage!!"), json!(""), json!("YWZ0ZXI"), json!(5)]
        .into_iter()
        .enumerate()
    {
        let out = send(
            &s,
            &request(i as i64, "tools/list", json!({"cursor": cursor})),
        )
        .await;
        assert_eq!(out.code(), -32602, "cursor {cursor}: {}", out.msg);
    }
    assert_eq!(
        list_tools(&s, 9).await.result()["tools"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

/// Cacheable results carry `ttlMs` and `cacheScope` as configured: lists, discover, and
/// reads (per resource, or the server default) (caching.mdx).
#[tokio::test]
async fn cacheable_results_carry_the_configured_hints() {
    let s = server();
    for (i, method) in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ]
    .into_iter()
    .enumerate()
    {
        let r = send(&s, &request(i as i64, method, json!({}))).await.msg["result"].clone();
        assert_eq!(
            (r["ttlMs"].clone(), r["cacheScope"].clone()),
            (json!(1_234), json!("public")),
            "{method}"
        );
    }
    let read = |uri: &str| request(7, "resources/read", json!({"uri": uri}));
    let r = send(&s, &read("test://fixed")).await.msg["result"].clone();
    assert_eq!(
        (r["ttlMs"].clone(), r["cacheScope"].clone()),
        (json!(99), json!("private"))
    );
    let r = send(&s, &read("test://cached")).await.msg["result"].clone();
    assert_eq!(
        (r["ttlMs"].clone(), r["cacheScope"].clone()),
        (json!(5_000), json!("public"))
    );
    let out = send(&s, &call(8, "echo", json!({"text": "x"}), json!({}))).await;
    assert!(
        out.result().get("ttlMs").is_none(),
        "tools/call results are not cacheable"
    );
}

/// Every result carries `serverInfo` in `_meta` unless configured otherwise (basic/index.mdx).
#[tokio::test]
async fn results_carry_server_info_unless_disabled() {
    let s = server();
    let info = json!({"name": "protocol-test", "version": "1.2.3"});
    let requests = [
        request(1, "tools/list", json!({})),
        request(2, "prompts/list", json!({})),
        request(3, "resources/read", json!({"uri": "test://fixed"})),
        call(4, "echo", json!({"text": "x"}), json!({})),
        request(
            5,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "A"}}),
        ),
        request(
            6,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}),
        ),
        call(7, "ask_name", json!({}), rpc::form_caps()),
    ];
    for r in &requests {
        let out = send(&s, r).await;
        assert_eq!(out.result()["_meta"][SERVER_INFO], info, "{}", r["method"]);
    }
    let quiet = Server::builder("q", "1")
        .without_server_info_in_results()
        .tool(tool("echo").handler(|_: Context, a: EchoArgs| async move { Ok(a.text) }))
        .build()
        .unwrap();
    for r in [
        request(1, "tools/list", json!({})),
        call(2, "echo", json!({"text": "x"}), json!({})),
        request(3, "server/discover", json!({})),
    ] {
        let out = send(&quiet, &r).await;
        assert!(out.result().get("_meta").is_none(), "{}", out.msg);
    }
}

/// Nothing carries over from one request to the next: capabilities, log level and
/// progress opt-in declared on one request do not apply to the next (basic/index.mdx).
#[tokio::test]
async fn nothing_is_inferred_from_earlier_requests() {
    let s = server();
    let first = send(&s, &call(1, "ask_name", json!({}), rpc::form_caps())).await;
    assert_eq!(first.result()["resultType"], "input_required");
    let second = send(&s, &call(2, "ask_name", json!({}), json!({}))).await;
    assert_eq!(
        (second.code(), second.status),
        (-32021, 400),
        "{}",
        second.msg
    );
    assert!(second.msg["error"]["data"]["requiredCapabilities"]["elicitation"].is_object());
    // Even the state of the first request does not lend its capabilities to a retry that
    // does not declare them.
    let retry = rpc::retry(
        &call(3, "ask_name", json!({}), json!({})),
        3,
        Some(json!({"confirm": rpc::accept(json!({"confirm": true}))})),
        Some(rpc::state(&first.msg)),
    );
    let third = send(&s, &retry).await;
    assert_eq!(third.code(), -32021, "{}", third.msg);

    let mut with_token = call(4, "progress", json!({}), json!({}));
    with_token["params"]["_meta"]["progressToken"] = json!("p-1");
    let out = send(&s, &with_token).await;
    assert_eq!(
        out.notes.len(),
        2,
        "progress was asked for: {:?}",
        out.notes
    );
    for n in &out.notes {
        assert_eq!(n["params"]["progressToken"], "p-1");
    }
    let out = send(&s, &call(5, "progress", json!({}), json!({}))).await;
    assert!(
        out.notes.is_empty(),
        "no progressToken on this request: {:?}",
        out.notes
    );
}

/// Two requests with the same id, one after the other, are two independent requests
/// (basic/index.mdx).
#[tokio::test]
async fn the_same_id_on_separate_requests_is_independent() {
    let s = server();
    let a = send(&s, &call(1, "echo", json!({"text": "a"}), json!({}))).await;
    let b = send(&s, &call(1, "echo", json!({"text": "b"}), json!({}))).await;
    assert_eq!((rpc::text(&a.msg), rpc::text(&b.msg)), ("a", "b"));
}

/// Extension ids must be prefixed `_meta`-style keys.
#[test]
fn extension_ids_need_a_prefix() {
    let bad = Server::builder("x", "1")
        .extension("tasks", json!({}))
        .build();
    assert!(matches!(bad, Err(ferry_server::BuildError::Extension(_))));
    let good = Server::builder("x", "1")
        .extension("com.example/feature", json!({}))
        .build();
    assert!(good.is_ok());
}

/// Builder rules on names: tool names follow `^[A-Za-z0-9_.-]{1,128}$`, and names and URIs
/// are unique (tools.mdx).
#[test]
fn definitions_are_checked_when_the_server_is_built() {
    let t = |name: &str| {
        tool(name.to_owned()).handler(|_: Context, a: EchoArgs| async move { Ok(a.text) })
    };
    for name in ["", "has space", "slash/name", &"x".repeat(129)] {
        let r = Server::builder("x", "1").tool(t(name)).build();
        assert!(
            matches!(r, Err(ferry_server::BuildError::Definition(_))),
            "{name:?}"
        );
    }
    let dup = Server::builder("x", "1").tool(t("a")).tool(t("a")).build();
    assert!(matches!(
        dup,
        Err(ferry_server::BuildError::Duplicate { .. })
    ));
    let no_handler = Server::builder("x", "1").tool(tool("a")).build();
    assert!(no_handler.is_err());
}
