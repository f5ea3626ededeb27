//! Sending one request: `_meta`, HTTP headers, the wait for the answer with its timeout,
//! progress, and the checks on the result.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use ferry_protocol::headers as h;
use ferry_protocol::jsonrpc::{JsonRpcNotification, RequestId};
use ferry_protocol::result::{ResultHead, ResultType};
use ferry_protocol::{ErrorCode, logging, meta, methods, notifications};
use serde::de::DeserializeOwned;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
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
    /// [`call_raw`](Inner::call_raw), the result read into a [`Value`].
    pub(crate) async fn call(&self, req: &Req<'_>) -> Result<Value> {
        into_value(req.method, &self.call_raw(req).await?)
    }

    /// Sends a request and returns its result as the server wrote it, renegotiating the
    /// version once on -32022 and renewing an expired legacy session once.
    pub(crate) async fn call_raw(&self, req: &Req<'_>) -> Result<Box<RawValue>> {
        let mut renegotiated = false;
        let mut renewed = false;
        loop {
            if self.closed.load(std::sync::atomic::Ordering::Acquire) {
                return Err(Error::Closed);
            }
            let session = self.state.read().clone();
            match self.call_once_raw(req, &session).await {
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
                    Arc::make_mut(&mut self.state.write()).version = version.clone();
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
                    // Boxed, like every path taken rarely, so that the future of every
                    // request is not as large as this one's.
                    Box::pin(self.initialize()).await?;
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

    /// [`call_once_raw`](Inner::call_once_raw), the result read into a [`Value`].
    pub(crate) async fn call_once(&self, req: &Req<'_>, session: &Session) -> Result<Value> {
        into_value(req.method, &self.call_once_raw(req, session).await?)
    }

    /// Sends a request once, in its own client span whose context goes in `_meta`.
    pub(crate) async fn call_once_raw(
        &self,
        req: &Req<'_>,
        session: &Session,
    ) -> Result<Box<RawValue>> {
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
    ) -> Result<Box<RawValue>> {
        let legacy = session.era == Era::Legacy;
        let token = req
            .opts
            .progress
            .as_ref()
            .map(|_| self.next_progress_token());
        let trace_meta = trace.map(|cx| {
            let mut m = Map::new();
            ferry_protocol::trace::to_meta(cx, &mut m);
            m
        });
        let meta = self.wire_meta(req, session, token.as_ref(), trace_meta.as_ref());
        let headers = if self.transport.is_http() {
            self.headers(req, session)
        } else {
            Vec::new()
        };
        let body = serde_json::to_vec(&WireRequest {
            jsonrpc: "2.0",
            id: &id,
            method: req.method,
            params: WireParams {
                params: &req.params,
                meta: &meta,
            },
        })
        .map_err(|e| {
            Error::InvalidInput(format!("the {} params cannot be sent: {e}", req.method))
        })?;
        let out = Outgoing {
            id,
            method: req.method.to_owned(),
            body,
            headers,
            progress_token: token.clone(),
            legacy,
        };
        let exchange = self.transport.start(out).await?;
        let timeout = req
            .timeout
            .or(req.opts.timeout)
            .unwrap_or(self.config.timeout);
        let raw = self
            .drive(exchange, req, timeout, legacy, token.as_ref())
            .await?;
        check_result(req.method, &raw)?;
        Ok(raw)
    }

    /// Whether `req` may be answered from the cache and its result stored there.
    fn cacheable(&self, req: &Req<'_>) -> bool {
        self.config.cache
            && methods::is_cacheable(req.method)
            && !req.params.contains_key("inputResponses")
            && !req.params.contains_key("requestState")
    }

    /// [`call_cached`](Inner::call_cached), the result as the server wrote it when it
    /// does not come from the cache.
    pub(crate) async fn call_cached_raw(&self, req: &Req<'_>) -> Result<Box<RawValue>> {
        if !self.cacheable(req) {
            return self.call_raw(req).await;
        }
        let v = self.call_cached(req).await?;
        serde_json::value::to_raw_value(&v).map_err(|e| Error::protocol(e.to_string()))
    }

    /// Sends a request, answering from the cache when allowed and storing fresh results.
    pub(crate) async fn call_cached(&self, req: &Req<'_>) -> Result<Value> {
        if !self.cacheable(req) {
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

    /// The `_meta` of one request: the call's own ([`CallOptions::meta`]) with the
    /// client's entries put over it. Capabilities given in the call's `_meta` (a gateway
    /// relaying its client's) win over the input handler's, the call's own handler over
    /// the client's.
    fn wire_meta<'a>(
        &'a self,
        req: &'a Req<'_>,
        session: &'a Session,
        token: Option<&'a RequestId>,
        trace_entries: Option<&'a Map<String, Value>>,
    ) -> WireMeta<'a> {
        let given = req.opts.meta.as_ref();
        let modern = session.era == Era::Modern;
        let capabilities =
            if !modern || given.is_some_and(|m| m.contains_key(meta::CLIENT_CAPABILITIES)) {
                None
            } else {
                Some(match &req.opts.input_handler {
                    Some(h) => Cow::Owned(
                        serde_json::to_value(self.client_capabilities_with(h.capabilities()))
                            .unwrap_or_else(|_| json!({})),
                    ),
                    None => Cow::Borrowed(&self.wire.capabilities),
                })
            };
        // A trace context the caller put in `_meta` is kept.
        let trace = trace_entries
            .filter(|_| !given.is_some_and(|m| m.contains_key(ferry_protocol::trace::TRACEPARENT)));
        WireMeta {
            given,
            version: modern.then_some(session.version.as_str()),
            capabilities,
            client_info: modern.then_some(&self.wire.client_info),
            progress: token,
            trace,
        }
    }

    fn headers(&self, req: &Req<'_>, session: &Session) -> Vec<(String, String)> {
        let mut out = vec![(h::PROTOCOL_VERSION.to_owned(), session.version.clone())];
        if session.era == Era::Legacy {
            return out;
        }
        out.push((h::METHOD.to_owned(), req.method.to_owned()));
        if let Some(member) = methods::name_member(req.method)
            && let Some(name) = req.params.get(member).and_then(Value::as_str)
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
    ) -> Result<Box<RawValue>> {
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
                        Box::pin(answer::server_request(&asker, &r, req.origin.clone())).await
                    };
                    Box::pin(self.send_response(response)).await;
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

/// A request as it is sent: `{"jsonrpc":"2.0","id","method","params"}`, written straight
/// from the caller's params, without copying them into a new JSON value first.
#[derive(serde::Serialize)]
struct WireRequest<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: WireParams<'a>,
}

/// The caller's params without their own `_meta`, then the `_meta` the client sends.
struct WireParams<'a> {
    params: &'a Map<String, Value>,
    meta: &'a WireMeta<'a>,
}

impl Serialize for WireParams<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.params {
            if key != "_meta" {
                map.serialize_entry(key, value)?;
            }
        }
        if !self.meta.is_empty() {
            map.serialize_entry("_meta", self.meta)?;
        }
        map.end()
    }
}

