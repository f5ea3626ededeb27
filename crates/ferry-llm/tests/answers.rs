//! Answers, whole and streamed, mapped back into `CreateMessageResult`.

mod support;

use ferry_llm::{LlmError, OpenAiProvider, Provider, RetryPolicy, SampleContext};
use serde_json::{Value, json};
use support::{FakeOpenAi, Message, Reply, checked, params, provider, spec_params};

fn hello() -> ferry_llm::ferry_protocol::sampling::CreateMessageRequestParams {
    params(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello to the world"}}],
        "stopSequences": ["END"],
        "maxTokens": 20
    }))
}

/// The same reply, asked for whole and streamed: the results must be equal.
async fn both_ways(reply: Message) -> (Value, Vec<support::Received>, [OpenAiProvider; 2]) {
    let fake = FakeOpenAi::start(&["gpt-4o-mini=gpt-4o-mini-2024-07-18"]).await;
    fake.script([Reply::Say(reply.clone()), Reply::Say(reply)]);
    let whole = provider(&fake, |c| c.retry(RetryPolicy::none()));
    let streamed = provider(&fake, |c| c.retry(RetryPolicy::none()).streaming(true));
    let ctx = SampleContext::new()
        .with_principal("alice")
        .with_tool("greet");
    let a = whole.create_message(&hello(), &ctx).await.unwrap();
    let b = streamed.create_message(&hello(), &ctx).await.unwrap();
    assert_eq!(a, b, "whole and streamed answers differ");
    (checked(&a), fake.received(), [whole, streamed])
}

#[tokio::test]
async fn text_answer_whole_and_streamed() {
    let (result, received, providers) =
        both_ways(Message::text("Hello, world! How are you today?")).await;
    assert_eq!(
        result,
        json!({
            "role": "assistant",
            "content": {"type": "text", "text": "Hello, world! How are you today?"},
            "model": "gpt-4o-mini-2024-07-18",
            "stopReason": "endTurn"
        })
    );
    assert!(received[0].body.get("stream").is_none());
    assert_eq!(received[1].body["stream"], json!(true));
    assert_eq!(
        received[1].body["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(received[1].headers["accept"], "text/event-stream");
    // Usage as the server reported it: 5 prompt words, 6 completion words, on both paths.
    for p in &providers {
        let u = p.usage().get(Some("alice"), Some("greet"));
        assert_eq!(
            (u.calls, u.errors, u.prompt_tokens, u.completion_tokens),
            (1, 0, 5, 6)
        );
    }
}

#[tokio::test]
async fn parallel_tool_calls_become_tool_use_blocks() {
    let reply = Message::tools_only()
        .tool_call("call_abc123", "get_weather", r#"{"city":"Paris"}"#)
        .tool_call(
            "call_def456",
            "get_weather",
            r#"{"city":"London","units":{"temp":"C"}}"#,
        );
    let (result, _, _) = both_ways(reply).await;
    assert_eq!(
        result,
        json!({
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_abc123", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_def456", "name": "get_weather", "input": {"city": "London", "units": {"temp": "C"}}}
            ],
            "model": "gpt-4o-mini-2024-07-18",
            "stopReason": "toolUse"
        })
    );
}

#[tokio::test]
async fn text_and_a_tool_call_reported_as_stop() {
    // Some servers say `stop` with tool calls; the result still asks for the tools.
    let reply = Message::text("Let me check.")
        .tool_call("c1", "lookup", "")
        .finish("stop");
    let (result, _, _) = both_ways(reply).await;
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "c1", "name": "lookup", "input": {}}
        ])
    );
    assert_eq!(result["stopReason"], "toolUse");
}

#[tokio::test]
async fn finish_reasons() {
    let cases = [
        (Message::text("cut").finish("length"), "maxTokens"),
        (Message::text("").finish("content_filter"), "content_filter"),
        (
            Message {
                choice_extra: vec![("stop_reason".into(), json!("END"))],
                ..Message::text("before the marker")
            },
            "stopSequence",
        ),
        (
            Message {
                choice_extra: vec![("stop_reason".into(), json!(128_009))],
                ..Message::text("eos token")
            },
            "endTurn",
        ),
    ];
    for (reply, want) in cases {
        let (result, _, _) = both_ways(reply).await;
        assert_eq!(result["stopReason"], want, "{result}");
    }
}

#[tokio::test]
async fn tool_call_without_id_gets_one() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let body = json!({
        "id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"type": "function", "function": {"name": "a", "arguments": "{}"}},
                           {"type": "function", "function": {"name": "b", "arguments": "{\"k\":true}"}}]}}]
    });
    fake.script([Reply::Raw {
        status: 200,
        content_type: "application/json",
        body: body.to_string().into_bytes(),
    }]);
    let llm = provider(&fake, |c| c);
    let result = llm
        .create_message(&hello(), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(
        checked(&result)["content"],
        json!([
            {"type": "tool_use", "id": "call_0", "name": "a", "input": {}},
            {"type": "tool_use", "id": "call_1", "name": "b", "input": {"k": true}}
        ])
    );
    // No usage reported: the call is counted, its tokens are not.
    assert_eq!(llm.usage().total().unreported, 1);
}

