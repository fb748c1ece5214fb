//! Subcommands handled before the normal startup: `pi auth …`, `pi mcp …`.

pub mod auth;
pub mod auth_credentials;
pub mod auth_login;
pub mod auth_oauth;
pub mod mcp;