/// A request's `_meta`: the call's own entries, then the client's, which replace the
/// call's entries of the same name (except the capabilities and the trace context,
/// which are only added when the call's `_meta` has none).
struct WireMeta<'a> {
    given: Option<&'a Map<String, Value>>,
    version: Option<&'a str>,
    capabilities: Option<Cow<'a, Value>>,
    client_info: Option<&'a Value>,
    progress: Option<&'a RequestId>,
    trace: Option<&'a Map<String, Value>>,
}

impl WireMeta<'_> {
    fn is_empty(&self) -> bool {
        self.given.is_none_or(Map::is_empty)
            && self.version.is_none()
            && self.capabilities.is_none()
            && self.client_info.is_none()
            && self.progress.is_none()
            && self.trace.is_none_or(Map::is_empty)
    }

    /// Whether the client's own entry replaces the call's entry `key`.
    fn replaces(&self, key: &str) -> bool {
        (key == meta::PROTOCOL_VERSION && self.version.is_some())
            || (key == meta::CLIENT_INFO && self.client_info.is_some())
            || (key == meta::PROGRESS_TOKEN && self.progress.is_some())
            || self.trace.is_some_and(|t| t.contains_key(key))
    }
}

impl Serialize for WireMeta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.given.into_iter().flatten() {
            if !self.replaces(key) {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(v) = self.version {
            map.serialize_entry(meta::PROTOCOL_VERSION, v)?;
        }
        if let Some(c) = &self.capabilities {
            map.serialize_entry(meta::CLIENT_CAPABILITIES, c.as_ref())?;
        }
        if let Some(i) = self.client_info {
            map.serialize_entry(meta::CLIENT_INFO, i)?;
        }
        if let Some(t) = self.progress {
            map.serialize_entry(meta::PROGRESS_TOKEN, t)?;
        }
        for (key, value) in self.trace.into_iter().flatten() {
            map.serialize_entry(key, value)?;
        }
        map.end()
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

/// A raw result read into a [`Value`].
pub(crate) fn into_value(method: &str, raw: &RawValue) -> Result<Value> {
    serde_json::from_str(raw.get())
        .map_err(|e| Error::protocol(format!("invalid {method} result: {e}")))
}

/// Checks a result's `resultType`: absent or `complete` are fine, `input_required` only
/// for the requests that may ask for input, `task` only for `tools/call`, and anything
/// else is invalid.
pub(crate) fn check_result(method: &str, raw: &RawValue) -> Result<()> {
    if !raw.get().starts_with('{') {
        return Err(Error::protocol(format!(
            "the {method} result is not an object"
        )));
    }
    let head = ResultHead::read(raw)
        .map_err(|e| Error::protocol(format!("invalid {method} result: {e}")))?;
    match head.result_type() {
        None | Some(Ok(ResultType::Complete)) => Ok(()),
        Some(Ok(ResultType::InputRequired)) => {
            if methods::is_mrtr_capable(method) {
                Ok(())
            } else {
                Err(Error::protocol(format!(
                    "{method} answered input_required, which only tools/call, prompts/get and resources/read may"
                )))
            }
        }
        // A task handle (ext-tasks/tasks.md), which `call_tool` follows.
        Some(Ok(ResultType::Task)) if method == methods::TOOLS_CALL => Ok(()),
        Some(Ok(other)) => Err(Error::protocol(format!(
            "{method} answered with an unknown resultType \"{other}\""
        ))),
        Some(Err(text)) => Err(Error::protocol(format!(
            "{method} answered with an unknown resultType {text}"
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
        let check =
            |method, v: Value| check_result(method, &serde_json::value::to_raw_value(&v).unwrap());
        assert!(check("tools/list", json!({"tools":[]})).is_ok());
        assert!(check("tools/list", json!({"resultType":"complete"})).is_ok());
        assert!(check("tools/call", json!({"resultType":"input_required"})).is_ok());
        assert!(check("tools/list", json!({"resultType":"input_required"})).is_err());
        assert!(check("tools/call", json!({"resultType":"task"})).is_ok());
        assert!(check("prompts/get", json!({"resultType":"task"})).is_err());
        assert!(check("tools/call", json!({"resultType":"banana"})).is_err());
        assert!(check("tools/call", json!({"resultType":7})).is_err());
        assert!(check("tools/call", json!([])).is_err());
        assert!(check("tools/call", json!(null)).is_err());
        // A result that says two things is refused: a gateway relaying results reads
        // only the first `resultType` of a result the client accepted.
        let twice = r#"{"resultType":"complete","resultType":"input_required"}"#;
        let twice = RawValue::from_string(twice.into()).unwrap();
        assert!(check_result("tools/call", &twice).is_err());
    }

    #[test]
    fn the_head_reads_is_error_and_skips_the_rest() {
        let raw = RawValue::from_string(
            r#"{"content":[{"type":"text","text":"a \"quoted\" {"}],"isError":true}"#.into(),
        )
        .unwrap();
        assert!(ResultHead::read(&raw).unwrap().is_error());
        let raw = RawValue::from_string(r#"{"isError":"true"}"#.into()).unwrap();
        assert!(!ResultHead::read(&raw).unwrap().is_error());
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
