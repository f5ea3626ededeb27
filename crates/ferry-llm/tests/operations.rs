//! Retries, Retry-After, timeouts and deadlines, the fallback chain, client-side rate limits
//! and usage accounting. Time is tokio's paused clock: waits of minutes take no real time.

mod support;

use std::num::NonZeroU32;
use std::time::{Duration, SystemTime};

use ferry_llm::{
    LlmError, ModelTable, Provider, RateLimitScope, RateLimits, RetryPolicy, SampleContext,
};
use serde_json::json;
use support::{FakeOpenAi, Message, Reply, params, provider};
use tokio::time::Instant;

fn ask(max_tokens: u64) -> ferry_llm::ferry_protocol::sampling::CreateMessageRequestParams {
    params(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "ping"}}],
        "maxTokens": max_tokens
    }))
}

fn gaps(fake: &FakeOpenAi) -> Vec<Duration> {
    let at: Vec<Instant> = fake.received().iter().map(|r| r.at).collect();
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

fn models(fake: &FakeOpenAi) -> Vec<String> {
    fake.received()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn rate_limited_then_answered_after_retry_after_seconds() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([Reply::rate_limited("7")]);
    let llm = provider(&fake, |c| c);
    let result = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(result.content.text(), "You said: ping");
    assert_eq!(gaps(&fake), vec![Duration::from_secs(7)]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_as_http_date_and_capped() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(20));
    fake.script([Reply::rate_limited(&date), Reply::rate_limited("3600")]);
    let llm = provider(&fake, |c| {
        c.retry(RetryPolicy {
            max_retry_after: Duration::from_secs(30),
            ..RetryPolicy::default()
        })
    });
    llm.create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap();
    let g = gaps(&fake);
    // The date has one-second resolution and real time passes while it is read.
    assert!(
        g[0] >= Duration::from_secs(18) && g[0] <= Duration::from_secs(20),
        "{g:?}"
    );
    assert_eq!(
        g[1],
        Duration::from_secs(30),
        "an hour's Retry-After is capped"
    );
}

#[tokio::test(start_paused = true)]
async fn rate_limited_on_every_attempt() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([
        Reply::rate_limited("2"),
        Reply::rate_limited("2"),
        Reply::rate_limited("2"),
    ]);
    let llm = provider(&fake, |c| c);
    let ctx = SampleContext::new().with_principal("bob");
    let err = llm.create_message(&ask(5), &ctx).await.unwrap_err();
    assert!(
        matches!(err, LlmError::RateLimited { scope: RateLimitScope::Provider, retry_after: Some(d) } if d == Duration::from_secs(2)),
        "{err}"
    );
    assert_eq!(fake.received().len(), 3, "three attempts");
    assert_eq!(llm.usage().principal("bob").errors, 1);
}

