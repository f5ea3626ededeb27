//! Sending one request: `_meta`, HTTP headers, the wait for the answer with its timeout,
//! progress, and the checks on the result.

use std::time::Duration;

use ferry_protocol::headers as h;
use ferry_protocol::jsonrpc::{JsonRpcNotification, RequestId};
use ferry_protocol::{ErrorCode, logging, meta, methods, notifications};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::{Inner, Session};
use crate::answer;
use crate::cache;
use crate::era::{self, Era, KnownEra};
use crate::error::{Error, Result};
use crate::handler::AskOrigin;
use crate::options::{CallOptions, Progress};
use crate::transport::{Exchange, Incoming, Outgoing};

/// One request to send.
pub(crate) struct Req<'a> {
    pub method: &'a str,
    /// The params, without `_meta` (the client adds it).
    pub params: Map<String, Value>,
    pub opts: &'a CallOptions,
    /// `Mcp-Param-*` headers.
    pub param_headers: Vec<(String, String)>,
    /// The request legacy server requests on its stream belong to.
    pub origin: Option<AskOrigin>,
    /// Overrides the timeout of `opts` and of the client.
    pub timeout: Option<Duration>,
}

impl<'a> Req<'a> {
    pub(crate) fn new(method: &'a str, params: Map<String, Value>, opts: &'a CallOptions) -> Self {
        Req {
            method,
            params,
            opts,
            param_headers: Vec::new(),
            origin: None,
            timeout: None,
        }
    }
}

impl Inner {
    /// Sends a request and returns its result, renegotiating the version once on -32022
    /// and renewing an expired legacy session once.
    pub(crate) async fn call(&self, req: &Req<'_>) -> Result<Value> {
        let mut renegotiated = false;
        let mut renewed = false;
        loop {
            if self.closed.load(std::sync::atomic::Ordering::Acquire) {
                return Err(Error::Closed);
            }
            let session = self.state.read().clone();
            match self.call_once(req, &session).await {
                Err(Error::Rpc(e))
                    if session.era == Era::Modern
                        && e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                        && !renegotiated =>
                {
                    renegotiated = true;
                    let supported = era::string_list(e.data.as_ref(), "supported");
                    let Some(version) = era::pick_modern(&supported) else {
                        return Err(Error::UnsupportedVersion { supported });
                    };
                    self.state.write().version = version.clone();
                    if let Some(origin) = &self.origin {
                        self.era_cache
                            .set(origin.clone(), KnownEra::Modern { version });
                    }
                }
                Err(e) if session.era == Era::Legacy && !renewed && self.session_expired(&e) => {
                    renewed = true;
                    tracing::info!("the legacy session expired; initializing a new one");
                    if let crate::transport::Transport::Http(t) = &self.transport {
                        t.clear_session();
                    }
                    self.initialize().await?;
                }
                r => return r,
            }
        }
    }

    fn session_expired(&self, e: &Error) -> bool {
        let crate::transport::Transport::Http(t) = &self.transport else {
            return false;
        };
        let status = match e {
            Error::HttpStatus { status, .. } => Some(*status),
            Error::Rpc(r) => r.http_status,
            _ => None,
        };
        status == Some(404) && t.has_session()
    }

    /// Sends a request once, in its own client span whose context goes in `_meta`.
    pub(crate) async fn call_once(&self, req: &Req<'_>, session: &Session) -> Result<Value> {
        let id = self.next_id();
        let span = crate::telemetry::request_span(
            req.method,
            &req.params,
            &id,
            session,
            self.transport.is_http(),
        );
        if span.is_disabled() {
            return self.call_once_in(req, session, id, None).await;
        }
        let cx = ferry_protocol::trace::context_of(&span);
        let result = tracing::Instrument::instrument(
            self.call_once_in(req, session, id, cx.as_ref()),
            span.clone(),
        )
        .await;
        crate::telemetry::finish(&span, &result);
        result
    }

