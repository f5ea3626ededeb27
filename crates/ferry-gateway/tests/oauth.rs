//! The gateway as an OAuth 2.1 resource server in front of an OAuth-protected upstream,
//! against a real authorization server (oidc-provider, on 127.0.0.1):
//!
//! - clients present the issuer's JWTs for the gateway's own resource; tokens for another
//!   audience, or none, get 401 with a challenge naming the gateway's resource metadata;
//! - the gateway reaches the upstream with its own client credentials (a token for the
//!   upstream's resource), never with the client's token, which the upstream refuses;
//! - a `requestState` is bound to the JWT's principal: another client cannot redeem it;
//! - the client secret goes only to the issuer it was configured for.

use std::future::IntoFuture;
use std::time::Duration;

use ferry_client::Client;
use ferry_everything::app;
use ferry_gateway::{ClientCredentials, Gateway, GatewayConfig, UpstreamConfig};
use ferry_http::HttpConfig;
use ferry_oauth::{Grant, OAuthAuthorizer, StaticClient};
use ferry_testkit::authorization_server::AuthorizationServer;
use ferry_testkit::http::mcp_headers;
use ferry_testkit::rpc::{self, accept, form_caps};
use serde_json::{Value, json};

const GATEWAY_CLIENT: (&str, &str) = ("ferry-gateway", "gateway-secret");
const AGENT_A: (&str, &str) = ("agent-a", "agent-a-secret");
const AGENT_B: (&str, &str) = ("agent-b", "agent-b-secret");

/// The authorization server, a protected ferry-everything upstream, and the gateway in
/// front of it; the URLs of the two MCP endpoints.
struct Deployment {
    issuer: AuthorizationServer,
    upstream: String,
    gateway: String,
    dir: tempfile::TempDir,
}

async fn protected_upstream(issuer: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = HttpConfig::builder()
        .drain_grace(Duration::ZERO)
        .build()
        .unwrap();
    let protected = app::protected(listener, issuer, config, None).expect("the upstream builds");
    tokio::spawn(protected.serve.into_future());
    protected.resource
}

async fn gateway_in_front(upstream: UpstreamConfig, issuer: &str, dir: &std::path::Path) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut config = GatewayConfig::default();
    config.upstreams = vec![upstream];
    config.auth_issuer = Some(issuer.to_owned());
    config.usage_log = Some(dir.join("usage.jsonl"));
    let gateway = Gateway::builder(config)
        .client_secret("files", GATEWAY_CLIENT.1)
        .build()
        .await
        .expect("the gateway starts, authorized at the upstream");
    let addr = listener.local_addr().unwrap();
    tokio::spawn(gateway.serve(listener, std::future::pending()));
    format!("http://{addr}/mcp")
}

async fn deploy() -> Option<Deployment> {
    let issuer =
        AuthorizationServer::start_with_clients(&app::SCOPES, &[GATEWAY_CLIENT, AGENT_A, AGENT_B])?;
    let upstream = protected_upstream(issuer.issuer()).await;
    let dir = tempfile::tempdir().unwrap();
    let credentials = ClientCredentials::new(issuer.issuer(), GATEWAY_CLIENT.0, "UNUSED");
    let files = UpstreamConfig::http("files", &upstream).with_client_credentials(credentials);
    let gateway = gateway_in_front(files, issuer.issuer(), dir.path()).await;
    Some(Deployment {
        issuer,
        upstream,
        gateway,
        dir,
    })
}

/// An access token for `client` and the resource `audience`, straight from the token
/// endpoint (client credentials, `client_secret_basic`, RFC 8707 `resource`).
async fn token(issuer: &str, client: (&str, &str), audience: &str) -> String {
    let reply: Value = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .basic_auth(client.0, Some(client.1))
        .form(&[("grant_type", "client_credentials"), ("resource", audience)])
        .send()
        .await
        .expect("the token endpoint answers")
        .json()
        .await
        .expect("a JSON token response");
    reply["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no access token in {reply}"))
        .to_owned()
}

