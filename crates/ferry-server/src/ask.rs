//! Asking the client for input: elicitation (form and URL), sampling and roots.
//!
//! A handler asks with one call that works on both protocol eras. On a 2026-07-28 request
//! an ask with no answer yet stops the handler with an [`Interrupt`]; the server answers
//! with an `InputRequiredResult` listing every pending ask, the client retries with the
//! answers, the handler runs again from the top, and the same ask now returns its answer
//! (mrtr.mdx, mrtr.mdx). Answers from earlier rounds ride in the sealed `requestState`, so
//! a later round never asks again.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use ferry_form::{Form, FormSchema};
use ferry_protocol::capabilities::required;
use ferry_protocol::elicitation::ElicitAction;
use ferry_protocol::methods;
use ferry_protocol::roots::{ListRootsResult, Root};
#[allow(deprecated)]
use ferry_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};
use ferry_protocol::{ClientCapabilities, ErrorObject};
use parking_lot::RwLock;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::context::Context;

/// Stops a handler: either the client must supply input first, or the request failed
/// while asking (a capability the client did not declare, a malformed answer).
///
/// Handlers never build one; they pass it on with `?` and Ferry turns it into the right
/// response.
#[derive(Debug)]
pub struct Interrupt {
    pub(crate) kind: InterruptKind,
}

#[derive(Debug)]
pub(crate) enum InterruptKind {
    /// Some asks have no answer: answer with an `InputRequiredResult`.
    InputRequired,
    /// The handler asked the client to retry at once with only a new state.
    Checkpoint,
    /// The request fails with this JSON-RPC error.
    Failed(ErrorObject),
}

impl Interrupt {
    pub(crate) fn input_required() -> Self {
        Interrupt {
            kind: InterruptKind::InputRequired,
        }
    }

    pub(crate) fn failed(error: ErrorObject) -> Self {
        Interrupt {
            kind: InterruptKind::Failed(error),
        }
    }

    pub(crate) fn checkpoint() -> Self {
        Interrupt {
            kind: InterruptKind::Checkpoint,
        }
    }
}

/// The user's answer to a form elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicitation<T> {
    /// The user submitted the form; the content parsed into `T`.
    Accept(T),
    /// The user explicitly refused.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accept(t) => Some(t),
            _ => None,
        }
    }
}

/// The user's answer to a URL-mode elicitation. `Accept` means the user agreed to open the
/// URL, not that the out-of-band interaction finished: check that on your side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlConsent {
    /// The user opened (or agreed to open) the URL.
    Accept,
    /// The user refused.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// The kinds of input a server can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AskKind {
    /// `elicitation/create` in form mode.
    Form,
    /// `elicitation/create` in URL mode.
    Url,
    /// `sampling/createMessage` (deprecated).
    Sampling,
    /// `roots/list` (deprecated).
    Roots,
}

