//! The gateway: a [`Forward`] hook on Ferry's server that answers feature methods from
//! the upstreams, merging lists and relaying multi round-trip calls round by round.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use ferry_protocol::ErrorObject;
use ferry_protocol::capabilities::ClientCapabilities;
use ferry_protocol::methods;
use ferry_protocol::result::{ResultHead, ResultType};
use ferry_server::uri_template::UriTemplate;
use ferry_server::{
    Forward, ForwardError, ForwardFuture, ForwardProgress, ForwardRequest, ForwardResult,
};
use parking_lot::RwLock;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::bridge::{Bridge, Step};
use crate::envelope::{Bound, Envelope, Envelopes, Refused};
use crate::meter::{Held, Meter, RoundOutcome, RoundRecord, RoundStart};
use crate::metrics::Metrics;
use crate::names::{self, SEPARATOR};
use crate::tasks::{TaskIds, TaskRoute};
use crate::upstream::{CacheHints, Upstream};

/// The gateway's state, shared by every request.
pub(crate) struct Core {
    pub(crate) upstreams: Vec<Upstream>,
    pub(crate) envelopes: Envelopes,
    pub(crate) meter: Arc<dyn Meter>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) max_rounds: u32,
    pub(crate) page_size: usize,
    pub(crate) routes: RwLock<Routes>,
    pub(crate) limit: Option<crate::limit::PrincipalLimit>,
    pub(crate) tool_limit: Option<crate::limit::PrincipalLimit>,
    pub(crate) bridge: Bridge,
    pub(crate) tasks: TaskIds,
    /// This instance's `advertise_url`, written into the states of calls held here.
    pub(crate) advertise: Option<String>,
    /// The HTTP client that passes answers on to the instance holding a call.
    pub(crate) peers: reqwest::Client,
}

/// The path, beside `/mcp`, at which an instance takes the answers for the calls it
/// holds from the other instances.
pub(crate) const HELD_PATH: &str = "/.ferry/held";

/// Which upstream serves a resource URI, learned from the lists.
#[derive(Default)]
pub(crate) struct Routes {
    resources: HashMap<String, usize>,
    templates: Vec<(UriTemplate, usize)>,
}

/// The [`Forward`] hook; cheap to clone.
#[derive(Clone)]
pub(crate) struct Relay(pub(crate) Arc<Core>);

impl Forward for Relay {
    fn forward(&self, request: ForwardRequest) -> ForwardFuture {
        let core = self.0.clone();
        Box::pin(async move {
            core.metrics.request(request.method);
            let principal = request.principal.as_ref().map(|p| p.id().to_owned());
            if let Some(limit) = &core.limit
                && let Err(denied) = limit.check(principal.as_deref()).await
            {
                if denied.is_limited() {
                    core.metrics.rate_limited();
                }
                return Err(denied.into());
            }
            let params = request.params;
            let list = |member, rename| core.page(request.method, member, rename, &params);
            match request.method {
                methods::TOOLS_LIST => Ok(list("tools", true).await?.into()),
                methods::PROMPTS_LIST => Ok(list("prompts", true).await?.into()),
                methods::RESOURCES_LIST => Ok(list("resources", false).await?.into()),
                methods::RESOURCES_TEMPLATES_LIST => {
                    Ok(list("resourceTemplates", true).await?.into())
                }
                methods::TOOLS_CALL | methods::PROMPTS_GET | methods::RESOURCES_READ => {
                    let caps = &request.client_capabilities;
                    let progress = request.progress.as_ref();
                    core.call(request.method, params, principal.as_deref(), caps, progress)
                        .await
                }
                methods::COMPLETION_COMPLETE => Ok(core
                    .complete(params, &request.client_capabilities)
                    .await?
                    .into()),
                methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL => {
                    let caps = &request.client_capabilities;
                    Ok(core
                        .task(request.method, params, principal.as_deref(), caps)
                        .await?
                        .into())
                }
                other => Err(ErrorObject::method_not_found(other).into()),
            }
        })
    }
}

