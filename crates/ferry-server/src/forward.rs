//! Answering feature methods with raw JSON computed at run time, for servers whose tools,
//! prompts and resources live elsewhere (a gateway in front of other servers).
//!
//! A [`Forward`] hook set with [`ServerBuilder::forward`](crate::ServerBuilder::forward)
//! receives every request (both eras) for the feature methods the server advertises
//! (`tools/list`, `tools/call`, `prompts/list`, `prompts/get`, `resources/list`,
//! `resources/templates/list`, `resources/read`, `completion/complete`, and the Tasks
//! extension's `tasks/get`, `tasks/update` and `tasks/cancel` when the server advertises
//! that extension) after the per-request rules were checked (`_meta`, headers, version,
//! and for `tasks/*` the extension in the request's client capabilities), and its value
//! is sent as the result. The registry, argument validation and the MRTR engine are bypassed: the
//! hook owns the result, `InputRequiredResult` and `requestState` included.
//!
//! A hook is written for 2026-07-28 alone, and 2025-11-25 sessions are served too: their
//! clients cannot retry a request, so when the hook answers one of theirs with an
//! `InputRequiredResult`, the server sends each input request to the client on the
//! session's stream (as a server request, the way its own handlers ask there), and calls
//! the hook again with the answers in `inputResponses` and the `requestState` echoed, up
//! to [`MAX_FORWARDED_LEGACY_ROUNDS`] times, until it answers in full. Only what the
//! session's client declared is sent: a round with an input request it has no capability
//! for fails the call with -32021 (the capability missing) before any of that round's
//! requests go out.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ferry_protocol::ErrorObject;
use ferry_protocol::capabilities::ClientCapabilities;
use ferry_protocol::methods::Method;
use ferry_protocol::request::Params;
use ferry_protocol::result::ResultHead;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::ask::Needs;
use crate::outbound::Outbound;
use crate::principal::Principal;
use crate::refusal::Refusal;
use crate::session::Session;

/// The most rounds the server drives one forwarded call of a 2025-11-25 session.
pub const MAX_FORWARDED_LEGACY_ROUNDS: usize = 16;

/// A request handed to a [`Forward`] hook.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ForwardRequest {
    /// The method, e.g. `tools/call`.
    pub method: &'static str,
    /// The params the method defines, without `_meta` (`name`, `arguments`, `uri`,
    /// `cursor`, `inputResponses`, `requestState`, `ref`, `argument`, `context`,
    /// `taskId`).
    pub params: Map<String, Value>,
    /// The authenticated principal, if an authentication layer set one.
    pub principal: Option<Principal>,
    /// The capabilities the client declared in the request's `_meta` (a 2025-11-25
    /// session's, in `initialize`, without the Tasks extension: a task result cannot
    /// reach such a client, so the hook must answer it in full).
    pub client_capabilities: ClientCapabilities,
    /// Where the hook reports progress, when the client asked for it (a `progressToken`
    /// in the request's `_meta`) and its transport can carry notifications.
    pub progress: Option<ForwardProgress>,
}

/// Sends `notifications/progress` for a forwarded request to its client, on the request's
/// own stream, under the client's `progressToken` (a hook relays what its upstream
/// reports). Progress that does not increase is dropped, as the spec requires it to
/// increase with each notification; so is progress the client is too slow to take (it
/// never holds the call up).
#[derive(Clone)]
pub struct ForwardProgress {
    outbound: Outbound,
    token: ferry_protocol::common::ProgressToken,
    reports: Arc<crate::outbound::ProgressReports>,
}

impl ForwardProgress {
    pub(crate) fn new(outbound: Outbound, token: ferry_protocol::common::ProgressToken) -> Self {
        ForwardProgress {
            outbound,
            token,
            reports: Arc::default(),
        }
    }

    /// Reports `progress` (of `total`, when known) with an optional `message`, without
    /// waiting. Returns `false` when it was not sent: not above the last, or the client
    /// is gone or not keeping up.
    pub fn send(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.reports
            .next(&self.token, progress, total, message)
            .is_some_and(|notification| self.outbound.try_send(notification))
    }
}

impl std::fmt::Debug for ForwardProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForwardProgress")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// The future a [`Forward`] hook returns: the result object, or the error to send.
pub type ForwardFuture = Pin<Box<dyn Future<Output = Result<ForwardResult, ForwardError>> + Send>>;

