//! One HTTP exchange: send, classify the status, read the answer within its bound.

use std::time::{Duration, SystemTime};

use reqwest::{RequestBuilder, Response, StatusCode};

use super::response::RawAnswer;
use super::stream::{Assembler, SseParser};
use super::wire::{ChatCompletion, ErrorBody};
use crate::error::{LlmError, RateLimitScope};
use crate::retry::retry_after;

/// How much of an error body is read.
const MAX_ERROR_BODY: usize = 16 * 1024;

/// A failed attempt, with the provider's wait hint.
#[derive(Debug)]
pub(crate) struct AttemptError {
    pub error: LlmError,
    pub retry_after: Option<Duration>,
}

impl From<LlmError> for AttemptError {
    fn from(error: LlmError) -> Self {
        AttemptError {
            error,
            retry_after: None,
        }
    }
}

/// Sends `request` and reads the answer.
pub(crate) async fn send(
    request: RequestBuilder,
    stream: bool,
    max_bytes: usize,
) -> Result<RawAnswer, AttemptError> {
    let response = request.send().await.map_err(transport)?;
    let status = response.status();
    if !status.is_success() {
        return Err(status_error(response).await);
    }
    if response
        .content_length()
        .is_some_and(|len| len > max_bytes as u64)
    {
        return Err(too_large(max_bytes).into());
    }
    let streamed = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if stream && streamed {
        read_stream(response, max_bytes).await.map_err(Into::into)
    } else {
        // A server may answer a streaming request whole; read it as such.
        let body = read_body(response, max_bytes).await?;
        parse_completion(&body).map_err(Into::into)
    }
}

fn parse_completion(body: &[u8]) -> Result<RawAnswer, LlmError> {
    let completion: ChatCompletion = serde_json::from_slice(body).map_err(|e| {
        LlmError::InvalidResponse(format!("the answer is not a chat.completion ({e})"))
    })?;
    if completion.choices.is_empty()
        && let Some(error) = completion.error
    {
        let (message, code) = error.parts();
        return Err(LlmError::provider(200, code, &message));
    }
    RawAnswer::from_completion(completion)
}

/// Reads a stream: memory is bounded by `max_bytes` per event and for the assembled answer
/// (framing is not kept), and time by the attempt's timeout.
async fn read_stream(mut response: Response, max_bytes: usize) -> Result<RawAnswer, LlmError> {
    let mut parser = SseParser::new(max_bytes);
    let mut assembler = Assembler::new(max_bytes);
    while let Some(chunk) = response.chunk().await.map_err(|e| transport(e).error)? {
        parser.feed(&chunk, |data| assembler.push(data))?;
        if assembler.is_done() {
            break;
        }
    }
    assembler.finish()
}

async fn read_body(mut response: Response, max_bytes: usize) -> Result<Vec<u8>, AttemptError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > max_bytes {
            return Err(too_large(max_bytes).into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

async fn status_error(mut response: Response) -> AttemptError {
    let status = response.status();
    let wait = retry_after(response.headers(), SystemTime::now());
    let mut body = Vec::new();
    // The error body is read up to its bound; a broken one still yields the status.
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ERROR_BODY - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    let (message, code) = match serde_json::from_slice::<ErrorBody>(&body) {
        Ok(parsed) => parsed.error.parts(),
        Err(_) => (String::from_utf8_lossy(&body).trim().to_owned(), None),
    };
    let message = if message.is_empty() {
        status.canonical_reason().unwrap_or("error").to_owned()
    } else {
        message
    };
    let error = if status == StatusCode::TOO_MANY_REQUESTS {
        tracing::debug!(code = ?code, message = %crate::error::bounded(&message, 200), "provider rate limit");
        LlmError::RateLimited {
            scope: RateLimitScope::Provider,
            retry_after: wait,
        }
    } else {
        LlmError::provider(status.as_u16(), code, &message)
    };
    AttemptError {
        error,
        retry_after: wait,
    }
}

fn transport(e: reqwest::Error) -> AttemptError {
    // reqwest's messages name the URL, never headers, so the key cannot leak through them.
    let error = if e.is_timeout() {
        LlmError::Timeout {
            elapsed: Duration::ZERO,
        }
    } else if e.is_decode() || e.is_body() {
        LlmError::InvalidResponse(format!("the answer broke off: {e}"))
    } else {
        LlmError::Connection(error_chain(&e))
    };
    error.into()
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    crate::error::bounded(&text, crate::error::MAX_ERROR_MESSAGE)
}

fn too_large(max: usize) -> LlmError {
    LlmError::InvalidResponse(format!("the answer is larger than {max} bytes"))
}
