//! `summarize`: a tool that samples a model through the server's sampling policy. With
//! `--llm-base-url` an OpenAI-compatible provider answers whenever the client did not
//! declare `sampling` (and the client's sampling, the deprecated path, when it did);
//! without it only a client with `sampling` can use the tool.

use std::time::Duration;

use ferry_llm::{ConfigError, ModelTable, OpenAiConfig};
use ferry_protocol::sampling::{CreateMessageRequestParams, SamplingMessage};
use ferry_server::{Context, SamplingPolicy, ServerBuilder, tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// Where the provider is and which models it serves.
#[derive(Clone, Debug, Default)]
pub struct LlmOptions {
    /// The provider's OpenAI-compatible base URL, e.g. `https://api.openai.com/v1`
    /// (`None`: no provider; only the client samples).
    pub base_url: Option<String>,
    /// The model asked first.
    pub model: String,
    /// A model tried when the first one fails.
    pub fallback_model: Option<String>,
}

impl LlmOptions {
    /// The sampling policy these options describe. The API key comes from
    /// `FERRY_LLM_API_KEY`; a provider on loopback (a local model server) may go without.
    pub fn policy(&self) -> Result<SamplingPolicy, ConfigError> {
        let Some(base) = &self.base_url else {
            return Ok(SamplingPolicy::client_only());
        };
        let mut config = OpenAiConfig::new(base.clone(), ModelTable::new(self.model.clone()))
            .timeout(Duration::from_secs(120));
        if std::env::var_os(ferry_llm::DEFAULT_API_KEY_VAR).is_none() {
            config = config.without_api_key();
        }
        if let Some(fallback) = &self.fallback_model {
            config = config.fallback_model(fallback.clone());
        }
        Ok(SamplingPolicy::prefer_client(config.build()?))
    }
}

#[derive(Deserialize, JsonSchema)]
struct SummarizeArgs {
    /// The text to summarize.
    text: String,
}

/// Registers `summarize`.
pub fn register(builder: ServerBuilder) -> ServerBuilder {
    builder.tool(
        tool("summarize")
            .title("Summarize")
            .description(
                "Summarizes a text in one sentence with a language model (the server's provider, or the client's sampling)",
            )
            .handler(|ctx: Context, args: SummarizeArgs| async move {
                let params = CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text(format!(
                        "Summarize in one sentence:\n\n{}",
                        args.text
                    ))],
                    120,
                )
                .with_system_prompt("You write one-sentence summaries.")
                .with_temperature(0.0);
                let answer = ctx.generate(params).await?;
                Ok(answer.content.text())
            }),
    )
}
