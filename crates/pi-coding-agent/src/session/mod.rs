//! AgentSession: the agent loop joined with the session store, tools, settings and models.

pub mod agent_session;
pub mod events;
pub mod hooks;
pub mod messages;
pub mod retry;

pub use agent_session::{AgentSession, AgentSessionParts, PromptError, SessionListener};
pub use events::{CompactionReason, SessionEvent};