#[tokio::test(start_paused = true)]
async fn server_errors_then_success_with_jittered_backoff() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([
        Reply::error(
            500,
            None,
            "The server had an error while processing your request.",
        ),
        Reply::error(503, None, "The engine is currently overloaded."),
    ]);
    let llm = provider(&fake, |c| {
        c.retry(RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_secs(4),
            max_delay: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(60),
        })
    });
    llm.create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap();
    let g = gaps(&fake);
    assert_eq!(g.len(), 2);
    assert!(
        g[0] <= Duration::from_secs(4),
        "first retry within base: {g:?}"
    );
    assert!(
        g[1] <= Duration::from_secs(8),
        "second within twice the base: {g:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn server_errors_on_every_attempt_and_bounded_messages() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let long = "x".repeat(5_000);
    fake.script([
        Reply::error(500, None, "one"),
        Reply::error(502, None, "two"),
        Reply::Error {
            status: 503,
            code: Some("overloaded"),
            message: long,
            headers: vec![("retry-after", "1".into())],
        },
    ]);
    let llm = provider(&fake, |c| c);
    let err = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap_err();
    match &err {
        LlmError::Provider {
            status,
            code,
            message,
        } => {
            assert_eq!((*status, code.as_deref()), (503, Some("overloaded")));
            assert!(
                message.len() <= ferry_llm::MAX_ERROR_MESSAGE + 3,
                "{}",
                message.len()
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(fake.received().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn client_errors_are_not_retried_nor_fall_back() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini", "gpt-4o"]).await;
    fake.script([Reply::error(
        400,
        Some("context_length_exceeded"),
        "This model's maximum context length is 128000 tokens.",
    )]);
    let llm = provider(&fake, |c| c.fallback_model("gpt-4o"));
    let err = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Provider { status: 400, code: Some(c), .. } if c == "context_length_exceeded"),
        "{err}"
    );
    assert_eq!(models(&fake), vec!["gpt-4o-mini"]);
}

#[tokio::test(start_paused = true)]
async fn slow_answers_time_out_and_are_retried() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([Reply::after(Duration::from_secs(60), Reply::Echo)]);
    let llm = provider(&fake, |c| c.timeout(Duration::from_secs(5)));
    let t0 = Instant::now();
    let result = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(result.content.text(), "You said: ping");
    assert_eq!(fake.received().len(), 2);
    assert!(t0.elapsed() >= Duration::from_secs(5) && t0.elapsed() < Duration::from_secs(6));

    // With no retries the timeout is the answer.
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([Reply::after(Duration::from_secs(60), Reply::Echo)]);
    let llm = provider(&fake, |c| {
        c.timeout(Duration::from_secs(5)).retry(RetryPolicy::none())
    });
    let err = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, LlmError::Timeout { elapsed } if elapsed == Duration::from_secs(5)),
        "{err}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_stalls_times_out() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([Reply::StallStream(
        Message::text("a long answer"),
        2,
        Duration::from_secs(120),
    )]);
    let llm = provider(&fake, |c| {
        c.streaming(true).timeout(Duration::from_secs(10))
    });
    let result = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(result.content.text(), "You said: ping");
    assert_eq!(fake.received().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn the_call_deadline_bounds_every_retry_and_fallback() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini", "gpt-4o"]).await;
    let slow = || Reply::after(Duration::from_secs(60), Reply::Echo);
    fake.script([slow(), slow(), slow(), slow()]);
    let llm = provider(&fake, |c| {
        c.timeout(Duration::from_secs(5))
            .fallback_model("gpt-4o")
            .retry(RetryPolicy {
                base_delay: Duration::from_millis(100),
                ..RetryPolicy::default()
            })
    });
    let t0 = Instant::now();
    let ctx = SampleContext::new().with_timeout(Duration::from_secs(8));
    let err = llm.create_message(&ask(5), &ctx).await.unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err}");
    assert!(t0.elapsed() <= Duration::from_secs(8), "{:?}", t0.elapsed());
    assert_eq!(
        models(&fake),
        vec!["gpt-4o-mini", "gpt-4o-mini"],
        "no fallback past the deadline"
    );

    // A deadline already past sends nothing.
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| c);
    let ctx = SampleContext::new().with_deadline(Instant::now());
    let err = llm.create_message(&ask(5), &ctx).await.unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err}");
    assert!(fake.received().is_empty());
}

#[tokio::test(start_paused = true)]
async fn model_not_found_falls_back_at_once() {
    let fake = FakeOpenAi::start(&["llama-3.1-8b"]).await;
    let llm = provider(&fake, |c| c.fallback_model("llama-3.1-8b"));
    let result = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(result.model, "llama-3.1-8b");
    assert_eq!(
        models(&fake),
        vec!["gpt-4o-mini", "llama-3.1-8b"],
        "a 404 is not retried"
    );
}

#[tokio::test(start_paused = true)]
async fn exhausted_retries_fall_back_and_all_failing_is_unavailable() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini", "gpt-4o"]).await;
    let e500 = || Reply::error(500, None, "boom");
    fake.script([e500(), e500(), e500()]);
    let llm = provider(&fake, |c| c.fallback_model("gpt-4o"));
    let result = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap();
    assert_eq!(result.model, "gpt-4o");
    assert_eq!(
        models(&fake),
        vec!["gpt-4o-mini", "gpt-4o-mini", "gpt-4o-mini", "gpt-4o"]
    );

    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([e500(), e500()]);
    let llm = provider(&fake, |c| {
        c.fallback_model("gpt-4o")
            .fallback_model("gpt-4o-mini")
            .retry(RetryPolicy {
                max_attempts: 2,
                ..RetryPolicy::default()
            })
    });
    let err = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap_err();
    let LlmError::Unavailable { attempts } = &err else {
        panic!("{err}");
    };
    let tried: Vec<(&str, String)> = attempts
        .iter()
        .map(|a| (a.model.as_str(), a.error.to_string()))
        .collect();
    assert_eq!(
        tried,
        vec![
            ("gpt-4o-mini", "provider answered HTTP 500: boom".to_owned()),
            ("gpt-4o", "provider answered HTTP 404: The model `gpt-4o` does not exist or you do not have access to it.".to_owned()),
        ]
    );
    assert_eq!(
        models(&fake),
        vec!["gpt-4o-mini", "gpt-4o-mini", "gpt-4o"],
        "the chain has no duplicates"
    );
}