impl AskKind {
    /// The short name stored in sealed state and used for default keys.
    pub fn as_str(self) -> &'static str {
        match self {
            AskKind::Form => "form",
            AskKind::Url => "url",
            AskKind::Sampling => "sampling",
            AskKind::Roots => "roots",
        }
    }

    /// Parses [`AskKind::as_str`].
    pub fn parse(s: &str) -> Option<AskKind> {
        Some(match s {
            "form" => AskKind::Form,
            "url" => AskKind::Url,
            "sampling" => AskKind::Sampling,
            "roots" => AskKind::Roots,
            _ => return None,
        })
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A form's schema with what every round needs of it, computed once: its JSON, sent in
/// each `InputRequest`, and the digest of that JSON, which pins answers to the question
/// (see [`AskSpec::question_digest`]). A typed form's is built once per process.
#[derive(Debug)]
pub(crate) struct PreparedSchema {
    schema: FormSchema,
    json: Box<RawValue>,
    digest: [u8; 32],
}

impl PreparedSchema {
    pub(crate) fn new(schema: FormSchema) -> PreparedSchema {
        use sha2::Digest as _;
        let json =
            serde_json::value::to_raw_value(&schema).unwrap_or_else(|_| RawValue::NULL.to_owned());
        let digest = sha2::Sha256::digest(json.get().as_bytes()).into();
        PreparedSchema {
            schema,
            json,
            digest,
        }
    }

    /// The schema itself.
    pub(crate) fn schema(&self) -> &FormSchema {
        &self.schema
    }
}

/// What one ask sends: the `InputRequest` payload.
#[derive(Clone, Debug)]
pub(crate) enum AskSpec {
    Form {
        message: String,
        schema: Arc<PreparedSchema>,
    },
    Url {
        message: String,
        url: String,
    },
    Sampling(Value),
    Roots,
    /// An ask that cannot be sent; resolving it fails with this error.
    Invalid(ErrorObject),
}

impl AskSpec {
    pub(crate) fn kind(&self) -> AskKind {
        match self {
            AskSpec::Form { .. } => AskKind::Form,
            AskSpec::Url { .. } => AskKind::Url,
            AskSpec::Sampling(_) | AskSpec::Invalid(_) => AskKind::Sampling,
            AskSpec::Roots => AskKind::Roots,
        }
    }

    /// The `InputRequest` object (`{method, params}`), serialized with the form's
    /// properties in their declared order. `legacy` shapes it as a 2025-11-25 request
    /// body's params: no `mode` on forms, and URL asks carry their `elicitationId`.
    pub(crate) fn to_input_request(&self, legacy: Option<Option<&str>>) -> Box<RawValue> {
        #[derive(Serialize)]
        struct Request<P> {
            method: &'static str,
            params: P,
        }
        #[derive(Serialize)]
        struct FormParams<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            mode: Option<&'static str>,
            message: &'a str,
            #[serde(rename = "requestedSchema")]
            requested_schema: &'a RawValue,
        }
        #[derive(Serialize)]
        struct UrlParams<'a> {
            mode: &'static str,
            message: &'a str,
            url: &'a str,
            #[serde(rename = "elicitationId", skip_serializing_if = "Option::is_none")]
            elicitation_id: Option<&'a str>,
        }
        let raw = match self {
            AskSpec::Form { message, schema } => serde_json::value::to_raw_value(&Request {
                method: methods::ELICITATION_CREATE,
                params: FormParams {
                    mode: legacy.is_none().then_some("form"),
                    message,
                    requested_schema: &schema.json,
                },
            }),
            AskSpec::Url { message, url } => serde_json::value::to_raw_value(&Request {
                method: methods::ELICITATION_CREATE,
                params: UrlParams {
                    mode: "url",
                    message,
                    url,
                    elicitation_id: legacy.flatten(),
                },
            }),
            AskSpec::Sampling(params) => serde_json::value::to_raw_value(&Request {
                method: methods::SAMPLING_CREATE_MESSAGE,
                params,
            }),
            AskSpec::Roots => serde_json::value::to_raw_value(&Request {
                method: methods::ROOTS_LIST,
                params: json!({}),
            }),
            AskSpec::Invalid(_) => serde_json::value::to_raw_value(&Value::Null),
        };
        raw.unwrap_or_else(|_| RawValue::NULL.to_owned())
    }

    /// A digest of the question, which an answer is pinned to: its kind and message, and
    /// for a form the digest of its schema's JSON (computed once per schema), for sampling
    /// its whole params. A URL ask is pinned to its message only: its link is often minted
    /// afresh on every round (a signed, short-lived URL), and what the user consented to
    /// is the message.
    pub(crate) fn question_digest(&self) -> String {
        use sha2::Digest as _;
        fn text(hasher: &mut sha2::Sha256, text: &str) {
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
        let mut hasher = sha2::Sha256::new();
        text(&mut hasher, self.kind().as_str());
        match self {
            AskSpec::Form { message, schema } => {
                text(&mut hasher, message);
                hasher.update(schema.digest);
            }
            AskSpec::Url { message, .. } => text(&mut hasher, message),
            AskSpec::Sampling(params) => text(
                &mut hasher,
                &serde_json::to_string(params).unwrap_or_default(),
            ),
            AskSpec::Roots | AskSpec::Invalid(_) => {}
        }
        question_digest(&hasher.finalize())
    }

    /// Logs the once-per-process deprecation warning for sampling sent to a client.
    fn warn_if_deprecated(&self) {
        if matches!(self, AskSpec::Sampling(_)) {
            crate::deprecation::warn_once(crate::deprecation::Feature::Sampling);
        }
    }

    /// Refuses the ask when this request's client capabilities do not allow it
    /// (mrtr.mdx: never send what the client did not declare; -32021 instead).
    pub(crate) fn check_capabilities(&self, caps: &ClientCapabilities) -> Result<(), ErrorObject> {
        let needs = match self {
            AskSpec::Invalid(e) => return Err(e.clone()),
            AskSpec::Form { .. } => Needs::Form,
            AskSpec::Url { .. } => Needs::Url,
            AskSpec::Sampling(params) => Needs::sampling(params),
            AskSpec::Roots => Needs::Roots,
        };
        needs.check(caps)
    }
}

