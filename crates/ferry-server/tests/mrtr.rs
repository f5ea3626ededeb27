//! Multi round-trip requests through `Server::handle`: which methods may ask, what an
//! `InputRequiredResult` may contain, and how retries are cached (mrtr.mdx, caching.mdx;
//! mrtr.mdx).

mod support;

use ferry_protocol::prompts::PromptMessage;
use ferry_protocol::resources::TextResourceContents;
use ferry_server::{
    Context, Elicitation, PromptArguments, ResourceRequest, Server, UrlConsent, prompt, resource,
    resource_template, tool,
};
use ferry_testkit::rpc::{self, accept, call, form_caps, request_with, retry};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::send;

#[derive(Deserialize, ferry_form::Form)]
struct Confirm {
    confirm: bool,
}

#[derive(Serialize, Deserialize)]
struct Step {
    done: u32,
}

fn server() -> Server {
    Server::builder("mrtr-test", "1")
        .tool(
            tool("checkpointed")
                .description("Splits its work in three rounds with checkpoints")
                .json_handler(|ctx: Context, _: Value| async move {
                    let step = ctx.carried::<Step>().map_or(0, |s| s.done);
                    if step < 2 {
                        return Err(ctx.checkpoint(&Step { done: step + 1 }));
                    }
                    Ok(format!("finished after {step} checkpoints"))
                }),
        )
        .tool(
            tool("open_link")
                .description("URL-mode elicitation")
                .json_handler(|ctx: Context, _: Value| async move {
                    Ok(
                        match ctx
                            .elicit_url("Open this", "https://example.com/x")
                            .key("link")
                            .await?
                        {
                            UrlConsent::Accept => "opened",
                            _ => "not opened",
                        },
                    )
                }),
        )
        .resource(resource("test://guarded", "guarded").handler(
            |ctx: Context, r: ResourceRequest| async move {
                match ctx
                    .elicit::<Confirm>("Read the guarded resource?")
                    .key("confirm")
                    .await?
                {
                    Elicitation::Accept(Confirm { confirm: true }) => {
                        Ok(TextResourceContents::new(r.uri.clone(), "secret"))
                    }
                    _ => Err(ferry_server::not_found(&r.uri)),
                }
            },
        ))
        .resource_template(
            resource_template("test://t/{id}", "t")
                .complete("id", |ctx: Context, _| async move {
                    // A completer cannot ask: completion/complete is not MRTR-capable.
                    ctx.elicit::<Confirm>("?").await?;
                    Ok(vec!["never".to_owned()])
                })
                .handler(|_: Context, r: ResourceRequest| async move {
                    Ok(TextResourceContents::new(r.uri.clone(), "t"))
                }),
        )
        .prompt(
            prompt("guarded_prompt")
                .description("Asks before it renders")
                .handler(|ctx: Context, _: PromptArguments| async move {
                    let c = ctx.elicit::<Confirm>("Render?").key("confirm").await?;
                    Ok(PromptMessage::user_text(format!(
                        "confirmed: {}",
                        c.accepted().is_some_and(|c| c.confirm)
                    )))
                }),
        )
        .build()
        .expect("server builds")
}

fn answer() -> Value {
    json!({"confirm": accept(json!({"confirm": true}))})
}

/// A `resources/read` can ask for input. The first answer is an `InputRequiredResult`
/// without caching hints; the retry's complete result is a `ReadResourceResult`, which
/// schema.json requires to carry `ttlMs` and `cacheScope` (caching.mdx: "Servers MUST
/// include caching hints on results with resultType complete returned by resources/read").
/// Because retry results must not be cached, those hints must say so: `ttlMs` 0, private.
#[tokio::test]
async fn resource_read_retries_are_complete_and_never_cacheable() {
    let s = server();
    let first = request_with(
        1,
        "resources/read",
        json!({"uri": "test://guarded"}),
        form_caps(),
    );
    let asked = send(&s, &first).await;
    assert_eq!(rpc::result_type(&asked.msg), "input_required");
    assert!(asked.result().get("ttlMs").is_none() && asked.result().get("cacheScope").is_none());
    let done = send(
        &s,
        &retry(&first, 2, Some(answer()), Some(rpc::state(&asked.msg))),
    )
    .await;
    assert_eq!(done.result()["contents"][0]["text"], "secret");
    assert_eq!(
        done.result()["ttlMs"],
        0,
        "a retry result must not be cached: {}",
        done.msg
    );
    assert_eq!(done.result()["cacheScope"], "private");
}

