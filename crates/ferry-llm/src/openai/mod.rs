//! The OpenAI-compatible chat-completions provider.

mod config;
mod http;
mod request;
mod response;
mod stream;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use ferry_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};
use reqwest::header::{AUTHORIZATION, HeaderValue};
use tokio::time::Instant;
use url::Url;

pub use config::{
    BASE_URL_VAR, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT, FALLBACK_MODELS_VAR, MODEL_VAR,
    OPENAI_BASE_URL, OpenAiConfig,
};
pub use request::MaxTokensField;

use crate::error::{ConfigError, LlmError, ModelFailure, RateLimitScope};
use crate::limits::{Limits, estimate_tokens};
use crate::models::ModelTable;
use crate::provider::{Provider, ProviderFuture, SampleContext};
use crate::retry::RetryPolicy;
use crate::usage::UsageLedger;
use http::AttemptError;
use request::Mapping;
use response::Answer;

/// A [`Provider`] calling an OpenAI-compatible `/chat/completions` endpoint.
///
/// Each call maps the params (refusing what the API cannot carry before sending anything),
/// chooses a model from the request's preferences, then tries that model and each fallback
/// in turn: every attempt waits for the client-side rate limits, runs within the per-attempt
/// timeout and the call's deadline, and is retried with backoff on 429, 5xx, timeouts and
/// lost connections. Usage is recorded per principal and tool.
#[derive(Debug)]
pub struct OpenAiProvider {
    http: reqwest::Client,
    endpoint: Url,
    auth: Option<HeaderValue>,
    models: ModelTable,
    fallbacks: Vec<String>,
    mapping: Mapping,
    timeout: Duration,
    retry: RetryPolicy,
    limits: Limits,
    max_response_bytes: usize,
    usage: Arc<UsageLedger>,
}

impl OpenAiConfig {
    /// The provider for these settings.
    pub fn build(self) -> Result<OpenAiProvider, ConfigError> {
        self.validate()?;
        let endpoint = self.endpoint()?;
        let auth = match self.resolve_key() {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose_secret()))
                    .map_err(|_| ConfigError::ApiKey)?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let http = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ConfigError::Http(e.to_string()))?;
        Ok(OpenAiProvider {
            http,
            endpoint,
            auth,
            models: self.models,
            fallbacks: self.fallbacks,
            mapping: Mapping {
                max_tokens_field: self.max_tokens_field,
                parallel_tool_calls: self.parallel_tool_calls,
                pass_metadata: self.pass_metadata,
                stream: self.stream,
                stream_usage: self.stream_usage,
            },
            timeout: self.timeout,
            retry: self.retry,
            limits: Limits::new(&self.limits),
            max_response_bytes: self.max_response_bytes,
            usage: self.usage.unwrap_or_default(),
        })
    }
}

impl OpenAiProvider {
    /// A provider from the environment ([`OpenAiConfig::from_env`]).
    pub fn from_env() -> Result<Self, ConfigError> {
        OpenAiConfig::from_env()?.build()
    }

    /// The usage ledger this provider records into.
    pub fn usage(&self) -> &Arc<UsageLedger> {
        &self.usage
    }

    /// The chat-completions URL called.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// Whether an API key is sent.
    pub fn has_api_key(&self) -> bool {
        self.auth.is_some()
    }

    /// The models a call with these params tries, in order.
    pub fn model_chain(&self, params: &CreateMessageRequestParams) -> Vec<String> {
        let mut chain: Vec<String> = Vec::with_capacity(1 + self.fallbacks.len());
        let first = self.models.select(params.model_preferences.as_ref());
        for model in first
            .into_iter()
            .chain(self.fallbacks.iter().map(String::as_str))
        {
            if !chain.iter().any(|m| m == model) {
                chain.push(model.to_owned());
            }
        }
        chain
    }

    /// Samples the model; see [`Provider::create_message`].
    pub async fn sample(
        &self,
        params: &CreateMessageRequestParams,
        ctx: &SampleContext,
    ) -> Result<CreateMessageResult, LlmError> {
        let outcome = self.run(params, ctx).await;
        match &outcome {
            Ok(answer) => self.usage.record_success(ctx, answer.usage),
            Err(e) => {
                tracing::debug!(error = %e, "sampling call failed");
                self.usage.record_error(ctx);
            }
        }
        outcome.map(|a| a.result)
    }

