//! Streamed answers: server-sent events (`data: {chunk}` ... `data: [DONE]`) assembled into
//! one [`RawAnswer`], tool-call arguments included, within fixed bounds.

use super::response::{RawAnswer, RawToolCall};
use super::wire::ChatChunk;
use crate::error::LlmError;

/// The most tool calls one answer may hold.
pub(crate) const MAX_TOOL_CALLS: usize = 128;

/// Splits a byte stream into SSE events' `data`, holding at most `max_event` bytes.
#[derive(Debug)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    max_event: usize,
}

impl SseParser {
    pub(crate) fn new(max_event: usize) -> Self {
        SseParser {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            max_event,
        }
    }

    /// Feeds bytes; calls `on_event` with each complete event's data.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        mut on_event: impl FnMut(&str) -> Result<(), LlmError>,
    ) -> Result<(), LlmError> {
        for &b in bytes {
            if b != b'\n' {
                if self.line.len() + self.data.len() >= self.max_event {
                    return Err(LlmError::InvalidResponse(format!(
                        "a stream event is larger than {} bytes",
                        self.max_event
                    )));
                }
                self.line.push(b);
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            if self.line.is_empty() {
                if self.has_data {
                    let data = std::str::from_utf8(&self.data).map_err(|_| {
                        LlmError::InvalidResponse("a stream event is not UTF-8".into())
                    })?;
                    on_event(data)?;
                }
                self.data.clear();
                self.has_data = false;
                continue;
            }
            if let Some(value) = self.line.strip_prefix(b"data:") {
                let value = value.strip_prefix(b" ").unwrap_or(value);
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            // Other fields (event, id, retry) and comments carry nothing for chat chunks.
            self.line.clear();
        }
        Ok(())
    }
}

/// Builds one answer from chunks.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    answer: RawAnswer,
    done: bool,
    max_text: usize,
}

impl Assembler {
    pub(crate) fn new(max_text: usize) -> Self {
        Assembler {
            max_text,
            ..Default::default()
        }
    }