/// The client capability an input request needs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Needs {
    Form,
    Url,
    Sampling { tools: bool },
    Roots,
}

impl Needs {
    /// What a `sampling/createMessage` with these params needs: sampling, and its tools
    /// sub-capability when the request offers tools.
    fn sampling(params: &Value) -> Needs {
        Needs::Sampling {
            tools: params.get("tools").is_some() || params.get("toolChoice").is_some(),
        }
    }

    /// What an `InputRequest` (`{method, params}`) needs; `None` for a method that is no
    /// input request.
    pub(crate) fn of_input_request(request: &Value) -> Option<Needs> {
        let params = request.get("params").unwrap_or(&Value::Null);
        match request.get("method").and_then(Value::as_str)? {
            methods::ELICITATION_CREATE => Some(match params.get("mode").and_then(Value::as_str) {
                Some("url") => Needs::Url,
                _ => Needs::Form,
            }),
            methods::SAMPLING_CREATE_MESSAGE => Some(Needs::sampling(params)),
            methods::ROOTS_LIST => Some(Needs::Roots),
            _ => None,
        }
    }

    /// Refuses with -32021 and the capability missing from `caps`.
    pub(crate) fn check(self, caps: &ClientCapabilities) -> Result<(), ErrorObject> {
        let missing = match self {
            Needs::Form if !caps.supports_elicitation_form() => Some((
                "elicitation (form mode)",
                required(&["elicitation", "form"]),
            )),
            Needs::Url if !caps.supports_elicitation_url() => {
                Some(("elicitation (URL mode)", required(&["elicitation", "url"])))
            }
            Needs::Sampling { .. } if !caps.supports_sampling() => {
                Some(("sampling", required(&["sampling"])))
            }
            Needs::Sampling { tools: true } if !caps.supports_sampling_tools() => {
                Some(("sampling with tools", required(&["sampling", "tools"])))
            }
            Needs::Roots if !caps.supports_roots() => Some(("roots", required(&["roots"]))),
            _ => None,
        };
        match missing {
            None => Ok(()),
            Some((what, caps)) => Err(ErrorObject::missing_capability(
                format!("Server requires the {what} capability for this request"),
                caps,
            )),
        }
    }
}

/// How an answer failed to satisfy its ask.
pub(crate) enum AnswerProblem {
    /// Not an answer of the right shape: the request fails with -32602.
    Malformed(String),
    /// Well-formed, but not acceptable (e.g. form content that fails the schema): ask again.
    Unacceptable(String),
}

/// A type an ask resolves to, parsed from the client's answer.
pub trait AskOutput: Sized + Send + 'static {
    #[doc(hidden)]
    fn from_answer(spec: &AskSpecRef<'_>, answer: &Value) -> Result<Self, AnswerProblemRef>;
}

/// Opaque view of an ask, for [`AskOutput`] implementations inside Ferry.
#[doc(hidden)]
pub struct AskSpecRef<'a>(pub(crate) &'a AskSpec);

/// Opaque answer problem, for [`AskOutput`] implementations inside Ferry.
#[doc(hidden)]
pub struct AnswerProblemRef(pub(crate) AnswerProblem);

/// An `ElicitResult` read in place: its action, and its content when present.
type ElicitAnswer<'a> = (ElicitAction, Option<&'a Map<String, Value>>);

/// Accepted form content, checked against its schema (an empty map when none was sent).
type AcceptedContent<'a> = (&'a FormSchema, std::borrow::Cow<'a, Map<String, Value>>);

