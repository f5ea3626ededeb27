//! Era bridging: a 2025-11-25 upstream asks its questions in the middle of a call, as
//! server requests on the call's stream (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`), and waits for the answer. A 2026-07-28 client cannot be asked that way:
//! it is asked with an `InputRequiredResult` and answers in a retry.
//!
//! The bridge turns one into the other. The upstream call runs on a task of its own with
//! a per-call input handler ([`CallOptions::input_handler`]). When the upstream asks,
//! the gateway answers the client's round with an `InputRequiredResult` holding the
//! question (under the key [`INPUT_KEY`]) and holds the call, waiting, under a random id
//! that goes inside the gateway's sealed state. The retry's answer is handed to the
//! waiting upstream call, and the round ends with the upstream's next question or its
//! result.
//!
//! A held call lives in the memory of the instance that holds the upstream session, at
//! most as long as the state it was handed out with, and at most
//! [`GatewayConfig::max_held_calls`](crate::GatewayConfig::max_held_calls) at once. One
//! that expires, or whose gateway shuts down, is answered `cancel` upstream.
//!
//! Over HTTP a question arrives on the stream of the call it belongs to. Over stdio it
//! arrives on its own, tied to no call ([`BackChannel`]): it goes to the one bridged call
//! running on that upstream that is not already waiting for an answer, and is declined
//! when there is none or more than one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use ferry_client::handler::{
    BoxFuture, FormRequest, HandlerCapabilities, InputHandler, RootsRequest, SamplingRequest,
    UrlRequest,
};
use ferry_client::{CallOptions, Client};
use ferry_protocol::ErrorObject;
use ferry_protocol::capabilities::ClientCapabilities;
use ferry_protocol::elicitation::{
    ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams, ElicitResult,
};
use ferry_protocol::mrtr::{CreateMessageRequest, ElicitRequest, InputRequest, ListRootsRequest};
use ferry_protocol::roots::{ListRootsResult, Root};
use ferry_protocol::sampling::CreateMessageResult;
use ferry_server::ForwardProgress;
use parking_lot::Mutex;
use prometheus_client::metrics::gauge::Gauge;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::upstream::UPSTREAM_TIMEOUT;

/// The key of a bridged question in `inputRequests`, and of its answer in
/// `inputResponses`.
pub const INPUT_KEY: &str = "upstream";

/// How much longer than its state a held call waits: a retry sent just before the state
/// expires still finds its call.
pub(crate) const HOLD_MARGIN: Duration = Duration::from_secs(5);

/// What an upstream call running on its task tells the round waiting for it.
enum Event {
    /// The upstream asks; `reply` takes the client's answer.
    Ask {
        request: Box<InputRequest>,
        reply: oneshot::Sender<Value>,
    },
    /// The upstream answered the call.
    Done(Result<Value, ferry_client::Error>),
}

/// A call waiting for its client's answer.
struct Held {
    request: Box<InputRequest>,
    reply: oneshot::Sender<Value>,
    events: mpsc::Receiver<Event>,
    progress: ProgressSink,
}

/// Where a bridged call's progress goes: the client's stream of the round under way, if
/// it asked for progress; nowhere between rounds.
type ProgressSink = Arc<Mutex<Option<ForwardProgress>>>;

/// How a bridged round ends.
pub(crate) enum Step {
    /// The upstream asks: `result` is the `InputRequiredResult` for the client, and the
    /// call is held under `held`.
    Ask { result: Value, held: String },
    /// The upstream answered the call.
    Done(Result<Value, ferry_client::Error>),
    /// The upstream answered the call, on the instance that held it.
    Answered(Value),
    /// The upstream answered a call sent straight to it (not bridged), its result as it
    /// wrote it.
    Relayed(Result<Box<serde_json::value::RawValue>, ferry_client::Error>),
}

/// The calls held on this instance.
pub(crate) struct Bridge {
    held: Arc<HeldCalls>,
    max_held: usize,
    hold_for: Duration,
}

/// The held calls by id, and the gauge that counts them (`ferry_gateway_held_calls`).
struct HeldCalls {
    calls: Mutex<HashMap<String, Held>>,
    gauge: Gauge,
}

impl HeldCalls {
    fn insert(&self, id: String, held: Held) {
        let mut calls = self.calls.lock();
        calls.insert(id, held);
        self.gauge.set(calls.len() as i64);
    }

    fn remove(&self, id: &str) -> Option<Held> {
        let mut calls = self.calls.lock();
        let held = calls.remove(id);
        self.gauge.set(calls.len() as i64);
        held
    }

    fn len(&self) -> usize {
        self.calls.lock().len()
    }
}

impl Bridge {
    /// A bridge holding at most `max_held` calls, each at most `hold_for`, counted in
    /// `gauge`.
    pub(crate) fn new(max_held: usize, hold_for: Duration, gauge: Gauge) -> Self {
        Bridge {
            held: Arc::new(HeldCalls {
                calls: Mutex::default(),
                gauge,
            }),
            max_held,
            hold_for,
        }
    }

