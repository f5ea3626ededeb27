//! The exact chat-completions JSON sent for each part of a sampling request, and the
//! requests refused before anything is sent.

mod support;

use ferry_llm::{LlmError, MaxTokensField, ModelTable, Provider, SampleContext};
use serde_json::json;
use support::{FakeOpenAi, checked, params, provider, spec_params};

#[tokio::test]
async fn spec_basic_request_with_system_prompt_and_hint() {
    let fake = FakeOpenAi::start(&["gpt-4o=gpt-4o-2024-08-06", "gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| {
        c.models(ModelTable::new("gpt-4o-mini").with_alias("sonnet", "gpt-4o"))
    });
    let result = llm
        .create_message(&spec_params("basic-request.json"), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(
        fake.only_body(),
        json!({
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": "What is the capital of France?"}
            ],
            "max_tokens": 100
        })
    );
    assert_eq!(
        checked(&result),
        json!({
            "role": "assistant",
            "content": {"type": "text", "text": "You said: What is the capital of France?"},
            "model": "gpt-4o-2024-08-06",
            "stopReason": "endTurn"
        })
    );
    let headers = &fake.received()[0].headers;
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["accept"], "application/json");
    assert!(headers.get("authorization").is_none());
}

#[tokio::test]
async fn temperature_stop_sequences_and_max_completion_tokens() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| {
        c.max_tokens_field(MaxTokensField::MaxCompletionTokens)
    });
    let p = params(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Count"}}],
        "temperature": 0.2,
        "stopSequences": ["\n\n", "END"],
        "maxTokens": 5
    }));
    llm.create_message(&p, &SampleContext::new()).await.unwrap();
    assert_eq!(
        fake.only_body(),
        json!({
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "Count"}],
            "max_completion_tokens": 5,
            "temperature": 0.2,
            "stop": ["\n\n", "END"]
        })
    );
}

#[tokio::test]
async fn images_and_audio_become_content_parts() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| c);
    let p = params(json!({
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "Describe both"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "audio", "data": "SUQz", "mimeType": "audio/mpeg"}
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "A logo."},
                {"type": "text", "text": "And a chime."}
            ]},
            {"role": "user", "content": {"type": "image", "data": "/9j/4A==", "mimeType": "image/jpeg"}}
        ],
        "maxTokens": 50
    }));
    llm.create_message(&p, &SampleContext::new()).await.unwrap();
    assert_eq!(
        fake.only_body()["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "Describe both"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}}
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "A logo."},
                {"type": "text", "text": "And a chime."}
            ]},
            {"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4A=="}}
            ]}
        ])
    );
}

#[tokio::test]
async fn spec_tools_and_every_tool_choice() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| c.parallel_tool_calls(false));
    let mut p = spec_params("request-with-tools.json");
    let expected_tools = json!([{
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City name"}},
                "required": ["city"]
            }
        }
    }]);
    let mut choices = Vec::new();
    for mode in [
        json!({"mode": "auto"}),
        json!({"mode": "required"}),
        json!({"mode": "none"}),
        json!({}),
        serde_json::Value::Null,
    ] {
        p.tool_choice = serde_json::from_value(mode).unwrap();
        llm.create_message(&p, &SampleContext::new()).await.unwrap();
    }
    for r in fake.received() {
        assert_eq!(r.body["tools"], expected_tools);
        assert_eq!(r.body["parallel_tool_calls"], json!(false));
        assert_eq!(
            r.body["messages"],
            json!([{"role": "user", "content": "What's the weather like in Paris and London?"}])
        );
        choices.push(r.body.get("tool_choice").cloned());
    }
    assert_eq!(
        choices,
        vec![
            Some(json!("auto")),
            Some(json!("required")),
            Some(json!("none")),
            Some(json!("auto")),
            None
        ]
    );

    // Without tools, `none` and `auto` are dropped (the API refuses tool_choice alone) and
    // parallel_tool_calls is not sent.
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| c.parallel_tool_calls(false));
    let p = params(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "toolChoice": {"mode": "none"},
        "maxTokens": 5
    }));
    llm.create_message(&p, &SampleContext::new()).await.unwrap();
    assert_eq!(
        fake.only_body(),
        json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5})
    );
}