/// The result object a [`Forward`] hook answers with: a [`Value`], or JSON text sent on
/// as it is, so a hook relaying another server's result need not parse it. Both convert
/// with `.into()`.
///
/// ```
/// use ferry_server::ForwardResult;
/// use serde_json::{json, value::RawValue};
///
/// let built: ForwardResult = json!({ "content": [] }).into();
/// let relayed: ForwardResult = RawValue::from_string(r#"{"content":[]}"#.into()).unwrap().into();
/// assert_eq!(built.into_value().unwrap(), relayed.into_value().unwrap());
/// ```
#[derive(Debug, Clone)]
pub enum ForwardResult {
    /// A result object.
    Value(Value),
    /// A result object's JSON text.
    Raw(Box<RawValue>),
}

impl ForwardResult {
    /// The result as a [`Value`] (raw text is parsed).
    pub fn into_value(self) -> Result<Value, serde_json::Error> {
        match self {
            ForwardResult::Value(v) => Ok(v),
            ForwardResult::Raw(raw) => serde_json::from_str(raw.get()),
        }
    }

    /// Adds `"resultType": "complete"` to a result object that has no `resultType`.
    fn complete_by_default(&mut self) {
        match self {
            ForwardResult::Value(v) => complete_by_default(v),
            ForwardResult::Raw(raw) => {
                if let Some(with) = raw_complete_by_default(raw) {
                    *raw = with;
                }
            }
        }
    }
}

impl From<Value> for ForwardResult {
    fn from(value: Value) -> Self {
        ForwardResult::Value(value)
    }
}

impl From<Box<RawValue>> for ForwardResult {
    fn from(raw: Box<RawValue>) -> Self {
        ForwardResult::Raw(raw)
    }
}

impl Serialize for ForwardResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ForwardResult::Value(v) => v.serialize(serializer),
            ForwardResult::Raw(raw) => raw.serialize(serializer),
        }
    }
}

/// `raw` with `"resultType": "complete"` first, when it is an object without a
/// `resultType`; `None` when it needs no change (or is not an object).
fn raw_complete_by_default(raw: &RawValue) -> Option<Box<RawValue>> {
    // Raw JSON text starts at its value, with no whitespace before it.
    let rest = raw.get().strip_prefix('{')?;
    // Ferry writes `resultType` first: such a result is told without reading the rest.
    if rest.starts_with(r#""resultType":"#) {
        return None;
    }
    if ResultHead::read(raw).ok()?.result_type().is_some() {
        return None;
    }
    let comma = if rest.trim_start().starts_with('}') {
        ""
    } else {
        ","
    };
    RawValue::from_string(format!(r#"{{"resultType":"complete"{comma}{rest}"#)).ok()
}

/// How a [`Forward`] hook fails: the JSON-RPC error to send and, when the request is
/// refused for a reason a transport reports in its own terms, that reason.
///
/// Without a [`Refusal`] the error is answered like any other (see
/// [`Reply::error`](crate::transport::Reply::error)); with one, the transport says so its
/// own way (Streamable HTTP: the status its table gives that reason, e.g. 429 with
/// `Retry-After` for [`Refusal::RateLimited`]). An [`ErrorObject`] converts into one, so
/// `?` and `.into()` work on plain JSON-RPC errors.
///
/// ```
/// use std::time::Duration;
/// use ferry_server::ForwardError;
/// use ferry_server::protocol::ErrorObject;
/// use ferry_server::transport::Refusal;
///
/// let plain: ForwardError = ErrorObject::invalid_params("Unknown tool: x").into();
/// assert!(plain.refusal.is_none());
/// let limited = ForwardError::rate_limited("Slow down", Duration::from_millis(1500));
/// assert_eq!(
///     limited.refusal,
///     Some(Refusal::RateLimited { retry_after: Duration::from_millis(1500) })
/// );
/// assert_eq!(limited.error.data.unwrap()["retryAfterMs"], 1500);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ForwardError {
    /// The JSON-RPC error sent as the response.
    pub error: ErrorObject,
    /// Why the request is refused, when a transport should report it in its own terms.
    pub refusal: Option<Refusal>,
}

impl ForwardError {
    /// The request is refused for `reason`, answered with `error`.
    pub fn refused(reason: Refusal, error: ErrorObject) -> Self {
        ForwardError {
            error,
            refusal: Some(reason),
        }
    }

    /// The request is over a rate limit: [`RATE_LIMITED`](crate::RATE_LIMITED) with
    /// `message` and `data.retryAfterMs`, refused with [`Refusal::RateLimited`].
    pub fn rate_limited(message: impl Into<String>, retry_after: Duration) -> Self {
        ForwardError::refused(
            Refusal::RateLimited { retry_after },
            crate::refusal::rate_limited_error(message, retry_after),
        )
    }
}

impl From<ErrorObject> for ForwardError {
    fn from(error: ErrorObject) -> Self {
        ForwardError {
            error,
            refusal: None,
        }
    }
}

impl std::fmt::Display for ForwardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.error.message, self.error.code)
    }
}

