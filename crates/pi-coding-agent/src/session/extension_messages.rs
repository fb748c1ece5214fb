//! Messages extensions send into the conversation (`pi.sendMessage`): held for the next run,
//! held until the current run ends, or starting a run of their own. (Recording one at once is
//! `record_outside_run`; queueing one is `enqueue`.)

use pi_agent::AgentMessage;

use super::agent_session::{lock, AgentSession, PromptError};

impl AgentSession {
    /// Attach `message` after the message that starts the next run.
    pub fn queue_for_next_turn(&self, message: AgentMessage) {
        lock(&self.inner.next_turn).push(message);
    }

    /// Record `message` once the current run ends (never between a tool call and its result).
    pub fn hold_until_run_ends(&self, message: AgentMessage) {
        lock(&self.inner.held_messages).push(message);
    }

    /// Start a run whose first message is `message` (an extension's `triggerTurn`).
    pub async fn prompt_custom(&self, message: AgentMessage) -> Result<(), PromptError> {
        if self.is_streaming() {
            self.agent().follow_up(message);
            return Ok(());
        }
        let text = match &message {
            AgentMessage::Custom(custom) => custom
                .fields
                .get("content")
                .and_then(|c| serde_json::from_value::<pi_ai::UserContent>(c.clone()).ok())
                .map(|c| c.text())
                .unwrap_or_default(),
            _ => String::new(),
        };
        self.start_run(message, &text).await
    }
}
