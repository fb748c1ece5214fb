//! Test support: the MCP test server (stdio and HTTP fronts) and the `pi mcp` command tests.

pub mod cli_tests;
pub mod http_server;
pub mod server;
