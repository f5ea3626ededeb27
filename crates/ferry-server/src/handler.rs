//! Handlers as plain async functions that take only what they use.
//!
//! A tool, prompt or resource handler is an async function (or closure) of up to four
//! arguments. Every argument but the last is an extractor ([`FromContext`]): the
//! request's [`Context`], or application state ([`State`]). The last argument may be an
//! extractor too, or the request's input: the tool's arguments as any
//! `Deserialize + JsonSchema` type (its schema becomes the tool's `inputSchema`), a
//! prompt's arguments, or the [`ResourceRequest`] being read. A handler that needs
//! nothing takes nothing.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use ferry_server::{tool, Context, Result, Server, State};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Default)]
//! struct Counter {
//!     total: AtomicU64,
//! }
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct AddArgs { by: u64 }
//!
//! let server = Server::builder("counter", "1.0.0")
//!     .state(Counter::default())
//!     .tool(tool("ping").handler(|| async { Ok("pong") }))
//!     .tool(tool("who").handler(|ctx: Context| async move {
//!         Ok(ctx.client_info().map_or("unknown".to_owned(), |c| c.name.clone()))
//!     }))
//!     .tool(tool("add").handler(|counter: State<Counter>, args: AddArgs| async move {
//!         Ok(counter.total.fetch_add(args.by, Ordering::Relaxed).to_string())
//!     }))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
//!
//! [`ResourceRequest`]: crate::ResourceRequest

use ferry_protocol::quote::quote;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::prompt::PromptArguments;
use crate::resource::ResourceRequest;

/// Application state shared by every handler: [`crate::ServerBuilder::state`] stores one
/// value per type, and a handler asks for it by type.
///
/// `State<S>` holds an `Arc<S>`: taking it costs a reference count, never a clone of
/// `S`, and `S` needs no `Clone`. It dereferences to `S`.
pub struct State<S>(pub Arc<S>);

impl<S> Deref for State<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for State<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}

/// A type of application state a handler needs: checked when the server is built (and
/// when a handler is added later), so a missing one is an error at start-up, not at the
/// first request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateType {
    id: TypeId,
    name: &'static str,
}

impl StateType {
    /// The state type `S`.
    pub fn of<S: 'static>() -> Self {
        StateType {
            id: TypeId::of::<S>(),
            name: std::any::type_name::<S>(),
        }
    }

    /// The type's name, for error messages.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// The server's application state, one value per type.
#[derive(Clone, Default)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl StateMap {
    pub(crate) fn insert<S: Send + Sync + 'static>(&mut self, value: Arc<S>) {
        self.values.insert(TypeId::of::<S>(), value);
    }

    pub(crate) fn get<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.values
            .get(&TypeId::of::<S>())
            .and_then(|v| v.clone().downcast::<S>().ok())
    }

    /// The first of `needed` that is missing.
    pub(crate) fn missing(&self, needed: &[StateType]) -> Option<StateType> {
        needed
            .iter()
            .find(|t| !self.values.contains_key(&t.id))
            .copied()
    }
}

/// Something a handler can take from the request's context: [`Context`] itself, or
/// [`State`]. Implement it for your own extractors (a database connection from state,
/// the caller's tenant from the principal, ...).
pub trait FromContext: Sized + Send + 'static {
    /// Takes the value from the context; an error ends the call with it.
    fn from_context(ctx: &Context) -> Result<Self>;

    /// The application state it needs, checked when the server is built.
    fn state_type() -> Option<StateType> {
        None
    }
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self> {
        Ok(ctx.clone())
    }
}

impl<S: Send + Sync + 'static> FromContext for State<S> {
    fn from_context(ctx: &Context) -> Result<Self> {
        ctx.server().state::<S>().map(State).ok_or_else(|| {
            // Unreachable once built: registration checks every handler's state.
            Error::execution(format!(
                "no application state of type {}",
                std::any::type_name::<S>()
            ))
        })
    }

    fn state_type() -> Option<StateType> {
        Some(StateType::of::<S>())
    }
}

