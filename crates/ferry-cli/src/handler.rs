//! ferry's [`InputHandler`]: answers from `--answers` first, then the terminal, and when
//! neither can answer, a decline (or refusal) with a note on stderr instead of waiting.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use console::style;
use ferry_client::ferry_protocol::elicitation::{ElicitAction, ElicitResult};
use ferry_client::ferry_protocol::roots::Root;
use ferry_client::ferry_protocol::sampling::CreateMessageResult;
use ferry_client::handler::BoxFuture;
use ferry_client::{
    AskContext, FormRequest, HandlerCapabilities, InputHandler, RootsRequest, SamplingRequest,
    UrlRequest,
};

use crate::answers::{Answers, FormAnswer};
use crate::progress::ProgressUi;
use crate::term::{Terminal, sanitize};
use crate::{deprecated, form, url_consent};

/// Answers the server's questions for ferry.
pub struct CliHandler {
    answers: Option<Answers>,
    interactive: bool,
    progress: ProgressUi,
    /// Sampling and roots questions already refused in this run (by key), so a server
    /// that asks again is refused without asking the user again.
    refused: Mutex<HashSet<String>>,
    /// One terminal question at a time.
    terminal: Arc<tokio::sync::Mutex<()>>,
    /// Why `--answers` could not answer a question no one else can: the command fails
    /// with it (exit code 2) instead of succeeding on a cancelled question.
    problem: Mutex<Option<String>>,
    /// URL-mode questions already answered in this run (by their message and the URL's
    /// host), so that one asked again is announced as not finished.
    url_asks: Mutex<HashSet<String>>,
}

fn who(context: &AskContext) -> String {
    let mut s = sanitize(context.server.display_name(), false);
    if let Some(k) = &context.key {
        s.push_str(&format!(" (question \"{}\")", sanitize(k, false)));
    }
    s
}

fn note(text: &str) {
    eprintln!("{} {text}", style("ferry:").for_stderr().dim());
}

fn action_name(r: &ElicitResult) -> &'static str {
    match r.action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    }
}

impl CliHandler {
    /// A handler using `answers` (if any), and the terminal when `interactive`.
    pub fn new(answers: Option<Answers>, interactive: bool, progress: ProgressUi) -> Self {
        CliHandler {
            answers,
            interactive,
            progress,
            refused: Mutex::new(HashSet::new()),
            terminal: Arc::new(tokio::sync::Mutex::new(())),
            problem: Mutex::new(None),
            url_asks: Mutex::new(HashSet::new()),
        }
    }

    /// Whether this URL question was asked before in this run (and remembers it).
    fn asked_again(&self, request: &UrlRequest) -> bool {
        let host = url::Url::parse(&request.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        let key = format!("{host}\u{0}{}", request.message);
        self.url_asks
            .lock()
            .map(|mut seen| !seen.insert(key))
            .unwrap_or(false)
    }

    /// Records why the answers do not fit (the first reason is kept).
    fn fail(&self, problem: String) {
        if let Ok(mut p) = self.problem.lock() {
            p.get_or_insert(problem);
        }
    }

    /// Whether `--answers` failed a question.
    pub fn has_problem(&self) -> bool {
        self.problem.lock().map(|p| p.is_some()).unwrap_or(false)
    }

    /// Why `--answers` failed a question, if it did.
    pub fn take_problem(&self) -> Option<String> {
        self.problem.lock().ok().and_then(|mut p| p.take())
    }

    /// Runs a terminal question on a blocking thread, with the progress bar out of the way.
    async fn on_terminal<T: Send + 'static>(
        &self,
        fallback: T,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let _one_at_a_time = self.terminal.lock().await;
        let _paused = self.progress.pause();
        tokio::task::spawn_blocking(f).await.unwrap_or(fallback)
    }

    fn already_refused(&self, context: &AskContext) -> bool {
        let key = context.key.clone().unwrap_or_default();
        self.refused
            .lock()
            .map(|r| r.contains(&key))
            .unwrap_or(false)
    }

    fn remember_refusal(&self, context: &AskContext) {
        if let Ok(mut r) = self.refused.lock() {
            r.insert(context.key.clone().unwrap_or_default());
        }
    }

