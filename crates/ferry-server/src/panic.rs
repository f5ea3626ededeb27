//! A handler that panics fails only its own call: the panic is caught where the handler's
//! future is polled (and where its future is made), and the call is answered `-32603`
//! naming the method and the tool, prompt or resource, never the panic's payload (which
//! may hold anything the handler had in hand). The server, the connection and every
//! other call go on.
//!
//! Catching costs nothing on the path of a handler that does not panic: unwinding tables,
//! no extra work per poll.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use ferry_protocol::ErrorObject;
use ferry_protocol::quote::quote;

/// The error a call whose handler panicked is answered with, logged once.
pub(crate) fn handler_panicked(method: &str, target: Option<&str>) -> ErrorObject {
    let message = match target {
        Some(t) => {
            tracing::error!(method, target = %quote(t), "a handler panicked; its call is answered -32603");
            format!("Internal error in handler for {method} {:?}", quote(t))
        }
        None => {
            tracing::error!(method, "a handler panicked; its call is answered -32603");
            format!("Internal error in handler for {method}")
        }
    };
    ErrorObject::internal(message)
}

/// Drops what a panic left behind (a payload, or a handler's future that panicked):
/// a panic in its `Drop` is caught too, so nothing unwinds further.
pub(crate) fn discard<T>(value: T) {
    let _ = catch_unwind(AssertUnwindSafe(move || drop(value)));
}

/// Drops a panic's payload without looking at it.
pub(crate) fn discard_payload(payload: Box<dyn Any + Send>) {
    discard(payload);
}