/// The `action` of an `ElicitResult`, and its `content` when present, read in place.
fn elicit_answer(answer: &Value) -> Result<ElicitAnswer<'_>, AnswerProblemRef> {
    let malformed = |m: &str| {
        AnswerProblemRef(AnswerProblem::Malformed(format!(
            "inputResponses: not an ElicitResult: {m}"
        )))
    };
    let action = match answer.get("action").and_then(Value::as_str) {
        Some("accept") => ElicitAction::Accept,
        Some("decline") => ElicitAction::Decline,
        Some("cancel") => ElicitAction::Cancel,
        _ => return Err(malformed("action must be accept, decline or cancel")),
    };
    let content = match answer.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => return Err(malformed("content must be an object")),
    };
    Ok((action, content))
}

fn accepted_content<'a>(
    spec: &'a AskSpecRef<'_>,
    content: Option<&'a Map<String, Value>>,
) -> Result<AcceptedContent<'a>, AnswerProblemRef> {
    let AskSpec::Form { schema, .. } = spec.0 else {
        return Err(AnswerProblemRef(AnswerProblem::Malformed(
            "inputResponses: answer does not match its request".into(),
        )));
    };
    let content = match content {
        Some(c) => std::borrow::Cow::Borrowed(c),
        None => std::borrow::Cow::Owned(Map::new()),
    };
    let schema = schema.schema();
    schema
        .validate_content(&content)
        .map_err(|e| AnswerProblemRef(AnswerProblem::Unacceptable(e.to_string())))?;
    Ok((schema, content))
}

impl<T: Form + Send + 'static> AskOutput for Elicitation<T> {
    fn from_answer(spec: &AskSpecRef<'_>, answer: &Value) -> Result<Self, AnswerProblemRef> {
        let (action, content) = elicit_answer(answer)?;
        match action {
            ElicitAction::Decline => Ok(Elicitation::Decline),
            ElicitAction::Cancel => Ok(Elicitation::Cancel),
            ElicitAction::Accept => {
                let AskSpec::Form { schema, .. } = spec.0 else {
                    return Err(AnswerProblemRef(AnswerProblem::Malformed(
                        "inputResponses: answer does not match its request".into(),
                    )));
                };
                let empty = Map::new();
                // The schema of the ask is `T`'s own, built once per type (`form_spec`).
                ferry_form::parse_content_with::<T>(schema.schema(), content.unwrap_or(&empty))
                    .map(Elicitation::Accept)
                    .map_err(|e| AnswerProblemRef(AnswerProblem::Unacceptable(e.to_string())))
            }
        }
    }
}

/// The content of an accepted form built at run time (see [`Context::elicit_with`]):
/// property name to value, already checked against the form's schema.
///
/// [`Context::elicit_with`]: crate::Context::elicit_with
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FormAnswers(pub Map<String, Value>);

impl FormAnswers {
    /// A value by property name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }
}

impl AskOutput for Elicitation<FormAnswers> {
    fn from_answer(spec: &AskSpecRef<'_>, answer: &Value) -> Result<Self, AnswerProblemRef> {
        let (action, content) = elicit_answer(answer)?;
        match action {
            ElicitAction::Decline => Ok(Elicitation::Decline),
            ElicitAction::Cancel => Ok(Elicitation::Cancel),
            ElicitAction::Accept => {
                let (_, content) = accepted_content(spec, content)?;
                Ok(Elicitation::Accept(FormAnswers(content.into_owned())))
            }
        }
    }
}

impl AskOutput for UrlConsent {
    fn from_answer(_spec: &AskSpecRef<'_>, answer: &Value) -> Result<Self, AnswerProblemRef> {
        Ok(match elicit_answer(answer)?.0 {
            ElicitAction::Accept => UrlConsent::Accept,
            ElicitAction::Decline => UrlConsent::Decline,
            ElicitAction::Cancel => UrlConsent::Cancel,
        })
    }
}

#[allow(deprecated)]
impl AskOutput for CreateMessageResult {
    fn from_answer(_spec: &AskSpecRef<'_>, answer: &Value) -> Result<Self, AnswerProblemRef> {
        serde_json::from_value(answer.clone()).map_err(|e| {
            AnswerProblemRef(AnswerProblem::Malformed(format!(
                "inputResponses: not a CreateMessageResult: {e}"
            )))
        })
    }
}