#[tokio::test]
async fn spec_tool_loop_pairs_tool_calls_with_tool_messages() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| c);
    llm.create_message(
        &spec_params("follow-up-with-tool-results.json"),
        &SampleContext::new(),
    )
    .await
    .unwrap();
    let body = fake.only_body();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "What's the weather like in Paris and London?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_abc123", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_def456", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"London\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_abc123", "content": "Weather in Paris: 18°C, partly cloudy"},
            {"role": "tool", "tool_call_id": "call_def456", "content": "Weather in London: 15°C, rainy"}
        ])
    );
    assert!(body.get("tool_choice").is_none());
}

#[tokio::test]
async fn tool_result_forms() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| c);
    let p = params(json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Look these up"}},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "a", "name": "lookup", "input": {"q": 1}},
                {"type": "tool_use", "id": "b", "name": "lookup", "input": {}},
                {"type": "tool_use", "id": "c", "name": "fetch", "input": {"deep": {"x": [1, 2]}}},
                {"type": "tool_use", "id": "d", "name": "fetch", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "a", "content": [
                    {"type": "text", "text": "line one"}, {"type": "text", "text": "line two"}]},
                {"type": "tool_result", "toolUseId": "b", "content": [], "structuredContent": {"n": 3}},
                {"type": "tool_result", "toolUseId": "c", "isError": true, "content": [
                    {"type": "text", "text": "not found"}]},
                {"type": "tool_result", "toolUseId": "d", "content": [
                    {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "file text"}},
                    {"type": "resource_link", "uri": "file:///b.txt", "name": "b"}]}
            ]}
        ],
        "tools": [{"name": "lookup", "inputSchema": {"type": "object"}}, {"name": "fetch", "inputSchema": {"type": "object"}}],
        "maxTokens": 20
    }));
    llm.create_message(&p, &SampleContext::new()).await.unwrap();
    let body = fake.only_body();
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}},
            {"id": "b", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
            {"id": "c", "type": "function", "function": {"name": "fetch", "arguments": "{\"deep\":{\"x\":[1,2]}}"}},
            {"id": "d", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}
        ]})
    );
    assert_eq!(
        body["messages"].as_array().unwrap()[2..],
        [
            json!({"role": "tool", "tool_call_id": "a", "content": "line one\nline two"}),
            json!({"role": "tool", "tool_call_id": "b", "content": "{\"n\":3}"}),
            json!({"role": "tool", "tool_call_id": "c", "content": "Error: not found"}),
            json!({"role": "tool", "tool_call_id": "d", "content": "file text\nfile:///b.txt"}),
        ]
    );
    assert_eq!(
        body["tools"],
        json!([
            {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "fetch", "parameters": {"type": "object"}}}
        ])
    );
}

#[tokio::test]
async fn metadata_passes_through_only_when_asked_and_never_overrides() {
    let p = params(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "metadata": {"seed": 7, "top_p": 0.5, "model": "other", "stream": true, "max_tokens": 1},
        "includeContext": "thisServer",
        "maxTokens": 9
    }));
    for pass in [false, true] {
        let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
        let llm = provider(&fake, |c| c.pass_metadata(pass));
        llm.create_message(&p, &SampleContext::new()).await.unwrap();
        let mut want = json!({
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 9
        });
        if pass {
            want["seed"] = json!(7);
            want["top_p"] = json!(0.5);
        }
        assert_eq!(fake.only_body(), want);
    }
}

