//! The agent loop's extension events as [`AgentHooks`]: `context` before each request,
//! `tool_call` before each tool and `tool_result` after it. Joined to the session's hook
//! chain after the session's own hooks; with no runner loaded each hook returns at once.

use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{AfterToolCall, AgentHooks, AgentMessage, BeforeToolCall, HookError, ToolCallContext, ToolOutput};
use pi_ai::Content;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::ExtensionSlot;

/// The extension events of the agent loop.
pub struct ExtensionHooks {
    slot: Arc<ExtensionSlot>,
}

impl ExtensionHooks {
    pub fn new(slot: Arc<ExtensionSlot>) -> Self {
        ExtensionHooks { slot }
    }
}

fn content_of(values: Vec<Value>) -> Vec<Content> {
    values
        .into_iter()
        .filter_map(|v| serde_json::from_value::<Content>(v).ok())
        .collect()
}

#[async_trait]
impl AgentHooks for ExtensionHooks {
    async fn transform_context(
        &self,
        messages: &[AgentMessage],
        _cancel: &CancellationToken,
    ) -> Result<Option<Vec<AgentMessage>>, HookError> {
        let Some(runner) = self.slot.runner() else {
            return Ok(None);
        };
        if !runner.registrations().handles("context") {
            return Ok(None);
        }
        let values: Vec<Value> = messages.iter().filter_map(|m| serde_json::to_value(m).ok()).collect();
        let emitted = runner.emit_context(&values).await;
        let Some(Some(outcome)) = self.slot.settle("context", emitted).await else {
            return Ok(None);
        };
        if !outcome.replaced && outcome.messages == values {
            return Ok(None);
        }
        let next = outcome
            .messages
            .into_iter()
            .filter_map(|v| match v {
                Value::Object(map) => AgentMessage::from_map(map).ok(),
                _ => None,
            })
            .collect();
        Ok(Some(next))
    }

    async fn before_tool_call(
        &self,
        call: ToolCallContext<'_>,
        _cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCall>, HookError> {
        let Some(runner) = self.slot.runner() else {
            return Ok(None);
        };
        let emitted = runner
            .emit_tool_call(&call.tool_call.id, &call.tool_call.name, call.args)
            .await;
        let Some(outcome) = self.slot.settle("tool_call", emitted).await else {
            return Ok(None);
        };
        if let Some(reason) = outcome.block_message() {
            return Ok(Some(BeforeToolCall::block(reason)));
        }
        // Handlers may edit `event.input` in place; the tool then runs with their edits.
        if !outcome.input.is_null() && &outcome.input != call.args {
            return Ok(Some(BeforeToolCall {
                args: Some(outcome.input),
                ..Default::default()
            }));
        }
        Ok(None)
    }

    async fn after_tool_call(
        &self,
        call: ToolCallContext<'_>,
        result: &ToolOutput,
        is_error: bool,
        _cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCall>, HookError> {
        let Some(runner) = self.slot.runner() else {
            return Ok(None);
        };
        if !runner.registrations().handles("tool_result") {
            return Ok(None);
        }
        let payload = json!({
            "toolCallId": call.tool_call.id,
            "toolName": call.tool_call.name,
            "input": call.args,
            "content": result.content,
            "details": result.details,
            "isError": is_error,
        });
        let emitted = runner.emit_tool_result(payload).await;
        let Some(Some(patch)) = self.slot.settle("tool_result", emitted).await else {
            return Ok(None);
        };
        Ok(Some(AfterToolCall {
            content: patch.content.map(content_of),
            details: patch.details,
            is_error: patch.is_error,
            terminate: None,
        }))
    }
}