#[tokio::test(start_paused = true)]
async fn model_preferences_choose_the_model() {
    let fake = FakeOpenAi::start(&["small", "large"]).await;
    let llm = provider(&fake, |c| {
        c.models(
            ModelTable::new("small")
                .with_model(ferry_llm::ModelProfile::new("small", 1.0, 1.0, 0.2))
                .with_model(ferry_llm::ModelProfile::new("large", 0.2, 0.3, 1.0)),
        )
    });
    let mut p = ask(5);
    p.model_preferences = Some(
        ferry_llm::ferry_protocol::sampling::ModelPreferences::new()
            .with_hint("claude-3-opus")
            .with_intelligence_priority(0.9)
            .with_cost_priority(0.1),
    );
    assert_eq!(llm.model_chain(&p), vec!["large"]);
    let result = llm.create_message(&p, &SampleContext::new()).await.unwrap();
    assert_eq!(result.model, "large");
}

#[tokio::test(start_paused = true)]
async fn connection_refused_is_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let llm = ferry_llm::OpenAiConfig::new(format!("http://{addr}/v1"), ModelTable::new("m"))
        .without_api_key()
        .build()
        .unwrap();
    let t0 = Instant::now();
    let err = llm
        .create_message(&ask(5), &SampleContext::new())
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Connection(_)), "{err}");
    // Two backoff waits happened (three attempts), each within its ceiling.
    assert!(
        t0.elapsed() <= Duration::from_millis(500 + 1000),
        "{:?}",
        t0.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn client_side_requests_per_minute() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    let llm = provider(&fake, |c| {
        c.rate_limits(RateLimits {
            requests_per_minute: NonZeroU32::new(2),
            tokens_per_minute: None,
            max_wait: Duration::from_secs(60),
        })
    });
    let ctx = SampleContext::new();
    for _ in 0..3 {
        llm.create_message(&ask(5), &ctx).await.unwrap();
    }
    assert_eq!(gaps(&fake), vec![Duration::ZERO, Duration::from_secs(30)]);
    // The next room is 30 s away, past this call's deadline: refused without sending.
    let err = llm
        .create_message(
            &ask(5),
            &SampleContext::new().with_timeout(Duration::from_secs(5)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            LlmError::RateLimited {
                scope: RateLimitScope::Client,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(fake.received().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn client_side_tokens_per_minute_corrected_by_reported_usage() {
    let limits = RateLimits {
        requests_per_minute: None,
        tokens_per_minute: NonZeroU32::new(1_000),
        max_wait: Duration::from_secs(120),
    };
    // Each call is estimated at 600 + a few tokens. When the answers report 20, the second
    // call goes at once; when they report all 600, it waits for the minute to refill.
    let mut waits = Vec::new();
    for reported in [20, 600] {
        let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
        let reply = Message {
            usage: Some((reported / 2, reported / 2)),
            ..Message::text("ok")
        };
        fake.script([Reply::Say(reply.clone()), Reply::Say(reply)]);
        let llm = provider(&fake, |c| c.rate_limits(limits.clone()));
        llm.create_message(&ask(600), &SampleContext::new())
            .await
            .unwrap();
        llm.create_message(&ask(600), &SampleContext::new())
            .await
            .unwrap();
        waits.push(gaps(&fake)[0]);
    }
    assert_eq!(waits[0], Duration::ZERO);
    assert!(waits[1] >= Duration::from_secs(12), "{waits:?}");
}

#[tokio::test(start_paused = true)]
async fn usage_per_principal_and_tool() {
    let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
    fake.script([
        Reply::Say(Message {
            usage: Some((10, 3)),
            ..Message::text("a")
        }),
        Reply::Say(Message {
            usage: Some((20, 4)),
            ..Message::text("b")
        }),
        Reply::error(401, Some("invalid_api_key"), "Incorrect API key provided."),
        Reply::Say(Message {
            usage: Some((5, 5)),
            ..Message::text("c")
        }),
    ]);
    let llm = provider(&fake, |c| c);
    let alice_sum = SampleContext::new()
        .with_principal("alice")
        .with_tool("summarize");
    let alice_tr = SampleContext::new()
        .with_principal("alice")
        .with_tool("translate");
    let bob_sum = SampleContext::new()
        .with_principal("bob")
        .with_tool("summarize");
    llm.create_message(&ask(5), &alice_sum).await.unwrap();
    llm.create_message(&ask(5), &alice_tr).await.unwrap();
    assert!(llm.create_message(&ask(5), &bob_sum).await.is_err());
    llm.create_message(&ask(5), &bob_sum).await.unwrap();
    let u = llm.usage();
    let alice = u.principal("alice");
    assert_eq!(
        (alice.calls, alice.prompt_tokens, alice.completion_tokens),
        (2, 30, 7)
    );
    let sum = u.tool("summarize");
    assert_eq!((sum.calls, sum.errors, sum.total_tokens()), (3, 1, 23));
    let bob = u.get(Some("bob"), Some("summarize"));
    assert_eq!((bob.calls, bob.errors, bob.prompt_tokens), (2, 1, 5));
    assert_eq!(u.entries().len(), 3);
    assert_eq!(u.total().total_tokens(), 47);
}
