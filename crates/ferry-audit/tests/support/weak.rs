//! A small MCP 2026-07-28 server with flaws to order, for the audit to find.
//!
//! It serves `server/discover`, `tools/list` and two tools that ask for a confirmation,
//! `delete_file` (its `path` mirrored in `Mcp-Param-Path`) and `rename_file`. With no
//! flaw it follows every rule the audit checks; each flaw turns one defence off.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ferry_state::{KeyRing, Sealer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// How the state is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seal {
    /// Encrypted and authenticated (XChaCha20-Poly1305).
    Aead,
    /// Authenticated but readable: base64url JSON, a dot, a sealed digest of it.
    Readable,
    /// Plain JSON, trusted as it comes back.
    Plain,
}

/// Which defences are on.
#[derive(Debug, Clone, Copy)]
pub struct Flaws {
    pub seal: Seal,
    /// Bind the state to the tool, the arguments and the principal.
    pub bind: bool,
    /// Give the state a lifetime.
    pub expiry: bool,
    /// Redeem each state once.
    pub single_use: bool,
    /// Check Mcp-Method, Mcp-Name, Mcp-Param-* and MCP-Protocol-Version against the body.
    pub check_headers: bool,
    /// Refuse foreign origins.
    pub check_origin: bool,
    /// Ask again when the answer is missing (instead of going ahead).
    pub reask_missing: bool,
}

impl Flaws {
    /// Every defence on.
    pub fn none() -> Self {
        Flaws {
            seal: Seal::Aead,
            bind: true,
            expiry: true,
            single_use: true,
            check_headers: true,
            check_origin: true,
            reask_missing: true,
        }
    }
}

/// The state's lifetime.
pub const TTL_MS: u64 = 1000;

#[derive(Serialize, Deserialize)]
struct Claims {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    args: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    principal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exp: Option<u64>,
    jti: String,
    asked: Vec<String>,
}

struct App {
    flaws: Flaws,
    sealer: Sealer,
    used: Mutex<HashSet<String>>,
}

/// The router serving the endpoint at `/mcp`.
pub fn router(flaws: Flaws) -> Router {
    let app = Arc::new(App {
        flaws,
        sealer: Sealer::new(KeyRing::random()),
        used: Mutex::new(HashSet::new()),
    });
    Router::new().route("/mcp", any(mcp)).with_state(app)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn reply(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn error(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response {
    let mut err = json!({"code": code, "message": message});
    if let Some(d) = data {
        err["data"] = d;
    }
    reply(status, json!({"jsonrpc": "2.0", "id": id, "error": err}))
}

fn result(id: &Value, result: Value) -> Response {
    reply(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn decode_header(v: &str) -> Option<String> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b) => String::from_utf8(STANDARD.decode(b).ok()?).ok(),
        None => Some(v.to_owned()),
    }
}

fn tools() -> Value {
    let tool = |name: &str, arg: &str, header: Option<&str>| {
        let mut prop = json!({"type": "string"});
        if let Some(h) = header {
            prop["x-mcp-header"] = json!(h);
        }
        json!({"name": name, "description": format!("{name} after a confirmation"),
            "inputSchema": {"type": "object", "properties": {arg: prop}, "required": [arg]}})
    };
    json!([
        tool("delete_file", "path", Some("Path")),
        tool("rename_file", "from", None)
    ])
}

async fn mcp(
    State(app): State<Arc<App>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let none = Value::Null;
    if method != Method::POST {
        return error(
            StatusCode::METHOD_NOT_ALLOWED,
            &none,
            -32600,
            "POST only",
            None,
        );
    }
    if app.flaws.check_origin
        && let Some(origin) = header_str(&headers, "origin")
    {
        let local = ["http://127.0.0.1", "http://localhost"]
            .iter()
            .any(|p| origin.starts_with(p));
        if !local {
            return error(
                StatusCode::FORBIDDEN,
                &none,
                -32600,
                "Forbidden origin",
                None,
            );
        }
    }
    let principal = match header_str(&headers, "authorization") {
        None => None,
        Some("Bearer token-a") => Some("alice".to_owned()),
        Some("Bearer token-b") => Some("bob".to_owned()),
        Some(_) => {
            return error(
                StatusCode::UNAUTHORIZED,
                &none,
                -32600,
                "Unauthorized",
                None,
            );
        }
    };
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, &none, -32700, "Parse error", None);
    };
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let rpc_method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let params = msg
        .get("params")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let bad = |m: &str| error(StatusCode::BAD_REQUEST, &id, -32020, m, None);
    let version_header = header_str(&headers, "mcp-protocol-version");
    if version_header.is_none() {
        return bad(
            "Header mismatch: MCP-Protocol-Version is required (this server speaks 2026-07-28)",
        );
    }
    let meta = params.get("_meta");
    let meta_version = meta
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str);
    let caps = meta.and_then(|m| m.get("io.modelcontextprotocol/clientCapabilities"));
    let (Some(meta_version), Some(caps)) = (meta_version, caps) else {
        return error(
            StatusCode::BAD_REQUEST,
            &id,
            -32602,
            "Invalid params: _meta is required",
            None,
        );
    };
    if app.flaws.check_headers {
        if version_header != Some(meta_version) {
            return bad("Header mismatch: MCP-Protocol-Version");
        }
        if header_str(&headers, "mcp-method") != Some(rpc_method) {
            return bad("Header mismatch: Mcp-Method");
        }
    }
    if meta_version != "2026-07-28" {
        return error(
            StatusCode::BAD_REQUEST,
            &id,
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": ["2026-07-28"], "requested": meta_version})),
        );
    }
    match rpc_method {
        "server/discover" => result(
            &id,
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "weak", "version": "0.0.1"}}}),
        ),
        "tools/list" => result(&id, json!({"resultType": "complete", "tools": tools()})),
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            let args = params
                .get("arguments")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if app.flaws.check_headers {
                if header_str(&headers, "mcp-name")
                    .and_then(decode_header)
                    .as_deref()
                    != Some(name)
                {
                    return bad("Header mismatch: Mcp-Name");
                }
                if name == "delete_file" {
                    let body_path = args.get("path").and_then(Value::as_str);
                    let header_path =
                        header_str(&headers, "mcp-param-path").and_then(decode_header);
                    if header_path.as_deref() != body_path {
                        return bad("Header mismatch: Mcp-Param-Path");
                    }
                }
            }
            call(&app, &id, name, args, &params, caps, principal)
        }
        _ => error(StatusCode::NOT_FOUND, &id, -32601, "Method not found", None),
    }
}

