//! Argument completion (`completion/complete`).

use std::collections::BTreeMap;
use std::future::Future;

use futures::future::BoxFuture;

use crate::context::Context;
use crate::error::Result;

/// What a completer gets.
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// The argument (or template variable) being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Other arguments already filled in.
    pub context: BTreeMap<String, String>,
}

/// At most this many values go back; the rest is reported with `hasMore` (completion.mdx).
pub const MAX_COMPLETION_VALUES: usize = 100;

pub(crate) trait Completer: Send + Sync + 'static {
    fn complete(
        &self,
        ctx: Context,
        req: CompletionRequest,
    ) -> BoxFuture<'static, Result<Vec<String>>>;
}

pub(crate) struct CompletionFn<F>(pub(crate) F);

impl<F, Fut> Completer for CompletionFn<F>
where
    F: Fn(Context, CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<String>>> + Send + 'static,
{
    fn complete(
        &self,
        ctx: Context,
        req: CompletionRequest,
    ) -> BoxFuture<'static, Result<Vec<String>>> {
        Box::pin((self.0)(ctx, req))
    }
}

/// Completes from a fixed list: the values starting with what was typed (case-insensitive).
pub fn complete_from<I, S>(values: I, typed: &str) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let typed = typed.to_lowercase();
    values
        .into_iter()
        .map(Into::into)
        .filter(|v| v.to_lowercase().starts_with(&typed))
        .collect()
}
