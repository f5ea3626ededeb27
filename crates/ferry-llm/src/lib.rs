//! A bridge from MCP sampling to LLM provider APIs.
//!
//! MCP revision 2026-07-28 deprecates sampling (`sampling/createMessage`, sampling.mdx and
//! deprecated.mdx: "Integrate directly with LLM provider APIs"). This crate lets a server
//! that built `CreateMessageRequestParams` for the client call a provider instead, and get
//! back the same `CreateMessageResult`:
//!
//! - [`Provider`]: the object-safe trait (sampling params and a [`SampleContext`] in, a
//!   result or an [`LlmError`] out), so a server can route each call to the client or to a
//!   provider and handle one answer type.
//! - [`OpenAiProvider`] (built from an [`OpenAiConfig`]): any OpenAI-compatible
//!   chat-completions endpoint (OpenAI, vLLM, llama.cpp's server, Ollama, ...), streaming
//!   or not, with the spec's tool-use rules checked ([`check_tool_pairing`]), model choice
//!   from `modelPreferences` ([`ModelTable`]), retries ([`RetryPolicy`]), a fallback model
//!   chain, client-side rate limits ([`RateLimits`]), bounded answers, and usage per
//!   principal and tool ([`UsageLedger`]).
//! - [`ApiKey`]: the credential, read from `FERRY_LLM_API_KEY` by default, never printed.
//!
//! ```no_run
//! use ferry_llm::{OpenAiProvider, Provider, SampleContext};
//! use ferry_protocol::sampling::{CreateMessageRequestParams, SamplingMessage};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // FERRY_LLM_MODEL=gpt-4o-mini FERRY_LLM_API_KEY=sk-...
//! let llm = OpenAiProvider::from_env()?;
//! let params = CreateMessageRequestParams::new(
//!     vec![SamplingMessage::user_text("What is the capital of France?")],
//!     100,
//! );
//! let ctx = SampleContext::new().with_principal("alice").with_tool("geography");
//! let answer = llm.create_message(&params, &ctx).await?;
//! println!("{}: {}", answer.model, answer.content.text());
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
// The sampling types are deprecated with the feature; this crate exists to move off it.
#![allow(deprecated)]

mod error;
mod limits;
mod models;
mod openai;
mod pairing;
mod provider;
mod retry;
mod secret;
mod usage;

pub use error::{ConfigError, LlmError, MAX_ERROR_MESSAGE, ModelFailure, RateLimitScope};
pub use limits::{MEDIA_TOKEN_ESTIMATE, RateLimits, estimate_tokens};
pub use models::{ModelProfile, ModelTable};
pub use openai::{
    BASE_URL_VAR, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT, FALLBACK_MODELS_VAR, MODEL_VAR,
    MaxTokensField, OPENAI_BASE_URL, OpenAiConfig, OpenAiProvider,
};
pub use pairing::check_tool_pairing;
pub use provider::{Provider, ProviderFuture, SampleContext};
pub use retry::RetryPolicy;
pub use secret::{ApiKey, DEFAULT_API_KEY_VAR};
pub use usage::{DEFAULT_MAX_ENTRIES, OVERFLOW, TokenCounts, Usage, UsageEntry, UsageLedger};

/// Re-exported so users name the same protocol types as the bridge.
pub use ferry_protocol;

/// Compiles the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
