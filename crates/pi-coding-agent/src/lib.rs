//! pi-coding-agent: the product (settings, resources, AgentSession, modes).

pub mod cli;
pub mod config;
pub mod export;
pub mod resources;
pub mod session;
pub mod system_prompt;
