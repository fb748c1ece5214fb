//! AgentSession: the agent loop joined with the session store, tools, settings and models.

pub mod retry;
