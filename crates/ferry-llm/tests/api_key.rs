//! API keys: read from the environment (the default variable and a configured one), sent as
//! a bearer token, and never shown in `Debug` output or logs, even at trace level.
//!
//! Environment variables cannot be set safely inside a running test, so the environment
//! checks run in a child process of this test binary, started with the variables set.

mod support;

use std::process::Command;

use ferry_llm::{
    ApiKey, FALLBACK_MODELS_VAR, MODEL_VAR, ModelTable, OpenAiConfig, Provider, RetryPolicy,
    SampleContext,
};
use ferry_testkit::logs::Captured;
use serde_json::json;
use support::{FakeOpenAi, Reply, params};

const DEFAULT_SECRET: &str = "sk-default-0123456789abcdef";
const CUSTOM_SECRET: &str = "sk-custom-fedcba9876543210";
const CHILD_MARKER: &str = "FERRY_LLM_TEST_CHILD";

#[test]
fn keys_from_the_environment_are_sent_and_never_shown() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_with_keys_in_environment",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_MARKER, "1")
        .env("FERRY_LLM_API_KEY", DEFAULT_SECRET)
        .env("MY_PROVIDER_KEY", CUSTOM_SECRET)
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the child test did not run:\n{stdout}"
    );
    assert!(stdout.contains("logs captured:"), "{stdout}");
    for secret in [DEFAULT_SECRET, CUSTOM_SECRET] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "a key was printed"
        );
    }
}

/// Run by the test above, in a child process with the keys in its environment.
#[test]
#[ignore = "run in a child process by keys_from_the_environment_are_sent_and_never_shown"]
fn child_with_keys_in_environment() {
    if std::env::var_os(CHILD_MARKER).is_none() {
        return;
    }
    let logs = Captured::default();
    let sink = logs.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .init();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let fake = FakeOpenAi::start(&["gpt-4o-mini"]).await;
        fake.script([
            Reply::Echo,
            Reply::Echo,
            Reply::error(401, Some("invalid_api_key"), "Incorrect API key provided."),
        ]);
        let p = params(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 4}));

        // The default variable, FERRY_LLM_API_KEY.
        let config = OpenAiConfig::new(&fake.base_url, ModelTable::new("gpt-4o-mini"));
        let default = config.clone().build().unwrap();
        assert!(default.has_api_key());
        default.create_message(&p, &SampleContext::new()).await.unwrap();

        // A variable of one's choosing.
        let custom = config
            .clone()
            .api_key_env("MY_PROVIDER_KEY")
            .retry(RetryPolicy::none())
            .build()
            .unwrap();
        custom.create_message(&p, &SampleContext::new()).await.unwrap();
        let err = custom.create_message(&p, &SampleContext::new()).await.unwrap_err();
        tracing::error!(error = %err, debug = ?err, "logged by the test");

        // A variable that is not set: no key, no header.
        let none = config.api_key_env("FERRY_LLM_UNSET_VARIABLE").build().unwrap();
        assert!(!none.has_api_key());
        none.create_message(&p, &SampleContext::new()).await.unwrap();

        let auth: Vec<Option<String>> = fake
            .received()
            .iter()
            .map(|r| r.headers.get("authorization").map(|v| v.to_str().unwrap().to_owned()))
            .collect();
        assert_eq!(
            auth,
            vec![
                Some(format!("Bearer {DEFAULT_SECRET}")),
                Some(format!("Bearer {CUSTOM_SECRET}")),
                Some(format!("Bearer {CUSTOM_SECRET}")),
                None,
            ]
        );
        let shown = format!("{default:?} {custom:?} {err:?} {err}");
        assert!(!shown.contains(DEFAULT_SECRET) && !shown.contains(CUSTOM_SECRET), "{shown}");
    });
    let logs = logs.text();
    assert!(
        logs.contains("calling the provider"),
        "nothing was logged: {logs}"
    );
    assert!(logs.contains("logged by the test"));
    assert!(
        !logs.contains(DEFAULT_SECRET) && !logs.contains(CUSTOM_SECRET),
        "a key was logged"
    );
    println!("logs captured: {} bytes", logs.len());
}

#[tokio::test]
async fn a_given_key_is_sent_and_redacted() {
    let fake = FakeOpenAi::start(&["m"]).await;
    let secret = "sk-given-00000000000000000";
    let config =
        OpenAiConfig::new(&fake.base_url, ModelTable::new("m")).api_key(ApiKey::new(secret));
    assert!(!format!("{config:?}").contains(secret));
    let llm = config.build().unwrap();
    assert!(!format!("{llm:?}").contains(secret));
    let p = params(
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 4}),
    );
    llm.create_message(&p, &SampleContext::new()).await.unwrap();
    assert_eq!(
        fake.received()[0].headers["authorization"],
        format!("Bearer {secret}")
    );
}

#[tokio::test]
async fn settings_from_a_lookup() {
    let fake = FakeOpenAi::start(&["llama3.2", "qwen2.5"]).await;
    let base = fake.base_url.clone();
    let lookup = move |name: &str| match name {
        "FERRY_LLM_BASE_URL" => Some(base.clone()),
        MODEL_VAR => Some("mistral".to_owned()),
        FALLBACK_MODELS_VAR => Some("llama3.2, qwen2.5".to_owned()),
        "FERRY_LLM_API_KEY" => Some("sk-lookup".to_owned()),
        _ => None,
    };
    let llm = OpenAiConfig::from_lookup(lookup).unwrap().build().unwrap();
    let p = params(
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 4}),
    );
    assert_eq!(llm.model_chain(&p), vec!["mistral", "llama3.2", "qwen2.5"]);
    let result = llm.create_message(&p, &SampleContext::new()).await.unwrap();
    assert_eq!(result.model, "llama3.2");
    assert_eq!(
        fake.received()[0].headers["authorization"],
        "Bearer sk-lookup"
    );
    assert!(matches!(
        OpenAiConfig::from_lookup(|_| None),
        Err(ferry_llm::ConfigError::NoModel)
    ));
}

#[test]
fn bad_settings_are_refused() {
    let build = |url: &str| {
        OpenAiConfig::new(url, ModelTable::new("m"))
            .without_api_key()
            .build()
    };
    assert!(build("ftp://example.invalid/v1").is_err());
    assert!(build("not a url").is_err());
    assert!(build("http://user:pw@127.0.0.1/v1").is_err());
    let ok = build("http://127.0.0.1:1/v1/").unwrap();
    assert_eq!(
        ok.endpoint().as_str(),
        "http://127.0.0.1:1/v1/chat/completions"
    );
    let full = build("http://127.0.0.1:1/v1/chat/completions").unwrap();
    assert_eq!(
        full.endpoint().as_str(),
        "http://127.0.0.1:1/v1/chat/completions"
    );
    let bad_key = OpenAiConfig::new("http://127.0.0.1:1/v1", ModelTable::new("m"))
        .api_key(ApiKey::new("line\nbreak"))
        .build();
    assert!(matches!(bad_key, Err(ferry_llm::ConfigError::ApiKey)));
    let no_model = OpenAiConfig::new("http://127.0.0.1:1/v1", ModelTable::default()).build();
    assert!(matches!(no_model, Err(ferry_llm::ConfigError::NoModel)));
    let no_attempts = OpenAiConfig::new("http://127.0.0.1:1/v1", ModelTable::new("m"))
        .retry(RetryPolicy {
            max_attempts: 0,
            ..RetryPolicy::default()
        })
        .build();
    assert!(no_attempts.is_err());
}
