//! pi-coding-agent: the product (settings, resources, AgentSession, modes).

pub mod app;
pub mod bug_report;
pub mod bug_upload;
pub mod cli;
pub mod codemode;
pub mod compaction;
pub mod config;
pub mod crash_log;
/// The HTML export lives in its own crate; `crate::export` keeps naming it.
pub use pi_export as export;
pub mod docs;
pub mod extension_theme;
pub mod extension_ui;
pub mod extensions;
pub mod file_index;
pub mod mcp;
pub mod modes;
pub mod packages;
pub mod resources;
pub mod runtime;
pub mod services;
pub mod session;
pub mod session_host;
pub mod subcommands;
pub mod system_prompt;
pub mod theme_colors;
pub mod ui_theme;