    async fn form(&self, request: &FormRequest) -> ElicitResult {
        let mut start = request.defaults();
        if let Some(answers) = &self.answers {
            match answers.form(request) {
                FormAnswer::Ready(r) => {
                    note(&format!(
                        "answered {} from --answers: {}",
                        who(&request.context),
                        action_name(&r)
                    ));
                    return r;
                }
                FormAnswer::Unfit { problem, values } => {
                    if !self.interactive {
                        // Nobody can fix it here: stop the call and say what is wrong.
                        self.fail(format!(
                            "the --answers entry for {} does not fit: {problem}",
                            who(&request.context)
                        ));
                        return ElicitResult::cancel();
                    }
                    note(&format!(
                        "the --answers entry for {} does not fit: {problem}",
                        who(&request.context)
                    ));
                    start = values;
                }
                FormAnswer::Nothing if !self.interactive => {
                    let missing = answers.missing(request);
                    let stop = if missing.ends_with('?') { "" } else { "." };
                    self.fail(format!(
                        "{} asks: {} — {missing}{stop} Answer with --answers '{}'.",
                        who(&request.context),
                        sanitize(&request.message, false),
                        example_answer(request)
                    ));
                    return ElicitResult::cancel();
                }
                FormAnswer::Nothing => {}
            }
        }
        if !self.interactive {
            note(&format!(
                "{} asks: {} — no terminal to ask in and no fitting --answers entry, so ferry declines. \
                 Answer with --answers '{}'.",
                who(&request.context),
                sanitize(&request.message, false),
                example_answer(request)
            ));
            return ElicitResult::decline();
        }
        let request = request.clone();
        self.on_terminal(ElicitResult::cancel(), move || {
            form::fill(&mut Terminal::new(), &request, &start)
        })
        .await
    }

    async fn url(&self, request: &UrlRequest) -> ElicitResult {
        if self.asked_again(request) {
            note(&format!(
                "{} asks again: the page was not finished yet. Open it and complete it, then answer.",
                who(&request.context)
            ));
        }
        if let Some(answer) = self.answers.as_ref().and_then(|a| a.url(request)) {
            match answer {
                Ok(r) => {
                    note(&format!(
                        "answered {} from --answers: {}",
                        who(&request.context),
                        action_name(&r)
                    ));
                    if r.is_accept() {
                        let check = url_consent::check(&request.url);
                        if !check.openable {
                            note("ferry does not open this URL; declining instead");
                            return ElicitResult::decline();
                        }
                        note(&format!(
                            "open this URL to go on: {}",
                            sanitize(&request.url, false)
                        ));
                    }
                    return r;
                }
                Err(problem) => note(&format!(
                    "the --answers entry for {} is unusable: {problem}",
                    who(&request.context)
                )),
            }
        }
        if !self.interactive {
            note(&format!(
                "{} asks you to open {} ({}) — no terminal to ask for consent and no --answers entry, so ferry declines.",
                who(&request.context),
                sanitize(&request.url, false),
                sanitize(&request.message, false)
            ));
            return ElicitResult::decline();
        }
        let request = request.clone();
        self.on_terminal(ElicitResult::cancel(), move || {
            url_consent::consent(&request)
        })
        .await
    }

    async fn sampling(&self, request: &SamplingRequest) -> Option<CreateMessageResult> {
        if self.already_refused(&request.context) {
            return None;
        }
        if let Some(answer) = self
            .answers
            .as_ref()
            .and_then(|a| a.sampling(request.context.key.as_deref()))
        {
            match answer {
                Ok(r) => {
                    note(&format!(
                        "answered the sampling request of {} from --answers (sampling is deprecated)",
                        who(&request.context)
                    ));
                    if r.is_none() {
                        self.remember_refusal(&request.context);
                    }
                    return r;
                }
                Err(problem) => note(&format!(
                    "the --answers entry for {} is unusable: {problem}",
                    who(&request.context)
                )),
            }
        }
        let answer = if self.interactive {
            let request = request.clone();
            self.on_terminal(None, move || {
                deprecated::sampling(&mut Terminal::new(), &request)
            })
            .await
        } else {
            note(&format!(
                "{} asks for a model reply (sampling, deprecated) — no terminal and no --answers entry, so ferry refuses.",
                who(&request.context)
            ));
            None
        };
        if answer.is_none() {
            self.remember_refusal(&request.context);
        }
        answer
    }

    /// Roots: a refusal is sent as an empty list, so the server goes on without roots
    /// instead of asking again.
    async fn roots(&self, request: &RootsRequest) -> Option<Vec<Root>> {
        if let Some(answer) = self
            .answers
            .as_ref()
            .and_then(|a| a.roots(request.context.key.as_deref()))
        {
            match answer {
                Ok(r) => {
                    note(&format!(
                        "answered the roots request of {} from --answers (roots are deprecated)",
                        who(&request.context)
                    ));
                    return Some(r.unwrap_or_default());
                }
                Err(problem) => note(&format!(
                    "the --answers entry for {} is unusable: {problem}",
                    who(&request.context)
                )),
            }
        }
        let answer = if self.interactive {
            let request = request.clone();
            self.on_terminal(None, move || {
                deprecated::roots(&mut Terminal::new(), &request)
            })
            .await
        } else {
            note(&format!(
                "{} asks for your roots (deprecated) — no terminal and no --answers entry, so ferry shares none.",
                who(&request.context)
            ));
            None
        };
        Some(answer.unwrap_or_default())
    }
}