#[allow(deprecated)]
impl AskOutput for Vec<Root> {
    fn from_answer(_spec: &AskSpecRef<'_>, answer: &Value) -> Result<Self, AnswerProblemRef> {
        let list: ListRootsResult = serde_json::from_value(answer.clone()).map_err(|e| {
            AnswerProblemRef(AnswerProblem::Malformed(format!(
                "inputResponses: not a ListRootsResult: {e}"
            )))
        })?;
        Ok(list.roots)
    }
}

/// Per-request bookkeeping of asks and answers.
#[derive(Debug, Default)]
pub(crate) struct AskBook {
    /// Answers usable in this run: from the sealed state and from this round.
    pub(crate) answers: BTreeMap<String, Value>,
    /// Asks made in this run that have no (acceptable) answer, in order.
    pub(crate) pending: Vec<(String, AskSpec)>,
    /// Every key asked in this run, answered or not, with its kind and, once known, the
    /// digest of its question.
    pub(crate) asked: BTreeMap<String, (AskKind, Option<String>)>,
    /// The digests of the questions that earlier rounds' answers answer, from the
    /// sealed state: an answer is used only for the same question.
    pub(crate) answer_digests: BTreeMap<String, String>,
    /// Default-key counters per kind.
    pub(crate) counters: [u32; 4],
    /// The handler's own state from the previous round.
    pub(crate) app_in: Option<Value>,
    /// The handler's own state for the next round.
    pub(crate) app_out: Option<Value>,
    /// `elicitationId`s of URL asks sent on a 2025-11-25 session, by key.
    pub(crate) url_ids: BTreeMap<String, String>,
    /// The traced call this round belongs to (multi round-trip rounds), when traced.
    pub(crate) trace: Option<ferry_state::CallTrace>,
}

impl AskBook {
    pub(crate) fn next_key(&mut self, kind: AskKind) -> String {
        let n = &mut self.counters[kind.index()];
        *n += 1;
        if *n == 1 {
            kind.as_str().to_owned()
        } else {
            format!("{}-{}", kind.as_str(), n)
        }
    }
}

/// One request for input, ready to be awaited (alone, or with others in
/// [`Context::ask_all`]).
#[must_use = "an ask does nothing until awaited"]
pub struct Ask<T> {
    pub(crate) ctx: Context,
    pub(crate) key: Option<String>,
    pub(crate) spec: AskSpec,
    _out: PhantomData<fn() -> T>,
}

impl<T: AskOutput> Ask<T> {
    pub(crate) fn new(ctx: Context, spec: AskSpec) -> Self {
        Ask {
            ctx,
            key: None,
            spec,
            _out: PhantomData,
        }
    }

    /// Sets the key this ask has in `inputRequests` and `inputResponses`. Keys must be
    /// unique within one request. Without one, Ferry numbers asks per kind in the order
    /// they are made (`form`, `form-2`, …), which is stable across rounds as long as the
    /// handler asks in the same order.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Whether this ask goes to the client live (a 2025-11-25 session) rather than
    /// through MRTR rounds.
    pub(crate) fn is_live(&self) -> bool {
        self.ctx.inner().session.is_some()
    }

    /// Whether this ask is made inside a task: it waits for `tasks/update`.
    pub(crate) fn in_task(&self) -> bool {
        self.ctx.inner().task.run().is_some()
    }