impl std::error::Error for ForwardError {}

/// Answers feature methods with a raw JSON result (see the [module](self) docs).
///
/// A hook fails with a [`ForwardError`]: a plain JSON-RPC error converts into one
/// (`.into()`, `?`), and [`ForwardError::rate_limited`] or [`ForwardError::refused`] say
/// why a request is refused, for the transport to report it in its own terms.
///
/// ```
/// use std::time::Duration;
/// use ferry_server::protocol::ErrorObject;
/// use ferry_server::{Forward, ForwardError, ForwardFuture, ForwardRequest, Server};
/// use serde_json::json;
///
/// struct Static;
/// impl Forward for Static {
///     fn forward(&self, request: ForwardRequest) -> ForwardFuture {
///         Box::pin(async move {
///             match request.method {
///                 "tools/list" => Ok(json!({ "tools": [] }).into()),
///                 "tools/call" if request.principal.is_none() => Err(ForwardError::rate_limited(
///                     "Rate limited: sign in for more calls",
///                     Duration::from_secs(1),
///                 )),
///                 "tools/call" => Ok(json!({ "content": [{ "type": "text", "text": "hi" }] }).into()),
///                 other => Err(ErrorObject::method_not_found(other).into()),
///             }
///         })
///     }
/// }
/// let server = Server::builder("front", "1").enable_tools().forward(Static).build().unwrap();
/// # let _ = server;
/// ```
pub trait Forward: Send + Sync + 'static {
    /// Computes the result of `request`. Dropping the future cancels it.
    fn forward(&self, request: ForwardRequest) -> ForwardFuture;
}

/// What a forwarded call may use besides its hook: the session of a 2025-11-25 request,
/// and how to reach its client.
pub(crate) struct Drive<'a> {
    pub(crate) session: Option<&'a Arc<Session>>,
    pub(crate) outbound: &'a Outbound,
    pub(crate) ask_timeout: Duration,
    pub(crate) cancel: &'a CancellationToken,
}

impl Drive<'_> {
    /// Runs `request` through `hook`. On a 2025-11-25 session an `InputRequiredResult`
    /// is answered here, round after round, by asking the client on the session (see the
    /// [module](self) docs), and the complete result goes without `resultType`, which
    /// that revision does not have.
    pub(crate) async fn run(
        &self,
        hook: &dyn Forward,
        mut request: ForwardRequest,
    ) -> Result<ForwardResult, ForwardError> {
        let Some(session) = self.session else {
            let mut result = hook.forward(request).await?;
            result.complete_by_default();
            return Ok(result);
        };
        for _ in 0..MAX_FORWARDED_LEGACY_ROUNDS {
            let mut result = hook
                .forward(request.clone())
                .await?
                .into_value()
                .map_err(|e| ErrorObject::internal(format!("Internal error: {e}")))?;
            let Value::Object(members) = &mut result else {
                return Ok(result.into());
            };
            match members.get("resultType").and_then(Value::as_str) {
                Some("input_required") => {}
                Some("complete") | None => {
                    members.remove("resultType");
                    return Ok(result.into());
                }
                Some(other) => {
                    return Err(ErrorObject::internal(format!(
                        "Internal error: a {} result cannot be sent to a 2025-11-25 client",
                        ferry_protocol::quote::quote(other)
                    ))
                    .into());
                }
            }
            let mut answers = Map::new();
            if let Some(Value::Object(asks)) = members.get("inputRequests") {
                // Every input request is checked before the first is sent, so the user is
                // not asked one question of a call that then fails on the next.
                for ask in asks.values() {
                    let needs = Needs::of_input_request(ask).ok_or_else(|| {
                        ErrorObject::internal(format!(
                            "Internal error: {} is not an input request a client answers",
                            ferry_protocol::quote::quote(
                                ask.get("method")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default()
                            )
                        ))
                    })?;
                    needs.check(&request.client_capabilities)?;
                }
                for (key, ask) in asks {
                    answers.insert(key.clone(), self.ask(session, ask).await?);
                }
            }
            let params = &mut request.params;
            params.insert("inputResponses".into(), Value::Object(answers));
            match members.remove("requestState") {
                Some(state @ Value::String(_)) => params.insert("requestState".into(), state),
                _ => params.remove("requestState"),
            };
        }
        Err(ErrorObject::internal(format!(
            "Internal error: the call still needed input after {MAX_FORWARDED_LEGACY_ROUNDS} rounds"
        ))
        .into())
    }

    /// Sends one input request (`{method, params}`, checked by `run`) to the session's
    /// client and waits for its answer, with the server's ask timeout and the request's
    /// cancellation.
    async fn ask(&self, session: &Session, ask: &Value) -> Result<Value, ErrorObject> {
        // `run` checked the method is an input request's.
        let method = ask
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut params = ask
            .get("params")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        // 2025-11-25 URL-mode elicitations carry an id the client may complete them by.
        if let Value::Object(p) = &mut params
            && p.get("mode").and_then(Value::as_str) == Some("url")
            && !p.contains_key("elicitationId")
        {
            p.insert(
                "elicitationId".into(),
                Value::String(crate::ask::new_elicitation_id()),
            );
        }
        let (id, answer) = session.register_request();
        let message = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": method,
            "params": params,
        });
        let bytes = bytes::Bytes::from(serde_json::to_vec(&message).unwrap_or_default());
        if self.outbound.is_open() {
            self.outbound.send(bytes).await;
        } else {
            session.send_standalone(bytes);
        }
        let answer = tokio::select! {
            a = answer => a,
            () = self.cancel.cancelled() => {
                session.forget_request(&id);
                return Err(ErrorObject::internal("Request cancelled"));
            }
            () = tokio::time::sleep(self.ask_timeout) => {
                session.forget_request(&id);
                return Err(ErrorObject::internal(
                    "Internal error: the client did not answer in time",
                ));
            }
        };
        match answer {
            Ok(answer) => answer,
            Err(_) => Err(ErrorObject::internal(
                "Internal error: the session ended before the client answered",
            )),
        }
    }
}

