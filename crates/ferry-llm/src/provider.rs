//! The [`Provider`] trait: sampling params in, a sampling result out.

use std::future::Future;
use std::pin::Pin;

use ferry_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};
use tokio::time::Instant;

use crate::error::LlmError;

/// The future a [`Provider`] returns.
pub type ProviderFuture<'a> =
    Pin<Box<dyn Future<Output = Result<CreateMessageResult, LlmError>> + Send + 'a>>;

/// Something that answers `sampling/createMessage` params with a model's message.
///
/// The input and output are the protocol's own types, so a server can send the same params
/// to the client (when it declared `sampling`) or to a provider, and handle one result type.
/// The trait is object safe: keep an `Arc<dyn Provider>`.
///
/// ```
/// use std::sync::Arc;
/// use ferry_llm::{Provider, ProviderFuture, SampleContext};
/// use ferry_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};
///
/// /// Answers every request with the same text.
/// struct Canned;
///
/// impl Provider for Canned {
///     fn create_message<'a>(
///         &'a self,
///         _params: &'a CreateMessageRequestParams,
///         _ctx: &'a SampleContext,
///     ) -> ProviderFuture<'a> {
///         Box::pin(async { Ok(CreateMessageResult::text("canned", "hello")) })
///     }
/// }
///
/// let provider: Arc<dyn Provider> = Arc::new(Canned);
/// # let _ = provider;
/// ```
pub trait Provider: Send + Sync {
    /// Samples the model for `params`. `ctx` says on whose behalf (for accounting) and by when.
    fn create_message<'a>(
        &'a self,
        params: &'a CreateMessageRequestParams,
        ctx: &'a SampleContext,
    ) -> ProviderFuture<'a>;
}

impl<P: Provider + ?Sized> Provider for std::sync::Arc<P> {
    fn create_message<'a>(
        &'a self,
        params: &'a CreateMessageRequestParams,
        ctx: &'a SampleContext,
    ) -> ProviderFuture<'a> {
        (**self).create_message(params, ctx)
    }
}

/// Who a sampling call is for, and by when it must end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleContext {
    /// The authenticated principal the call is made for (usage is accounted per principal).
    pub principal: Option<String>,
    /// The MCP tool whose handler made the call (usage is accounted per tool).
    pub tool: Option<String>,
    /// The moment the whole call (every retry and fallback included) must end by.
    pub deadline: Option<Instant>,
}

impl SampleContext {
    /// A context with no principal, no tool and no deadline.
    pub fn new() -> Self {
        SampleContext::default()
    }

    /// Sets the principal.
    pub fn with_principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// Sets the tool.
    pub fn with_tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Sets the deadline.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Sets the deadline `timeout` from now.
    pub fn with_timeout(self, timeout: std::time::Duration) -> Self {
        self.with_deadline(Instant::now() + timeout)
    }
}
