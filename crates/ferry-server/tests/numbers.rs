//! Numbers beyond what `f64`/`i64` hold: a big number in an argument no handler reads
//! does not fail the call, a handler whose type asks for the exact number gets it, and
//! schema validation of `integer` and `number` still holds.

mod support;

use ferry_server::{Context, Server, tool};
use ferry_testkit::rpc::{self, call};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Echo {
    text: String,
}

/// The exact digits, as a raw JSON value.
#[derive(Deserialize)]
struct Exact {
    n: Box<RawValue>,
}

impl JsonSchema for Exact {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Exact".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    }
}

#[derive(Deserialize, JsonSchema)]
struct Wide {
    n: u128,
}

fn server() -> Server {
    Server::builder("numbers", "1")
        .tool(tool("echo").handler(|a: Echo| async move { Ok(a.text) }))
        .tool(tool("exact").handler(|a: Exact| async move { Ok(a.n.get().to_owned()) }))
        .tool(tool("wide").handler(|a: Wide| async move { Ok(a.n.to_string()) }))
        .tool(
            tool("json")
                .input_schema(json!({"type": "object"}))
                .json_handler(|_: Context, a: Value| async move { Ok(a["text"].to_string()) }),
        )
        .tool(
            tool("bounded")
                .input_schema(json!({"type": "object", "properties": {
                    "i": {"type": "integer", "maximum": 100},
                    "x": {"type": "number", "minimum": 0}
                }}))
                .json_handler(|_: Context, _: Value| async move { Ok("in range") }),
        )
        .build()
        .expect("server builds")
}

/// `digits` as a JSON number token of that many digits.
fn big(digits: usize) -> String {
    format!("1{}", "7".repeat(digits - 1))
}

/// A call whose `arguments` object is `arguments` verbatim: a big number cannot go
/// through `serde_json::Value` on the way in either.
async fn call_raw(s: &Server, id: i64, tool: &str, arguments: &str) -> Value {
    let mut msg = call(id, tool, json!({}), json!({}));
    msg["params"]["arguments"] = json!("ARGS");
    let text = msg.to_string().replace("\"ARGS\"", arguments);
    let out = support::send_bytes(s, text.as_bytes(), "tools/call").await;
    assert_eq!(out.msg["id"], id, "{:.300}", out.msg);
    out.msg
}

#[tokio::test]
async fn a_big_number_no_handler_reads_does_not_fail_the_call() {
    let s = server();
    let n = big(2000);
    for (id, tool) in [(1, "echo"), (2, "json")] {
        let r = call_raw(
            &s,
            id,
            tool,
            &format!(r#"{{"text": "hi", "ignored": {n}}}"#),
        )
        .await;
        assert!(r.get("result").is_some(), "{tool}: {r:.300}");
        assert!(rpc::text(&r).contains("hi"), "{r}");
    }
    // Negative, fractional, with an exponent, nested.
    for (id, v) in [
        (3, format!("-{n}")),
        (4, format!("{n}.5")),
        (5, "1e999999".to_owned()),
        (6, format!("[{{\"deep\": [{n}]}}]")),
    ] {
        let r = call_raw(
            &s,
            id,
            "echo",
            &format!(r#"{{"text": "hi", "ignored": {v}}}"#),
        )
        .await;
        assert_eq!(rpc::text(&r), "hi", "{v:.40}: {r:.300}");
    }
}

#[tokio::test]
async fn a_handler_that_asks_for_the_exact_number_gets_it() {
    let s = server();
    let n = big(2000);
    let r = call_raw(&s, 1, "exact", &format!(r#"{{"n": {n}}}"#)).await;
    assert_eq!(rpc::text(&r), n, "the digits as sent");
    // Beyond u64 but within u128: exact too (an f64 would round it).
    let wide = "170141183460469231731687303715884105727";
    let r = call_raw(&s, 2, "wide", &format!(r#"{{"n": {wide}}}"#)).await;
    assert_eq!(rpc::text(&r), wide);
    let r = call_raw(&s, 3, "exact", r#"{"n": 12345678901234567890123}"#).await;
    assert_eq!(rpc::text(&r), "12345678901234567890123");
    // Small numbers take the usual path.
    let r = call_raw(&s, 4, "wide", r#"{"n": 42}"#).await;
    assert_eq!(rpc::text(&r), "42");
}

#[tokio::test]
async fn schema_checks_of_integer_and_number_hold_for_big_numbers() {
    let s = server();
    let n = big(2000);
    let r = call_raw(&s, 1, "bounded", r#"{"i": 7, "x": 1.5}"#).await;
    assert_eq!(rpc::text(&r), "in range");
    // Too large for its maximum, and below its minimum: refused as a tool error.
    for (id, args) in [
        (2, format!(r#"{{"i": {n}}}"#)),
        (3, format!(r#"{{"x": -{n}}}"#)),
        (4, format!(r#"{{"i": {n}.5}}"#)),
    ] {
        let r = call_raw(&s, id, "bounded", &args).await;
        assert_eq!(r["result"]["isError"], true, "{args:.40}: {r}");
        let text = rpc::text(&r);
        assert!(text.starts_with("Invalid arguments"), "{text}");
        assert!(text.len() < 600, "{text}");
    }
}