/// The gateway's list cursors: the merged list's offset, `at:N` in base64url.
const CURSOR_PREFIX: &str = "at:";

fn encode_cursor(offset: usize) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{offset}"))
}

fn decode_cursor(cursor: &str) -> Result<usize, ErrorObject> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| invalid_cursor())?;
    std::str::from_utf8(&bytes)
        .ok()
        .and_then(|t| t.strip_prefix(CURSOR_PREFIX))
        .and_then(|n| n.parse().ok())
        .ok_or_else(invalid_cursor)
}

/// server/utilities/pagination: an invalid cursor is -32602.
fn invalid_cursor() -> ErrorObject {
    ErrorObject::invalid_params("Invalid cursor")
}

impl Core {
    fn namespaced(&self) -> bool {
        self.upstreams.len() > 1
    }

    /// One page of a merged list: the items after the request's `cursor` (the gateway's
    /// own), at most `page_size` of them, and a `nextCursor` when more follow.
    ///
    /// The merged list is read again from the upstreams for every page, so any instance
    /// serves any page; an upstream whose list changes between pages may shift its items
    /// by as many places.
    async fn page(
        &self,
        method: &str,
        member: &str,
        rename: bool,
        params: &Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        let start = match params.get("cursor") {
            None => 0,
            Some(Value::String(c)) => decode_cursor(c)?,
            Some(_) => return Err(invalid_cursor()),
        };
        let mut result = self.list(method, member, rename).await?;
        let Some(Value::Array(items)) = result.get_mut(member) else {
            return Ok(result);
        };
        let total = items.len();
        let end = start.saturating_add(self.page_size).min(total);
        let page: Vec<Value> = items.drain(start.min(total)..end).collect();
        *items = page;
        if end < total {
            result["nextCursor"] = Value::String(encode_cursor(end));
        }
        Ok(result)
    }

    /// Every upstream's items of one list, merged; names prefixed with the upstream's
    /// when there are several (`rename`), tools filtered by the edge policy.
    async fn list(&self, method: &str, member: &str, rename: bool) -> Result<Value, ErrorObject> {
        let pages = futures::future::join_all(
            self.upstreams
                .iter()
                .map(|u| async move { (u, u.list_all(method, member).await) }),
        )
        .await;
        let mut merged = Vec::new();
        let mut reached = 0;
        let mut hints: Option<CacheHints> = None;
        for (index, (upstream, items)) in pages.into_iter().enumerate() {
            let items = match items {
                Ok((items, h)) => {
                    hints = Some(hints.map_or(h, |all| all.merge(h)));
                    items
                }
                Err(e) => {
                    tracing::warn!(upstream = upstream.name(), error = %e, "{method} failed upstream");
                    continue;
                }
            };
            reached += 1;
            for mut item in items {
                let Some(name) = item.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if method == methods::TOOLS_LIST && !upstream.config.allows_tool(name) {
                    continue;
                }
                if rename && self.namespaced() {
                    let full = names::join(upstream.name(), name);
                    item["name"] = Value::String(full);
                }
                self.learn_route(method, &item, index);
                merged.push(item);
            }
        }
        if reached == 0 {
            return Err(ErrorObject::internal(format!(
                "Internal error: no upstream answered {method}"
            )));
        }
        let hints = hints.unwrap_or_default();
        Ok(json!({
            member: merged,
            "ttlMs": hints.ttl_ms,
            "cacheScope": if hints.public { "public" } else { "private" },
        }))
    }

    fn learn_route(&self, method: &str, item: &Value, index: usize) {
        if method == methods::RESOURCES_LIST
            && let Some(uri) = item.get("uri").and_then(Value::as_str)
        {
            self.routes.write().resources.insert(uri.to_owned(), index);
        } else if method == methods::RESOURCES_TEMPLATES_LIST
            && let Some(t) = item.get("uriTemplate").and_then(Value::as_str)
            && let Ok(template) = UriTemplate::parse(t)
        {
            let mut routes = self.routes.write();
            if !routes
                .templates
                .iter()
                .any(|(known, i)| *i == index && known.as_str() == template.as_str())
            {
                routes.templates.push((template, index));
            }
        }
    }