/// An `--answers` value that would answer this form with its defaults, as a hint.
fn example_answer(request: &FormRequest) -> String {
    let mut content: BTreeMap<String, serde_json::Value> = request
        .defaults()
        .into_iter()
        .map(|(k, v)| (k, v.to_value()))
        .collect();
    for f in request.fields().filter(|f| f.required) {
        content
            .entry(f.name.to_owned())
            .or_insert_with(|| match f.schema.type_name() {
                "boolean" => serde_json::Value::Bool(true),
                "number" | "integer" => serde_json::Value::from(0),
                "array" => serde_json::json!([]),
                _ => f
                    .schema
                    .allowed_values()
                    .and_then(|v| v.first().map(|s| serde_json::Value::from(*s)))
                    .unwrap_or_else(|| serde_json::Value::from("…")),
            });
    }
    let key = request.context.key.clone().unwrap_or_else(|| "KEY".into());
    serde_json::json!({ key: content }).to_string()
}

impl InputHandler for CliHandler {
    #[allow(deprecated)] // ferry answers sampling and roots for servers that still ask.
    fn capabilities(&self) -> HandlerCapabilities {
        let caps = HandlerCapabilities::none()
            .elicitation_form()
            .elicitation_url();
        // Only offer the deprecated features when someone can answer them.
        if self.interactive || self.answers.is_some() {
            caps.sampling(false).roots()
        } else {
            caps
        }
    }

    fn elicit_form<'a>(&'a self, request: &'a FormRequest) -> BoxFuture<'a, ElicitResult> {
        Box::pin(self.form(request))
    }

    fn elicit_url<'a>(&'a self, request: &'a UrlRequest) -> BoxFuture<'a, ElicitResult> {
        Box::pin(self.url(request))
    }

    fn create_message<'a>(
        &'a self,
        request: &'a SamplingRequest,
    ) -> BoxFuture<'a, Option<CreateMessageResult>> {
        Box::pin(self.sampling(request))
    }

    fn list_roots<'a>(&'a self, request: &'a RootsRequest) -> BoxFuture<'a, Option<Vec<Root>>> {
        Box::pin(self.roots(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_client::AskingServer;
    use serde_json::json;

    fn form(key: &str) -> FormRequest {
        FormRequest {
            context: AskContext {
                server: AskingServer {
                    name: "s".into(),
                    title: None,
                    version: None,
                },
                origin: None,
                key: Some(key.into()),
            },
            message: "Delete?".into(),
            schema: serde_json::from_value(json!({
                "type": "object",
                "properties": {
                    "confirm": {"type": "boolean"},
                    "mode": {"type": "string", "enum": ["fast", "slow"]},
                    "note": {"type": "string", "default": "n"}
                },
                "required": ["confirm", "mode"]
            }))
            .unwrap(),
        }
    }

    #[tokio::test]
    async fn without_terminal_or_answers_forms_are_declined() {
        let h = CliHandler::new(None, false, ProgressUi::default());
        assert_eq!(h.elicit_form(&form("k")).await, ElicitResult::decline());
        assert!(!h.capabilities().has_sampling());
        assert!(!h.capabilities().has_roots());
        assert!(h.capabilities().has_elicitation_url());
    }

    #[tokio::test]
    async fn answers_come_first() {
        let answers = Answers::from_value(json!({"k": {"confirm": true, "mode": "slow"}})).unwrap();
        let h = CliHandler::new(Some(answers), false, ProgressUi::default());
        let r = h.elicit_form(&form("k")).await;
        assert_eq!(
            serde_json::to_value(r).unwrap(),
            json!({"action": "accept", "content": {"confirm": true, "mode": "slow", "note": "n"}})
        );
        assert!(h.capabilities().has_roots());
    }

    #[tokio::test]
    async fn unfit_answers_without_a_terminal_stop_the_call_with_the_reason() {
        let answers = Answers::from_value(json!({"confirm": true})).unwrap();
        let h = CliHandler::new(Some(answers), false, ProgressUi::default());
        assert_eq!(h.elicit_form(&form("k")).await, ElicitResult::cancel());
        let problem = h.take_problem().expect("the reason is kept");
        assert!(problem.contains("does not fit"), "{problem}");
        // Without any --answers, a question nobody can answer is declined, as before.
        let h = CliHandler::new(None, false, ProgressUi::default());
        assert_eq!(h.elicit_form(&form("k")).await, ElicitResult::decline());
        assert!(h.take_problem().is_none());
    }

    #[tokio::test]
    async fn refusals_are_remembered() {
        let answers = Answers::from_value(json!({"q": false})).unwrap();
        let h = CliHandler::new(Some(answers), false, ProgressUi::default());
        let request = SamplingRequest {
            context: form("q").context,
            params: ferry_client::ferry_protocol::sampling::CreateMessageRequestParams::new(
                vec![],
                10,
            ),
        };
        assert!(h.create_message(&request).await.is_none());
        assert!(h.already_refused(&request.context));
    }

    #[test]
    fn the_example_answer_fills_required_fields() {
        assert_eq!(
            example_answer(&form("confirm")),
            r#"{"confirm":{"confirm":true,"mode":"fast","note":"n"}}"#
        );
    }
}
