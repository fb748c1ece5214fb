//! AgentSession: the agent loop joined with the session store, tools, settings and models.

pub mod agent_session;
pub mod boundary;
mod bug_summary;
pub mod cache_warmer;
pub mod compaction_ops;
pub mod events;
mod extension_messages;
pub mod extensions;
pub mod hooks;
pub mod loadout;
pub mod messages;
pub mod models;
mod prompt_edits;
pub mod queue;
pub mod retry;
mod run_state;
pub mod stats;
mod summary_retry;
pub mod system_message;
pub mod tree_ops;
pub mod user_bash;

pub use agent_session::{AgentSession, AgentSessionParts, PromptError, SessionListener};
pub use events::{CompactionReason, SessionEvent};
pub use queue::{QueuedTexts, StreamingBehavior};

#[cfg(test)]
mod tests;