#[tokio::test]
async fn streaming_request_answered_whole_and_without_usage_option() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    // A server that ignores `stream` and answers whole is read all the same.
    fake.script([Reply::Raw {
        status: 200,
        content_type: "application/json",
        body: json!({"model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}]})
            .to_string()
            .into_bytes(),
    }]);
    let llm = provider(&fake, |c| c.streaming(true).stream_usage(false));
    let result = llm
        .create_message(&hello(), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(result.content.text(), "whole");
    let body = fake.only_body();
    assert_eq!(body["stream"], json!(true));
    assert!(body.get("stream_options").is_none());
}

#[tokio::test]
async fn unreadable_answers() {
    let raw = |body: &str| Reply::Raw {
        status: 200,
        content_type: "application/json",
        body: body.as_bytes().to_vec(),
    };
    let bad_args = Message::tools_only().tool_call("c", "t", "{not json");
    let array_args = Message::tools_only().tool_call("c", "t", "[1,2]");
    let cases: Vec<(Reply, bool, &str)> = vec![
        (
            Reply::Say(bad_args.clone()),
            false,
            "arguments are not valid JSON",
        ),
        (Reply::Say(bad_args), true, "arguments are not valid JSON"),
        (
            Reply::Say(array_args),
            false,
            "arguments are an array, not a JSON object",
        ),
        (
            raw("<html>bad gateway</html>"),
            false,
            "not a chat.completion",
        ),
        (raw(r#"{"choices": []}"#), false, "no choices"),
        (
            Reply::Events(vec![
                r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#.into(),
            ]),
            true,
            "stream ended before the answer finished",
        ),
        (
            Reply::Events(vec!["{oops".into()]),
            true,
            "not a chat.completion.chunk",
        ),
    ];
    for (reply, stream, want) in cases {
        let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
        fake.script([reply]);
        let llm = provider(&fake, |c| c.retry(RetryPolicy::none()).streaming(stream));
        let err = llm
            .create_message(&hello(), &SampleContext::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, LlmError::InvalidResponse(m) if m.contains(want)),
            "{want}: {err}"
        );
    }
}

#[tokio::test]
async fn errors_inside_a_stream_or_a_200_body() {
    for stream in [false, true] {
        let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
        let error = json!({"error": {"message": "The server had an error", "type": "server_error", "code": "server_error"}});
        fake.script([if stream {
            Reply::Events(vec![error.to_string()])
        } else {
            Reply::Raw {
                status: 200,
                content_type: "application/json",
                body: error.to_string().into_bytes(),
            }
        }]);
        let llm = provider(&fake, |c| c.retry(RetryPolicy::none()).streaming(stream));
        let err = llm
            .create_message(&hello(), &SampleContext::new())
            .await
            .unwrap_err();
        match err {
            LlmError::Provider {
                status,
                code,
                message,
            } => {
                assert_eq!(
                    (status, code.as_deref(), message.as_str()),
                    (200, Some("server_error"), "The server had an error")
                );
            }
            other => panic!("{other}"),
        }
    }
}

#[tokio::test]
async fn answers_are_bounded() {
    let big = "word ".repeat(2_000);
    for stream in [false, true] {
        let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
        fake.script([Reply::Say(Message::text(&big))]);
        let llm = provider(&fake, |c| {
            c.retry(RetryPolicy::none())
                .streaming(stream)
                .max_response_bytes(4_096)
        });
        let err = llm
            .create_message(&hello(), &SampleContext::new())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("larger than 4096 bytes"), "{err}");
    }
    // The same answer fits a larger bound.
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([Reply::Say(Message::text(&big))]);
    let llm = provider(&fake, |c| {
        c.retry(RetryPolicy::none())
            .streaming(true)
            .max_response_bytes(64 * 1024)
    });
    let result = llm
        .create_message(&hello(), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(result.content.text(), big);
}

#[tokio::test]
async fn spec_tool_loop_end_to_end() {
    // The spec's multi-turn tool loop: tools → tool_use → tool_result → final text.
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([
        Reply::Say(
            Message::tools_only()
                .tool_call("call_abc123", "get_weather", r#"{"city":"Paris"}"#)
                .tool_call("call_def456", "get_weather", r#"{"city":"London"}"#),
        ),
        Reply::Say(Message::text("Paris is warmer.")),
    ]);
    let llm = provider(&fake, |c| c.streaming(true));
    let ctx = SampleContext::new();
    let mut p = spec_params("request-with-tools.json");
    let first = llm.create_message(&p, &ctx).await.unwrap();
    assert_eq!(first.stop_reason.as_deref(), Some("toolUse"));
    // The server runs the tools and sends the results back after the model's message.
    let results: Vec<_> = first
        .content
        .blocks()
        .iter()
        .map(|b| match b {
            ferry_llm::ferry_protocol::content::SamplingMessageContentBlock::ToolUse(u) => json!({
                "type": "tool_result", "toolUseId": u.id,
                "content": [{"type": "text", "text": format!("Weather in {}: mild", u.input["city"].as_str().unwrap())}]
            }),
            other => panic!("{other:?}"),
        })
        .collect();
    p.messages
        .push(ferry_llm::ferry_protocol::sampling::SamplingMessage::new(
            first.role,
            first.content.clone(),
        ));
    p.messages
        .push(serde_json::from_value(json!({"role": "user", "content": results})).unwrap());
    let second = llm.create_message(&p, &ctx).await.unwrap();
    assert_eq!(
        checked(&second)["content"],
        json!({"type": "text", "text": "Paris is warmer."})
    );
    let sent = &fake.received()[1].body["messages"];
    assert_eq!(
        sent[2],
        json!({"role": "tool", "tool_call_id": "call_abc123", "content": "Weather in Paris: mild"})
    );
    assert_eq!(
        sent[3],
        json!({"role": "tool", "tool_call_id": "call_def456", "content": "Weather in London: mild"})
    );
}
