//! pi-agent: the agent loop (turns, tool execution, queues, hooks); knows no files, terminal or sessions.

pub mod tool;

pub use tool::{AgentTool, ExecutionMode, ToolError, ToolOutput, ToolUpdateFn};