    /// The upstream serving `uri`, learning the resource lists once if it is unknown.
    pub(crate) async fn route_uri(&self, uri: &str) -> Option<usize> {
        if !self.namespaced() {
            return Some(0);
        }
        if let Some(i) = self.lookup_uri(uri) {
            return Some(i);
        }
        let _ = self.list(methods::RESOURCES_LIST, "resources", false).await;
        let _ = self
            .list(methods::RESOURCES_TEMPLATES_LIST, "resourceTemplates", true)
            .await;
        self.lookup_uri(uri)
    }

    fn lookup_uri(&self, uri: &str) -> Option<usize> {
        let routes = self.routes.read();
        routes.resources.get(uri).copied().or_else(|| {
            routes
                .templates
                .iter()
                .find(|(t, _)| t.matches(uri).is_some())
                .map(|(_, i)| *i)
        })
    }

    /// The upstream and its own name for a namespaced tool or prompt name.
    fn route_name<'a>(&self, method: &str, name: &'a str) -> Result<(usize, &'a str), ErrorObject> {
        let kind = if method == methods::TOOLS_CALL {
            "tool"
        } else {
            "prompt"
        };
        let unknown = || ErrorObject::invalid_params(format!("Unknown {kind}: {name}"));
        let (index, inner) = if self.namespaced() {
            let (prefix, inner) = name.split_once(SEPARATOR).ok_or_else(unknown)?;
            let index = self
                .upstreams
                .iter()
                .position(|u| u.name() == prefix)
                .ok_or_else(unknown)?;
            (index, inner)
        } else {
            (0, name)
        };
        if method == methods::TOOLS_CALL && !self.upstreams[index].config.allows_tool(inner) {
            return Err(unknown());
        }
        Ok((index, inner))
    }

    /// One round of `tools/call`, `prompts/get` or `resources/read`.
    async fn call(
        &self,
        method: &'static str,
        mut params: Map<String, Value>,
        principal: Option<&str>,
        capabilities: &ClientCapabilities,
        progress: Option<&ForwardProgress>,
    ) -> Result<ForwardResult, ForwardError> {
        let key = if method == methods::RESOURCES_READ {
            "uri"
        } else {
            "name"
        };
        let target = match params.get(key) {
            Some(Value::String(s)) => s.clone(),
            _ => {
                return Err(ErrorObject::invalid_params(format!(
                    "Invalid params: {key} is required"
                ))
                .into());
            }
        };
        if method == methods::TOOLS_CALL
            && !params.contains_key("requestState")
            && let Some(limit) = &self.tool_limit
            && let Err(denied) = limit.check_tool(principal, &target).await
        {
            if denied.is_limited() {
                self.metrics.rate_limited();
            }
            return Err(denied.into());
        }
        let (index, upstream_target) = if method == methods::RESOURCES_READ {
            let index = self
                .route_uri(&target)
                .await
                .ok_or_else(|| ErrorObject::resource_not_found(&target))?;
            (index, target.clone())
        } else {
            let (index, inner) = self.route_name(method, &target)?;
            (index, inner.to_owned())
        };
        let upstream = &self.upstreams[index];
        let arguments = match method {
            methods::RESOURCES_READ => Value::Object(Map::new()),
            _ => params
                .get("arguments")
                .cloned()
                .filter(|a| !a.is_null())
                .unwrap_or_else(|| Value::Object(Map::new())),
        };
        let bound = Bound {
            principal,
            method,
            target: &target,
            arguments: &arguments,
        };
        let opened = match params.remove("requestState") {
            None => None,
            Some(Value::String(token)) => Some(self.open(&token, &bound, upstream.name()).await?),
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: requestState must be a string",
                )
                .into());
            }
        };
        let (call_id, round) = match &opened {
            Some(e) => (e.call_id.clone(), e.round + 1),
            None => (random_id(), 1),
        };
        let resumed = opened
            .as_ref()
            .and_then(|e| e.held.clone().map(|h| (h, e.owner.clone())));
        if let Some(state) = opened.and_then(|e| e.upstream_state) {
            params.insert("requestState".into(), Value::String(state));
        }
        params.insert(key.into(), Value::String(upstream_target.clone()));

        let start = RoundStart {
            principal: principal.map(str::to_owned),
            upstream: upstream.name().to_owned(),
            method: method.to_owned(),
            tool: upstream_target,
            call_id: call_id.clone(),
            round,
        };
        let reservation = self.meter.reserve(&start).map_err(|e| {
            ErrorObject::invalid_params(format!("Refused by the gateway's meter: {e}"))
        })?;
        let metered = Held::new(&*self.meter, reservation);
        let request_bytes = json_len(&params);
        let began = Instant::now();
        let (step, owner) = self
            .forward_round(upstream, method, params, capabilities, resumed, progress)
            .await;
        let latency = began.elapsed();
        let (answer, held) = match step {
            Ok(Step::Done(answer)) => (
                answer
                    .map(ForwardResult::Value)
                    .map_err(|e| upstream_error(upstream.name(), &e)),
                None,
            ),
            Ok(Step::Relayed(answer)) => (
                answer
                    .map(ForwardResult::Raw)
                    .map_err(|e| upstream_error(upstream.name(), &e)),
                None,
            ),
            Ok(Step::Answered(result)) => (Ok(result.into()), None),
            Ok(Step::Ask { result, held }) => (Ok(result.into()), Some(held)),
            Err(e) => (Err(e), None),
        };
        // A complete result goes back as the upstream wrote it; one the gateway rewrites
        // (its `requestState` or `taskId`) is read into a value.
        let answer = match answer {
            Ok(ForwardResult::Raw(raw)) if !rewritten(&raw) => Ok(Answer::Verbatim(raw)),
            Ok(result) => result
                .into_value()
                .map(Answer::Read)
                .map_err(|e| ErrorObject::internal(format!("Internal error: {e}"))),
            Err(e) => Err(e),
        };

        let mut input_kinds = Vec::new();
        let (outcome, result) = match answer {
            Ok(Answer::Verbatim(raw)) => (RoundOutcome::Complete, Ok(ForwardResult::Raw(raw))),
            Ok(Answer::Read(mut result)) => {
                match result.get("resultType").and_then(Value::as_str) {
                    Some("input_required") if round >= self.max_rounds => {
                        if let Some(held) = &held {
                            self.bridge.cancel(held);
                        }
                        (
                        RoundOutcome::Error,
                        Err(ErrorObject::invalid_params(format!(
                            "Too many rounds: this call needs more input after {round} round trips, the gateway's limit is {}",
                            self.max_rounds
                        ))
                        .with_data(json!({ "maxRounds": self.max_rounds }))),
                    )
                    }
                    Some("input_required") => {
                        input_kinds = names::input_kinds(&result);
                        let upstream_state = match result.get("requestState") {
                            Some(Value::String(s)) => Some(s.clone()),
                            _ => None,
                        };
                        let envelope = Envelope {
                            upstream: upstream.name().to_owned(),
                            upstream_state,
                            call_id: call_id.clone(),
                            round,
                            owner: held
                                .as_ref()
                                .and_then(|_| owner.clone().or_else(|| self.advertise.clone())),
                            held: held.clone(),
                        };
                        match self.envelopes.seal(&bound, &envelope) {
                            Ok(token) => {
                                result["requestState"] = Value::String(token);
                                (RoundOutcome::InputRequired, Ok(result.into()))
                            }
                            Err(e) => {
                                if let Some(held) = &held {
                                    self.bridge.cancel(held);
                                }
                                (RoundOutcome::Error, Err(e))
                            }
                        }
                    }
                    Some("task") => {
                        let route = match result.get("taskId") {
                            Some(Value::String(id)) => Some(TaskRoute {
                                upstream: upstream.name().to_owned(),
                                task_id: id.clone(),
                            }),
                            _ => None,
                        };
                        let sealed = route
                        .ok_or_else(|| {
                            ErrorObject::internal(format!(
                                "Internal error: upstream {} answered with a task without a taskId",
                                upstream.name()
                            ))
                        })
                        .and_then(|r| self.tasks.seal(&r, principal));
                        match sealed {
                            Ok(id) => {
                                result["taskId"] = Value::String(id);
                                (RoundOutcome::Task, Ok(result.into()))
                            }
                            Err(e) => (RoundOutcome::Error, Err(e)),
                        }
                    }
                    _ => (RoundOutcome::Complete, Ok(result.into())),
                }
            }
            Err(e) => (RoundOutcome::Error, Err(e)),
        };
        let response_bytes = match &result {
            Ok(ForwardResult::Raw(raw)) => raw.get().len(),
            Ok(ForwardResult::Value(v)) => json_len(v),
            Err(e) => json_len(e),
        };
        let record = RoundRecord {
            at_ms: ferry_state::unix_millis_now(),
            start,
            outcome,
            input_kinds,
            request_bytes,
            response_bytes,
            latency_us: u64::try_from(latency.as_micros()).unwrap_or(u64::MAX),
        };
        self.metrics.round(
            upstream.name(),
            outcome,
            latency.as_secs_f64(),
            record.start.round,
        );
        metered.settle(&record);
        Ok(result?)
    }

    async fn open(
        &self,
        token: &str,
        bound: &Bound<'_>,
        upstream: &str,
    ) -> Result<Envelope, ErrorObject> {
        let refused = match self.envelopes.open(token, bound).await {
            Ok(e) if e.upstream == upstream => return Ok(e),
            Ok(_) => Refused::Request,
            Err(r) => r,
        };
        tracing::debug!(
            reason = refused.label(),
            "requestState refused at the gateway"
        );
        self.metrics.refusal(refused.label());
        Err(refused.to_error())
    }

    /// Sends one round upstream and says how it ended, and, when another instance holds
    /// the call, which one (`None`: this one). A 2025-11-25 upstream asks in the middle of a call: its rounds go
    /// through the bridge, which holds the call between them (`resumed` names the held
    /// call and its holder), and a call held on another instance is continued there.
    /// The upstream's progress during the round is relayed to `progress` (not from a call
    /// held on another instance).
    async fn forward_round(
        &self,
        upstream: &Upstream,
        method: &'static str,
        params: Map<String, Value>,
        capabilities: &ClientCapabilities,
        resumed: Option<(String, Option<String>)>,
        progress: Option<&ForwardProgress>,
    ) -> (Result<Step, ErrorObject>, Option<String>) {
        let responses = params.get("inputResponses");
        match resumed {
            Some((held, Some(at)))
                if self.advertise.as_ref() != Some(&at) && !self.bridge.holds(&held) =>
            {
                let step = self.resume_at(&at, &held, upstream.name(), responses).await;
                (step, Some(at))
            }
            Some((held, _)) => (self.bridge.resume(&held, responses, progress).await, None),
            None if upstream.bridges() => {
                let back = upstream.back.as_ref();
                let step = self
                    .bridge
                    .start(
                        &upstream.client,
                        method,
                        params,
                        capabilities,
                        back,
                        progress,
                    )
                    .await;
                (step, None)
            }
            None => {
                let mut options = upstream.options(capabilities);
                if let Some(progress) = progress.cloned() {
                    options = options.on_progress(move |p| {
                        progress.send(p.progress, p.total, p.message.as_deref());
                    });
                }
                let answer = upstream.send_raw(method, params, &options).await;
                (Ok(Step::Relayed(answer)), None)
            }
        }
    }

    /// Passes the answer in `responses` on to the instance at `owner`, which holds the
    /// call `held`, and returns how the round ended there.
    async fn resume_at(
        &self,
        owner: &str,
        held: &str,
        upstream: &str,
        responses: Option<&Value>,
    ) -> Result<Step, ErrorObject> {
        let responses = responses.cloned().unwrap_or_else(|| json!({}));
        let token = self.envelopes.peer_token(held, &responses)?;
        let body = json!({
            "held": held,
            "upstream": upstream,
            "inputResponses": responses,
            "token": token,
        });
        let url = format!("{}{HELD_PATH}", owner.trim_end_matches('/'));
        let unreachable = |e: reqwest::Error| {
            tracing::warn!(owner, error = %e, "the instance holding a call could not be reached");
            ErrorObject::internal(
                "Internal error: the gateway instance holding this call could not be reached",
            )
        };
        let reply: Value = self
            .peers
            .post(url)
            .json(&body)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(unreachable)?
            .json()
            .await
            .map_err(unreachable)?;
        peer_step(reply)
    }

    /// Answers another instance passing on the answer for a call held here (the body
    /// [`resume_at`](Core::resume_at) sends). `None` when the body is not a valid peer
    /// request: its token was not made with this gateway's state keys for this call and
    /// these answers.
    pub(crate) async fn serve_peer(&self, body: &Value) -> Option<Value> {
        let held = body.get("held")?.as_str()?;
        let upstream = body.get("upstream")?.as_str()?;
        let token = body.get("token")?.as_str()?;
        let responses = body.get("inputResponses")?;
        if !self.envelopes.check_peer_token(token, held, responses) {
            return None;
        }
        let reply = match self.bridge.resume(held, Some(responses), None).await {
            Ok(Step::Ask { result, held }) => json!({"ask": {"result": result, "held": held}}),
            Ok(Step::Done(Ok(result)) | Step::Answered(result)) => json!({"done": result}),
            Ok(Step::Done(Err(e)) | Step::Relayed(Err(e))) => {
                json!({"error": upstream_error(upstream, &e)})
            }
            Ok(Step::Relayed(Ok(raw))) => json!({"done": raw}),
            Err(e) => json!({"error": e}),
        };
        Some(reply)
    }

    /// `tasks/get`, `tasks/update` or `tasks/cancel` for a task id the gateway gave this
    /// principal: sent to the task's upstream under its own id, and answered under the
    /// gateway's.
    async fn task(
        &self,
        method: &'static str,
        mut params: Map<String, Value>,
        principal: Option<&str>,
        capabilities: &ClientCapabilities,
    ) -> Result<Value, ErrorObject> {
        let id = match params.get("taskId") {
            Some(Value::String(id)) => id.clone(),
            _ => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: taskId is required",
                ));
            }
        };
        let route = self.tasks.open(&id, principal)?;
        let upstream = self
            .upstreams
            .iter()
            .find(|u| u.name() == route.upstream)
            .ok_or_else(crate::tasks::not_found)?;
        params.insert("taskId".into(), Value::String(route.task_id));
        let mut result = upstream
            .request(method, params, capabilities)
            .await
            .map_err(|e| upstream_error(upstream.name(), &e))?;
        if let Some(task_id) = result.get_mut("taskId") {
            *task_id = Value::String(id);
        }
        Ok(result)
    }

    /// `completion/complete`, sent to the upstream of the prompt or template it names.
    async fn complete(
        &self,
        mut params: Map<String, Value>,
        capabilities: &ClientCapabilities,
    ) -> Result<Value, ErrorObject> {
        let reference = params
            .get_mut("ref")
            .and_then(Value::as_object_mut)
            .ok_or_else(|| ErrorObject::invalid_params("Invalid params: ref is required"))?;
        let index = if let Some(name) = reference.get("name").and_then(Value::as_str) {
            let (index, inner) = self.route_name(methods::PROMPTS_GET, name)?;
            let inner = inner.to_owned();
            reference.insert("name".into(), Value::String(inner));
            index
        } else if let Some(uri) = reference.get("uri").and_then(Value::as_str) {
            let uri = uri.to_owned();
            self.route_uri_template(&uri).ok_or_else(|| {
                ErrorObject::invalid_params(format!("Unknown resource template: {uri}"))
            })?
        } else {
            return Err(ErrorObject::invalid_params(
                "Invalid params: ref needs a name or a uri",
            ));
        };
        let upstream = &self.upstreams[index];
        upstream
            .request(methods::COMPLETION_COMPLETE, params, capabilities)
            .await
            .map_err(|e| upstream_error(upstream.name(), &e))
    }

    fn route_uri_template(&self, template: &str) -> Option<usize> {
        if !self.namespaced() {
            return Some(0);
        }
        self.routes
            .read()
            .templates
            .iter()
            .find(|(t, _)| t.as_str() == template)
            .map(|(_, i)| *i)
    }
}

