//! The cost of the auth layer on the request path, in-process: a request whose token is
//! already validated (the cache hit every request but the first takes), against a
//! pass-through layer, over a trivial inner service and over Ferry's HTTP endpoint
//! answering a `tools/call` echo. `jwt_uncached` verifies the signature on every request,
//! to show what the cache saves.

use std::convert::Infallible;

use bytes::Bytes;
use criterion::{Criterion, criterion_group};
use ferry_auth::testing::{KeyKind, SigningKey};
use ferry_auth::{AuthLayer, JwkSet, JwtValidator, ResourceMetadata, StaticTokens};
use ferry_http::{HttpConfig, McpService};
use ferry_server::{Context, Server, tool};
use http::{Request, Response};
use http_body_util::Full;
use serde::Deserialize;
use serde_json::json;
use tower::{Layer, Service, ServiceExt};

const RESOURCE: &str = "http://127.0.0.1:8080/mcp";

#[derive(Deserialize, schemars::JsonSchema)]
struct Args {
    text: String,
}

fn echo_server() -> Server {
    Server::builder("bench", "1.0.0")
        .tool(tool("echo").handler(|_: Context, a: Args| async move { Ok(a.text) }))
        .build()
        .expect("server builds")
}

const ECHO: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

fn request(token: &str, body: &'static [u8]) -> Request<Full<Bytes>> {
    Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "127.0.0.1:8080")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .header("authorization", format!("Bearer {token}"))
        .body(Full::new(Bytes::from_static(body)))
        .unwrap()
}

/// A signed access token and a validator holding its key.
fn jwt() -> (String, JwtValidator) {
    let key = SigningKey::generate(KeyKind::Es256, "k1");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = key.sign_raw(
        &json!({"alg": "ES256", "typ": "at+jwt", "kid": "k1"}),
        &json!({
            "iss": "https://auth.example.com", "sub": "alice", "aud": RESOURCE,
            "exp": now + 3600, "iat": now, "client_id": "bench", "scope": "mcp:tools files:read"
        }),
    );
    let keys: JwkSet = serde_json::from_value(json!({"keys": [key.public_jwk()]})).unwrap();
    let validator = JwtValidator::builder("https://auth.example.com", RESOURCE)
        .jwks(keys)
        .build()
        .unwrap();
    (token, validator)
}

fn metadata() -> ResourceMetadata {
    ResourceMetadata::new(RESOURCE)
        .unwrap()
        .authorization_server("https://auth.example.com")
        .unwrap()
}

/// Calls a ready service once and waits for the response head.
async fn once<S>(svc: &mut S, req: Request<Full<Bytes>>) -> u16
where
    S: Service<Request<Full<Bytes>>, Response = Response<ferry_http::McpBody>, Error = Infallible>,
{
    svc.ready()
        .await
        .unwrap()
        .call(req)
        .await
        .unwrap()
        .status()
        .as_u16()
}

type Trivial = tower::util::ServiceFn<
    fn(Request<Full<Bytes>>) -> std::future::Ready<Result<Response<Full<Bytes>>, Infallible>>,
>;

fn trivial_fn(
    _: Request<Full<Bytes>>,
) -> std::future::Ready<Result<Response<Full<Bytes>>, Infallible>> {
    std::future::ready(Ok(Response::new(Full::new(Bytes::from_static(b"ok")))))
}

/// Every service measured, built the same way whichever is run.
struct Fixture {
    rt: tokio::runtime::Runtime,
    token: String,
    plain: Trivial,
    cached: ferry_auth::AuthService<Trivial>,
    dev: ferry_auth::AuthService<Trivial>,
    uncached: ferry_auth::AuthService<Trivial>,
    plain_echo: McpService,
    auth_echo: ferry_auth::AuthService<McpService>,
}

impl Fixture {
    fn new() -> Fixture {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (token, validator) = jwt();
        let trivial: Trivial = tower::service_fn(trivial_fn as fn(_) -> _);
        let server = echo_server();
        let mut f = Fixture {
            cached: AuthLayer::new(metadata(), validator.clone()).layer(trivial),
            dev: AuthLayer::new(metadata(), StaticTokens::new().with("dev", "dev-token"))
                .layer(trivial),
            uncached: AuthLayer::builder(metadata(), validator.clone())
                .cache_capacity(0)
                .build()
                .unwrap()
                .layer(trivial),
            plain: trivial,
            plain_echo: McpService::new(server.clone(), HttpConfig::default()),
            auth_echo: AuthLayer::new(metadata(), validator)
                .layer(McpService::new(server, HttpConfig::default())),
            token,
            rt,
        };
        // The first call validates the token; the ones measured find it cached.
        for v in [
            "jwt_cached",
            "static_cached",
            "echo_passthrough",
            "echo_jwt_cached",
        ] {
            f.run(v);
        }
        f
    }

    fn run(&mut self, variant: &str) -> u16 {
        let t = self.token.as_str();
        let rt = &self.rt;
        match variant {
            "passthrough" => rt
                .block_on(self.plain.call(request(t, b"{}")))
                .unwrap()
                .status()
                .as_u16(),
            "jwt_cached" => rt
                .block_on(self.cached.call(request(t, b"{}")))
                .unwrap()
                .status()
                .as_u16(),
            "static_cached" => rt
                .block_on(self.dev.call(request("dev-token", b"{}")))
                .unwrap()
                .status()
                .as_u16(),
            "jwt_uncached" => rt
                .block_on(self.uncached.call(request(t, b"{}")))
                .unwrap()
                .status()
                .as_u16(),
            "echo_passthrough" => rt.block_on(once(&mut self.plain_echo, request(t, ECHO))),
            "echo_jwt_cached" => rt.block_on(once(&mut self.auth_echo, request(t, ECHO))),
            "build_request" => {
                std::hint::black_box(request(t, ECHO));
                200
            }
            other => panic!("unknown variant {other}"),
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut f = Fixture::new();
    let mut g = c.benchmark_group("trivial_inner");
    for v in ["passthrough", "jwt_cached", "static_cached", "jwt_uncached"] {
        g.bench_function(v, |b| b.iter(|| f.run(v)));
    }
    g.finish();
    let mut g = c.benchmark_group("pieces");
    let token = f.token.clone();
    g.bench_function("sha256_of_the_token", |b| {
        b.iter(|| <sha2::Sha256 as sha2::Digest>::digest(std::hint::black_box(token.as_bytes())))
    });
    g.bench_function("build_request", |b| b.iter(|| f.run("build_request")));
    g.finish();
    let mut g = c.benchmark_group("mcp_echo");
    g.bench_function("passthrough", |b| b.iter(|| f.run("echo_passthrough")));
    g.bench_function("jwt_cached", |b| b.iter(|| f.run("echo_jwt_cached")));
    g.finish();
}

criterion_group!(benches, bench);

/// `FERRY_AUTH_BENCH_COUNT=variant:N` runs one variant N times and exits, for counting
/// instructions under `valgrind --tool=callgrind` (two counts, N1 and N2: the difference
/// divided by N2 - N1 is the cost of one call, free of set-up and of machine load).
fn main() {
    if let Ok(spec) = std::env::var("FERRY_AUTH_BENCH_COUNT") {
        let (variant, n) = spec.split_once(':').expect("variant:N");
        let n: usize = n.parse().expect("a count");
        let mut f = Fixture::new();
        for _ in 0..n {
            assert_eq!(f.run(variant), 200);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
