//! pi-coding-agent: the product (settings, resources, AgentSession, modes).

pub mod config;
pub mod resources;
pub mod system_prompt;
