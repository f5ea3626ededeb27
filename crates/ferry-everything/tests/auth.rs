//! The everything server as an OAuth 2.1 resource server, as `--auth-issuer` sets it up:
//! JWTs from a test authorization server on 127.0.0.1, Protected Resource Metadata on the
//! same listener, `confirm_delete` needing `files:delete` (basic/authorization, "Scope
//! challenge handling"), and every `requestState` bound to its user (mrtr.mdx).

use std::future::IntoFuture;
use std::time::Duration;

use ferry_auth::testing::TestIssuer;
use ferry_everything::app;
use ferry_http::HttpConfig;
use ferry_testkit::http::Client;
use ferry_testkit::rpc::{self, accept, call, form_caps, retry};
use http::{Method, StatusCode};
use serde_json::{Value, json};

/// The server on 127.0.0.1 behind the issuer's tokens.
struct Served {
    client: Client,
    resource: String,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Served {
    async fn start(issuer: &TestIssuer) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let config = HttpConfig::builder()
            .drain_grace(Duration::ZERO)
            .build()
            .expect("a valid config");
        let protected = app::protected(listener, issuer.issuer(), config, None)
            .expect("the protected server builds");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serve = protected.serve.with_graceful_shutdown(async {
            let _ = stopped.await;
        });
        Served {
            client: Client::new(addr, "/mcp"),
            resource: protected.resource,
            stop,
            task: tokio::spawn(serve.into_future()),
        }
    }

    /// A client presenting a token for `subject` with `scopes`.
    fn user(&self, issuer: &TestIssuer, subject: &str, scopes: &str) -> Client {
        self.client
            .with_token(&issuer.token(&self.resource, subject, scopes))
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.task
            .await
            .expect("the serving task")
            .expect("serving ends with Ok");
    }
}

fn delete(id: &str) -> Value {
    call(
        id,
        "confirm_delete",
        json!({"path": "old/report.csv"}),
        form_caps(),
    )
}

fn yes() -> Value {
    json!({"confirm": accept(json!({"confirm": true}))})
}

/// Without a token the answer is 401 with a challenge naming the resource metadata,
/// which the same listener serves, naming the issuer; health checks need no token.
#[tokio::test]
async fn requests_without_a_token_get_401_naming_the_resource_metadata() {
    let issuer = TestIssuer::start().await;
    let run = Served::start(&issuer).await;
    let res = run
        .client
        .post(&call(1, "echo", json!({"message": "hi"}), json!({})))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    let challenge = res
        .header("www-authenticate")
        .expect("a challenge")
        .to_owned();
    let metadata_url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        run.client.addr()
    );
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );

    let metadata = Client::new(
        run.client.addr(),
        "/.well-known/oauth-protected-resource/mcp",
    )
    .call(Method::GET)
    .send()
    .await;
    assert_eq!(metadata.status, StatusCode::OK);
    let metadata: Value = serde_json::from_slice(&metadata.bytes().await).expect("JSON");
    assert_eq!(metadata["resource"], run.resource);
    assert_eq!(metadata["authorization_servers"], json!([issuer.issuer()]));
    assert!(
        metadata["scopes_supported"]
            .as_array()
            .expect("scopes")
            .contains(&json!("files:delete"))
    );

    let health = Client::new(run.client.addr(), "/healthz")
        .call(Method::GET)
        .send()
        .await;
    assert_eq!(health.status, StatusCode::OK);
    run.stop().await;
    issuer.stop().await;
}

/// `confirm_delete` with a token holding only `files:read` gets 403 with an
/// `insufficient_scope` challenge naming `files:delete`; with the scope it runs.
#[tokio::test]
async fn confirm_delete_needs_the_delete_scope() {
    let issuer = TestIssuer::start().await;
    let run = Served::start(&issuer).await;

    let reader = run.user(&issuer, "alice", "files:read");
    let refused = reader.post(&delete("d1")).send().await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let challenge = refused
        .header("www-authenticate")
        .expect("a step-up challenge")
        .to_owned();
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(challenge.contains("files:delete"), "{challenge}");

    let deleter = run.user(&issuer, "alice", "files:read files:delete");
    let first = delete("d2");
    let asked = deleter.post(&first).send().await.json().await;
    assert_eq!(rpc::result_type(&asked), "input_required", "{asked}");
    let state = rpc::state(&asked).to_owned();
    let done = deleter
        .post(&retry(&first, "d3", Some(yes()), Some(&state)))
        .send()
        .await
        .json()
        .await;
    assert!(
        rpc::text(&done).starts_with("Deleted old/report.csv ("),
        "{done}"
    );
    run.stop().await;
    issuer.stop().await;
}

/// A `requestState` issued to alice is refused when bob retries with it, though bob
/// holds the scope; alice's own retry then completes.
#[tokio::test]
async fn a_request_state_issued_to_one_user_is_refused_for_another() {
    let issuer = TestIssuer::start().await;
    let run = Served::start(&issuer).await;
    let alice = run.user(&issuer, "alice", "files:delete");
    let bob = run.user(&issuer, "bob", "files:delete");

    let first = delete("a1");
    let asked = alice.post(&first).send().await.json().await;
    assert_eq!(rpc::result_type(&asked), "input_required", "{asked}");
    let state = rpc::state(&asked).to_owned();

    let stolen = bob
        .post(&retry(&first, "b1", Some(yes()), Some(&state)))
        .send()
        .await;
    assert_eq!(stolen.status, StatusCode::OK);
    let stolen = stolen.json().await;
    assert_eq!(rpc::error_code(&stolen), -32602, "{stolen}");

    let done = alice
        .post(&retry(&first, "a2", Some(yes()), Some(&state)))
        .send()
        .await
        .json()
        .await;
    assert!(
        rpc::text(&done).starts_with("Deleted old/report.csv ("),
        "{done}"
    );
    run.stop().await;
    issuer.stop().await;
}