    async fn run(
        &self,
        params: &CreateMessageRequestParams,
        ctx: &SampleContext,
    ) -> Result<Answer, LlmError> {
        let started = Instant::now();
        let mut body = request::build(params, &self.mapping)?;
        let estimate = estimate_tokens(params);
        let stops = params.stop_sequences.as_deref().unwrap_or_default();
        let chain = self.model_chain(params);
        let mut failures = Vec::new();
        for (i, model) in chain.iter().enumerate() {
            body.model.clone_from(model);
            let bytes = serde_json::to_vec(&body)
                .map_err(|e| LlmError::InvalidRequest(format!("cannot encode the request: {e}")))?;
            let error = match self
                .try_model(model, &bytes, estimate, stops, ctx, started)
                .await
            {
                Ok(answer) => return Ok(answer),
                Err(error) => error,
            };
            if !falls_back(&error) {
                return Err(error);
            }
            if ctx.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(LlmError::Timeout {
                    elapsed: started.elapsed(),
                });
            }
            if chain.len() == 1 {
                return Err(error);
            }
            if i + 1 < chain.len() {
                tracing::warn!(model = %model, error = %error, "model failed; trying the next");
            }
            failures.push(ModelFailure {
                model: model.clone(),
                error: Box::new(error),
            });
        }
        Err(LlmError::Unavailable { attempts: failures })
    }

    async fn try_model(
        &self,
        model: &str,
        body: &[u8],
        estimate: u64,
        stops: &[String],
        ctx: &SampleContext,
        started: Instant,
    ) -> Result<Answer, LlmError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let now = Instant::now();
            let remaining = match ctx.deadline {
                Some(d) if d <= now => {
                    return Err(LlmError::Timeout {
                        elapsed: started.elapsed(),
                    });
                }
                Some(d) => Some(d - now),
                None => None,
            };
            let charged = self.limits.acquire(estimate, ctx.deadline).await?;
            let limit = remaining.map_or(self.timeout, |r| r.min(self.timeout));
            let outcome = match tokio::time::timeout(limit, self.attempt(model, body, stops)).await
            {
                Ok(outcome) => outcome,
                Err(_) => Err(AttemptError::from(LlmError::Timeout {
                    elapsed: started.elapsed(),
                })),
            };
            // A connect timeout from the HTTP client knows no call start; give it ours.
            let outcome = outcome.map_err(|mut f| {
                if let LlmError::Timeout { elapsed } = &mut f.error {
                    *elapsed = started.elapsed();
                }
                f
            });
            let failure = match outcome {
                Ok(answer) => {
                    let actual = answer
                        .usage
                        .map_or(charged, |u| u.prompt.saturating_add(u.completion));
                    self.limits.settle(charged, actual);
                    return Ok(answer);
                }
                Err(failure) => failure,
            };
            self.limits.settle(charged, 0);
            let error = failure.error;
            if !error.is_retryable() || attempt >= self.retry.max_attempts {
                return Err(error);
            }
            let delay = self.retry.delay(attempt, failure.retry_after);
            if ctx.deadline.is_some_and(|d| Instant::now() + delay >= d) {
                return Err(error);
            }
            tracing::warn!(
                model,
                attempt,
                delay_ms = delay.as_millis() as u64,
                error = %error,
                "provider call failed; retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }

    async fn attempt(
        &self,
        model: &str,
        body: &[u8],
        stops: &[String],
    ) -> Result<Answer, AttemptError> {
        let mut request = self
            .http
            .post(self.endpoint.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                if self.mapping.stream {
                    "text/event-stream"
                } else {
                    "application/json"
                },
            )
            .body(body.to_vec());
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        tracing::debug!(model, stream = self.mapping.stream, "calling the provider");
        let raw = http::send(request, self.mapping.stream, self.max_response_bytes).await?;
        Ok(raw.into_answer(model, stops)?)
    }
}

/// Whether the next model of the chain may succeed where this one failed: after retryable
/// failures, and when the model does not exist. The request's own faults, the API key's and
/// this process's rate limits would fail the same way on any model.
fn falls_back(error: &LlmError) -> bool {
    match error {
        LlmError::RateLimited {
            scope: RateLimitScope::Client,
            ..
        } => false,
        LlmError::InvalidRequest(_) => false,
        e if e.is_model_not_found() => true,
        e => e.is_retryable(),
    }
}

impl Provider for OpenAiProvider {
    fn create_message<'a>(
        &'a self,
        params: &'a CreateMessageRequestParams,
        ctx: &'a SampleContext,
    ) -> ProviderFuture<'a> {
        Box::pin(self.sample(params, ctx))
    }
}
