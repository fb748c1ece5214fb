//! The context a run works on: system prompt, transcript and tools (a snapshot of the agent's).

use std::sync::Arc;

use pi_ai::Tool;

use crate::message::AgentMessage;
use crate::tool::AgentTool;

/// What one run reads and extends. The agent hands the loop a copy, so changes to the agent's
/// state during a run do not reach it.
#[derive(Clone, Default)]
pub struct AgentContext {
    pub system_prompt: String,
    pub messages: Vec<AgentMessage>,
    pub tools: Vec<Arc<dyn AgentTool>>,
}

impl AgentContext {
    /// The tool the model calls `name`, if any.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The tools as the LLM sees them.
    pub fn tool_specs(&self) -> Vec<Tool> {
        self.tools.iter().map(|t| t.spec()).collect()
    }
}

impl std::fmt::Debug for AgentContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentContext")
            .field("system_prompt_len", &self.system_prompt.len())
            .field("messages", &self.messages.len())
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name().to_string()).collect::<Vec<_>>(),
            )
            .finish()
    }
}
