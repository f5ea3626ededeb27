//! Asks inside a task: like live asks on a 2025-11-25 session, the handler's future
//! waits. The ask goes into the task's `inputRequests`, and the same `ctx.elicit(..)`
//! call returns the answer `tasks/update` delivers (possibly to another instance, which
//! stores it for this one to take).

use crate::ask::{AnswerProblem, AnswerProblemRef, Ask, AskOutput, AskSpecRef, Interrupt};
use ferry_protocol::ErrorObject;

/// How many times an answer that does not fit its form is asked again (under a new key
/// each time: keys are unique over a task's lifetime).
const ATTEMPTS: usize = 3;

/// Resolves an ask made inside a task.
pub(crate) async fn resolve<T: AskOutput>(ask: Ask<T>) -> Result<T, Interrupt> {
    let Ask { ctx, key, spec, .. } = ask;
    spec.check_capabilities(ctx.client_capabilities())
        .map_err(Interrupt::failed)?;
    let Some(run) = ctx.inner().task.run().cloned() else {
        return Err(Interrupt::failed(ErrorObject::internal(
            "Internal error: not in a task",
        )));
    };
    let (key, carried) = {
        let mut book = ctx.asks();
        let key = key.unwrap_or_else(|| book.next_key(spec.kind()));
        if book.asked.contains_key(&key) {
            return Err(Interrupt::failed(ErrorObject::internal(format!(
                "Internal error: the server asked twice under the key {key:?}"
            ))));
        }
        book.asked.insert(key.clone(), (spec.kind(), None));
        // An answer gathered by the MRTR rounds before the call became a task.
        let carried = book.answers.remove(&key);
        (key, carried)
    };
    if let Some(answer) = carried {
        match T::from_answer(&AskSpecRef(&spec), &answer) {
            Ok(v) => return Ok(v),
            Err(AnswerProblemRef(AnswerProblem::Malformed(m))) => {
                return Err(Interrupt::failed(ErrorObject::invalid_params(m)));
            }
            Err(AnswerProblemRef(AnswerProblem::Unacceptable(why))) => {
                tracing::debug!(key = %key, reason = %why, "answer not acceptable; asking again");
            }
        }
    }
    for attempt in 1..=ATTEMPTS {
        let wire_key = if attempt == 1 {
            key.clone()
        } else {
            format!("{key}~{attempt}")
        };
        let answer = run.ask(wire_key, spec.to_input_request(None)).await?;
        match T::from_answer(&AskSpecRef(&spec), &answer) {
            Ok(v) => return Ok(v),
            Err(AnswerProblemRef(AnswerProblem::Malformed(m))) => {
                return Err(Interrupt::failed(ErrorObject::invalid_params(m)));
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
