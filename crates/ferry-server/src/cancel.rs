//! A request's cancellation, cheap until somebody waits for it.
//!
//! Every call needs a way to tell its handler that the request is gone, yet almost no
//! handler ever looks. A [`CancellationToken`] costs a lock for each clone, drop and
//! cancel; a [`CallCancel`] is an atomic flag, and builds a token only when a handler,
//! a session or a forward asks for one.

use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// Whether a request was cancelled, shared by the request and its handler's context.
#[derive(Clone, Default)]
pub(crate) struct CallCancel(Arc<State>);

#[derive(Default)]
struct State {
    fired: AtomicBool,
    token: OnceLock<CancellationToken>,
}

impl CallCancel {
    /// A request not cancelled yet.
    pub(crate) fn new() -> Self {
        CallCancel::default()
    }

    /// The token that fires with this request, made on first use (already cancelled if
    /// the request is).
    pub(crate) fn token(&self) -> &CancellationToken {
        let token = self.0.token.get_or_init(CancellationToken::new);
        // Pairs with the fence in `cancel`: either it sees this token, or this sees its
        // flag.
        fence(Ordering::SeqCst);
        if self.0.fired.load(Ordering::Relaxed) {
            token.cancel();
        }
        token
    }

    /// Whether the request was cancelled, here or through its token.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.fired.load(Ordering::Acquire)
            || self
                .0
                .token
                .get()
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// Cancels the request (and its token, if one was made).
    pub(crate) fn cancel(&self) {
        self.0.fired.store(true, Ordering::Release);
        fence(Ordering::SeqCst);
        if let Some(token) = self.0.token.get() {
            token.cancel();
        }
    }

    /// Cancels the request when dropped.
    pub(crate) fn drop_guard(self) -> CancelOnDrop {
        CancelOnDrop(self)
    }
}

/// Cancels its request when dropped.
pub(crate) struct CancelOnDrop(CallCancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_made_after_the_cancel_is_already_cancelled() {
        let cancel = CallCancel::new();
        assert!(!cancel.is_cancelled());
        drop(cancel.clone().drop_guard());
        assert!(cancel.is_cancelled());
        assert!(cancel.token().is_cancelled());
    }

    #[test]
    fn a_token_made_before_the_cancel_fires_with_it() {
        let cancel = CallCancel::new();
        let token = cancel.token().clone();
        assert!(!token.is_cancelled());
        cancel.cancel();
        assert!(token.is_cancelled());
    }

    #[test]
    fn cancelling_the_token_cancels_the_request() {
        let cancel = CallCancel::new();
        cancel.token().cancel();
        assert!(cancel.is_cancelled());
    }

    #[test]
    fn a_token_made_while_another_thread_cancels_always_fires() {
        for _ in 0..2_000 {
            let cancel = CallCancel::new();
            let other = cancel.clone();
            let t = std::thread::spawn(move || other.cancel());
            let token = cancel.token().clone();
            t.join().unwrap();
            assert!(token.is_cancelled());
        }
    }
}