/// Markers that tell the two ways a handler's last argument is made apart.
pub mod marker {
    /// The last argument is an extractor ([`super::FromContext`]).
    #[derive(Debug)]
    pub enum ViaContext {}
    /// The last argument is the request's input.
    #[derive(Debug)]
    pub enum ViaInput {}
}

/// The last argument of a handler: made from the request's input `I` (tool arguments,
/// prompt arguments, the resource request), or an extractor. `M` tells the two apart.
pub trait FromInput<I: ?Sized, M>: Sized + Send + 'static {
    /// Makes the argument.
    fn from_input(ctx: &Context, input: &I) -> Result<Self>;

    /// The JSON Schema of the input, when the argument is the input.
    fn input_schema() -> Option<Value> {
        None
    }

    /// The application state it needs.
    fn state_type() -> Option<StateType> {
        None
    }
}

impl<I: ?Sized, T: FromContext> FromInput<I, marker::ViaContext> for T {
    fn from_input(ctx: &Context, _input: &I) -> Result<Self> {
        T::from_context(ctx)
    }

    fn state_type() -> Option<StateType> {
        T::state_type()
    }
}

/// Tool arguments: parsed from the (already validated) arguments object.
impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromInput<Value, marker::ViaInput> for T {
    fn from_input(ctx: &Context, input: &Value) -> Result<Self> {
        // A number the `Value` does not hold exactly: read the text as sent, so a type
        // that asks for the exact number gets it.
        if let Some(exact) = ctx.exact_arguments()
            && let Ok(args) = serde_json::from_str::<T>(exact.get())
        {
            return Ok(args);
        }
        T::deserialize(input)
            .map_err(|e| Error::execution(format!("Invalid arguments: {}", quote(&e.to_string()))))
    }

    fn input_schema() -> Option<Value> {
        Some(crate::schema::input_schema_for::<T>())
    }
}

/// Prompt arguments: [`PromptArguments`] itself, or any type read from them (its fields
/// become the prompt's declared arguments).
impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromInput<PromptArguments, marker::ViaInput>
    for T
{
    fn from_input(_ctx: &Context, input: &PromptArguments) -> Result<Self> {
        use serde::de::IntoDeserializer as _;
        let de: serde::de::value::MapDeserializer<'_, _, serde::de::value::Error> =
            serde::de::value::MapDeserializer::new(
                input
                    .iter()
                    .map(|(k, v)| (k.as_str().into_deserializer(), v.as_str())),
            );
        T::deserialize(de).map_err(|e| {
            Error::invalid_params(format!("Invalid arguments: {}", quote(&e.to_string())))
        })
    }

    fn input_schema() -> Option<Value> {
        Some(crate::schema::input_schema_for::<T>())
    }
}

impl FromInput<ResourceRequest, marker::ViaInput> for ResourceRequest {
    fn from_input(_ctx: &Context, input: &ResourceRequest) -> Result<Self> {
        Ok(input.clone())
    }
}

/// An async function that can handle a tool call, prompt or resource read whose input is
/// `I`. Implemented for functions of up to four arguments (see the [module](self)
/// docs); `T` names the arguments' kinds and is inferred.
pub trait Handler<T, I: ?Sized>: Send + Sync + 'static {
    /// What the handler returns on success.
    type Output: Send + 'static;
    /// The future of one call.
    type Future: Future<Output = Result<Self::Output>> + Send + 'static;

    /// Calls the handler.
    fn call(&self, ctx: Context, input: &I) -> Self::Future;

    /// The input's JSON Schema, when the handler takes the input.
    fn input_schema() -> Option<Value>;

    /// The application state the handler needs.
    fn state_types() -> Vec<StateType>;
}

impl<F, Fut, R, I> Handler<(), I> for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: Send + 'static,
    I: ?Sized,
{
    type Output = R;
    type Future = Fut;

    fn call(&self, _ctx: Context, _input: &I) -> Fut {
        self()
    }

    fn input_schema() -> Option<Value> {
        None
    }

    fn state_types() -> Vec<StateType> {
        Vec::new()
    }
}

