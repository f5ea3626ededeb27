//! [`OpenAiConfig`]: where and how an [`OpenAiProvider`](super::OpenAiProvider) calls.

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::request::MaxTokensField;
use crate::error::ConfigError;
use crate::limits::RateLimits;
use crate::models::ModelTable;
use crate::retry::RetryPolicy;
use crate::secret::{ApiKey, DEFAULT_API_KEY_VAR};
use crate::usage::UsageLedger;

/// The variable [`OpenAiConfig::from_env`] reads the base URL from.
pub const BASE_URL_VAR: &str = "FERRY_LLM_BASE_URL";
/// The variable [`OpenAiConfig::from_env`] reads the default model from.
pub const MODEL_VAR: &str = "FERRY_LLM_MODEL";
/// The variable [`OpenAiConfig::from_env`] reads fallback models from (comma-separated).
pub const FALLBACK_MODELS_VAR: &str = "FERRY_LLM_FALLBACK_MODELS";
/// The base URL [`OpenAiConfig::from_env`] uses when [`BASE_URL_VAR`] is unset.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The default per-attempt timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The default bound on an answer's size.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// Where the API key comes from.
#[derive(Clone, Debug)]
pub(crate) enum KeySource {
    Env(String),
    Given(ApiKey),
    None,
}

/// The settings of an OpenAI-compatible chat-completions provider (OpenAI, vLLM, llama.cpp's
/// server, Ollama, LM Studio, ...). Build one, then call [`build`](Self::build).
///
/// ```
/// use std::time::Duration;
/// use ferry_llm::{ModelTable, OpenAiConfig};
///
/// let provider = OpenAiConfig::new("http://127.0.0.1:11434/v1", ModelTable::new("llama3.2"))
///     .api_key_env("OLLAMA_API_KEY")
///     .fallback_model("qwen2.5")
///     .timeout(Duration::from_secs(30))
///     .streaming(true)
///     .build()?;
/// # let _ = provider;
/// # Ok::<(), ferry_llm::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    pub(crate) base_url: String,
    pub(crate) key: KeySource,
    pub(crate) models: ModelTable,
    pub(crate) fallbacks: Vec<String>,
    pub(crate) max_tokens_field: MaxTokensField,
    pub(crate) stream: bool,
    pub(crate) stream_usage: bool,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) pass_metadata: bool,
    pub(crate) timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) limits: RateLimits,
    pub(crate) max_response_bytes: usize,
    pub(crate) usage: Option<Arc<UsageLedger>>,
}

