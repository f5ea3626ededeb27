//! Sampling answered by an LLM provider the server calls itself (the migration off the
//! deprecated `sampling/createMessage`; client/sampling.mdx, deprecation registry). With
//! a [`SamplingPolicy`] on the builder, `ctx.sample(..)` and [`Context::generate`] keep
//! their shape: the policy decides per call whether the client's sampling or the
//! provider answers.
//!
//! A provider's answer is kept like a client's answer: it rides along in the sealed
//! `requestState`, so a handler that samples and then asks the user is not charged a
//! second completion when it runs again on the next round.

use std::sync::Arc;

use ferry_llm::{LlmError, Provider, SampleContext};
use ferry_protocol::ErrorObject;
#[allow(deprecated)]
use ferry_protocol::sampling::CreateMessageRequestParams;
use serde_json::Value;

use crate::ask::{Ask, AskOutput, AskSpec, Interrupt};
use crate::context::Context;

/// Who answers a handler's sampling: the client (the deprecated path), a provider, or
/// the client when it can and the provider otherwise.
#[derive(Clone)]
pub struct SamplingPolicy {
    route: Route,
}

#[derive(Clone)]
enum Route {
    ClientOnly,
    PreferClient(Arc<dyn Provider>),
    ProviderOnly(Arc<dyn Provider>),
}

impl SamplingPolicy {
    /// Only the client samples (the default): a client without the `sampling`
    /// capability gets -32021.
    pub fn client_only() -> Self {
        SamplingPolicy {
            route: Route::ClientOnly,
        }
    }

    /// The client samples when the request declared `sampling` (with `sampling.tools`
    /// when the call offers tools); `provider` answers otherwise. The choice for
    /// clients still on the deprecated path.
    pub fn prefer_client(provider: impl Provider + 'static) -> Self {
        SamplingPolicy {
            route: Route::PreferClient(Arc::new(provider)),
        }
    }

    /// `provider` answers every call; the client is never asked.
    pub fn provider_only(provider: impl Provider + 'static) -> Self {
        SamplingPolicy {
            route: Route::ProviderOnly(Arc::new(provider)),
        }
    }

    /// The provider that answers `spec` for a request with `ctx`'s capabilities, if any.
    pub(crate) fn provider_for(&self, spec: &AskSpec, ctx: &Context) -> Option<Arc<dyn Provider>> {
        if !matches!(spec, AskSpec::Sampling(_)) {
            return None;
        }
        match &self.route {
            Route::ClientOnly => None,
            Route::ProviderOnly(p) => Some(p.clone()),
            Route::PreferClient(p) => spec
                .check_capabilities(ctx.client_capabilities())
                .is_err()
                .then(|| p.clone()),
        }
    }
}

impl Default for SamplingPolicy {
    fn default() -> Self {
        SamplingPolicy::client_only()
    }
}

impl std::fmt::Debug for SamplingPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let route = match self.route {
            Route::ClientOnly => "client_only",
            Route::PreferClient(_) => "prefer_client",
            Route::ProviderOnly(_) => "provider_only",
        };
        f.debug_struct("SamplingPolicy")
            .field("route", &route)
            .finish()
    }
}

impl<T: AskOutput> Ask<T> {
    /// The provider this ask goes to instead of the client, under the server's policy.
    pub(crate) fn provider(&self) -> Option<Arc<dyn Provider>> {
        self.ctx
            .server()
            .inner
            .sampling
            .provider_for(&self.spec, &self.ctx)
    }

    /// Makes sure the book holds the provider's answer under this ask's key: kept from
    /// an earlier round when the question is the same, fetched from `provider` now
    /// otherwise. [`Ask::resolve`] then finds it like any other answer.
    pub(crate) async fn prefetch(&mut self, provider: Arc<dyn Provider>) -> Result<(), Interrupt> {
        let AskSpec::Sampling(params) = &self.spec else {
            return Ok(());
        };
        let digest = self.spec.question_digest();
        let key = {
            let mut book = self.ctx.asks();
            let key = match &self.key {
                Some(k) => k.clone(),
                None => book.next_key(self.spec.kind()),
            };
            let kept = book.answers.contains_key(&key)
                && book.answer_digests.get(&key).is_none_or(|d| *d == digest);
            if kept {
                self.key = Some(key);
                return Ok(());
            }
            key
        };
        self.key = Some(key.clone());
        #[allow(deprecated)]
        let params: CreateMessageRequestParams =
            serde_json::from_value(params.clone()).map_err(|e| {
                Interrupt::failed(ErrorObject::internal(format!("Internal error: {e}")))
            })?;
        let mut call = SampleContext::new();
        if let Some(p) = self.ctx.principal() {
            call = call.with_principal(p.id());
        }
        if let Some(target) = self.ctx.target() {
            call = call.with_tool(target);
        }
        let answer = tokio::select! {
            a = provider.create_message(&params, &call) => a,
            _ = self.ctx.cancelled() => {
                return Err(Interrupt::failed(ErrorObject::internal("Request cancelled")));
            }
        };
        let answer = answer.map_err(|e| Interrupt::failed(provider_error(&e)))?;
        let value: Value = serde_json::to_value(&answer).map_err(|e| {
            Interrupt::failed(ErrorObject::internal(format!("Internal error: {e}")))
        })?;
        let mut book = self.ctx.asks();
        book.answers.insert(key.clone(), value);
        book.answer_digests.insert(key, digest);
        Ok(())
    }
}

/// The JSON-RPC error for a provider's failure: the kind of failure, never the key or
/// the prompt.
fn provider_error(e: &LlmError) -> ErrorObject {
    tracing::warn!(error = %e, "the LLM provider could not answer a sampling call");
    ErrorObject::internal(format!("Internal error: the model provider failed: {e}"))
}
