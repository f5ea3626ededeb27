//! The MRTR engine: opens and checks an incoming `requestState`, merges answers, and
//! turns an interrupted handler into an `InputRequiredResult` with a freshly sealed state
//! (mrtr.mdx).

use std::collections::BTreeMap;

use ferry_protocol::ErrorObject;
use ferry_protocol::methods;
use ferry_state::{Binding, Redemption, StateClaims};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::ask::{AskBook, AskKind, InterruptKind};
use crate::server::ServerInner;

/// What a retry carries besides the original params.
#[derive(Debug, Default, Clone)]
pub(crate) struct MrtrInput {
    pub(crate) state: Option<String>,
    pub(crate) responses: Option<Value>,
}

impl MrtrInput {
    /// Whether this request is a retry (its result must not be cached).
    pub(crate) fn is_retry(&self) -> bool {
        self.state.is_some() || self.responses.is_some()
    }
}

/// What a state is bound to.
pub(crate) struct Bound<'a> {
    pub(crate) principal: Option<&'a str>,
    pub(crate) method: &'static str,
    pub(crate) target: &'a str,
    /// The request's salient params; digested only when a state is opened or issued.
    pub(crate) args: &'a Value,
    pub(crate) digest: std::sync::OnceLock<String>,
}

impl<'a> Bound<'a> {
    pub(crate) fn new(
        principal: Option<&'a str>,
        method: &'static str,
        target: &'a str,
        args: &'a Value,
    ) -> Self {
        Bound {
            principal,
            method,
            target,
            args,
            digest: std::sync::OnceLock::new(),
        }
    }

    fn binding(&self) -> Binding<'_> {
        let digest = self
            .digest
            .get_or_init(|| ferry_state::digest_args(self.args));
        Binding::new(self.method, self.target, digest).with_principal(self.principal)
    }
}

/// Paces the warnings of a failing replay ledger (down, or full), which fails every
/// retry that needs it.
static LEDGER_FAILURES: ferry_state::FailureLog =
    ferry_state::FailureLog::new(std::time::Duration::from_secs(10));

/// The one error every state problem gets: it reveals nothing about what failed.
pub(crate) fn invalid_state() -> ErrorObject {
    ErrorObject::invalid_params("Invalid or expired requestState")
}

/// How a handler's asks treat state.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StatePolicy {
    /// Redeem the state at most once.
    pub(crate) single_use: bool,
    /// Accept answers that arrive without a `requestState` (only for asks whose answers
    /// carry no authority: the client could send them in the first round anyway).
    pub(crate) stateless_answers: bool,
}

/// Checks the retry's inputs and prepares the answers the handler will see.
pub(crate) async fn open(
    server: &ServerInner,
    bound: &Bound<'_>,
    input: MrtrInput,
    policy: StatePolicy,
) -> Result<AskBook, ErrorObject> {
    let single_use = policy.single_use;
    let responses = match input.responses {
        None => Map::new(),
        Some(Value::Object(m)) => m,
        Some(Value::Null) => {
            return Err(ErrorObject::invalid_params(
                "inputResponses must be an object keyed by input request, not null",
            ));
        }
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "inputResponses must be an object keyed by input request",
            ));
        }
    };
    for (key, value) in &responses {
        if !value.is_object() {
            return Err(ErrorObject::invalid_params(format!(
                "inputResponses[{key:?}] must be an object"
            )));
        }
    }
    let mut book = AskBook::default();
    let Some(token) = input.state else {
        if policy.stateless_answers {
            // Each answer is checked against its ask when the handler makes it.
            book.answers = responses.into_iter().collect();
        }
        // Otherwise nothing was asked that this request could answer: extra answers are
        // ignored, and the handler asks again.
        return Ok(book);
    };
    let claims = match server.state.verify(&token, &bound.binding()) {
        Ok(c) => c,
        Err(rejected) => {
            crate::telemetry::state_refused(&rejected.reason());
            return Err(invalid_state());
        }
    };
    if single_use || server.single_use_all {
        match server.ledger.redeem(&claims.jti, claims.expires_at).await {
            Ok(Redemption::First) => {}
            Ok(Redemption::Replayed) => {
                crate::telemetry::state_refused(&"replayed");
                return Err(invalid_state());
            }
            Err(e) => {
                if let Some(unlogged) = LEDGER_FAILURES.due() {
                    tracing::warn!(
                        error = %e,
                        unlogged,
                        "replay ledger unavailable; refusing single-use state (logged at most every 10 s)"
                    );
                }
                crate::telemetry::state_refused(&"ledger_unavailable");
                return Err(ErrorObject::internal(
                    "Internal error: the request could not be checked for replay",
                ));
            }
        }
    }
    book.answers = claims.answers;
    book.trace = crate::telemetry::continue_call(claims.trace);
    // What the previous round asked: `kind:digest` by key. The kinds say which answers
    // this round may carry; the digests pin earlier answers to their questions.
    let mut kinds: Vec<(String, AskKind)> = Vec::with_capacity(claims.asked.len());
    for (key, mut asked) in claims.asked {
        let colon = asked.find(':');
        let kind = AskKind::parse(&asked[..colon.unwrap_or(asked.len())]);
        match colon {
            Some(colon) => {
                // The digest keeps the claim's own allocation.
                asked.drain(..=colon);
                if let Some(kind) = kind {
                    kinds.push((key.clone(), kind));
                }
                book.answer_digests.insert(key, asked);
            }
            None => kinds.extend(kind.map(|kind| (key, kind))),
        }
    }
    for (key, value) in responses {
        // `claims.asked` iterates in key order, so `kinds` is sorted.
        let Ok(at) = kinds.binary_search_by(|(k, _)| k.as_str().cmp(&key)) else {
            continue;
        };
        let kind = kinds[at].1;
        if book.answers.contains_key(&key) {
            continue;
        }
        check_shape(kind, &key, &value)?;
        book.answers.insert(key, value);
    }
    book.app_in = claims.app;
    Ok(book)
}