    /// Sends the ask as a JSON-RPC request on a 2025-11-25 session and waits for the
    /// answer, with the server's ask timeout and the request's cancellation.
    async fn resolve_live(self) -> Result<T, Interrupt> {
        self.spec.warn_if_deprecated();
        let ctx = self.ctx;
        self.spec
            .check_capabilities(ctx.client_capabilities())
            .map_err(Interrupt::failed)?;
        let Some(session) = ctx.inner().session.clone() else {
            return Err(Interrupt::failed(ErrorObject::internal(
                "Internal error: no session",
            )));
        };
        let key = {
            let mut book = ctx.asks();
            match self.key {
                Some(k) => k,
                None => book.next_key(self.spec.kind()),
            }
        };
        let timeout = ctx.server().inner.ask_timeout;
        // An answer that fails the form's checks is asked again, a few times.
        for _ in 0..3 {
            let (id, rx) = session.register_request();
            let elicitation_id = match &self.spec {
                AskSpec::Url { .. } => {
                    let e = new_elicitation_id();
                    ctx.asks().url_ids.insert(key.clone(), e.clone());
                    Some(e)
                }
                _ => None,
            };
            // The request is the input request's `{method, params}` plus the envelope.
            let request = self.spec.to_input_request(Some(elicitation_id.as_deref()));
            let body = request.get();
            let mut msg = Vec::with_capacity(body.len() + 40);
            msg.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            msg.extend_from_slice(serde_json::to_string(&id).unwrap_or_default().as_bytes());
            msg.push(b',');
            msg.extend_from_slice(&body.as_bytes()[1..]);
            let bytes = bytes::Bytes::from(msg);
            if ctx.inner().outbound.is_open() {
                ctx.inner().outbound.send(bytes).await;
            } else {
                session.send_standalone(bytes);
            }
            let answer = tokio::select! {
                a = rx => a,
                _ = ctx.cancelled() => {
                    session.forget_request(&id);
                    return Err(Interrupt::failed(ErrorObject::internal("Request cancelled")));
                }
                _ = tokio::time::sleep(timeout) => {
                    session.forget_request(&id);
                    return Err(Interrupt::failed(ErrorObject::internal(
                        "Internal error: the client did not answer in time",
                    )));
                }
            };
            let value = match answer {
                Err(_) => {
                    return Err(Interrupt::failed(ErrorObject::internal(
                        "Internal error: the session ended before the client answered",
                    )));
                }
                Ok(Err(client_error)) => return Err(Interrupt::failed(client_error)),
                Ok(Ok(v)) => v,
            };
            match T::from_answer(&AskSpecRef(&self.spec), &value) {
                Ok(v) => return Ok(v),
                Err(AnswerProblemRef(AnswerProblem::Malformed(m))) => {
                    return Err(Interrupt::failed(ErrorObject::internal(format!(
                        "Internal error: the client's answer was malformed: {m}"
                    ))));
                }
                Err(AnswerProblemRef(AnswerProblem::Unacceptable(why))) => {
                    tracing::debug!(key = %key, reason = %why, "answer not acceptable; asking again");
                }
            }
        }
        Err(Interrupt::failed(ErrorObject::internal(
            "Internal error: the client's answers did not fit the request",
        )))
    }

    /// Resolves against the answers at hand, recording the ask as pending when there is
    /// no acceptable answer.
    pub(crate) fn resolve(self) -> Result<T, Interrupt> {
        // A provider's answer is not limited by the client's capabilities, and only the
        // client path is the deprecated one.
        #[cfg(feature = "llm")]
        let by_provider = self.provider().is_some();
        #[cfg(not(feature = "llm"))]
        let by_provider = false;
        let ctx = self.ctx;
        if !by_provider {
            self.spec.warn_if_deprecated();
            self.spec
                .check_capabilities(ctx.client_capabilities())
                .map_err(Interrupt::failed)?;
        }
        let mut book = ctx.asks();
        let key = match self.key {
            Some(k) => k,
            None => book.next_key(self.spec.kind()),
        };
        if book.asked.contains_key(&key) {
            return Err(Interrupt::failed(ErrorObject::internal(format!(
                "Internal error: the server asked twice under the key {key:?}"
            ))));
        }
        let mut digest = None;
        if book.answers.contains_key(&key) {
            // An answer counts only for the question it answered: a question reworded
            // since (or asked by a newer build) is asked again.
            let d = self.spec.question_digest();
            if book.answer_digests.get(&key).is_some_and(|was| *was != d) {
                tracing::debug!(key = %key, "the question changed since it was answered; asking again");
                book.answers.remove(&key);
            }
            digest = Some(d);
        }
        book.asked.insert(key.clone(), (self.spec.kind(), digest));
        if let Some(answer) = book.answers.get(&key) {
            match T::from_answer(&AskSpecRef(&self.spec), answer) {
                Ok(v) => return Ok(v),
                Err(AnswerProblemRef(AnswerProblem::Malformed(m))) => {
                    return Err(Interrupt::failed(ErrorObject::invalid_params(m)));
                }
                Err(AnswerProblemRef(AnswerProblem::Unacceptable(why))) => {
                    tracing::debug!(key = %key, reason = %why, "answer not acceptable; asking again");
                    book.answers.remove(&key);
                }
            }
        }
        book.pending.push((key, self.spec));
        Err(Interrupt::input_required())
    }
}