/// POSTs one MCP message with `token`; the status, `WWW-Authenticate` and the body.
async fn post(url: &str, token: Option<&str>, message: &Value) -> (u16, String, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .headers(mcp_headers(message))
        .body(serde_json::to_vec(message).unwrap());
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    let body = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|l| l.starts_with('{'))
        .map_or(text.as_str(), |l| l)
        .to_owned();
    (
        status,
        challenge,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

fn echo(id: u64) -> Value {
    rpc::call(id, "echo", json!({"text": "through"}), form_caps())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_checked_at_the_gateway_and_the_upstream_gets_the_gateways_own() {
    let Some(d) = deploy().await else { return };
    let issuer = d.issuer.issuer();

    let (status, challenge, _) = post(&d.gateway, None, &echo(1)).await;
    assert_eq!(status, 401);
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        d.gateway.trim_end_matches("/mcp")
    );
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    let metadata: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], d.gateway.as_str());
    assert_eq!(metadata["authorization_servers"], json!([issuer]));

    // A token for the upstream is no token for the gateway, and the other way round:
    // had the gateway forwarded the client's token, the upstream would have refused it.
    let for_upstream = token(issuer, AGENT_A, &d.upstream).await;
    let (status, challenge, _) = post(&d.gateway, Some(&for_upstream), &echo(2)).await;
    assert_eq!(status, 401, "a token for another audience");
    assert!(challenge.contains("invalid_token"), "{challenge}");
    let for_gateway = token(issuer, AGENT_A, &d.gateway).await;
    let (status, _, _) = post(&d.upstream, Some(&for_gateway), &echo(3)).await;
    assert_eq!(status, 401, "the upstream refuses the gateway's audience");

    let (status, _, answer) = post(&d.gateway, Some(&for_gateway), &echo(4)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(rpc::text(&answer), "through");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ferry_client_with_client_credentials_discovers_the_gateways_issuer() {
    let Some(d) = deploy().await else { return };
    let oauth = OAuthAuthorizer::builder()
        .grant(Grant::ClientCredentials)
        .static_client(
            StaticClient::new(AGENT_A.0)
                .secret(AGENT_A.1)
                .issuer(d.issuer.issuer()),
        )
        .build()
        .unwrap();
    let client = Client::builder()
        .http(&d.gateway)
        .authorizer(oauth)
        .build()
        .await
        .expect("the client signs in at the gateway's issuer and connects");
    let result = client
        .call_tool("echo", json!({"text": "hello"}))
        .await
        .expect("tools/call through the gateway");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        "hello"
    );
    let records = std::fs::read_to_string(d.dir.path().join("usage.jsonl")).unwrap();
    let last: Value = serde_json::from_str(records.lines().last().unwrap()).unwrap();
    assert_eq!(last["tool"], "echo");
    assert_eq!(last["outcome"], "complete");
    let principal = last["principal"].as_str().unwrap();
    assert!(principal.contains(AGENT_A.0), "{principal}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_state_is_bound_to_the_principal_of_the_token() {
    let Some(d) = deploy().await else { return };
    let issuer = d.issuer.issuer();
    let alice = token(issuer, AGENT_A, &d.gateway).await;
    let bob = token(issuer, AGENT_B, &d.gateway).await;
    let first = rpc::call(
        1,
        "confirm_delete",
        json!({"path": "old/report.csv"}),
        form_caps(),
    );
    let (status, _, asked) = post(&d.gateway, Some(&alice), &first).await;
    assert_eq!(status, 200, "{asked}");
    assert_eq!(rpc::result_type(&asked), "input_required", "{asked}");
    let state = rpc::state(&asked).to_owned();
    let key = asked["result"]["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .expect("one input request");
    let answers = json!({ key: accept(json!({"confirm": true})) });

    let stolen = rpc::retry(&first, 2, Some(answers.clone()), Some(&state));
    let (_, _, refused) = post(&d.gateway, Some(&bob), &stolen).await;
    assert_eq!(rpc::error_code(&refused), -32602, "{refused}");

    let retry = rpc::retry(&first, 3, Some(answers), Some(&state));
    let (_, _, done) = post(&d.gateway, Some(&alice), &retry).await;
    assert!(
        rpc::text(&done).starts_with("Deleted old/report.csv"),
        "{done}"
    );
}

/// The upstream names another authorization server than the one the credentials were
/// issued by: the gateway does not send its secret there, and does not start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_secret_goes_only_to_its_own_issuer() {
    let Some(ours) = AuthorizationServer::start_with_clients(&app::SCOPES, &[GATEWAY_CLIENT])
    else {
        return;
    };
    let Some(theirs) = AuthorizationServer::start_with_clients(&app::SCOPES, &[GATEWAY_CLIENT])
    else {
        return;
    };
    let elsewhere = protected_upstream(theirs.issuer()).await;
    let credentials = ClientCredentials::new(ours.issuer(), GATEWAY_CLIENT.0, "UNUSED");
    let mut config = GatewayConfig::default();
    config.upstreams =
        vec![UpstreamConfig::http("files", &elsewhere).with_client_credentials(credentials)];
    let started = Gateway::builder(config)
        .client_secret("files", GATEWAY_CLIENT.1)
        .build()
        .await;
    let error = started.expect_err("an upstream naming another issuer is refused");
    let text = format!("{error:#}");
    let chain = std::iter::successors(Some(&error as &dyn std::error::Error), |e| e.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ");
    assert!(
        chain.contains(&format!("registered with {}", ours.issuer()))
            && chain.contains(&format!("now uses {}", theirs.issuer())),
        "{text} / {chain}"
    );
}
