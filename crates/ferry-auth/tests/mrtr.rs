//! A real ferry-server tool behind ferry-http's endpoint and the auth layer, with JWTs
//! from the test issuer: the principal reaches handlers, and a `requestState` issued to
//! one principal is refused for another (mrtr.mdx, "Security").

use ferry_auth::testing::TestIssuer;
use ferry_auth::{AuthLayer, JwtValidator, ResourceMetadata};
use ferry_http::{HttpConfig, McpService};
use ferry_server::{Context, Elicitation, Server, tool};
use ferry_testkit::http::Client;
use ferry_testkit::probe::whoami;
use ferry_testkit::rpc::{self, accept, call, form_caps, retry};
use ferry_testkit::serve::Running;
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, ferry_form::Form)]
struct Confirm {
    confirm: bool,
}

fn server() -> Server {
    Server::builder("auth-test", "1")
        .tool(
            tool("delete")
                .description("Asks before deleting")
                .json_handler(|ctx: Context, _: Value| async move {
                    let who = ctx
                        .principal()
                        .map(|p| p.subject().to_owned())
                        .unwrap_or_default();
                    match ctx.elicit::<Confirm>("Delete?").key("confirm").await? {
                        Elicitation::Accept(Confirm { confirm: true }) => {
                            Ok(format!("deleted for {who}"))
                        }
                        _ => Ok("kept".to_owned()),
                    }
                }),
        )
        .tool(whoami())
        .build()
        .expect("server builds")
}

/// The endpoint behind the auth layer with JWTs from `issuer`, and its resource URI.
async fn start(issuer: &TestIssuer) -> (Running, String) {
    let iss = issuer.issuer().to_owned();
    let run = Running::spawn("/mcp", move |listener, rx| {
        let addr = listener.local_addr().unwrap();
        let resource = format!("http://{addr}/mcp");
        let validator = JwtValidator::builder(&iss, &resource).build().unwrap();
        let metadata = ResourceMetadata::new(&resource)
            .unwrap()
            .authorization_server(&iss)
            .unwrap();
        let auth = AuthLayer::new(metadata, validator);
        let server = server();
        let mcp = McpService::new(server, HttpConfig::default());
        let app = auth
            .metadata()
            .service::<http_body_util::Full<bytes::Bytes>>();
        async move {
            ferry_http::serve(listener, mcp)
                .layer(auth)
                .app(app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
        }
    })
    .await;
    let resource = format!("http://{}/mcp", run.client.addr());
    (run, resource)
}

#[tokio::test]
async fn request_state_issued_to_one_principal_is_refused_for_another() {
    let issuer = TestIssuer::start().await;
    let (run, resource) = start(&issuer).await;
    let alice = run.client.with_token(&issuer.token(&resource, "alice", ""));
    let bob = run.client.with_token(&issuer.token(&resource, "bob", ""));

    let who = alice
        .post(&call(1, "whoami", json!({}), json!({})))
        .send()
        .await
        .json()
        .await;
    assert_eq!(
        rpc::text(&who),
        serde_json::to_string(&(issuer.issuer(), "alice", "test-client")).unwrap()
    );

    let first = call("first", "delete", json!({}), form_caps());
    let asked = alice.post(&first).send().await.json().await;
    assert_eq!(rpc::result_type(&asked), "input_required", "{asked}");
    let state = rpc::state(&asked).to_owned();
    let yes = json!({"confirm": accept(json!({"confirm": true}))});

    // Bob presents alice's state: refused, like any forged state.
    let stolen = bob
        .post(&retry(&first, "stolen", Some(yes.clone()), Some(&state)))
        .send()
        .await;
    assert_eq!(stolen.status, StatusCode::OK);
    let stolen = stolen.json().await;
    assert_eq!(rpc::error_code(&stolen), -32602, "{stolen}");

    // Without a token the layer refuses before the server sees the state.
    let anonymous = run
        .client
        .post(&retry(&first, "anon", Some(yes.clone()), Some(&state)))
        .send()
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

    // Alice's own retry completes.
    let done = alice
        .post(&retry(&first, "mine", Some(yes), Some(&state)))
        .send()
        .await
        .json()
        .await;
    assert_eq!(rpc::text(&done), "deleted for alice", "{done}");

    // The metadata is served by the same listener.
    let res = Client::new(alice.addr(), "/.well-known/oauth-protected-resource/mcp")
        .call(http::Method::GET)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);

    run.stop().await;
    issuer.stop().await;
}