#[tokio::test]
async fn requests_the_api_cannot_carry_are_refused_before_sending() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| c);
    let text = |t: &str| json!({"type": "text", "text": t});
    let tool_use = |id: &str| json!({"type": "tool_use", "id": id, "name": "w", "input": {}});
    let tool_result = |id: &str| json!({"type": "tool_result", "toolUseId": id, "content": []});
    let cases = [
        (json!([]), "no messages"),
        (
            json!([{"role": "assistant", "content": [tool_use("a"), tool_use("b")]},
                   {"role": "user", "content": [tool_result("a")]}]),
            "no tool_result for tool_use id \"b\"",
        ),
        (
            json!([{"role": "assistant", "content": [tool_use("a")]},
                   {"role": "user", "content": [tool_result("a"), text("and")]}]),
            "must contain only tool_result blocks",
        ),
        (
            json!([{"role": "assistant", "content": [tool_use("a")]}, {"role": "user", "content": text("skip")}]),
            "must be the user's tool_result blocks",
        ),
        (
            json!([{"role": "user", "content": [tool_result("x")]}]),
            "must answer the tool_use blocks",
        ),
        (
            json!([{"role": "assistant", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}]),
            "assistant message cannot carry image",
        ),
        (
            json!([{"role": "user", "content": {"type": "audio", "data": "AA==", "mimeType": "audio/ogg"}}]),
            "audio mimeType \"audio/ogg\" is not supported",
        ),
        (
            json!([{"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "text/html"}}]),
            "is not an image type",
        ),
        (
            json!([{"role": "assistant", "content": [tool_use("a")]},
                   {"role": "user", "content": [{"type": "tool_result", "toolUseId": "a", "content": [
                       {"type": "image", "data": "AA==", "mimeType": "image/png"}]}]}]),
            "holds image content",
        ),
        (json!([{"role": "user", "content": []}]), "has no content"),
    ];
    for (messages, want) in cases {
        let p = params(json!({"messages": messages, "maxTokens": 10}));
        let err = llm
            .create_message(&p, &SampleContext::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, LlmError::InvalidRequest(m) if m.contains(want)),
            "{messages}: {err}"
        );
    }
    let required = params(json!({
        "messages": [{"role": "user", "content": text("hi")}],
        "toolChoice": {"mode": "required"},
        "maxTokens": 10
    }));
    let err = llm
        .create_message(&required, &SampleContext::new())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("\"required\" but the request has no tools"),
        "{err}"
    );
    let zero =
        params(json!({"messages": [{"role": "user", "content": text("hi")}], "maxTokens": 0}));
    let err = llm
        .create_message(&zero, &SampleContext::new())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("maxTokens must be at least 1"),
        "{err}"
    );
    assert!(fake.received().is_empty(), "nothing may be sent");
    // Refusals are counted as failed calls.
    assert_eq!(llm.usage().total().errors, 12);
}

/// The loopback server refuses what OpenAI refuses, so the tests above that it accepted
/// a request mean something.
#[tokio::test]
async fn the_test_server_refuses_what_openai_refuses() {
    let fake = FakeOpenAi::start(&["m"]).await;
    let http = reqwest::Client::new();
    let url = format!("{}/chat/completions", fake.base_url);
    let call = |id: &str| json!({"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}});
    let cases = [
        (
            json!({"model": "m", "messages": []}),
            "at least one message",
        ),
        (
            json!({"model": "m", "messages": [{"role": "assistant", "content": null, "tool_calls": [call("a"), call("b")]},
                                             {"role": "tool", "tool_call_id": "a", "content": "x"}]}),
            "did not have response messages: b",
        ),
        (
            json!({"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "a", "content": "x"}]}),
            "must be a response to a preceeding message with 'tool_calls'",
        ),
        (
            json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "tool_choice": "auto"}),
            "only allowed when 'tools' are specified",
        ),
        (
            json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "stream_options": {"include_usage": true}}),
            "only allowed when 'stream' is enabled",
        ),
        (
            json!({"model": "m", "messages": [{"role": "assistant", "content": null}]}),
            "needs content or tool_calls",
        ),
    ];
    for (body, want) in cases {
        let resp = http.post(&url).json(&body).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let err: serde_json::Value = resp.json().await.unwrap();
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains(want), "{body}: {message}");
    }
    let resp = http
        .post(&url)
        .json(&json!({"model": "gpt-5", "messages": [{"role": "user", "content": "x"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn providers_are_shared_as_trait_objects() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm: std::sync::Arc<dyn Provider> = std::sync::Arc::new(provider(&fake, |c| c));
    let again = llm.clone();
    let p = params(
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 3}),
    );
    let ctx = SampleContext::new();
    let (a, b) = tokio::join!(llm.create_message(&p, &ctx), again.create_message(&p, &ctx));
    assert_eq!(a.unwrap(), b.unwrap());
    assert_eq!(fake.received().len(), 2);
}
