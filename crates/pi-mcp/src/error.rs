//! Errors of the MCP client and of configuration edits.

use std::path::PathBuf;

/// Why a configuration file could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum ConfigEditError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {message}", path.display())]
    Shape { path: PathBuf, message: String },
    #[error("{} does not define MCP server \"{name}\"", path.display())]
    NoSuchServer { path: PathBuf, name: String },
}

/// Why connecting to a server or a request to it failed. Messages are the ones pi shows.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum McpError {
    /// A configured value (env, header) could not be resolved.
    #[error("{0}")]
    Config(String),
    /// The server process could not be started: `spawn <command> <reason>`.
    #[error("spawn {command} {reason}")]
    Spawn { command: String, reason: String },
    /// The server needs an OAuth sign-in, which this client cannot do yet.
    #[error("MCP server \"{server}\" requires sign-in. Run {hint} to sign in.")]
    NeedsSignIn { server: String, hint: String },
    #[error("MCP server selected unsupported protocol version {0}")]
    UnsupportedProtocolVersion(String),
    #[error("MCP request timed out after {0}ms")]
    Timeout(u64),
    #[error("MCP request aborted")]
    Aborted,
    #[error("MCP connection closed")]
    ConnectionClosed,
    /// The HTTP session is gone (404 with a session id); a new connection may retry.
    #[error("MCP session expired")]
    SessionExpired,
    /// A JSON-RPC error answer from the server.
    #[error("{message}")]
    Rpc { code: i32, message: String },
    /// A transport or protocol failure.
    #[error("{0}")]
    Transport(String),
    /// The server answered with something that is not the expected result.
    #[error("{0}")]
    InvalidResult(String),
}