    async fn call_once_in(
        &self,
        req: &Req<'_>,
        session: &Session,
        id: RequestId,
        trace: Option<&ferry_protocol::trace::TraceContext>,
    ) -> Result<Value> {
        let legacy = session.era == Era::Legacy;
        let token = req
            .opts
            .progress
            .as_ref()
            .map(|_| self.next_progress_token());
        let mut params = self.params_with_meta(req, session, token.as_ref());
        if let Some(cx) = trace {
            crate::telemetry::inject(&mut params, cx);
        }
        let headers = if self.transport.is_http() {
            self.headers(req, session, &params)
        } else {
            Vec::new()
        };
        let body = json!({
            "jsonrpc": "2.0",
            "id": id.to_value(),
            "method": req.method,
            "params": params,
        });
        let out = Outgoing {
            id,
            method: req.method.to_owned(),
            body: body.to_string().into_bytes(),
            headers,
            progress_token: token.clone(),
            legacy,
        };
        let exchange = self.transport.start(out).await?;
        let timeout = req
            .timeout
            .or(req.opts.timeout)
            .unwrap_or(self.config.timeout);
        let value = self
            .drive(exchange, req, timeout, legacy, token.as_ref())
            .await?;
        check_result(req.method, &value)?;
        Ok(value)
    }

    /// Sends a request, answering from the cache when allowed and storing fresh results.
    pub(crate) async fn call_cached(&self, req: &Req<'_>) -> Result<Value> {
        let cacheable = self.config.cache
            && methods::is_cacheable(req.method)
            && !req.params.contains_key("inputResponses")
            && !req.params.contains_key("requestState");
        if !cacheable {
            return self.call(req).await;
        }
        let key = cache::key(req.method, &req.params);
        if !req.opts.bypass_cache
            && let Some(v) = self.cache.get(&key)
        {
            return Ok(v);
        }
        let v = self.call(req).await?;
        if is_complete(&v) {
            self.cache.put(key, req.method, &req.params, &v);
        }
        Ok(v)
    }

    fn params_with_meta(
        &self,
        req: &Req<'_>,
        session: &Session,
        token: Option<&RequestId>,
    ) -> Value {
        let mut params = req.params.clone();
        params.remove("_meta");
        let mut m = req.opts.meta.clone().unwrap_or_default();
        if session.era == Era::Modern {
            m.insert(
                meta::PROTOCOL_VERSION.to_owned(),
                Value::from(session.version.as_str()),
            );
            // Capabilities given in the call's `_meta` (a gateway relaying its client's)
            // win over the input handler's, the call's own handler over the client's.
            m.entry(meta::CLIENT_CAPABILITIES.to_owned())
                .or_insert_with(|| {
                    let caps = match &req.opts.input_handler {
                        Some(h) => self.client_capabilities_with(h.capabilities()),
                        None => self.client_capabilities(),
                    };
                    serde_json::to_value(caps).unwrap_or_else(|_| json!({}))
                });
            m.insert(
                meta::CLIENT_INFO.to_owned(),
                serde_json::to_value(&self.config.client_info).unwrap_or_else(|_| json!({})),
            );
        }
        if let Some(t) = token {
            m.insert(meta::PROGRESS_TOKEN.to_owned(), t.to_value());
        }
        if !m.is_empty() {
            params.insert("_meta".to_owned(), Value::Object(m));
        }
        Value::Object(params)
    }

    fn headers(&self, req: &Req<'_>, session: &Session, params: &Value) -> Vec<(String, String)> {
        let mut out = vec![(h::PROTOCOL_VERSION.to_owned(), session.version.clone())];
        if session.era == Era::Legacy {
            return out;
        }
        out.push((h::METHOD.to_owned(), req.method.to_owned()));
        if let Some(member) = methods::name_member(req.method)
            && let Some(name) = params.get(member).and_then(Value::as_str)
        {
            out.push((h::NAME.to_owned(), h::encode_value(name).into_owned()));
        }
        out.extend(req.param_headers.iter().cloned());
        out
    }

