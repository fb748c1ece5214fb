//! Typed emitters for the events the session pipeline acts on. Each skips the round trip when
//! no loaded extension handles the event, and returns the combined outcome with the errors of
//! handlers that threw (to be reported as pi reports extension errors).

use serde_json::{json, Value};

use crate::error::HostError;
use crate::outcomes::{
    parse, BeforeAgentStartOutcome, ContextOutcome, InputOutcome, SessionBeforeOutcome, ToolCallOutcome,
    ToolResultPatch,
};
use crate::protocol::ExtensionError;
use crate::runner::ExtensionRunner;

/// An outcome and the handler errors that came with it.
pub type Emitted<T> = (T, Vec<ExtensionError>);

fn bad_reply(event: &str, message: String) -> HostError {
    HostError::BadReply {
        method: format!("dispatch {event}"),
        message,
    }
}

impl ExtensionRunner {
    async fn emit_raw(&self, event: &str, payload: Value) -> Result<Option<Emitted<Value>>, HostError> {
        if !self.registrations().handles(event) {
            return Ok(None);
        }
        let dispatched = self.dispatch(event, payload).await?;
        Ok(Some((dispatched.result, dispatched.errors)))
    }

    /// An event whose handlers' results are ignored (`session_start`, `agent_end`, ...),
    /// awaited like the others.
    pub async fn emit(&self, event: &str, payload: Value) -> Result<Vec<ExtensionError>, HostError> {
        Ok(self
            .emit_raw(event, payload)
            .await?
            .map(|(_, errors)| errors)
            .unwrap_or_default())
    }

    /// `input`: `source` is `interactive`, `rpc` or `extension`; `streaming_behavior` is set
    /// only while a run is active.
    pub async fn emit_input(
        &self,
        text: &str,
        images: Option<Value>,
        source: &str,
        streaming_behavior: Option<&str>,
    ) -> Result<Emitted<InputOutcome>, HostError> {
        let mut payload = json!({ "text": text, "source": source });
        if let Some(images) = images {
            payload["images"] = images;
        }
        if let Some(behavior) = streaming_behavior {
            payload["streamingBehavior"] = Value::from(behavior);
        }
        Ok(match self.emit_raw("input", payload).await? {
            Some((result, errors)) => (InputOutcome::from_result(&result), errors),
            None => (InputOutcome::Continue, Vec::new()),
        })
    }

    /// `before_agent_start`, with the event's fields (`messageType`, `prompt` or `message`,
    /// `systemPrompt`, `systemPromptOptions`, ...).
    pub async fn emit_before_agent_start(&self, payload: Value) -> Result<Emitted<BeforeAgentStartOutcome>, HostError> {
        self.emit_parsed("before_agent_start", payload).await
    }

    /// `tool_call` for one validated call; `input` in the outcome has the handlers' edits.
    pub async fn emit_tool_call(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        parent_tool_call_id: Option<&str>,
        input: &Value,
    ) -> Result<Emitted<ToolCallOutcome>, HostError> {
        // pi 1.6 names the calling tool call of a nested call (codemode), before the input.
        let payload = match parent_tool_call_id {
            Some(parent) => json!({
                "toolCallId": tool_call_id, "toolName": tool_name, "parentToolCallId": parent, "input": input
            }),
            None => json!({ "toolCallId": tool_call_id, "toolName": tool_name, "input": input }),
        };
        match self.emit_raw("tool_call", payload).await? {
            Some((result, errors)) => {
                let outcome = parse(&result).map_err(|e| bad_reply("tool_call", e))?;
                Ok((outcome, errors))
            }
            None => Ok((
                ToolCallOutcome {
                    input: input.clone(),
                    ..ToolCallOutcome::default()
                },
                Vec::new(),
            )),
        }
    }

    /// `tool_result` for an executed call; `None` when no handler changed the result.
    pub async fn emit_tool_result(&self, payload: Value) -> Result<Emitted<Option<ToolResultPatch>>, HostError> {
        match self.emit_raw("tool_result", payload).await? {
            Some((result, errors)) if !result.is_null() => {
                let patch = parse(&result).map_err(|e| bad_reply("tool_result", e))?;
                Ok((Some(patch), errors))
            }
            Some((_, errors)) => Ok((None, errors)),
            None => Ok((None, Vec::new())),
        }
    }

    /// `context` or `context_with_system` before a request; `None` when no extension handles it.
    pub async fn emit_context(
        &self,
        event: &str,
        messages: &[Value],
    ) -> Result<Emitted<Option<ContextOutcome>>, HostError> {
        match self.emit_raw(event, json!({ "messages": messages })).await? {
            Some((result, errors)) => {
                let outcome = parse(&result).map_err(|e| bad_reply(event, e))?;
                Ok((Some(outcome), errors))
            }
            None => Ok((None, Vec::new())),
        }
    }

    /// One of the `session_before_*` events.
    pub async fn emit_session_before(
        &self,
        event: &str,
        payload: Value,
    ) -> Result<Emitted<SessionBeforeOutcome>, HostError> {
        Ok(match self.emit_raw(event, payload).await? {
            Some((result, errors)) => (SessionBeforeOutcome::from_result(&result), errors),
            None => (SessionBeforeOutcome::default(), Vec::new()),
        })
    }

    async fn emit_parsed<T>(&self, event: &str, payload: Value) -> Result<Emitted<T>, HostError>
    where
        T: for<'de> serde::Deserialize<'de> + Default,
    {
        match self.emit_raw(event, payload).await? {
            Some((result, errors)) => {
                let outcome = parse(&result).map_err(|e| bad_reply(event, e))?;
                Ok((outcome, errors))
            }
            None => Ok((T::default(), Vec::new())),
        }
    }
}