impl<T: AskOutput> IntoFuture for Ask<T> {
    type Output = Result<T, Interrupt>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        #[cfg(feature = "llm")]
        if let Some(provider) = self.provider() {
            let mut ask = self;
            return Box::pin(async move {
                ask.prefetch(provider).await?;
                ask.resolve()
            });
        }
        if self.in_task() {
            Box::pin(crate::tasks::resolve_ask(self))
        } else if self.is_live() {
            Box::pin(self.resolve_live())
        } else {
            let out = self.resolve();
            Box::pin(std::future::ready(out))
        }
    }
}

/// Several asks that go out together, in one round. Implemented for tuples of [`Ask`]s.
pub trait AskSet {
    /// The answers, in the same shape as the tuple.
    type Output;
    #[doc(hidden)]
    fn resolve_all(self) -> Pin<Box<dyn Future<Output = Result<Self::Output, Interrupt>> + Send>>;
}

macro_rules! ask_set {
    ($($t:ident $v:ident),+) => {
        impl<$($t: AskOutput),+> AskSet for ($(Ask<$t>,)+) {
            type Output = ($($t,)+);
            fn resolve_all(self) -> Pin<Box<dyn Future<Output = Result<Self::Output, Interrupt>> + Send>> {
                #[allow(non_snake_case)]
                fn now<$($t: AskOutput),+>($($v: Ask<$t>),+) -> Result<($($t,)+), Interrupt> {
                    $(let $v = $v.resolve();)+
                    let failed = false $(|| matches!(&$v, Err(Interrupt { kind: InterruptKind::Failed(_) })))+;
                    if failed {
                        $(if let Err(e) = $v {
                            if matches!(e.kind, InterruptKind::Failed(_)) {
                                return Err(e);
                            }
                        })+
                        return Err(Interrupt::input_required());
                    }
                    if false $(|| $v.is_err())+ {
                        return Err(Interrupt::input_required());
                    }
                    Ok(($(match $v { Ok(v) => v, Err(e) => return Err(e) },)+))
                }
                #[allow(unused_mut)]
                let ($(mut $v,)+) = self;
                #[cfg(feature = "llm")]
                if false $(|| $v.provider().is_some())+ {
                    return Box::pin(async move {
                        $(if let Some(p) = $v.provider() {
                            $v.prefetch(p).await?;
                        })+
                        now($($v),+)
                    });
                }
                if false $(|| $v.in_task())+ {
                    // A task waits for every answer at once (all asked in one go).
                    return Box::pin(async move {
                        let ($($v,)+) = futures::join!($($v.into_future()),+);
                        Ok(($($v?,)+))
                    });
                }
                if false $(|| $v.is_live())+ {
                    // A 2025-11-25 session has no rounds: ask one after the other.
                    return Box::pin(async move { Ok(($($v.await?,)+)) });
                }
                Box::pin(std::future::ready(now($($v),+)))
            }
        }
    };
}

ask_set!(A a);
ask_set!(A a, B b);
ask_set!(A a, B b, C c);
ask_set!(A a, B b, C c, D d);
ask_set!(A a, B b, C c, D d, E e);
ask_set!(A a, B b, C c, D d, E e, F f);

impl<T: AskOutput> AskSet for Vec<Ask<T>> {
    type Output = Vec<T>;
    fn resolve_all(self) -> Pin<Box<dyn Future<Output = Result<Self::Output, Interrupt>> + Send>> {
        #[cfg(feature = "llm")]
        if self.iter().any(|a| a.provider().is_some()) {
            let mut asks = self;
            return Box::pin(async move {
                for ask in &mut asks {
                    if let Some(p) = ask.provider() {
                        ask.prefetch(p).await?;
                    }
                }
                resolve_vec(asks)
            });
        }
        if self.iter().any(Ask::in_task) {
            return Box::pin(async move {
                futures::future::join_all(self.into_iter().map(IntoFuture::into_future))
                    .await
                    .into_iter()
                    .collect()
            });
        }
        if self.iter().any(Ask::is_live) {
            return Box::pin(async move {
                let mut out = Vec::with_capacity(self.len());
                for ask in self {
                    out.push(ask.await?);
                }
                Ok(out)
            });
        }
        Box::pin(std::future::ready(resolve_vec(self)))
    }
}