impl OpenAiConfig {
    /// Settings for the API at `base_url` (the part before `/chat/completions`, such as
    /// `https://api.openai.com/v1`), choosing models from `models`. The API key is read from
    /// `FERRY_LLM_API_KEY` when the provider is built, if that variable is set.
    pub fn new(base_url: impl Into<String>, models: ModelTable) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            key: KeySource::Env(DEFAULT_API_KEY_VAR.to_owned()),
            models,
            fallbacks: Vec::new(),
            max_tokens_field: MaxTokensField::default(),
            stream: false,
            stream_usage: true,
            parallel_tool_calls: None,
            pass_metadata: false,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            limits: RateLimits::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            usage: None,
        }
    }

    /// Settings from the environment: `FERRY_LLM_BASE_URL` (default OpenAI's),
    /// `FERRY_LLM_MODEL` (required), `FERRY_LLM_FALLBACK_MODELS` (comma-separated, optional)
    /// and the key in `FERRY_LLM_API_KEY`.
    pub fn from_env() -> Result<Self, ConfigError> {
        OpenAiConfig::from_lookup(|name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading the variables through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let model = get(MODEL_VAR).ok_or(ConfigError::NoModel)?;
        let base = get(BASE_URL_VAR).unwrap_or_else(|| OPENAI_BASE_URL.to_owned());
        let mut config = OpenAiConfig::new(base, ModelTable::new(model.trim()));
        if let Some(list) = get(FALLBACK_MODELS_VAR) {
            for m in list.split(',').map(str::trim).filter(|m| !m.is_empty()) {
                config = config.fallback_model(m);
            }
        }
        config.key = match ApiKey::from_lookup(DEFAULT_API_KEY_VAR, &lookup) {
            Some(key) => KeySource::Given(key),
            None => KeySource::None,
        };
        Ok(config)
    }

    /// Reads the API key from the environment variable `var` instead, when building.
    pub fn api_key_env(mut self, var: impl Into<String>) -> Self {
        self.key = KeySource::Env(var.into());
        self
    }

    /// Uses this API key.
    pub fn api_key(mut self, key: ApiKey) -> Self {
        self.key = KeySource::Given(key);
        self
    }

    /// Sends no API key (a local server).
    pub fn without_api_key(mut self) -> Self {
        self.key = KeySource::None;
        self
    }

    /// Sets the model table.
    pub fn models(mut self, models: ModelTable) -> Self {
        self.models = models;
        self
    }

    /// Adds a model to try, in order, when the chosen one fails after its retries or does
    /// not exist.
    pub fn fallback_model(mut self, model: impl Into<String>) -> Self {
        self.fallbacks.push(model.into());
        self
    }

    /// Sends `maxTokens` as `max_tokens` (the default) or `max_completion_tokens`.
    pub fn max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = field;
        self
    }

    /// Streams answers (`stream: true`) and assembles the chunks; off by default.
    pub fn streaming(mut self, on: bool) -> Self {
        self.stream = on;
        self
    }

    /// Whether a streamed request asks for usage (`stream_options.include_usage`); on by
    /// default. Turn it off for a server that rejects the member.
    pub fn stream_usage(mut self, on: bool) -> Self {
        self.stream_usage = on;
        self
    }

    /// Sends `parallel_tool_calls` with requests that have tools (sampling.mdx, "Parallel
    /// Tool Use": a provider extension, not part of MCP).
    pub fn parallel_tool_calls(mut self, allowed: bool) -> Self {
        self.parallel_tool_calls = Some(allowed);
        self
    }

    /// Copies the request's `metadata` members into the request body (say `seed` or
    /// `top_p`); off by default. Members the bridge sets itself are never overridden.
    pub fn pass_metadata(mut self, on: bool) -> Self {
        self.pass_metadata = on;
        self
    }

    /// The longest one attempt may take, answer read included.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest connecting may take.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the retry policy.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Sets the client-side rate limits.
    pub fn rate_limits(mut self, limits: RateLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The largest answer read, in bytes (whole body, or a stream's events and text).
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Records usage in this ledger (shared, say, with other providers) instead of one of
    /// the provider's own.
    pub fn usage_ledger(mut self, ledger: Arc<UsageLedger>) -> Self {
        self.usage = Some(ledger);
        self
    }

    /// The chat-completions URL.
    pub(crate) fn endpoint(&self) -> Result<Url, ConfigError> {
        let bad = |reason: &str| ConfigError::BaseUrl {
            url: self.base_url.clone(),
            reason: reason.to_owned(),
        };
        let trimmed = self.base_url.trim().trim_end_matches('/');
        let full = if trimmed.ends_with("/chat/completions") {
            trimmed.to_owned()
        } else {
            format!("{trimmed}/chat/completions")
        };
        let url = Url::parse(&full).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("the scheme must be http or https"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("credentials belong in the API key, not the URL"));
        }
        Ok(url)
    }

    pub(crate) fn resolve_key(&self) -> Option<ApiKey> {
        match &self.key {
            KeySource::Env(var) => ApiKey::from_env(var),
            KeySource::Given(key) => Some(key.clone()),
            KeySource::None => None,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        let setting = |name, reason: &str| ConfigError::Setting {
            name,
            reason: reason.to_owned(),
        };
        if self.models.is_empty() {
            return Err(ConfigError::NoModel);
        }
        if self.retry.max_attempts == 0 {
            return Err(setting("retry.max_attempts", "must be at least 1"));
        }
        if self.timeout.is_zero() {
            return Err(setting("timeout", "must be more than zero"));
        }
        if self.max_response_bytes < 1024 {
            return Err(setting("max_response_bytes", "must be at least 1024"));
        }
        Ok(())
    }
}