/// How a round ended on the instance holding its call, read from its reply.
fn peer_step(reply: Value) -> Result<Step, ErrorObject> {
    let garbled = || {
        ErrorObject::internal(
            "Internal error: the gateway instance holding this call answered wrongly",
        )
    };
    if let Some(ask) = reply.get("ask") {
        let held = ask
            .get("held")
            .and_then(Value::as_str)
            .ok_or_else(garbled)?;
        let result = ask.get("result").cloned().ok_or_else(garbled)?;
        return Ok(Step::Ask {
            result,
            held: held.to_owned(),
        });
    }
    if let Some(result) = reply.get("done") {
        return Ok(Step::Answered(result.clone()));
    }
    let error = reply.get("error").cloned().ok_or_else(garbled)?;
    Err(serde_json::from_value(error).map_err(|_| garbled())?)
}

/// The upstream's own JSON-RPC error, passed on; a local failure (timeout, transport)
/// named without detail that could leak the upstream's address or credentials.
fn upstream_error(upstream: &str, e: &ferry_client::Error) -> ErrorObject {
    if let Some(rpc) = e.rpc() {
        return rpc.to_object();
    }
    tracing::warn!(upstream, error = %e, "upstream request failed");
    let what = if e.is_timeout() {
        "did not answer in time"
    } else {
        "could not be reached"
    };
    ErrorObject::internal(format!("Internal error: upstream {upstream} {what}"))
}

