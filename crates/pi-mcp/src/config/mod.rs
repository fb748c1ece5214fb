//! MCP server configuration: validation of entries, loading of `mcp.json` files, edits of them, and
//! resolution of the values they contain.

pub mod edit;
#[cfg(test)]
mod fuzz_tests;
pub mod load;
pub mod resolve;
pub mod validate;

pub use edit::{add_server, remove_server, update_server, ServerPatch};
pub use load::{global_config_path, load_mcp_config, project_config_path, LoadOptions, McpConfig, Scope, ServerEntry};
pub use resolve::EnvSource;
pub use validate::{is_override, validate_server_config, Exposure, ServerConfig, TransportConfig};
