//! Multi round-trip requests (2026-07-28): `tools/call`, `prompts/get` and
//! `resources/read` may answer with an `InputRequiredResult`; the client gathers the
//! answers through the input handler and retries.
//!
//! Each retry is a new JSON-RPC request (new id) with the original params,
//! `inputResponses` under the server's keys, and the server's `requestState` echoed byte
//! for byte (only when it sent one). Answers and state never go on any other request.
//! A result carrying only `requestState` is retried at once, then with exponential
//! backoff; the number of rounds is capped.

use ferry_protocol::methods;
use ferry_protocol::mrtr::{InputRequiredResult, InputResponses, MrtrResult};
use serde_json::{Map, Value};

use crate::answer;
use crate::client::{Inner, Req};
use crate::error::{Error, Result};
use crate::handler::AskOrigin;
use crate::options::CallOptions;
use crate::tool_headers::{self, ToolEntry};

/// What to send with the next round of a multi round-trip request: nothing for the
/// first round; for a retry, the answers and the server's `requestState`.
///
/// Build a retry with [`Retry::after`] (or let
/// [`Client::answer`](crate::Client::answer) ask the input handler), which copies the
/// state exactly as the server sent it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Retry {
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

impl Retry {
    /// The first round: no answers, no state.
    pub fn first() -> Self {
        Retry::default()
    }

    /// The retry after `result`, with `responses` keyed like its `inputRequests`. The
    /// `requestState` is echoed exactly if the server sent one; `inputResponses` is sent
    /// only if the server asked for something.
    pub fn after(result: &InputRequiredResult, responses: InputResponses) -> Self {
        let asked = result
            .input_requests
            .as_ref()
            .is_some_and(|r| !r.is_empty());
        Retry {
            input_responses: asked.then_some(responses),
            request_state: result.request_state.clone(),
        }
    }

    /// Whether this is the first round.
    pub fn is_first(&self) -> bool {
        self.input_responses.is_none() && self.request_state.is_none()
    }

    /// The answers this retry carries.
    pub fn input_responses(&self) -> Option<&InputResponses> {
        self.input_responses.as_ref()
    }

    /// The state this retry echoes.
    pub fn request_state(&self) -> Option<&str> {
        self.request_state.as_deref()
    }

    fn apply(&self, params: &mut Map<String, Value>) {
        if let Some(r) = &self.input_responses {
            params.insert(
                "inputResponses".into(),
                serde_json::to_value(r).unwrap_or_default(),
            );
        }
        if let Some(s) = &self.request_state {
            params.insert("requestState".into(), Value::String(s.clone()));
        }
    }
}

/// One multi round-trip call: the method, its original params and where it came from.
pub(crate) struct MrtrCall {
    pub method: &'static str,
    pub params: Map<String, Value>,
    pub origin: AskOrigin,
}

impl Inner {
    /// Sends one round.
    pub(crate) async fn round(
        &self,
        call: &MrtrCall,
        retry: &Retry,
        opts: &CallOptions,
    ) -> Result<MrtrResult<Value>> {
        let mut params = call.params.clone();
        retry.apply(&mut params);
        let mut req = Req::new(call.method, params, opts);
        req.origin = Some(call.origin.clone());
        let value = if call.method == methods::TOOLS_CALL {
            self.call_tool_once(&mut req).await?
        } else {
            self.call_cached(&req).await?
        };
        if value.get("resultType").and_then(Value::as_str) == Some("input_required") {
            let ir: InputRequiredResult = serde_json::from_value(value)
                .map_err(|e| Error::protocol(format!("invalid input_required result: {e}")))?;
            if !ir.is_valid() {
                return Err(Error::protocol(
                    "an input_required result carries neither inputRequests nor requestState",
                ));
            }
            return Ok(MrtrResult::InputRequired(ir));
        }
        Ok(MrtrResult::Complete(value))
    }