impl App {
    fn seal(&self, claims: &Claims) -> String {
        let json = serde_json::to_vec(claims).unwrap_or_default();
        match self.flaws.seal {
            Seal::Aead => self.sealer.seal(&json),
            Seal::Readable => {
                let payload = URL_SAFE_NO_PAD.encode(&json);
                let tag = self.sealer.seal(&Sha256::digest(payload.as_bytes()));
                format!("{payload}.{tag}")
            }
            Seal::Plain => String::from_utf8(json).unwrap_or_default(),
        }
    }

    fn open(&self, state: &str) -> Option<Claims> {
        let json = match self.flaws.seal {
            Seal::Aead => self.sealer.open(state).ok()?,
            Seal::Readable => {
                let (payload, tag) = state.split_once('.')?;
                let digest = self.sealer.open(tag).ok()?;
                if digest != Sha256::digest(payload.as_bytes()).as_slice() {
                    return None;
                }
                URL_SAFE_NO_PAD.decode(payload).ok()?
            }
            Seal::Plain => state.as_bytes().to_vec(),
        };
        serde_json::from_slice(&json).ok()
    }
}

fn call(
    app: &App,
    id: &Value,
    name: &str,
    args: Map<String, Value>,
    params: &Map<String, Value>,
    caps: &Value,
    principal: Option<String>,
) -> Response {
    let key = match name {
        "delete_file" => "path",
        "rename_file" => "from",
        _ => return error(StatusCode::OK, id, -32602, "Unknown tool", None),
    };
    let Some(target) = args.get(key).and_then(Value::as_str).map(str::to_owned) else {
        return error(StatusCode::OK, id, -32602, "Invalid arguments", None);
    };
    if caps.get("elicitation").is_none() {
        return error(
            StatusCode::BAD_REQUEST,
            id,
            -32021,
            "Missing required client capability",
            Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
        );
    }
    let ask = || {
        let claims = Claims {
            tool: app.flaws.bind.then(|| name.to_owned()),
            args: app.flaws.bind.then(|| Value::Object(args.clone())),
            principal: if app.flaws.bind {
                principal.clone()
            } else {
                None
            },
            exp: app.flaws.expiry.then(|| now_ms() + TTL_MS),
            jti: format!("{:032x}", rand::random::<u128>()),
            asked: vec!["confirm".into()],
        };
        result(
            id,
            json!({"resultType": "input_required",
                "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                    "mode": "form", "message": format!("{name} {target}?"),
                    "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}}}},
                "requestState": app.seal(&claims)}),
        )
    };
    let invalid = || error(StatusCode::OK, id, -32602, "Invalid requestState", None);
    let state = match params.get("requestState") {
        None => return ask(),
        Some(Value::String(s)) => s,
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                id,
                -32602,
                "requestState must be a string",
                None,
            );
        }
    };
    let Some(claims) = app.open(state) else {
        return invalid();
    };
    if app.flaws.bind
        && (claims.tool.as_deref() != Some(name)
            || claims.args != Some(Value::Object(args.clone()))
            || claims.principal != principal)
    {
        return invalid();
    }
    if app.flaws.expiry && claims.exp.is_none_or(|exp| now_ms() > exp) {
        return invalid();
    }
    if app.flaws.single_use && !app.used.lock().unwrap().insert(claims.jti.clone()) {
        return invalid();
    }
    let answer = params.get("inputResponses").and_then(|r| r.get("confirm"));
    let confirmed = match answer {
        None if app.flaws.reask_missing => return ask(),
        None => true,
        Some(a) => {
            a.get("action").and_then(Value::as_str) == Some("accept")
                && a.get("content").and_then(|c| c.get("confirm")) == Some(&Value::Bool(true))
        }
    };
    let verb = if name == "delete_file" {
        "Deleted"
    } else {
        "Renamed"
    };
    let text = if confirmed {
        format!("{verb} {target}")
    } else {
        format!("Kept {target}")
    };
    result(
        id,
        json!({"resultType": "complete", "content": [{"type": "text", "text": text}]}),
    )
}
