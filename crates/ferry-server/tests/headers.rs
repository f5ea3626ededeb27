//! Streamable HTTP request metadata headers, checked by the server against the body:
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` with
//! `=?base64?…?=` decoding (transports/streamable-http.mdx). Any mismatch is
//! -32020 with HTTP 400.

mod support;

use ferry_protocol::resources::TextResourceContents;
use ferry_server::{
    BuildError, Context, PromptArguments, RequestEnv, ResourceRequest, Server, prompt, resource,
    tool,
};
use ferry_testkit::rpc::{PROTOCOL_VERSION, call, request};
use serde_json::{Value, json};
use support::{Out, http_env, send_env, send_http};

const CAFE: &str = "test://café/menü?q=crème brûlée";

fn route_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "target": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
            "note": {"type": "string"}
        }
    })
}

fn server() -> Server {
    Server::builder("headers-test", "1")
        .tool(
            tool("route")
                .description("Mirrors annotated arguments into Mcp-Param headers")
                .input_schema(route_schema())
                .json_handler(|_: Context, args: Value| async move { Ok(args.to_string()) }),
        )
        .tool(tool("plain").json_handler(|_: Context, _: Value| async move { Ok("plain") }))
        .prompt(
            prompt("greet").handler(|_: Context, _: PromptArguments| async move {
                Ok(ferry_protocol::prompts::PromptMessage::user_text("hi"))
            }),
        )
        .resource(
            resource(CAFE, "cafe").handler(|_: Context, r: ResourceRequest| async move {
                Ok(TextResourceContents::new(r.uri.clone(), "menu"))
            }),
        )
        .build()
        .expect("server builds")
}

/// Sends `msg` with conforming headers, after `edit` changes them.
async fn send_with(s: &Server, msg: &Value, edit: impl FnOnce(&mut http::HeaderMap)) -> Out {
    let mut env = http_env(msg);
    edit(env.headers_mut().expect("headers"));
    send_env(s, msg, env).await
}

fn set(h: &mut http::HeaderMap, name: &'static str, value: &[u8]) {
    h.insert(
        name,
        http::HeaderValue::from_bytes(value).expect("header value"),
    );
}

fn assert_mismatch(out: &Out, what: &str) {
    assert_eq!(
        (out.code(), out.status),
        (-32020, 400),
        "{what}: {}",
        out.msg
    );
    let message = out.msg["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Header mismatch"), "{what}: {message}");
}

fn route(id: i64, args: Value) -> Value {
    call(id, "route", args, json!({}))
}

/// `MCP-Protocol-Version` is required and must equal `_meta`'s version.
#[tokio::test]
async fn protocol_version_header_must_match_the_body() {
    let s = server();
    let msg = request(1, "tools/list", json!({}));
    assert_eq!(send_http(&s, &msg).await.status, 200);
    assert_mismatch(
        &send_with(&s, &msg, |h| {
            h.remove("mcp-protocol-version");
        })
        .await,
        "missing",
    );
    assert_mismatch(
        &send_with(&s, &msg, |h| set(h, "mcp-protocol-version", b"2025-11-25")).await,
        "older",
    );
    assert_mismatch(
        &send_with(&s, &msg, |h| set(h, "mcp-protocol-version", b"2026-07-28 ")).await,
        "padded",
    );
    let out = send_with(&s, &msg, |h| {
        h.append(
            "mcp-protocol-version",
            http::HeaderValue::from_static("2026-07-28"),
        );
    })
    .await;
    assert_mismatch(&out, "repeated");
    // The same unsupported version in header and body is a version problem, not a
    // mismatch.
    let mut old = request(2, "tools/list", json!({}));
    old["params"]["_meta"][PROTOCOL_VERSION] = json!("1999-01-01");
    let out = send_http(&s, &old).await;
    assert_eq!((out.code(), out.status), (-32022, 400));
}

/// `Mcp-Method` is required on every request and must equal the body's method.
#[tokio::test]
async fn mcp_method_header_must_match_the_body() {
    let s = server();
    for (i, method) in ["tools/list", "server/discover", "prompts/list"]
        .into_iter()
        .enumerate()
    {
        let msg = request(i as i64, method, json!({}));
        assert_mismatch(
            &send_with(&s, &msg, |h| {
                h.remove("mcp-method");
            })
            .await,
            "missing",
        );
        assert_mismatch(
            &send_with(&s, &msg, |h| set(h, "mcp-method", b"tools/call")).await,
            "other method",
        );
        assert_mismatch(
            &send_with(&s, &msg, |h| {
                set(h, "mcp-method", method.to_uppercase().as_bytes())
            })
            .await,
            "values are case-sensitive",
        );
    }
}

/// `Mcp-Name` is required on `tools/call`, `prompts/get` and `resources/read` and must
/// equal `params.name` or `params.uri`.
#[tokio::test]
async fn mcp_name_header_must_match_the_body() {
    let s = server();
    let msgs = [
        call(1, "plain", json!({}), json!({})),
        request(2, "prompts/get", json!({"name": "greet"})),
        request(3, "resources/read", json!({"uri": CAFE})),
    ];
    for msg in &msgs {
        assert_eq!(send_http(&s, msg).await.status, 200, "{msg}");
        assert_mismatch(
            &send_with(&s, msg, |h| {
                h.remove("mcp-name");
            })
            .await,
            "missing",
        );
        assert_mismatch(
            &send_with(&s, msg, |h| set(h, "mcp-name", b"route")).await,
            "other name",
        );
    }
}

/// `Mcp-Name` values in the Base64 sentinel form are decoded before comparing; a raw
/// non-ASCII value, bad Base64, or the encoding of another value is a mismatch
/// (transports/streamable-http.mdx).
#[tokio::test]
async fn mcp_name_is_base64_decoded_before_comparing() {
    let s = server();
    let msg = request(1, "resources/read", json!({"uri": CAFE}));
    let encoded = http_env(&msg).headers().unwrap()["mcp-name"].clone();
    assert!(encoded.as_bytes().starts_with(b"=?base64?"), "{encoded:?}");
    let ok = send_http(&s, &msg).await;
    assert_eq!(ok.result()["contents"][0]["text"], "menu");
    assert_mismatch(
        &send_with(&s, &msg, |h| set(h, "mcp-name", CAFE.as_bytes())).await,
        "raw UTF-8",
    );
    assert_mismatch(
        &send_with(&s, &msg, |h| set(h, "mcp-name", b"=?base64?not base64!?=")).await,
        "bad Base64",
    );
    let other = "=?base64?dGVzdDovL2NhZmU=?="; // "test://cafe"
    assert_mismatch(
        &send_with(&s, &msg, |h| set(h, "mcp-name", other.as_bytes())).await,
        "another value",
    );
    // A plain value may also be sent encoded.
    let plain = call(2, "plain", json!({}), json!({}));
    let out = send_with(&s, &plain, |h| set(h, "mcp-name", b"=?base64?cGxhaW4=?=")).await;
    assert_eq!(out.status, 200, "{}", out.msg);
}

/// `Mcp-Param-*`: a present, non-null annotated argument needs its header with a matching
/// value; integers compare numerically; absent or null arguments need none (transports/streamable-http.mdx).
#[tokio::test]
async fn param_headers_must_mirror_annotated_arguments() {
    let s = server();
    let full = json!({"region": "us-west1", "priority": 42, "verbose": false, "target": {"zone": "b"}, "note": "n"});
    let ok = |out: Out, what: &str| assert_eq!(out.status, 200, "{what}: {}", out.msg);
    let headers =
        |h: &mut http::HeaderMap, region: &[u8], priority: &[u8], verbose: &[u8], zone: &[u8]| {
            set(h, "mcp-param-region", region);
            set(h, "mcp-param-priority", priority);
            set(h, "mcp-param-verbose", verbose);
            set(h, "mcp-param-zone", zone);
        };
    ok(
        send_with(&s, &route(1, full.clone()), |h| {
            headers(h, b"us-west1", b"42", b"false", b"b")
        })
        .await,
        "all match",
    );
    ok(
        send_with(&s, &route(2, full.clone()), |h| {
            headers(h, b"us-west1", b"42.0", b"false", b"b")
        })
        .await,
        "42.0 equals 42",
    );
    ok(
        send_with(&s, &route(3, full.clone()), |h| {
            headers(h, b"=?base64?dXMtd2VzdDE=?=", b"42", b"false", b"b")
        })
        .await,
        "Base64 value",
    );
    ok(
        send_with(&s, &route(4, json!({"note": "n"})), |_| {}).await,
        "no annotated argument",
    );
    ok(
        send_with(&s, &route(5, json!({"region": null, "priority": null, "verbose": null, "target": {"zone": null}})), |_| {}).await,
        "null arguments",
    );
    ok(
        send_with(&s, &route(6, json!({"target": {}})), |_| {}).await,
        "absent nested argument",
    );

    type Case<'a> = (&'a str, &'a [u8], &'a [u8], &'a [u8], &'a [u8]);
    let mismatches: [Case; 6] = [
        ("region", b"us-east1", b"42", b"false", b"b"),
        ("priority", b"us-west1", b"43", b"false", b"b"),
        (
            "priority not a number",
            b"us-west1",
            b"forty-two",
            b"false",
            b"b",
        ),
        ("verbose", b"us-west1", b"42", b"False", b"b"),
        ("nested zone", b"us-west1", b"42", b"false", b"c"),
        (
            "region Base64 of another value",
            b"=?base64?dXMtZWFzdDE=?=",
            b"42",
            b"false",
            b"b",
        ),
    ];
    for (i, (what, r, p, v, z)) in mismatches.into_iter().enumerate() {
        assert_mismatch(
            &send_with(&s, &route(10 + i as i64, full.clone()), |h| {
                headers(h, r, p, v, z)
            })
            .await,
            what,
        );
    }
    for (i, missing) in [
        "mcp-param-region",
        "mcp-param-priority",
        "mcp-param-verbose",
        "mcp-param-zone",
    ]
    .into_iter()
    .enumerate()
    {
        let out = send_with(&s, &route(20 + i as i64, full.clone()), |h| {
            headers(h, b"us-west1", b"42", b"false", b"b");
            h.remove(missing);
        })
        .await;
        assert_mismatch(&out, missing);
    }
    let unicode = json!({"region": "Hello, 世界"});
    ok(
        send_with(&s, &route(30, unicode.clone()), |h| {
            set(h, "mcp-param-region", b"=?base64?SGVsbG8sIOS4lueVjA==?=")
        })
        .await,
        "non-ASCII, encoded",
    );
    assert_mismatch(
        &send_with(&s, &route(31, unicode), |h| {
            set(h, "mcp-param-region", "Hello, 世界".as_bytes())
        })
        .await,
        "non-ASCII, raw",
    );
}

/// Over stdio (no headers) none of the header rules apply.
#[tokio::test]
async fn stdio_requests_have_no_header_rules() {
    let s = server();
    let out = send_env(
        &s,
        &route(1, json!({"region": "x", "priority": 1})),
        RequestEnv::stdio(),
    )
    .await;
    assert_eq!(out.status, 200, "{}", out.msg);
}

fn tool_with(schema: Value) -> Result<Server, BuildError> {
    Server::builder("x", "1")
        .tool(
            tool("t")
                .input_schema(schema)
                .json_handler(|_: Context, _: Value| async move { Ok("t") }),
        )
        .build()
}

fn props(p: Value) -> Value {
    json!({"type": "object", "properties": p})
}

/// A tool whose `x-mcp-header` annotations break the rules is refused when the server is
/// built, and when added at run time (transports/streamable-http.mdx).
#[test]
fn invalid_x_mcp_header_annotations_are_refused_at_registration() {
    let invalid = [
        (
            "empty",
            props(json!({"a": {"type": "string", "x-mcp-header": ""}})),
        ),
        (
            "not a string",
            props(json!({"a": {"type": "string", "x-mcp-header": 7}})),
        ),
        (
            "number property",
            props(json!({"a": {"type": "number", "x-mcp-header": "A"}})),
        ),
        (
            "object property",
            props(json!({"a": {"type": "object", "x-mcp-header": "A"}})),
        ),
        (
            "array property",
            props(json!({"a": {"type": "array", "x-mcp-header": "A"}})),
        ),
        (
            "null property",
            props(json!({"a": {"type": "null", "x-mcp-header": "A"}})),
        ),
        (
            "untyped property",
            props(json!({"a": {"x-mcp-header": "A"}})),
        ),
        (
            "space",
            props(json!({"a": {"type": "string", "x-mcp-header": "My Region"}})),
        ),
        (
            "colon",
            props(json!({"a": {"type": "string", "x-mcp-header": "Region:Primary"}})),
        ),
        (
            "non-ASCII",
            props(json!({"a": {"type": "string", "x-mcp-header": "Région"}})),
        ),
        (
            "control character",
            props(json!({"a": {"type": "string", "x-mcp-header": "Region\t1"}})),
        ),
        (
            "duplicate ignoring case",
            props(
                json!({"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}}),
            ),
        ),
        (
            "inside items",
            props(
                json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}),
            ),
        ),
        (
            "inside anyOf",
            json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
        ),
        (
            "on the root",
            json!({"type": "object", "x-mcp-header": "Root"}),
        ),
    ];
    for (what, schema) in invalid {
        let r = tool_with(schema.clone());
        assert!(
            matches!(r, Err(BuildError::Definition(_))),
            "{what}: {schema} was accepted"
        );
        let running = Server::builder("x", "1").enable_tools().build().unwrap();
        let added = running.add_tool(
            tool("t")
                .input_schema(schema)
                .json_handler(|_: Context, _: Value| async move { Ok("t") }),
        );
        assert!(added.is_err(), "{what}: accepted at run time");
    }
    for valid in [
        props(
            json!({"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "integer", "x-mcp-header": "B-2"}, "c": {"type": "boolean", "x-mcp-header": "c_3"}}),
        ),
        props(
            json!({"o": {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Nested"}}}}),
        ),
    ] {
        assert!(tool_with(valid.clone()).is_ok(), "{valid} was refused");
    }
}
