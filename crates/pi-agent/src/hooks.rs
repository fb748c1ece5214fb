//! The hooks a caller plugs into the loop: context shaping, key lookup, tool-call interception
//! and turn-boundary decisions. Every method has a default that does nothing.

use std::sync::Arc;

use async_trait::async_trait;
use pi_ai::{AssistantMessage, Content, Message, Model, ThinkingLevel, ToolCall, ToolResultMessage};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::context::AgentContext;
use crate::message::{default_convert_to_llm, AgentMessage};
use crate::tool::{AgentTool, ToolOutput};

/// A hook failed. Outside tool calls this ends the run with an error assistant message carrying
/// the text; inside `before_tool_call`/`after_tool_call` it becomes that call's error result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HookError(pub String);

impl HookError {
    pub fn new(message: impl Into<String>) -> Self {
        HookError(message.into())
    }
}

impl From<String> for HookError {
    fn from(s: String) -> Self {
        HookError(s)
    }
}

impl From<&str> for HookError {
    fn from(s: &str) -> Self {
        HookError(s.to_string())
    }
}

/// What `before_tool_call` and `after_tool_call` see.
#[derive(Clone, Copy)]
pub struct ToolCallContext<'a> {
    /// The assistant message that asked for the call.
    pub assistant_message: &'a AssistantMessage,
    pub tool_call: &'a ToolCall,
    /// The arguments after `prepare_arguments` and validation.
    pub args: &'a Value,
    /// The run's context as of this turn (tool results of this batch not yet added).
    pub context: &'a AgentContext,
    /// The running call (a codemode script) that made this call; `None` for the model's own.
    pub parent_tool_call_id: Option<&'a str>,
}

/// Returned by `before_tool_call`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BeforeToolCall {
    /// Do not run the tool; the model gets an error result with `reason`
    /// (or `Tool execution was blocked`).
    pub block: bool,
    pub reason: Option<String>,
    /// Run the tool with these arguments instead.
    pub args: Option<Value>,
}

impl BeforeToolCall {
    pub fn block(reason: impl Into<String>) -> Self {
        BeforeToolCall {
            block: true,
            reason: Some(reason.into()),
            args: None,
        }
    }
}

/// Returned by `after_tool_call`: each field present replaces the result's (no deep merge).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AfterToolCall {
    pub content: Option<Vec<Content>>,
    pub details: Option<Value>,
    pub is_error: Option<bool>,
    pub terminate: Option<bool>,
}

/// What the turn-boundary hooks see.
#[derive(Clone, Copy)]
pub struct TurnContext<'a> {
    pub message: &'a AssistantMessage,
    pub tool_results: &'a [ToolResultMessage],
    pub context: &'a AgentContext,
    /// Everything this run has added so far.
    pub new_messages: &'a [AgentMessage],
}

/// Changes for the next turn from `prepare_next_turn`; each field present replaces the run's.
#[derive(Clone, Default)]
pub struct NextTurn {
    pub model: Option<Model>,
    pub thinking_level: Option<ThinkingLevel>,
    pub system_prompt: Option<String>,
    pub messages: Option<Vec<AgentMessage>>,
    pub tools: Option<Vec<Arc<dyn AgentTool>>>,
}

impl std::fmt::Debug for NextTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NextTurn")
            .field("model", &self.model.as_ref().map(|m| &m.id))
            .field("thinking_level", &self.thinking_level)
            .field("system_prompt", &self.system_prompt.is_some())
            .field("messages", &self.messages.as_ref().map(Vec::len))
            .field("tools", &self.tools.as_ref().map(Vec::len))
            .finish()
    }
}

/// The loop's hooks. `cancel` fires when the run is aborted.
#[async_trait]
pub trait AgentHooks: Send + Sync {
    /// Reshape the agent messages before each LLM call (`None` keeps them).
    async fn transform_context(
        &self,
        _messages: &[AgentMessage],
        _cancel: &CancellationToken,
    ) -> Result<Option<Vec<AgentMessage>>, HookError> {
        Ok(None)
    }

    /// Turn agent messages into what the LLM sees. Default: keep LLM roles, drop custom ones.
    async fn convert_to_llm(&self, messages: &[AgentMessage]) -> Result<Vec<Message>, HookError> {
        Ok(default_convert_to_llm(messages))
    }

    /// The API key for `provider`, asked before every LLM call (`None`: the configured key).
    async fn get_api_key(&self, _provider: &str) -> Result<Option<String>, HookError> {
        Ok(None)
    }

    /// Headers to send with the next request to `model`, on top of the call's own (asked
    /// before every LLM call, after the API key; an error fails the request).
    async fn request_headers(&self, _model: &pi_ai::Model) -> Result<Vec<(String, String)>, HookError> {
        Ok(Vec::new())
    }

    /// Runs after validation, before the tool. An error blocks the call with its message.
    async fn before_tool_call(
        &self,
        _call: ToolCallContext<'_>,
        _cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCall>, HookError> {
        Ok(None)
    }

    /// Runs after the tool (also after a failed one). An error turns the result into an error.
    async fn after_tool_call(
        &self,
        _call: ToolCallContext<'_>,
        _result: &ToolOutput,
        _is_error: bool,
        _cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCall>, HookError> {
        Ok(None)
    }

    /// Before `message_end` is reported: may replace the message (with one of the same role).
    /// Everything after (listeners, the transcript, the next request) sees the replacement.
    async fn message_end(&self, _message: &AgentMessage) -> Result<Option<AgentMessage>, HookError> {
        Ok(None)
    }

    /// After `turn_end`: replace model, thinking level or context for the next turn.
    async fn prepare_next_turn(&self, _turn: TurnContext<'_>) -> Result<Option<NextTurn>, HookError> {
        Ok(None)
    }

    /// Before each request, given the context as it stands: a message declaring what the
    /// transcript does not record yet (pi 1.6's system message of tool changes, when tools
    /// were added or removed since the transcript last declared them). The loop reports it and
    /// adds it ahead of the turn's pending messages.
    async fn declare_changes(&self, _context: &AgentContext) -> Option<AgentMessage> {
        None
    }

    /// After `turn_end`: end the run here (no stream or tool is ever cut).
    async fn should_stop_after_turn(&self, _turn: TurnContext<'_>) -> Result<bool, HookError> {
        Ok(false)
    }

    /// After `turn_end`, when the turn asked for no tools: make one more request anyway.
    async fn continue_after_turn(&self, _turn: TurnContext<'_>) -> Result<bool, HookError> {
        Ok(false)
    }
}

/// Hooks that change nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl AgentHooks for NoHooks {}