/// Checks an answer has the shape its kind requires (mrtr.mdx §errors: malformed
/// `inputResponses` are protocol errors).
pub(crate) fn check_shape(kind: AskKind, key: &str, value: &Value) -> Result<(), ErrorObject> {
    let ok = match kind {
        AskKind::Form | AskKind::Url => {
            matches!(
                value.get("action").and_then(Value::as_str),
                Some("accept" | "decline" | "cancel")
            ) && value.get("content").is_none_or(Value::is_object)
        }
        AskKind::Sampling => value.get("role").is_some() && value.get("content").is_some(),
        AskKind::Roots => value.get("roots").is_some_and(Value::is_array),
    };
    if ok {
        Ok(())
    } else {
        Err(ErrorObject::invalid_params(format!(
            "inputResponses[{key:?}] is not a valid answer to a {} request",
            match kind {
                AskKind::Form | AskKind::Url => methods::ELICITATION_CREATE,
                AskKind::Sampling => methods::SAMPLING_CREATE_MESSAGE,
                AskKind::Roots => methods::ROOTS_LIST,
            }
        )))
    }
}

/// Builds the `InputRequiredResult` for an interrupted handler.
pub(crate) fn input_required(
    server: &ServerInner,
    bound: &Bound<'_>,
    book: AskBook,
    kind: &InterruptKind,
) -> Result<InputRequired, ErrorObject> {
    let mut requests: BTreeMap<String, Box<RawValue>> = BTreeMap::new();
    let mut asked = BTreeMap::new();
    if matches!(kind, InterruptKind::InputRequired) {
        for (key, spec) in &book.pending {
            let request = spec.to_input_request(None);
            asked.insert(
                key.clone(),
                format!("{}:{}", spec.kind().as_str(), spec.question_digest()),
            );
            requests.insert(key.clone(), request);
        }
    }
    // Answers still asked for ride along, pinned to the question they answer.
    let answers: BTreeMap<String, Value> = book
        .answers
        .into_iter()
        .filter(|(k, _)| book.asked.contains_key(k))
        .collect();
    for key in answers.keys() {
        if let Some((kind, Some(digest))) = book.asked.get(key) {
            asked.insert(key.clone(), format!("{}:{digest}", kind.as_str()));
        }
    }
    let mut claims = StateClaims::new(&bound.binding());
    claims.asked = asked;
    claims.answers = answers;
    claims.app = book.app_out.or(book.app_in);
    claims.trace = crate::telemetry::carry(book.trace);
    let token = server.state.issue(claims).map_err(|e| {
        tracing::warn!(error = %e, "requestState could not be issued");
        ErrorObject::internal("Internal error: the request's state is too large to continue")
    })?;
    Ok(InputRequired {
        result_type: "input_required",
        input_requests: (!requests.is_empty()).then_some(requests),
        request_state: token,
    })
}

/// An `InputRequiredResult`, with each input request already serialized (so form fields
/// keep their declared order).
#[derive(serde::Serialize)]
pub(crate) struct InputRequired {
    #[serde(rename = "resultType")]
    result_type: &'static str,
    #[serde(rename = "inputRequests", skip_serializing_if = "Option::is_none")]
    input_requests: Option<BTreeMap<String, Box<RawValue>>>,
    #[serde(rename = "requestState")]
    request_state: String,
}

impl InputRequired {
    /// About how many bytes of JSON this result serializes to (a little more, not less,
    /// for the usual keys).
    pub(crate) fn json_len_hint(&self) -> usize {
        let requests = self.input_requests.as_ref().map_or(0, |r| {
            r.iter()
                .map(|(key, request)| key.len() + request.get().len() + 8)
                .sum::<usize>()
        });
        64 + requests + self.request_state.len()
    }
}