    /// Starts `method` on a 2025-11-25 upstream, asking the client only what its
    /// `capabilities` declare, and waits for the upstream's first question or its result.
    ///
    /// With `back` (a stdio upstream), the call is registered there while it runs, so
    /// that questions arriving on their own can reach it.
    pub(crate) async fn start(
        &self,
        client: &Client,
        method: &'static str,
        params: Map<String, Value>,
        capabilities: &ClientCapabilities,
        back: Option<&Arc<BackChannel>>,
        progress: Option<&ForwardProgress>,
    ) -> Result<Step, ErrorObject> {
        let (events, rx) = mpsc::channel(1);
        let sink: ProgressSink = Arc::new(Mutex::new(progress.cloned()));
        let relay = sink.clone();
        let asker = Asker {
            events: events.clone(),
            capabilities: handler_capabilities(capabilities),
            asking: Arc::default(),
        };
        let registered = back.map(|b| b.register(asker.clone()));
        let opts = CallOptions::new()
            .bypass_cache()
            .timeout(UPSTREAM_TIMEOUT)
            .input_handler(asker)
            .on_progress(move |p| {
                if let Some(progress) = relay.lock().as_ref() {
                    progress.send(p.progress, p.total, p.message.as_deref());
                }
            });
        let client = client.clone();
        tokio::spawn(async move {
            let result = client.request(method, Value::Object(params), &opts).await;
            drop(registered);
            let _ = events.send(Event::Done(result)).await;
        });
        self.next(rx, sink).await
    }

    /// Hands the answer in `responses` (the retry's `inputResponses`) to the call held as
    /// `id`, and waits for the upstream's next question or its result, relaying the
    /// upstream's progress meanwhile to `progress`. A retry without the answer is asked
    /// the same question again.
    pub(crate) async fn resume(
        &self,
        id: &str,
        responses: Option<&Value>,
        progress: Option<&ForwardProgress>,
    ) -> Result<Step, ErrorObject> {
        let Some(held) = self.held.remove(id) else {
            return Err(ErrorObject::invalid_params(
                "Invalid params: the upstream call this requestState continues is no longer \
                 waiting: it expired, or another gateway instance holds it",
            ));
        };
        let Some(answer) = responses.and_then(|r| r.get(INPUT_KEY)) else {
            return Ok(self.ask(held));
        };
        if let Err(why) = check_answer(&held.request, answer) {
            // The state is spent: end the upstream call rather than leave it waiting.
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: inputResponses.{INPUT_KEY} is not {why}"
            )));
        }
        *held.progress.lock() = progress.cloned();
        let _ = held.reply.send(answer.clone());
        self.next(held.events, held.progress).await
    }

    /// Whether the call `id` is held here.
    pub(crate) fn holds(&self, id: &str) -> bool {
        self.held.calls.lock().contains_key(id)
    }

    /// Ends the call held as `id`, if any: the upstream gets `cancel`.
    pub(crate) fn cancel(&self, id: &str) {
        self.held.remove(id);
    }

    async fn next(
        &self,
        mut events: mpsc::Receiver<Event>,
        progress: ProgressSink,
    ) -> Result<Step, ErrorObject> {
        // The upstream request has its own timeout; this one only bounds a task that
        // went missing.
        let waited = tokio::time::timeout(UPSTREAM_TIMEOUT * 2, events.recv()).await;
        match waited {
            Ok(Some(Event::Done(result))) => Ok(Step::Done(result)),
            Ok(Some(Event::Ask { request, reply })) => {
                // The round ends with the question; the next one reports on its own.
                *progress.lock() = None;
                if self.held.len() >= self.max_held {
                    tracing::warn!(
                        max = self.max_held,
                        "too many calls held for 2025-11-25 upstreams; ending one that asks"
                    );
                    return Err(ErrorObject::internal(
                        "Internal error: the gateway holds too many calls waiting for input; try again later",
                    ));
                }
                Ok(self.ask(Held {
                    request,
                    reply,
                    events,
                    progress,
                }))
            }
            Ok(None) | Err(_) => Err(ErrorObject::internal(
                "Internal error: the upstream call ended without an answer",
            )),
        }
    }

    /// Holds `held` under a fresh id until its client answers or it expires.
    fn ask(&self, held: Held) -> Step {
        let id = crate::gateway::random_id();
        let result = json!({
            "resultType": "input_required",
            "inputRequests": { INPUT_KEY: &held.request },
        });
        self.held.insert(id.clone(), held);
        let calls: Weak<HeldCalls> = Arc::downgrade(&self.held);
        let hold_for = self.hold_for;
        let expiring = id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(hold_for).await;
            if let Some(calls) = calls.upgrade() {
                calls.remove(&expiring);
            }
        });
        Step::Ask { result, held: id }
    }
}

