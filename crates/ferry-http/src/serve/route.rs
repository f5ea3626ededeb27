//! Which service a request goes to: the health checks, the MCP endpoint at its path, the
//! application for everything else.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response, StatusCode};
use http_body_util::Either;

use super::health::Health;
use crate::body::McpBody;
use crate::request_body::RequestBody;

/// Answers 404 to everything: what [`serve`](crate::serve) answers on paths other than
/// the MCP endpoint when no application is given.
#[derive(Clone, Copy, Debug, Default)]
pub struct NotFound;

impl<B> tower_service::Service<Request<B>> for NotFound {
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<McpBody>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _req: Request<B>) -> Self::Future {
        let mut r = Response::new(McpBody::empty());
        *r.status_mut() = StatusCode::NOT_FOUND;
        std::future::ready(Ok(r))
    }
}

/// Sends each request to a health check, the MCP endpoint or the app. The endpoint skips
/// the app's routing entirely, which keeps its path short.
#[derive(Clone)]
pub(super) struct Route<M, A> {
    pub health: Health,
    pub path: Arc<str>,
    pub mcp: M,
    pub app: A,
}

impl<M, A, AB> Route<M, A>
where
    M: tower_service::Service<
            Request<RequestBody>,
            Response = Response<McpBody>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    M::Future: Send + 'static,
    A: tower_service::Service<Request<RequestBody>, Response = Response<AB>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    A::Future: Send + 'static,
{
    /// Calls the service the request is for.
    pub(super) fn call(
        &mut self,
        req: Request<RequestBody>,
    ) -> impl Future<Output = Response<Either<McpBody, AB>>> + use<M, A, AB> {
        use futures::future::Either as Which;

        let path = req.uri().path();
        let routed = if path == &*self.path {
            Which::Left(Which::Left(call_ready(&mut self.mcp, req)))
        } else if let Some(check) = self.health.check_for(path) {
            Which::Left(Which::Right(self.health.answer(check, &req)))
        } else {
            Which::Right(call_ready(&mut self.app, req))
        };
        async move {
            let response = match routed {
                Which::Left(Which::Left(mcp)) => mcp.await.map(|r| r.map(Either::Left)),
                Which::Left(Which::Right(check)) => Ok(check.await.map(Either::Left)),
                Which::Right(app) => app.await.map(|r| r.map(Either::Right)),
            };
            match response {
                Ok(r) => r,
                Err(never) => match never {},
            }
        }
    }
}

/// A call that waits for its service to be ready.
type Waiting<T> = std::pin::Pin<Box<dyn Future<Output = Result<T, Infallible>> + Send>>;

/// A call to `svc` as tower requires it: once ready. A service that is ready at once (the
/// endpoint, the authentication layer, most routers) is called in place and cloned for
/// nothing; one that must wait (a concurrency limit, a buffer) is cloned and waited for
/// in a boxed future.
fn call_ready<S, R>(svc: &mut S, req: R) -> futures::future::Either<S::Future, Waiting<S::Response>>
where
    S: tower_service::Service<R, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    use futures::future::Either as Which;

    match futures::FutureExt::now_or_never(std::future::poll_fn(|cx| svc.poll_ready(cx))) {
        Some(Ok(())) => Which::Left(svc.call(req)),
        Some(Err(never)) => match never {},
        None => {
            let mut svc = svc.clone();
            Which::Right(Box::pin(async move {
                std::future::poll_fn(|cx| svc.poll_ready(cx)).await?;
                svc.call(req).await
            }))
        }
    }
}
