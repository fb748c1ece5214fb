//! pi-coding-agent: the product (settings, resources, AgentSession, modes).

pub mod cli;
pub mod export;
pub mod modes;
pub mod session;