/// Whether `answer` has the shape of an answer to `request`; names what it should be.
fn check_answer(request: &InputRequest, answer: &Value) -> Result<(), &'static str> {
    let fits = match request {
        InputRequest::Elicit(_) => serde_json::from_value::<ElicitResult>(answer.clone()).is_ok(),
        InputRequest::CreateMessage(_) => {
            serde_json::from_value::<CreateMessageResult>(answer.clone()).is_ok()
        }
        InputRequest::ListRoots(_) => {
            serde_json::from_value::<ListRootsResult>(answer.clone()).is_ok()
        }
    };
    if fits {
        return Ok(());
    }
    Err(match request {
        InputRequest::Elicit(_) => "an elicitation result",
        InputRequest::CreateMessage(_) => "a sampling result",
        InputRequest::ListRoots(_) => "a roots result",
    })
}

/// The kinds of input the client declared, as the bridge's handler offers them upstream.
#[allow(deprecated)]
fn handler_capabilities(c: &ClientCapabilities) -> HandlerCapabilities {
    let mut h = HandlerCapabilities::none();
    if c.supports_elicitation_form() {
        h = h.elicitation_form();
    }
    if c.supports_elicitation_url() {
        h = h.elicitation_url();
    }
    if c.supports_sampling() {
        h = h.sampling(c.supports_sampling_tools());
    }
    if c.supports_roots() {
        h = h.roots();
    }
    h
}

/// The bridged calls running on one stdio upstream, for the questions that upstream
/// sends outside any call's stream.
#[derive(Default)]
pub(crate) struct BackChannel {
    calls: Mutex<Vec<(u64, Asker)>>,
    next: AtomicU64,
}

/// A call's place in its [`BackChannel`], given up when dropped.
pub(crate) struct Registered {
    back: Arc<BackChannel>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.back.calls.lock().retain(|(id, _)| *id != self.id);
    }
}

impl BackChannel {
    fn register(self: &Arc<Self>, asker: Asker) -> Registered {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.calls.lock().push((id, asker));
        Registered {
            back: Arc::clone(self),
            id,
        }
    }

    /// The call a question arriving on its own belongs to: the only one running that is
    /// not waiting for an answer already.
    pub(crate) fn sole(&self) -> Option<Asker> {
        let calls = self.calls.lock();
        let mut free = calls
            .iter()
            .filter(|(_, a)| !a.asking.load(Ordering::Acquire));
        match (free.next(), free.next()) {
            (Some((_, asker)), None) => Some(asker.clone()),
            _ => None,
        }
    }
}

/// The input handler of one bridged call: each question goes to the round waiting for
/// the call, and the client's answer comes back. No answer (the call expired, or the
/// gateway shut down) is `cancel` for elicitation and a refusal for sampling and roots.
#[derive(Clone)]
pub(crate) struct Asker {
    events: mpsc::Sender<Event>,
    capabilities: HandlerCapabilities,
    /// Whether a question of this call waits for its answer.
    asking: Arc<AtomicBool>,
}

impl Asker {
    async fn ask(&self, request: InputRequest) -> Option<Value> {
        let (reply, answer) = oneshot::channel();
        let request = Box::new(request);
        self.asking.store(true, Ordering::Release);
        let answer = match self.events.send(Event::Ask { request, reply }).await {
            Ok(()) => answer.await.ok(),
            Err(_) => None,
        };
        self.asking.store(false, Ordering::Release);
        answer
    }

    async fn elicit(&self, params: ElicitRequestParams) -> ElicitResult {
        let asked = self
            .ask(InputRequest::Elicit(ElicitRequest { params }))
            .await;
        asked
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_else(ElicitResult::cancel)
    }
}

impl InputHandler for Asker {
    fn capabilities(&self) -> HandlerCapabilities {
        self.capabilities
    }

    fn elicit_form<'a>(&'a self, request: &'a FormRequest) -> BoxFuture<'a, ElicitResult> {
        Box::pin(
            self.elicit(ElicitRequestParams::Form(ElicitRequestFormParams::new(
                request.message.clone(),
                request.schema.clone(),
            ))),
        )
    }

    fn elicit_url<'a>(&'a self, request: &'a UrlRequest) -> BoxFuture<'a, ElicitResult> {
        Box::pin(
            self.elicit(ElicitRequestParams::Url(ElicitRequestUrlParams::new(
                request.message.clone(),
                request.url.clone(),
            ))),
        )
    }

    fn create_message<'a>(
        &'a self,
        request: &'a SamplingRequest,
    ) -> BoxFuture<'a, Option<CreateMessageResult>> {
        Box::pin(async move {
            let params = request.params.clone();
            let asked = self
                .ask(InputRequest::CreateMessage(CreateMessageRequest { params }))
                .await?;
            serde_json::from_value(asked).ok()
        })
    }

    fn list_roots<'a>(&'a self, _request: &'a RootsRequest) -> BoxFuture<'a, Option<Vec<Root>>> {
        Box::pin(async move {
            let asked = self
                .ask(InputRequest::ListRoots(ListRootsRequest::default()))
                .await?;
            serde_json::from_value::<ListRootsResult>(asked)
                .ok()
                .map(|r| r.roots)
        })
    }
}