/// A result object without `resultType` is a complete one (2026-07-28 results name
/// their type, basic/index.mdx): the member is added.
pub(crate) fn complete_by_default(result: &mut Value) {
    if let Value::Object(m) = result
        && !m.contains_key("resultType")
    {
        m.insert("resultType".into(), Value::String("complete".into()));
    }
}

/// Whether `method` is one a [`Forward`] hook answers.
pub(crate) fn is_forwarded(method: Method) -> bool {
    matches!(
        method,
        Method::ToolsList
            | Method::ToolsCall
            | Method::PromptsList
            | Method::PromptsGet
            | Method::ResourcesList
            | Method::ResourcesTemplatesList
            | Method::ResourcesRead
            | Method::CompletionComplete
            | Method::TasksGet
            | Method::TasksUpdate
            | Method::TasksCancel
    )
}

/// The method's params as a JSON object again (without `_meta`).
pub(crate) fn raw_params(params: Params<'_>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            out.insert(key.to_owned(), v);
        }
    };
    match params {
        Params::List(p) => put("cursor", p.cursor.map(|c| Value::String(c.into_owned()))),
        Params::Call(p) => {
            let p = *p;
            let arguments = p.arguments;
            put("name", p.name.map(|n| Value::String(n.into_owned())));
            // Numbers beyond f64 reach the upstream as their nearest f64 (the Value
            // this map holds cannot carry them exactly).
            put("arguments", arguments);
            put("inputResponses", p.input_responses);
            put("requestState", p.request_state.map(Value::String));
        }
        Params::Read(p) => {
            let p = *p;
            put("uri", p.uri.map(|u| Value::String(u.into_owned())));
            put("inputResponses", p.input_responses);
            put("requestState", p.request_state.map(Value::String));
        }
        Params::Complete(p) => {
            let p = *p;
            put("ref", p.reference);
            put("argument", p.argument);
            put("context", p.context);
        }
        Params::Task(p) => {
            let p = *p;
            put("taskId", p.task_id.map(|t| Value::String(t.into_owned())));
            put("inputResponses", p.input_responses);
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed(text: &str) -> String {
        let mut r = ForwardResult::from(RawValue::from_string(text.into()).unwrap());
        r.complete_by_default();
        serde_json::to_string(&r).unwrap()
    }

    #[test]
    fn raw_results_without_a_result_type_become_complete() {
        assert_eq!(
            completed(r#"{"content":[]}"#),
            r#"{"resultType":"complete","content":[]}"#
        );
        assert_eq!(completed("{}"), r#"{"resultType":"complete"}"#);
        assert_eq!(completed("{ }"), r#"{"resultType":"complete" }"#);
        // Already typed, or not an object: sent as it is.
        let typed = r#"{"content":[],"resultType":"input_required"}"#;
        assert_eq!(completed(typed), typed);
        assert_eq!(completed("[1]"), "[1]");
        // A `resultType` nested deeper does not count.
        assert_eq!(
            completed(r#"{"a":{"resultType":"task"}}"#),
            r#"{"resultType":"complete","a":{"resultType":"task"}}"#
        );
    }
}