    /// Waits for the answer to `exchange`, delivering progress and answering legacy
    /// server requests on the way. Dropping the exchange on timeout cancels the request.
    async fn drive(
        &self,
        mut exchange: Exchange,
        req: &Req<'_>,
        timeout: Duration,
        legacy: bool,
        token: Option<&RequestId>,
    ) -> Result<Value> {
        let mut deadline = Instant::now() + timeout;
        let mut seen = self.gate.epoch();
        loop {
            let msg = tokio::select! {
                m = exchange.recv() => m,
                _ = tokio::time::sleep_until(deadline) => {
                    if legacy && self.gate.busy_since(&mut seen) {
                        deadline = Instant::now() + timeout;
                        continue;
                    }
                    return Err(Error::Timeout { method: req.method.to_owned(), after: timeout });
                }
            };
            match msg {
                None => {
                    return Err(Error::transport(
                        "the connection closed before the response arrived",
                    ));
                }
                Some(Incoming::Result(v)) => return Ok(v),
                Some(Incoming::Error(e)) => return Err(Error::Rpc(Box::new(e))),
                Some(Incoming::Failed(e)) => return Err(e),
                Some(Incoming::Notification(n)) => self.on_notification(&n, req, token),
                Some(Incoming::Request(r)) if !legacy => {
                    tracing::warn!(
                        method = %r.method,
                        "ignoring a JSON-RPC request from a 2026-07-28 server, which may not send any"
                    );
                }
                Some(Incoming::Request(r)) => {
                    let response = {
                        let _busy = self.gate.enter();
                        let asker = answer::Asker::for_call(self, req.opts);
                        answer::server_request(&asker, &r, req.origin.clone()).await
                    };
                    self.send_response(response).await;
                    deadline = Instant::now() + timeout;
                }
            }
        }
    }

    fn on_notification(&self, n: &JsonRpcNotification, req: &Req<'_>, token: Option<&RequestId>) {
        if n.method == notifications::PROGRESS {
            let params = n.params.as_ref();
            let matches = params
                .and_then(|p| p.get("progressToken"))
                .and_then(RequestId::from_value)
                .is_some_and(|t| Some(&t) == token);
            if let (true, Some(cb), Some(p)) = (matches, req.opts.progress.as_ref(), params) {
                cb(Progress {
                    progress: p.get("progress").and_then(Value::as_f64).unwrap_or(0.0),
                    total: p.get("total").and_then(Value::as_f64),
                    message: p.get("message").and_then(Value::as_str).map(str::to_owned),
                });
            }
            return;
        }
        self.observe(n);
    }

    /// Handles a notification that belongs to no pending request.
    pub(crate) fn observe(&self, n: &JsonRpcNotification) {
        let params = n.params.as_ref();
        match n.method.as_str() {
            notifications::MESSAGE => log_message(&self.label, params),
            notifications::TOOLS_LIST_CHANGED
            | notifications::PROMPTS_LIST_CHANGED
            | notifications::RESOURCES_LIST_CHANGED
            | notifications::RESOURCES_UPDATED => {
                self.cache.invalidate_for(&n.method, params);
                let _ = self.events.send(n.clone());
            }
            _ => {
                let _ = self.events.send(n.clone());
            }
        }
    }

    /// Sends the answer to a legacy server request.
    pub(crate) async fn send_response(&self, response: Value) {
        let headers = if self.transport.is_http() {
            vec![(
                h::PROTOCOL_VERSION.to_owned(),
                self.state.read().version.clone(),
            )]
        } else {
            Vec::new()
        };
        if let Err(e) = self
            .transport
            .respond(response.to_string().into_bytes(), headers)
            .await
        {
            tracing::warn!(error = %e, "could not send the answer to a server request");
        }
    }

    /// Sends a notification to the server.
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        let mut body = Map::new();
        body.insert("jsonrpc".into(), "2.0".into());
        body.insert("method".into(), method.into());
        if let Some(p) = params {
            body.insert("params".into(), p);
        }
        let headers = if self.transport.is_http() {
            vec![(
                h::PROTOCOL_VERSION.to_owned(),
                self.state.read().version.clone(),
            )]
        } else {
            Vec::new()
        };
        self.transport
            .notify(Value::Object(body).to_string().into_bytes(), headers)
            .await
    }
}