fn resolve_vec<T: AskOutput>(asks: Vec<Ask<T>>) -> Result<Vec<T>, Interrupt> {
    {
        let results: Vec<_> = asks.into_iter().map(Ask::resolve).collect();
        let mut out = Vec::with_capacity(results.len());
        let mut missing = false;
        for r in results {
            match r {
                Ok(v) => out.push(v),
                Err(Interrupt {
                    kind: InterruptKind::Failed(e),
                }) => return Err(Interrupt::failed(e)),
                Err(_) => missing = true,
            }
        }
        if missing {
            Err(Interrupt::input_required())
        } else {
            Ok(out)
        }
    }
}

pub(crate) fn new_elicitation_id() -> String {
    use std::fmt::Write as _;
    let mut b = [0u8; 16];
    let _ = getrandom::fill(&mut b);
    let mut s = String::with_capacity(32);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// Builds a form ask for `T`. Each type's schema is built once per process.
pub(crate) fn form_spec<T: Form + 'static>(message: String) -> AskSpec {
    static SCHEMAS: OnceLock<RwLock<HashMap<TypeId, Arc<PreparedSchema>>>> = OnceLock::new();
    let cache = SCHEMAS.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    let cached = cache.read().get(&id).cloned();
    let schema = match cached {
        Some(s) => s,
        None => cache
            .write()
            .entry(id)
            .or_insert_with(|| Arc::new(PreparedSchema::new(T::form_schema())))
            .clone(),
    };
    AskSpec::Form { message, schema }
}

#[allow(deprecated)]
pub(crate) fn sampling_spec(
    mut params: CreateMessageRequestParams,
    caps: &ClientCapabilities,
) -> AskSpec {
    if let Err(e) = crate::sampling::check_messages(&params) {
        return AskSpec::Invalid(e);
    }
    crate::sampling::adjust_context(&mut params, caps);
    match serde_json::to_value(&params) {
        Ok(v) => AskSpec::Sampling(v),
        Err(e) => AskSpec::Invalid(ErrorObject::internal(format!("Internal error: {e}"))),
    }
}

/// A question's digest as sealed in the state: 128 bits of its SHA-256, base64url.
fn question_digest(hash: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&hash[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(message: &str, schema: Value) -> AskSpec {
        let schema = FormSchema::from_value(schema).expect("a flat form schema");
        AskSpec::Form {
            message: message.to_owned(),
            schema: Arc::new(PreparedSchema::new(schema)),
        }
    }

    fn confirm_schema(title: &str) -> Value {
        json!({"type": "object", "properties": {"confirm": {"type": "boolean", "title": title}}})
    }

    #[test]
    fn a_question_digest_follows_its_message_and_schema() {
        let asked = form("Delete a?", confirm_schema("Confirm")).question_digest();
        assert_eq!(
            asked,
            form("Delete a?", confirm_schema("Confirm")).question_digest()
        );
        assert_ne!(
            asked,
            form("Delete b?", confirm_schema("Confirm")).question_digest()
        );
        assert_ne!(
            asked,
            form("Delete a?", confirm_schema("Sure?")).question_digest()
        );
        let url = |message: &str, url: &str| AskSpec::Url {
            message: message.to_owned(),
            url: url.to_owned(),
        };
        // A URL ask's link may be minted afresh each round: only its message counts.
        assert_eq!(
            url("Sign in", "https://a.example/1").question_digest(),
            url("Sign in", "https://a.example/2").question_digest()
        );
        assert_ne!(
            url("Sign in", "x").question_digest(),
            url("Pay", "x").question_digest()
        );
        // The kind is part of the question: a URL ask and a form with one message differ.
        assert_ne!(url("Delete a?", "x").question_digest(), asked);
    }

    #[test]
    fn a_form_input_request_carries_its_prepared_schema() {
        let spec = form("Delete a?", confirm_schema("Confirm"));
        let request: Value = serde_json::from_str(spec.to_input_request(None).get()).unwrap();
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["mode"], "form");
        assert_eq!(request["params"]["message"], "Delete a?");
        assert_eq!(
            request["params"]["requestedSchema"]["properties"]["confirm"]["title"],
            "Confirm"
        );
        let legacy: Value = serde_json::from_str(spec.to_input_request(Some(None)).get()).unwrap();
        assert!(legacy["params"].get("mode").is_none());
    }
}