/// The length of `value` as JSON, counted as it is written, without keeping it.
/// An upstream's answer to one round: passed on as it came, or read to be rewritten.
enum Answer {
    Verbatim(Box<RawValue>),
    Read(Value),
}

/// Whether the gateway rewrites a result before passing it on: an `InputRequiredResult`
/// (its `requestState` sealed in the gateway's envelope) or a task (its id namespaced).
/// A `resultType` that is not a plain string is read in full too.
fn rewritten(raw: &RawValue) -> bool {
    // Ferry's servers write `resultType` first. The client refused a result with a
    // member twice, so a complete one is told without reading the rest.
    if let Some(rest) = raw.get().strip_prefix(r#"{"resultType":"complete""#)
        && rest.starts_with([',', '}'])
    {
        return false;
    }
    match ResultHead::read(raw).map(|h| h.result_type()) {
        Ok(Some(Ok(ResultType::InputRequired | ResultType::Task))) => true,
        Ok(None | Some(Ok(_))) => false,
        Ok(Some(Err(_))) | Err(_) => true,
    }
}

fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

/// A fresh id (of a logical call, or of a held call): 16 random bytes, base64url.
pub(crate) fn random_id() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: fall back to the clock, still unique enough to link rounds.
        let now = ferry_state::unix_millis_now().to_le_bytes();
        bytes[..8].copy_from_slice(&now);
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.into()).unwrap()
    }

    #[test]
    fn only_input_required_and_task_results_are_rewritten() {
        assert!(!rewritten(&raw(
            r#"{"resultType":"complete","content":[]}"#
        )));
        assert!(!rewritten(&raw(r#"{"resultType":"complete"}"#)));
        assert!(!rewritten(&raw(
            r#"{"content":[],"resultType":"complete"}"#
        )));
        assert!(!rewritten(&raw(r#"{"content":[]}"#)));
        assert!(rewritten(&raw(
            r#"{"inputRequests":{},"resultType":"input_required"}"#
        )));
        assert!(rewritten(&raw(r#"{"resultType":"task","taskId":"t"}"#)));
        // Only the top level counts, and what cannot be read is read in full later.
        assert!(!rewritten(&raw(r#"{"x":{"resultType":"task"}}"#)));
        assert!(rewritten(&raw(r#"{"resultType":7}"#)));
    }
}
