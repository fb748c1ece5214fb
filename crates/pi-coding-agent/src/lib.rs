//! pi-coding-agent: the product (settings, resources, AgentSession, modes).

pub mod app;
pub mod cli;
pub mod compaction;
pub mod config;
pub mod export;
pub mod extension_ui;
pub mod modes;
pub mod packages;
pub mod resources;
pub mod runtime;
pub mod services;
pub mod session;
pub mod session_host;
pub mod system_prompt;
