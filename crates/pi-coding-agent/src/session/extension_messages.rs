//! Messages extensions send into the conversation (`pi.sendMessage`, `pi.sendUserMessage`):
//! held for the next run, held until the current run ends, recorded at once, queued as steering
//! or follow-up, or starting a run of their own.

use pi_agent::AgentMessage;
use pi_ai::ImageContent;

use super::agent_session::{lock, AgentSession, PromptError};
use super::queue::StreamingBehavior;

impl AgentSession {
    /// Attach `message` after the message that starts the next run.
    pub fn queue_for_next_turn(&self, message: AgentMessage) {
        lock(&self.inner.next_turn).push(message);
    }

    /// Record `message` once the current run ends (never between a tool call and its result).
    pub fn hold_until_run_ends(&self, message: AgentMessage) {
        lock(&self.inner.pending_bash).push(message);
    }

    /// Record `message` now, outside a run (it does not start one).
    pub fn record_custom_message(&self, message: AgentMessage) {
        self.record_outside_run(message);
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

    /// Queue `text` as steering or follow-up as it is (no template or skill expansion).
    pub async fn enqueue_text(
        &self,
        behavior: StreamingBehavior,
        text: String,
        images: Vec<ImageContent>,
    ) -> Result<(), PromptError> {
        self.enqueue(behavior, text, images).await
    }
}