/// Prompts can ask too, and their retry completes.
#[tokio::test]
async fn prompts_get_can_ask_for_input() {
    let s = server();
    let first = request_with(
        1,
        "prompts/get",
        json!({"name": "guarded_prompt"}),
        form_caps(),
    );
    let asked = send(&s, &first).await;
    let requests = &asked.result()["inputRequests"];
    assert_eq!(requests["confirm"]["method"], "elicitation/create");
    let done = send(
        &s,
        &retry(&first, 2, Some(answer()), Some(rpc::state(&asked.msg))),
    )
    .await;
    assert_eq!(
        done.result()["messages"][0]["content"]["text"],
        "confirmed: true"
    );
}

/// `completion/complete` never returns `input_required`: a completer that asks fails
/// with an error (mrtr.mdx).
#[tokio::test]
async fn completion_never_asks_for_input() {
    let s = server();
    let out = send(
        &s,
        &request_with(
            1,
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "test://t/{id}"}, "argument": {"name": "id", "value": ""}}),
            rpc::all_caps(),
        ),
    )
    .await;
    assert_eq!(out.code(), -32603, "{}", out.msg);
}

/// `inputResponses` and `requestState` on methods that cannot ask change nothing: lists
/// and discover answer as usual (mrtr.mdx).
#[tokio::test]
async fn other_methods_ignore_mrtr_params() {
    let s = server();
    let extra = json!({"inputResponses": answer(), "requestState": "bogus"});
    for (i, method) in [
        "tools/list",
        "resources/list",
        "prompts/list",
        "server/discover",
    ]
    .into_iter()
    .enumerate()
    {
        let out = send(
            &s,
            &request_with(i as i64, method, extra.clone(), rpc::all_caps()),
        )
        .await;
        assert_eq!(
            rpc::result_type(&out.msg),
            "complete",
            "{method}: {}",
            out.msg
        );
    }
}

/// A handler can end a round with state only (load shedding): the result has a
/// `requestState` and no `inputRequests`, and the client retries at once (mrtr.mdx).
#[tokio::test]
async fn checkpoints_return_state_only_results() {
    let s = server();
    let first = call(1, "checkpointed", json!({}), json!({}));
    let mut out = send(&s, &first).await;
    for round in 0..2 {
        assert_eq!(
            rpc::result_type(&out.msg),
            "input_required",
            "round {round}"
        );
        assert!(out.result().get("inputRequests").is_none(), "{}", out.msg);
        let state = rpc::state(&out.msg).to_owned();
        out = send(&s, &retry(&first, 10 + round, None, Some(&state))).await;
    }
    assert_eq!(rpc::text(&out.msg), "finished after 2 checkpoints");
}

/// URL-mode elicitation needs the `url` mode declared on this request; `elicitation: {}`
/// means form only (client/elicitation.mdx).
#[tokio::test]
async fn url_elicitation_needs_the_url_mode() {
    let s = server();
    for (i, caps) in [
        json!({}),
        json!({"elicitation": {}}),
        form_caps(),
        json!({"sampling": {}, "roots": {}}),
    ]
    .into_iter()
    .enumerate()
    {
        let out = send(&s, &call(i as i64, "open_link", json!({}), caps.clone())).await;
        assert_eq!((out.code(), out.status), (-32021, 400), "{caps}");
        assert_eq!(
            out.msg["error"]["data"]["requiredCapabilities"]["elicitation"]["url"],
            json!({})
        );
    }
    let out = send(
        &s,
        &call(
            9,
            "open_link",
            json!({}),
            json!({"elicitation": {"url": {}}}),
        ),
    )
    .await;
    let ask = &out.result()["inputRequests"]["link"];
    assert_eq!(
        (ask["params"]["mode"].clone(), ask["params"]["url"].clone()),
        (json!("url"), json!("https://example.com/x"))
    );
    assert!(ask["params"].get("elicitationId").is_none());
}

/// Form elicitation with `elicitation: {}` is allowed (it means form), and the ask never
/// names a URL mode (client/elicitation.mdx).
#[tokio::test]
async fn empty_elicitation_capability_means_form() {
    let s = server();
    let first = request_with(
        1,
        "prompts/get",
        json!({"name": "guarded_prompt"}),
        json!({"elicitation": {}}),
    );
    let out = send(&s, &first).await;
    let params = &out.result()["inputRequests"]["confirm"]["params"];
    assert_ne!(params["mode"], "url");
    assert_eq!(params["requestedSchema"]["type"], "object");
}