    /// Sends `tools/call` with its `Mcp-Param-*` headers; on a -32020 error about them,
    /// refreshes `tools/list` and retries once.
    async fn call_tool_once(&self, req: &mut Req<'_>) -> Result<Value> {
        let name = req
            .params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if !self.uses_param_headers() {
            return self.call(req).await;
        }
        req.param_headers = self.param_headers_for(&name, &req.params)?;
        match self.call(req).await {
            Err(Error::Rpc(e))
                if e.code == ferry_protocol::ErrorCode::HEADER_MISMATCH
                    && e.mentions("mcp-param") =>
            {
                tracing::info!(tool = %name, "the server refused the Mcp-Param headers; refreshing tools/list");
                self.refresh_tools().await?;
                req.param_headers = self.param_headers_for(&name, &req.params)?;
                self.call(req).await
            }
            r => r,
        }
    }

    fn param_headers_for(
        &self,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Result<Vec<(String, String)>> {
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        match self.tools.get(tool) {
            Some(ToolEntry::Valid(annotations)) => {
                Ok(tool_headers::param_values(&annotations, &arguments))
            }
            Some(ToolEntry::Invalid(reason)) => Err(Error::InvalidTool {
                tool: tool.to_owned(),
                reason,
            }),
            None => Ok(Vec::new()),
        }
    }

    /// Drives a call to completion, answering each round through the input handler.
    pub(crate) async fn run_mrtr(&self, call: &MrtrCall, opts: &CallOptions) -> Result<Value> {
        let policy = self.config.mrtr;
        let mut retry = Retry::first();
        let mut streak = 0;
        for _ in 0..policy.max_rounds.max(1) {
            let ir = match self.round(call, &retry, opts).await? {
                MrtrResult::Complete(v) => return Ok(v),
                MrtrResult::InputRequired(ir) => ir,
            };
            let responses = match ir.input_requests.as_ref().filter(|r| !r.is_empty()) {
                Some(requests) => {
                    streak = 0;
                    let answers = answer::input_requests(
                        &answer::Asker::for_call(self, opts),
                        requests,
                        Some(call.origin.clone()),
                    )
                    .await;
                    // A refused sampling or roots request ends the call: nothing waits on
                    // the server's side, and asking again would only repeat the question
                    // (mrtr.mdx, client rules).
                    if let Some((key, method)) = answers.unanswered.into_iter().next() {
                        return Err(Error::InputRefused {
                            key,
                            method: method.to_owned(),
                        });
                    }
                    answers.responses
                }
                None => {
                    let wait = policy.backoff(streak);
                    streak += 1;
                    if !wait.is_zero() {
                        tokio::time::sleep(wait).await;
                    }
                    InputResponses::new()
                }
            };
            retry = Retry::after(&ir, responses);
        }
        Err(Error::TooManyRounds {
            rounds: policy.max_rounds.max(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_protocol::mrtr::InputRequest;

    #[test]
    fn retry_echoes_state_and_only_sends_answers_when_asked() {
        let ir = InputRequiredResult::new().with_request_state("s\u{0}x\"y");
        let r = Retry::after(&ir, InputResponses::new());
        assert_eq!(r.request_state(), Some("s\u{0}x\"y"));
        assert!(r.input_responses().is_none());
        let mut p = Map::new();
        r.apply(&mut p);
        assert_eq!(p.get("requestState"), Some(&Value::from("s\u{0}x\"y")));
        assert!(!p.contains_key("inputResponses"));

        let ir = InputRequiredResult::single("k", InputRequest::list_roots());
        let mut answers = InputResponses::new();
        answers.insert("k".into(), serde_json::json!({"roots": []}));
        let r = Retry::after(&ir, answers);
        let mut p = Map::new();
        r.apply(&mut p);
        assert!(p.contains_key("inputResponses"));
        assert!(!p.contains_key("requestState"));
        assert!(Retry::first().is_first());
    }
}
