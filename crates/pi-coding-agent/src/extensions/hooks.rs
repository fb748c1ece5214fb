//! The agent loop's extension events as [`AgentHooks`]: `context` and `context_with_system`
//! before each request, `message_end` (which may replace the message), `tool_call` before
//! each tool and `tool_result` after it. Joined to the session's hook
//! chain after the session's own hooks; with no runner loaded each hook returns at once.

use std::sync::Arc;

use async_trait::async_trait;
use pi_agent::{
    AfterToolCall, AgentHooks, AgentMessage, BeforeToolCall, HookError, NextTurn, ToolCallContext, ToolOutput,
    TurnContext,
};
use pi_ai::Content;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use pi_extensions::ExtensionRunner;

use super::ExtensionSlot;
use crate::session::system_message;

/// The extension events of the agent loop.
pub struct ExtensionHooks {
    slot: Arc<ExtensionSlot>,
}

impl ExtensionHooks {
    pub fn new(slot: Arc<ExtensionSlot>) -> Self {
        ExtensionHooks { slot }
    }

    /// `context`: handlers see the conversation without its system messages. A changed list
    /// gets the current system head back in front (pi 1.6); an unchanged one keeps the
    /// transcript as it is, system messages in their places.
    async fn context(&self, runner: &ExtensionRunner, messages: &[AgentMessage]) -> Option<Vec<AgentMessage>> {
        let visible: Vec<Value> = messages
            .iter()
            .filter(|m| !system_message::is_system(m))
            .filter_map(|m| serde_json::to_value(m).ok())
            .collect();
        let emitted = runner.emit_context("context", &visible).await;
        let outcome = self.slot.settle("context", emitted).await??;
        if !outcome.replaced && outcome.messages == visible {
            return None;
        }
        let head = system_message::current_head(messages);
        Some(head.into_iter().chain(agent_messages(outcome.messages)).collect())
    }

    /// `context_with_system`: handlers see the whole transcript, system messages included,
    /// and what they return is used as it is.
    async fn context_with_system(
        &self,
        runner: &ExtensionRunner,
        messages: &[AgentMessage],
    ) -> Option<Vec<AgentMessage>> {
        let values: Vec<Value> = messages.iter().filter_map(|m| serde_json::to_value(m).ok()).collect();
        let emitted = runner.emit_context("context_with_system", &values).await;
        let outcome = self.slot.settle("context_with_system", emitted).await??;
        if !outcome.replaced && outcome.messages == values {
            return None;
        }
        Some(agent_messages(outcome.messages))
    }
}

/// Messages a handler returned, as agent messages (entries that are not messages are dropped).
fn agent_messages(values: Vec<Value>) -> Vec<AgentMessage> {
    values
        .into_iter()
        .filter_map(|v| match v {
            Value::Object(map) => AgentMessage::from_map(map).ok(),
            _ => None,
        })
        .collect()
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
        let registrations = runner.registrations();
        let mut current: Option<Vec<AgentMessage>> = None;
        if registrations.handles("context") {
            current = self.context(&runner, messages).await;
        }
        if registrations.handles("context_with_system") {
            let input = current.as_deref().unwrap_or(messages);
            if let Some(next) = self.context_with_system(&runner, input).await {
                current = Some(next);
            }
        }
        Ok(current)
    }

    async fn message_end(&self, message: &AgentMessage) -> Result<Option<AgentMessage>, HookError> {
        let Some(runner) = self.slot.runner() else {
            return Ok(None);
        };
        if !runner.registrations().handles("message_end") {
            return Ok(None);
        }
        let payload = json!({ "message": message });
        let dispatched = runner
            .dispatch("message_end", payload)
            .await
            .map(|d| (d.result, d.errors));
        let Some(result) = self.slot.settle("message_end", dispatched).await else {
            return Ok(None);
        };
        // The host checked the role; a message that does not parse keeps the original.
        Ok(match result.get("message") {
            Some(Value::Object(map)) => AgentMessage::from_map(map.clone()).ok(),
            _ => None,
        })
    }

    async fn prepare_next_turn(&self, _turn: TurnContext<'_>) -> Result<Option<NextTurn>, HookError> {
        let drafts = self.slot.take_turn_drafts();
        if drafts.is_empty() {
            return Ok(None);
        }
        let Some(session) = self.slot.session() else {
            return Ok(None);
        };
        session.commit_drafts("turn_end", &drafts).await;
        // The next request sees the entries just written, as the session now projects them.
        Ok(Some(NextTurn {
            messages: Some(session.messages()),
            ..Default::default()
        }))
    }

    async fn continue_after_turn(&self, _turn: TurnContext<'_>) -> Result<bool, HookError> {
        if !self.slot.take_turn_continue() {
            return Ok(false);
        }
        let Some(session) = self.slot.session() else {
            return Ok(false);
        };
        if session.can_continue(crate::session::boundary::Boundary::TurnEnd) {
            return Ok(true);
        }
        session
            .extensions()
            .report_boundary_error(
                "turn_end",
                "turn_end requested continuation without runnable model context".into(),
            )
            .await;
        Ok(false)
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
            .emit_tool_call(
                &call.tool_call.id,
                &call.tool_call.name,
                call.parent_tool_call_id,
                call.args,
            )
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
        let mut payload = json!({
            "toolCallId": call.tool_call.id,
            "toolName": call.tool_call.name,
        });
        if let Some(parent) = call.parent_tool_call_id {
            payload["parentToolCallId"] = json!(parent);
        }
        payload["input"] = call.args.clone();
        payload["content"] = json!(result.content);
        payload["details"] = json!(result.details);
        payload["isError"] = json!(is_error);
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
