//! pi-coding-agent: the product (settings, resources, AgentSession, modes).

pub mod app;
pub mod cli;
pub mod config;
pub mod export;
pub mod modes;
pub mod resources;
pub mod runtime;
pub mod session;
pub mod system_prompt;
