//! Steering and follow-up: messages typed while a run is active, and the `queue_update` events
//! that tell UIs what is still waiting.

use pi_ai::ImageContent;

use super::agent_session::{lock, user_message, AgentSession, PromptError};
use super::events::SessionEvent;

/// What to do with a prompt that arrives while the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamingBehavior {
    /// Deliver after the current tool batch.
    Steer,
    /// Deliver when the agent would otherwise stop.
    FollowUp,
}

/// The texts of waiting messages, in order (what pi shows and reports).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueuedTexts {
    pub steering: Vec<String>,
    pub follow_up: Vec<String>,
}

impl AgentSession {
    /// Queue a steering message (templates and skills expanded).
    pub async fn steer(&self, text: &str, images: Vec<ImageContent>) -> Result<(), PromptError> {
        let expanded = self.expand_input(text)?;
        self.enqueue(StreamingBehavior::Steer, expanded, images).await
    }

    /// Queue a follow-up message (templates and skills expanded).
    pub async fn follow_up(&self, text: &str, images: Vec<ImageContent>) -> Result<(), PromptError> {
        let expanded = self.expand_input(text)?;
        self.enqueue(StreamingBehavior::FollowUp, expanded, images).await
    }

    pub(crate) async fn enqueue(
        &self,
        behavior: StreamingBehavior,
        text: String,
        images: Vec<ImageContent>,
    ) -> Result<(), PromptError> {
        {
            let mut queued = lock(&self.inner.queued);
            match behavior {
                StreamingBehavior::Steer => queued.steering.push(text.clone()),
                StreamingBehavior::FollowUp => queued.follow_up.push(text.clone()),
            }
        }
        let message = user_message(text, images);
        match behavior {
            StreamingBehavior::Steer => self.inner.agent.steer(message),
            StreamingBehavior::FollowUp => self.inner.agent.follow_up(message),
        }
        self.emit_queue_update().await;
        Ok(())
    }

    /// The waiting texts.
    pub fn queued(&self) -> QueuedTexts {
        lock(&self.inner.queued).clone()
    }

    /// Drop every waiting message; returns their texts (steering first) so a UI can restore
    /// them into the editor.
    pub async fn clear_queue(&self) -> QueuedTexts {
        self.inner.agent.clear_all_queues();
        let taken = std::mem::take(&mut *lock(&self.inner.queued));
        if !taken.steering.is_empty() || !taken.follow_up.is_empty() {
            self.emit_queue_update().await;
        }
        taken
    }

    /// A queued message reached the transcript: it no longer waits.
    pub(crate) async fn dequeue_delivered(&self, text: &str) {
        let removed = {
            let mut queued = lock(&self.inner.queued);
            if let Some(i) = queued.steering.iter().position(|t| t == text) {
                queued.steering.remove(i);
                true
            } else if let Some(i) = queued.follow_up.iter().position(|t| t == text) {
                queued.follow_up.remove(i);
                true
            } else {
                false
            }
        };
        if removed {
            self.emit_queue_update().await;
        }
    }

    async fn emit_queue_update(&self) {
        let q = self.queued();
        self.emit(SessionEvent::QueueUpdate {
            steering: q.steering,
            follow_up: q.follow_up,
        })
        .await;
    }
}
