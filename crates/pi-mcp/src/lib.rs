//! pi's MCP (Model Context Protocol) client: server configuration (`mcp.json`), connections over
//! stdio and Streamable HTTP on the official SDK (rmcp, never named outside this crate's `client`
//! module), tool naming, result conversion, and the `pi mcp` subcommands.

pub mod cli;
pub mod client;
pub mod config;
pub mod content;
pub mod error;
pub mod log;
pub mod login;
pub mod naming;
pub mod oauth;
pub mod trust;

pub use client::{CallOptions, ConnectError, ConnectOptions, LogMessage, McpClient, McpTool, Progress, ServerInfo};
pub use config::{
    load_mcp_config, Exposure, LoadOptions, McpConfig, Scope, ServerConfig, ServerEntry, TransportConfig,
};
pub use content::{convert_tool_result, ContentBlock, ConvertOptions, ToolOutput};
pub use error::{ConfigEditError, McpError};
pub use naming::{mcp_namespace, mcp_server_summary, mcp_tool_label, mcp_tool_name, mcp_tool_names};
