//! The future of an [`super::AuthService`] call: a ready refusal, a validation that then
//! calls the inner service, or the inner call, whose `403` may become a step-up challenge.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use ferry_server::InsufficientScope;
use http::{HeaderValue, Request, Response, StatusCode};
use pin_project_lite::pin_project;

use super::{Pending, Shared, ValidationFuture, set_principal};
use crate::credentials::Scheme;
use crate::dpop::DPOP_NONCE_HEADER;

pin_project! {
    /// The future of an [`AuthService`] call.
    pub struct ResponseFuture<S, ReqBody, ResBody>
    where
        S: tower_service::Service<Request<ReqBody>>,
    {
        #[pin]
        pub(super) state: State<S, ReqBody, ResBody>,
    }
}

pin_project! {
    #[project = StateProj]
    pub(super) enum State<S, ReqBody, ResBody>
    where
        S: tower_service::Service<Request<ReqBody>>,
    {
        Ready { response: Option<Response<ResBody>> },
        Validating { fut: ValidationFuture, pending: Option<Box<Pending<S, ReqBody>>> },
        Inner {
            #[pin]
            fut: S::Future,
            // `None` for an anonymous request.
            scheme: Option<Scheme>,
            shared: Arc<Shared>,
            nonce: Option<HeaderValue>,
        },
    }
}

impl<S, ReqBody, ResBody> ResponseFuture<S, ReqBody, ResBody>
where
    S: tower_service::Service<Request<ReqBody>>,
{
    pub(super) fn ready(response: Response<ResBody>) -> Self {
        ResponseFuture {
            state: State::Ready {
                response: Some(response),
            },
        }
    }

    pub(super) fn inner(
        fut: S::Future,
        scheme: Option<Scheme>,
        shared: &Arc<Shared>,
        nonce: Option<HeaderValue>,
    ) -> Self {
        ResponseFuture {
            state: State::Inner {
                fut,
                scheme,
                shared: shared.clone(),
                nonce,
            },
        }
    }
}

impl<S, ReqBody, ResBody> Future for ResponseFuture<S, ReqBody, ResBody>
where
    S: tower_service::Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: From<Bytes>,
{
    type Output = Result<Response<ResBody>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Ready { response } => {
                    return Poll::Ready(Ok(response.take().expect("polled after completion")));
                }
                StateProj::Validating { fut, pending } => {
                    let verdict = std::task::ready!(fut.as_mut().poll(cx));
                    let Pending {
                        mut req,
                        mut inner,
                        token,
                        scheme,
                        shared,
                    } = *pending.take().expect("polled after completion");
                    let admitted = verdict.and_then(|entry| {
                        let nonce = shared.admit(&entry, scheme, &token, &req)?;
                        set_principal(&mut req, &entry.principal);
                        Ok(nonce)
                    });
                    drop(token);
                    let next = match admitted {
                        Ok(nonce) => State::Inner {
                            fut: inner.call(req),
                            scheme: Some(scheme),
                            shared,
                            nonce,
                        },
                        Err(r) => State::Ready {
                            response: Some(shared.refuse(r, Some(scheme))),
                        },
                    };
                    state.set(next);
                }
                StateProj::Inner {
                    fut,
                    scheme,
                    shared,
                    nonce,
                } => {
                    let mut res = std::task::ready!(fut.poll(cx))?;
                    if let Some(n) = nonce.take() {
                        res.headers_mut().insert(DPOP_NONCE_HEADER, n);
                    }
                    if res.status() == StatusCode::FORBIDDEN
                        && let Some(needed) = res.extensions().get::<InsufficientScope>()
                    {
                        let needed = needed.required.clone();
                        shared.step_up(&mut res, *scheme, &needed);
                    }
                    return Poll::Ready(Ok(res));
                }
            }
        }
    }
}