macro_rules! impl_handler {
    ($($ty:ident),* ; $last:ident) => {
        impl<F, Fut, R, I, M, $($ty,)* $last> Handler<(M, $($ty,)* $last,), I> for F
        where
            F: Fn($($ty,)* $last) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<R>> + Send + 'static,
            R: Send + 'static,
            I: ?Sized,
            $($ty: FromContext,)*
            $last: FromInput<I, M>,
        {
            type Output = R;
            type Future = HandlerFuture<Fut>;

            #[allow(non_snake_case)]
            fn call(&self, ctx: Context, input: &I) -> HandlerFuture<Fut> {
                $(
                    let $ty = match $ty::from_context(&ctx) {
                        Ok(v) => v,
                        Err(e) => return HandlerFuture::failed(e),
                    };
                )*
                let $last = match $last::from_input(&ctx, input) {
                    Ok(v) => v,
                    Err(e) => return HandlerFuture::failed(e),
                };
                HandlerFuture::running(self($($ty,)* $last))
            }

            fn input_schema() -> Option<Value> {
                $last::input_schema()
            }

            fn state_types() -> Vec<StateType> {
                [$($ty::state_type(),)* $last::state_type()]
                    .into_iter()
                    .flatten()
                    .collect()
            }
        }
    };
}

pin_project_lite::pin_project! {
    /// The future of a handler call: the handler's own, or the error an argument failed
    /// with.
    pub struct HandlerFuture<Fut> {
        #[pin]
        inner: Inner<Fut>,
    }
}

pin_project_lite::pin_project! {
    #[project = InnerProj]
    enum Inner<Fut> {
        Failed { error: Option<Error> },
        Running { #[pin] fut: Fut },
    }
}

impl<Fut> HandlerFuture<Fut> {
    fn failed(error: Error) -> Self {
        HandlerFuture {
            inner: Inner::Failed { error: Some(error) },
        }
    }

    fn running(fut: Fut) -> Self {
        HandlerFuture {
            inner: Inner::Running { fut },
        }
    }
}

impl<Fut: Future<Output = Result<R>>, R> Future for HandlerFuture<Fut> {
    type Output = Result<R>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<R>> {
        match self.project().inner.project() {
            InnerProj::Running { fut } => fut.poll(cx),
            InnerProj::Failed { error } => std::task::Poll::Ready(Err(error
                .take()
                .unwrap_or_else(|| Error::execution("handler polled after completion")))),
        }
    }
}

impl_handler!(; T1);
impl_handler!(T1; T2);
impl_handler!(T1, T2; T3);
impl_handler!(T1, T2, T3; T4);

/// A handler with its argument kinds erased, as a registry stores it.
pub(crate) trait ErasedHandler<I: ?Sized, R>: Send + Sync + 'static {
    fn call(&self, ctx: Context, input: &I) -> BoxFuture<'static, Result<R>>;
}

/// Wraps a [`Handler`], converting its output with `convert`.
pub(crate) struct Erased<H, T, C> {
    pub(crate) handler: H,
    pub(crate) convert: C,
    pub(crate) _kinds: std::marker::PhantomData<fn() -> T>,
}

impl<H, T, I, C, R> ErasedHandler<I, R> for Erased<H, T, C>
where
    H: Handler<T, I>,
    I: ?Sized,
    C: Fn(H::Output) -> R + Copy + Send + Sync + 'static,
    R: Send + 'static,
    T: 'static,
{
    fn call(&self, ctx: Context, input: &I) -> BoxFuture<'static, Result<R>> {
        let convert = self.convert;
        // `map`, not `async move { fut.await.map(convert) }`: an async block would hold
        // the handler's future twice (as its capture and as the value it awaits).
        Box::pin(futures::FutureExt::map(
            self.handler.call(ctx, input),
            move |result| result.map(convert),
        ))
    }
}

/// Erases `handler`, converting its output with `convert`.
pub(crate) fn erase<H, T, I, C, R>(handler: H, convert: C) -> Arc<dyn ErasedHandler<I, R>>
where
    H: Handler<T, I>,
    I: ?Sized + 'static,
    C: Fn(H::Output) -> R + Copy + Send + Sync + 'static,
    R: Send + 'static,
    T: 'static,
{
    Arc::new(Erased {
        handler,
        convert,
        _kinds: std::marker::PhantomData,
    })
}