    /// Whether `[DONE]` was seen.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Adds one event's data.
    pub(crate) fn push(&mut self, data: &str) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: ChatChunk = serde_json::from_str(data).map_err(|e| {
            LlmError::InvalidResponse(format!(
                "a stream chunk is not a chat.completion.chunk ({e})"
            ))
        })?;
        if let Some(error) = chunk.error {
            let (message, code) = error.parts();
            return Err(LlmError::provider(200, code, &message));
        }
        if let Some(model) = chunk.model.filter(|m| !m.is_empty()) {
            self.answer.model.get_or_insert(model);
        }
        if chunk.usage.is_some() {
            self.answer.usage = chunk.usage;
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content {
                    self.grow_text(&text, false)?;
                }
                if let Some(text) = delta.refusal {
                    self.grow_text(&text, true)?;
                }
                for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
                    self.push_tool_call(position, call)?;
                }
            }
            if choice.finish_reason.is_some() {
                self.answer.finish_reason = choice.finish_reason;
            }
            if choice.stop_reason.is_some() {
                self.answer.matched_stop = choice.stop_reason;
            }
        }
        Ok(())
    }

    fn budget(&self) -> usize {
        self.answer.text.len()
            + self.answer.refusal.len()
            + self
                .answer
                .tool_calls
                .iter()
                .map(|c| c.arguments.len() + c.name.as_deref().map_or(0, str::len))
                .sum::<usize>()
    }

    fn check(&self, more: usize) -> Result<(), LlmError> {
        if self.budget() + more > self.max_text {
            return Err(LlmError::InvalidResponse(format!(
                "the streamed answer is larger than {} bytes",
                self.max_text
            )));
        }
        Ok(())
    }

    fn grow_text(&mut self, text: &str, refusal: bool) -> Result<(), LlmError> {
        self.check(text.len())?;
        if refusal {
            self.answer.refusal.push_str(text);
        } else {
            self.answer.text.push_str(text);
        }
        Ok(())
    }

    fn push_tool_call(
        &mut self,
        position: usize,
        call: super::wire::DeltaToolCall,
    ) -> Result<(), LlmError> {
        let calls = &self.answer.tool_calls;
        // Calls are matched by `index`; a server that sends none starts a new call with
        // each new id, and otherwise continues the last one.
        let index = match call.index {
            Some(i) => i as usize,
            None => match (&call.id, calls.last()) {
                (Some(id), Some(last)) if last.id.as_ref() != Some(id) => calls.len(),
                (_, Some(_)) => calls.len() - 1,
                (_, None) => position,
            },
        };
        if index >= MAX_TOOL_CALLS {
            return Err(LlmError::InvalidResponse(format!(
                "the answer has more than {MAX_TOOL_CALLS} tool calls"
            )));
        }
        let function = call.function.unwrap_or_default();
        self.check(
            function.arguments.as_deref().map_or(0, str::len)
                + function.name.as_deref().map_or(0, str::len),
        )?;
        let calls = &mut self.answer.tool_calls;
        while calls.len() <= index {
            calls.push(RawToolCall::default());
        }
        let slot = &mut calls[index];
        if let Some(id) = call.id.filter(|id| !id.is_empty()) {
            slot.id.get_or_insert(id);
        }
        if let Some(name) = function.name.filter(|n| !n.is_empty()) {
            slot.name = Some(name);
        }
        if let Some(args) = function.arguments {
            slot.arguments.push_str(&args);
        }
        Ok(())
    }

    /// The answer, once the stream ended; refuses one cut short.
    pub(crate) fn finish(self) -> Result<RawAnswer, LlmError> {
        if !self.done && self.answer.finish_reason.is_none() {
            return Err(LlmError::InvalidResponse(
                "the stream ended before the answer finished".into(),
            ));
        }
        // Calls only ever announced by index, with nothing in them, are dropped.
        let mut answer = self.answer;
        answer
            .tool_calls
            .retain(|c| c.name.is_some() || c.id.is_some() || !c.arguments.is_empty());
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(input: &[&[u8]], max: usize) -> Result<Vec<String>, LlmError> {
        let mut parser = SseParser::new(max);
        let mut out = Vec::new();
        for part in input {
            parser.feed(part, |d| {
                out.push(d.to_owned());
                Ok(())
            })?;
        }
        Ok(out)
    }

    #[test]
    fn sse_framing() {
        let got = events(
            &[
                b"data: {\"a\"",
                b":1}\r\n\r\n: keep-alive\n\nevent: x\ndata: one\ndata: two\n\n",
                b"data:[DONE]\n\n",
            ],
            1024,
        )
        .unwrap();
        assert_eq!(got, vec!["{\"a\":1}", "one\ntwo", "[DONE]"]);
        assert!(events(&[b"data: 0123456789abcdef"], 8).is_err());
    }

    #[test]
    fn assembles_text_and_tool_calls() {
        let mut a = Assembler::new(10_000);
        for chunk in [
            r#"{"model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"put","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}"#,
            "[DONE]",
        ] {
            a.push(chunk).unwrap();
        }
        let raw = a.finish().unwrap();
        assert_eq!(raw.text, "Hello");
        assert_eq!(raw.model.as_deref(), Some("m-1"));
        assert_eq!(raw.tool_calls.len(), 2);
        assert_eq!(raw.tool_calls[0].arguments, r#"{"city":"Paris"}"#);
        assert_eq!(raw.tool_calls[1].name.as_deref(), Some("put"));
        assert_eq!(raw.usage.unwrap().completion_tokens, 7);
    }

    #[test]
    fn bounds_and_truncation() {
        let mut a = Assembler::new(4);
        assert!(
            a.push(r#"{"choices":[{"index":0,"delta":{"content":"12345"}}]}"#)
                .is_err()
        );
        let mut a = Assembler::new(100);
        a.push(r#"{"choices":[{"index":0,"delta":{"content":"12"}}]}"#)
            .unwrap();
        assert!(a.finish().is_err());
        let mut a = Assembler::new(100);
        let err = a
            .push(r#"{"error":{"message":"overloaded","code":"server_error"}}"#)
            .unwrap_err();
        assert!(err.to_string().contains("overloaded"));
        let mut a = Assembler::new(100_000);
        let many = format!(
            r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{MAX_TOOL_CALLS},"id":"x"}}]}}}}]}}"#
        );
        assert!(a.push(&many).is_err());
    }
}