fn log_message(server: &str, params: Option<&Value>) {
    let level = params
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)
        .and_then(logging::LoggingLevel::parse);
    let data = params
        .and_then(|p| p.get("data"))
        .cloned()
        .unwrap_or(Value::Null);
    match level {
        Some(l) if l.passes(logging::LoggingLevel::Error) => {
            tracing::error!(server, %data, "server log")
        }
        Some(l) if l.passes(logging::LoggingLevel::Warning) => {
            tracing::warn!(server, %data, "server log")
        }
        Some(l) if l.passes(logging::LoggingLevel::Info) => {
            tracing::info!(server, %data, "server log")
        }
        _ => tracing::debug!(server, %data, "server log"),
    }
}

/// Whether a result is a complete one (no `resultType`, or `complete`).
pub(crate) fn is_complete(v: &Value) -> bool {
    v.get("resultType")
        .and_then(Value::as_str)
        .is_none_or(|t| t == "complete")
}

/// Checks a result's `resultType`: absent or `complete` are fine, `input_required` only
/// for the requests that may ask for input, `task` only for `tools/call`, and anything
/// else is invalid.
pub(crate) fn check_result(method: &str, v: &Value) -> Result<()> {
    if !v.is_object() {
        return Err(Error::protocol(format!(
            "the {method} result is not an object"
        )));
    }
    match v.get("resultType") {
        None => Ok(()),
        Some(Value::String(t)) if t == "complete" => Ok(()),
        Some(Value::String(t)) if t == "input_required" => {
            if methods::is_mrtr_capable(method) {
                Ok(())
            } else {
                Err(Error::protocol(format!(
                    "{method} answered input_required, which only tools/call, prompts/get and resources/read may"
                )))
            }
        }
        // A task handle (ext-tasks/tasks.md), which `call_tool` follows.
        Some(Value::String(t)) if t == "task" && method == methods::TOOLS_CALL => Ok(()),
        Some(other) => Err(Error::protocol(format!(
            "{method} answered with an unknown resultType {other}"
        ))),
    }
}

/// Reads a result into its type, first treating a missing, negative or fractional
/// `ttlMs` as the spec says.
pub(crate) fn parse<T: DeserializeOwned>(method: &str, mut v: Value) -> Result<T> {
    if let Some(obj) = v.as_object_mut()
        && let Some(ttl) = obj.get("ttlMs")
        && !ttl.is_u64()
    {
        let ms = cache::ttl(&Value::Object(obj.clone())).as_millis();
        obj.insert(
            "ttlMs".into(),
            Value::from(u64::try_from(ms).unwrap_or(u64::MAX)),
        );
    }
    serde_json::from_value(v).map_err(|e| Error::protocol(format!("invalid {method} result: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_types() {
        assert!(check_result("tools/list", &json!({"tools":[]})).is_ok());
        assert!(check_result("tools/list", &json!({"resultType":"complete"})).is_ok());
        assert!(check_result("tools/call", &json!({"resultType":"input_required"})).is_ok());
        assert!(check_result("tools/list", &json!({"resultType":"input_required"})).is_err());
        assert!(check_result("tools/call", &json!({"resultType":"task"})).is_ok());
        assert!(check_result("prompts/get", &json!({"resultType":"task"})).is_err());
        assert!(check_result("tools/call", &json!({"resultType":"banana"})).is_err());
        assert!(check_result("tools/call", &json!([])).is_err());
    }

    #[test]
    fn negative_ttl_reads_as_zero() {
        let r: ferry_protocol::tools::ListToolsResult = parse(
            "tools/list",
            json!({"tools":[],"ttlMs":-10,"cacheScope":"public"}),
        )
        .unwrap();
        assert_eq!(r.ttl_ms, Some(0));
        let r: ferry_protocol::tools::ListToolsResult =
            parse("tools/list", json!({"tools":[],"ttlMs":1.5})).unwrap();
        assert_eq!(r.ttl_ms, Some(1));
    }
}
