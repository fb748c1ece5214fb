//! pi-agent: the agent loop (turns, tool execution, queues, hooks); knows no files, terminal or sessions.
//!
//! [`Agent`] holds the transcript and settings and drives runs; [`run_agent_loop`] is the loop
//! itself for callers that keep their own state. The LLM call is injected as a
//! [`pi_ai::StreamFn`], so tests and other providers plug in the same way.
//!
//! Event order of a run (pi's, as JSON mode prints it):
//! `agent_start`, `turn_start`, `message_start`/`message_end` per prompt message, then per turn:
//! injected steering or follow-up messages (`message_start`/`message_end`), the assistant
//! (`message_start`, `message_update`*, `message_end`), for a tool batch
//! `tool_execution_start`/`_update`/`_end` per call and then the tool-result messages in source
//! order, `turn_end {message, toolResults}`; `turn_start` opens every later turn; finally
//! `agent_end {messages}`.

pub mod agent;
pub mod agent_loop;
pub mod batch;
pub mod context;
pub mod event;
pub mod formats;
pub mod hook_chain;
pub mod hooks;
pub mod message;
pub mod nested;
mod nested_record;
pub mod queue;
pub mod tool;
pub mod tool_registry;
pub mod validation;

pub use agent::{unknown_model, Agent, AgentError, AgentListener, AgentOptions, ListenerId};
pub use agent_loop::{
    run_agent_loop, run_agent_loop_continue, EventSink, LoopConfig, QueuePoll, ABORTED_REQUEST, ABORT_GRACE,
};
pub use batch::{ToolExecution, OPERATION_ABORTED};
pub use context::AgentContext;
pub use event::{AgentEvent, StreamingMessage, ToolOutputWire};
pub use hook_chain::HookChain;
pub use hooks::{
    AfterToolCall, AgentHooks, BeforeToolCall, HookError, NextTurn, NoHooks, ToolCallContext, TurnContext,
};
pub use message::{default_convert_to_llm, AgentMessage, CustomMessage};
pub use nested::{nested_call, NestedOutcome, NestedPipeline};
pub use queue::{PendingQueue, QueueMode};
pub use tool::{combine_usage, AgentTool, ExecutionMode, ToolError, ToolOutput, ToolUpdateFn};
pub use tool_registry::{Exposure, PromptEntry, Registered, ToolEntry, ToolMeta, ToolRegistry, ToolSource};
pub use validation::validate_tool_arguments;
