//! A protected endpoint on 127.0.0.1 for the length of a test: an [`AuthLayer`] over a
//! trivial service that reports the principal it sees, served by axum together with the
//! Protected Resource Metadata.

#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;

use axum::body::Body;
use bytes::Bytes;
use ferry_auth::AuthLayer;
use ferry_server::{InsufficientScope, Principal};
use ferry_testkit::http::Client;
use http::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tower::Layer;

/// The endpoint path.
pub const PATH: &str = "/mcp";

/// A running endpoint.
pub struct Endpoint {
    pub addr: SocketAddr,
    pub client: Client,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Endpoint {
    /// The resource URI of the endpoint.
    pub fn resource(&self) -> String {
        format!("http://{}{PATH}", self.addr)
    }

    /// A POST to the endpoint with `authorization` (if any).
    pub fn post(&self, authorization: Option<&str>) -> ferry_testkit::http::Call {
        let call = self.client.call(Method::POST).body("{}");
        match authorization {
            Some(a) => call.header("authorization", a),
            None => call,
        }
    }

    /// A POST with a bearer token.
    pub fn bearer(&self, token: &str) -> ferry_testkit::http::Call {
        self.post(Some(&format!("Bearer {token}")))
    }

    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = self.task.await;
    }
}

/// Binds 127.0.0.1:0, builds the layer with the resource URI (`http://ADDR/mcp`), and
/// serves it over [`inner`] at [`PATH`], with the metadata at its well-known paths.
pub async fn serve(make_layer: impl FnOnce(&str) -> AuthLayer) -> Endpoint {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let layer = make_layer(&format!("http://{addr}{PATH}"));
    let router = axum::Router::new()
        .route_service(PATH, layer.layer(tower::service_fn(inner)))
        .merge(layer.metadata().router());
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await;
    });
    Endpoint {
        addr,
        client: Client::new(addr, PATH),
        stop: Some(tx),
        task,
    }
}

/// Reports the principal as JSON. With `x-need-scopes: a b`, answers 403 with
/// [`InsufficientScope`] unless the principal holds them, as a server would for a tool.
pub async fn inner(req: Request<Body>) -> Result<Response<Body>, Infallible> {
    let principal = req.extensions().get::<Principal>().cloned();
    if let Some(need) = req
        .headers()
        .get("x-need-scopes")
        .and_then(|v| v.to_str().ok())
    {
        let need: Vec<String> = need.split(' ').map(str::to_owned).collect();
        let ok = principal
            .as_ref()
            .is_some_and(|p| p.scopes().missing(&need).is_empty());
        if !ok {
            let mut res = Response::new(Body::from(Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"insufficient scope"}}"#,
            )));
            *res.status_mut() = StatusCode::FORBIDDEN;
            res.extensions_mut()
                .insert(InsufficientScope { required: need });
            return Ok(res);
        }
    }
    let body = match principal {
        Some(p) => json!({
            "id": p.id(),
            "subject": p.subject(),
            "issuer": p.issuer(),
            "client_id": p.client_id(),
            "scopes": p.scopes().to_string(),
        }),
        None => json!({"anonymous": true}),
    };
    Ok(Response::new(Body::from(
        serde_json::to_vec(&body).unwrap(),
    )))
}

/// The JSON body of a response.
pub async fn body(res: ferry_testkit::http::Response) -> Value {
    let bytes = res.bytes().await;
    serde_json::from_slice(&bytes).unwrap_or_else(|_| panic!("JSON body: {bytes:?}"))
}

/// Every `WWW-Authenticate` value of a response.
pub fn challenges(res: &ferry_testkit::http::Response) -> Vec<String> {
    res.headers
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}
